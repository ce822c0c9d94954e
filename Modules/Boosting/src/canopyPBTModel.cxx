#include "canopyPBTModel.h"

#include "canopy/Errors.h"
#include "canopySteerableFeatureBank.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace canopy
{

const char *
PBTFeatureFamilyName(PBTFeatureFamily family)
{
  return family == PBTFeatureFamily::Steerable ? "steerable" : "haar";
}

int
PBTModel::NumberOfFeatures() const
{
  return static_cast<int>(featureFamily == PBTFeatureFamily::Steerable ? steerable.features.size() : features.size());
}

PBTView
PBTModel::View() const
{
  PBTView view;
  view.nodes = nodes.data();
  view.learners = learners.data();
  view.tables = tables.data();
  view.numNodes = static_cast<int>(nodes.size());
  view.epsilon1 = epsilon1;
  view.epsilon2 = epsilon2;
  return view;
}

int
PBTModel::Depth() const
{
  if (nodes.empty())
  {
    return 0;
  }
  // Iterative, so a corrupted (cyclic or deep) model cannot overflow the host stack.
  int                              depth = 0;
  std::vector<std::pair<int, int>> pending{ { 0, 0 } };
  std::size_t                      visited = 0;
  while (!pending.empty())
  {
    const auto [index, level] = pending.back();
    pending.pop_back();
    if (++visited > nodes.size())
    {
      return kPBTMaxDepth + 1; // a cycle: report "too deep"; Validate names it
    }
    depth = std::max(depth, level);
    for (int child : { nodes[index].left, nodes[index].right })
    {
      if (child >= 0 && child < static_cast<int>(nodes.size()))
      {
        pending.emplace_back(child, level + 1);
      }
    }
  }
  return depth;
}

void
PBTModel::Validate(const std::string & where) const
{
  if (nodes.empty())
  {
    CANOPY_THROW(where << ": the tree has no nodes");
  }
  if (!(epsilon1 >= 0.0f && epsilon1 <= 0.5f) || !(epsilon2 >= 0.0f && epsilon2 <= 0.5f))
  {
    CANOPY_THROW(where << ": epsilon1 and epsilon2 must lie in [0, 0.5]");
  }
  if (featureFamily == PBTFeatureFamily::Haar)
  {
    for (int d = 0; d < 3; ++d)
    {
      if (sampleBox[d] < 1 || sampleBox[d] > 4096)
      {
        CANOPY_THROW(where << ": sample box must be 1..4096 voxels per axis, got " << sampleBox[d]);
      }
    }
  }
  else
  {
    const auto & levels =
      steerable.pyramid.levelFactors.empty() ? steerable.pyramid.levelSpacingsMm : steerable.pyramid.levelFactors;
    for (double level : levels)
    {
      if (!(std::isfinite(level) && level > 0.0))
      {
        CANOPY_THROW(where << ": steerable pyramid levels must be finite and > 0, got " << level);
      }
    }
    try
    {
      ValidateSteerableGrid(steerable.grid, steerable.NumberOfLevels());
      ValidateSteerableFeatures(steerable.grid, steerable.NumberOfLevels(), steerable.features);
    }
    catch (const canopy::Error & e)
    {
      CANOPY_THROW(where << ": " << e.GetDescription());
    }
  }
  const int        numFeatures = NumberOfFeatures();
  const int        numNodes = static_cast<int>(nodes.size());
  std::vector<int> parents(nodes.size(), 0);
  for (int i = 0; i < numNodes; ++i)
  {
    const PBTNodeFlat & n = nodes[i];
    for (int child : { n.left, n.right })
    {
      if (child < -1 || child >= numNodes || child == 0)
      {
        CANOPY_THROW(where << ": node " << i << " has an invalid child index " << child);
      }
      if (child > 0 && ++parents[child] > 1)
      {
        CANOPY_THROW(where << ": node " << child << " has more than one parent");
      }
    }
    if (!(n.empiricalPositive >= 0.0f && n.empiricalPositive <= 1.0f))
    {
      CANOPY_THROW(where << ": node " << i << " has an empirical probability outside [0, 1]");
    }
    if (!std::isfinite(n.calibrationScale) || !std::isfinite(n.calibrationOffset))
    {
      CANOPY_THROW(where << ": node " << i << " has a non-finite calibration");
    }
    if (n.numLearners < 0 || n.firstLearner < 0 ||
        static_cast<std::size_t>(n.firstLearner) + n.numLearners > learners.size())
    {
      CANOPY_THROW(where << ": node " << i << " refers to weak learners outside the model");
    }
    if (!IsLeaf(n) && n.numLearners == 0)
    {
      CANOPY_THROW(where << ": inner node " << i << " has no weak learners");
    }
  }
  for (std::size_t i = 0; i < learners.size(); ++i)
  {
    const PBTWeakLearnerFlat & w = learners[i];
    if (w.feature < 0 || w.feature >= numFeatures)
    {
      CANOPY_THROW(where << ": weak learner " << i << " uses feature " << w.feature << " of " << numFeatures);
    }
    if (w.numBins < 1 || w.numBins > 4096 || w.tableOffset < 0 ||
        static_cast<std::size_t>(w.tableOffset) + w.numBins > tables.size())
    {
      CANOPY_THROW(where << ": weak learner " << i << " has an invalid table range");
    }
    if (!std::isfinite(w.lo) || !std::isfinite(w.invBinWidth))
    {
      CANOPY_THROW(where << ": weak learner " << i << " has a non-finite bin range");
    }
  }
  for (float t : tables)
  {
    if (!std::isfinite(t))
    {
      CANOPY_THROW(where << ": a weak-learner table holds a non-finite value");
    }
  }
  if (Depth() > kPBTMaxDepth)
  {
    CANOPY_THROW(where << ": the tree is deeper than " << kPBTMaxDepth << " levels (or cyclic)");
  }
}

namespace
{
// Keeps the entries of `bank` the learners use, in order of first use, and renumbers the learners.
template<typename TFeature>
void
CompactBank(std::vector<PBTWeakLearnerFlat> & learners, std::vector<TFeature> & bank)
{
  std::unordered_map<int, int> remap;
  std::vector<TFeature>        used;
  for (auto & learner : learners)
  {
    auto [it, inserted] = remap.emplace(learner.feature, static_cast<int>(used.size()));
    if (inserted)
    {
      used.push_back(bank.at(learner.feature));
    }
    learner.feature = it->second;
  }
  bank = std::move(used);
}
} // namespace

void
PBTModel::CompactFeatures()
{
  if (featureFamily == PBTFeatureFamily::Steerable)
  {
    CompactBank(learners, steerable.features);
  }
  else
  {
    CompactBank(learners, features);
  }
}

} // namespace canopy
