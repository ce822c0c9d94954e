#include "canopyForestModel.h"

#include "canopy/Errors.h"

#include <algorithm>
#include <cmath>

namespace canopy
{

int
ForestModel::NumberOfDistributions() const
{
  return numClasses > 0 ? static_cast<int>(distributions.size() / static_cast<std::size_t>(numClasses)) : 0;
}

int
ForestModel::TreeSize(int t) const
{
  const std::size_t end = t + 1 < NumberOfTrees() ? static_cast<std::size_t>(treeRoots[t + 1]) : nodes.size();
  return static_cast<int>(end - static_cast<std::size_t>(treeRoots[t]));
}

int
ForestModel::Depth() const
{
  // Children come after their parents, so one forward pass gives every node's level.
  std::vector<int> level(nodes.size(), 0);
  int              deepest = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i)
  {
    deepest = std::max(deepest, level[i]);
    if (!ForestIsLeaf(nodes[i]))
    {
      level[nodes[i].left] = level[nodes[i].left + 1] = level[i] + 1;
    }
  }
  return deepest;
}

ForestView
ForestModel::View() const
{
  ForestView v;
  v.nodes = nodes.data();
  v.treeRoots = treeRoots.data();
  v.distributions = distributions.data();
  v.numTrees = NumberOfTrees();
  v.numNodes = static_cast<int>(nodes.size());
  v.numClasses = numClasses;
  v.numDistributions = NumberOfDistributions();
  return v;
}

void
ForestModel::Validate(const std::string & context) const
{
  if (dimension != 2 && dimension != 3)
  {
    CANOPY_THROW(context << ": dimension " << dimension << " must be 2 or 3");
  }
  if (numChannels < 1 || numChannels > 256)
  {
    CANOPY_THROW(context << ": channel count " << numChannels << " must be in [1, 256]");
  }
  if (numClasses < 1)
  {
    CANOPY_THROW(context << ": class count " << numClasses << " must be positive");
  }
  if (treeRoots.empty() || treeRoots.size() > static_cast<std::size_t>(kForestMaxTrees))
  {
    CANOPY_THROW(context << ": " << treeRoots.size() << " trees; 1 to " << kForestMaxTrees << " are supported");
  }
  if (nodes.size() > static_cast<std::size_t>(INT32_MAX / 2))
  {
    CANOPY_THROW(context << ": " << nodes.size() << " nodes are too many");
  }
  if (distributions.size() % static_cast<std::size_t>(numClasses) != 0)
  {
    CANOPY_THROW(context << ": " << distributions.size() << " distribution values are not a multiple of "
                         << numClasses << " classes");
  }
  for (float p : distributions)
  {
    if (!std::isfinite(p) || p < 0.0f)
    {
      CANOPY_THROW(context << ": a leaf distribution holds " << p << " (must be finite and non-negative)");
    }
  }
  const int distributionsCount = NumberOfDistributions();
  for (int t = 0; t < NumberOfTrees(); ++t)
  {
    const std::int64_t begin = treeRoots[t];
    const std::int64_t end = t + 1 < NumberOfTrees() ? treeRoots[t + 1] : static_cast<std::int64_t>(nodes.size());
    if (t == 0 && begin != 0)
    {
      CANOPY_THROW(context << ": tree 0 must start at node 0, not " << begin);
    }
    if (end <= begin || end > static_cast<std::int64_t>(nodes.size()))
    {
      CANOPY_THROW(context << ": tree " << t << " has root " << begin << " and end " << end
                           << " (trees must be non-empty and in order within " << nodes.size() << " nodes)");
    }
    for (std::int64_t i = begin; i < end; ++i)
    {
      const ForestNode & n = nodes[i];
      if (ForestIsLeaf(n))
      {
        const int d = ForestLeafDistribution(n);
        if (d >= distributionsCount)
        {
          CANOPY_THROW(context << ": tree " << t << " node " << i - begin << " is a leaf of distribution " << d
                               << " but there are " << distributionsCount);
        }
        continue;
      }
      if (n.left <= i || n.left + 1 >= end)
      {
        CANOPY_THROW(context << ": tree " << t << " node " << i - begin << " has children " << n.left - begin << ", "
                             << n.left + 1 - begin << " (must follow the node, inside its tree of " << end - begin
                             << " nodes)");
      }
      if (std::isnan(n.threshold[0]) || std::isnan(n.threshold[1]))
      {
        CANOPY_THROW(context << ": tree " << t << " node " << i - begin << " has a NaN threshold");
      }
      for (int b = 0; b < 2; ++b)
      {
        const ForestFeature & f = n.feature;
        if (f.channel[b] >= numChannels)
        {
          CANOPY_THROW(context << ": tree " << t << " node " << i - begin << " reads channel " << int(f.channel[b])
                               << " of " << numChannels);
        }
        if (f.size[b][0] < 1 || f.size[b][1] < 1 || f.size[b][2] < 1)
        {
          CANOPY_THROW(context << ": tree " << t << " node " << i - begin << " has an empty box");
        }
        if (dimension == 2 && (f.offset[b][2] != 0 || f.size[b][2] != 1))
        {
          CANOPY_THROW(context << ": tree " << t << " node " << i - begin
                               << " has a 3D box (z offset/size must be 0/1 in a 2D model)");
        }
      }
    }
  }
}

} // namespace canopy
