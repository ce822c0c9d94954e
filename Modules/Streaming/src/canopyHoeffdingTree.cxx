#include "canopyHoeffdingTree.h"

#include "canopy/Errors.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace canopy::streaming
{
HoeffdingTree::HoeffdingTree(const StreamSchema & schema, const HoeffdingTreeOptions & options, std::uint64_t streamKey)
  : m_Options(options)
  , m_StreamKey(streamKey)
  , m_Classes(schema.NumberOfClasses())
  , m_Attributes(schema.NumberOfAttributes())
{
  if (m_Classes < 2)
    CANOPY_THROW("Hoeffding tree: the stream has " << m_Classes << " classes; at least 2 are needed");
  if (m_Classes > kHoeffdingMaxClasses)
    CANOPY_THROW("Hoeffding tree: the stream has " << m_Classes << " classes; at most " << kHoeffdingMaxClasses
                                                   << " are supported");
  if (m_Options.gracePeriod < 1 || !(m_Options.splitConfidence > 0.0 && m_Options.splitConfidence < 1.0) ||
      m_Options.numericSplitPoints < 1)
    CANOPY_THROW("Hoeffding tree: grace period and split points must be >= 1 and delta in (0, 1)");
  m_SubspaceSize = m_Options.subspaceSize > 0 ? std::min(m_Options.subspaceSize, m_Attributes) : m_Attributes;
  for (const auto & a : schema.attributes)
  {
    m_Values.push_back(a.nominal ? int(a.values.size()) : 0);
    if (a.nominal)
    {
      m_Offset.push_back(m_NominalStride);
      m_NominalStride += int(a.values.size()) * m_Classes;
    }
    else
    {
      m_Offset.push_back(m_NumericStride);
      m_NumericStride += m_Classes;
    }
  }
  m_Shape.classes = m_Classes;
  m_Shape.attributes = m_Attributes;
  m_Shape.subspaceSize = m_SubspaceSize;
  m_Shape.nominalStride = m_NominalStride;
  m_Shape.numericStride = m_NumericStride;
  m_Shape.criterion = m_Options.criterion;
  m_Shape.leafPrediction = m_Options.leafPrediction;
  m_Shape.numericSplitPoints = m_Options.numericSplitPoints;
  m_Shape.maxDepth = m_Options.maxDepth;
  m_Shape.splitConfidence = m_Options.splitConfidence;
  m_Shape.tieThreshold = m_Options.tieThreshold;
  NewLeafSlot(-1, nullptr, 0);
  m_Nodes.attribute.push_back(-1);
  m_Nodes.threshold.push_back(0.0f);
  m_Nodes.child.push_back(0);
  m_Nodes.missingBranch.push_back(0);
  m_Nodes.depth.push_back(0);
  m_Leaves = 1;
}

int
HoeffdingTree::NewLeafSlot(int reuseSlot, const std::uint32_t * initialCounts, int depth)
{
  int slot = reuseSlot;
  if (slot < 0)
  {
    slot = int(m_Weight.size());
    m_ClassCounts.resize(m_ClassCounts.size() + m_Classes);
    m_NominalCounts.resize(m_NominalCounts.size() + m_NominalStride);
    m_Gaussians.resize(m_Gaussians.size() + m_NumericStride);
    m_Subspace.resize(m_Subspace.size() + m_SubspaceSize);
    m_Weight.push_back(0);
    m_WeightAtLastCheck.push_back(0);
    m_MajorityCorrect.push_back(0);
    m_BayesCorrect.push_back(0);
    m_SlotDepth.push_back(0);
  }
  std::vector<std::int32_t> order(m_Attributes);
  HoeffdingDrawSubspace(m_Options.seed, m_StreamKey, m_LeavesCreated++, m_Attributes, m_SubspaceSize, order.data());
  HoeffdingInitSlot(Shape(), View(), slot, initialCounts, depth, order.data());
  return slot;
}

HoeffdingTreeView
HoeffdingTree::View() const
{
  // The shared functions take one view type for reading and writing; const methods only read.
  auto &            self = const_cast<HoeffdingTree &>(*this);
  HoeffdingTreeView v;
  v.attribute = self.m_Nodes.attribute.data();
  v.threshold = self.m_Nodes.threshold.data();
  v.child = self.m_Nodes.child.data();
  v.missingBranch = self.m_Nodes.missingBranch.data();
  v.classCounts = self.m_ClassCounts.data();
  v.nominalCounts = self.m_NominalCounts.data();
  v.gaussians = self.m_Gaussians.data();
  v.subspace = self.m_Subspace.data();
  v.weight = self.m_Weight.data();
  v.weightAtLastCheck = self.m_WeightAtLastCheck.data();
  v.majorityCorrect = self.m_MajorityCorrect.data();
  v.bayesCorrect = self.m_BayesCorrect.data();
  v.slotDepth = self.m_SlotDepth.data();
  return v;
}

int
HoeffdingTree::LeafNode(const float * x) const
{
  return HoeffdingFindLeafNode(Shape(), View(), x);
}

void
HoeffdingTree::LeafNodeVotes(int node, const float * x, double * votes) const
{
  HoeffdingLeafVotes(Shape(), View(), m_Nodes.child[node], x, votes);
}

void
HoeffdingTree::Predict(const float * x, double * votes) const
{
  LeafNodeVotes(LeafNode(x), x, votes);
}

int
HoeffdingTree::PredictClass(const float * x) const
{
  double votes[kHoeffdingMaxClasses];
  Predict(x, votes);
  return HoeffdingArgMax(votes, m_Classes);
}

std::uint8_t
HoeffdingTree::LeafNodeVotesAndScore(int node, const float * x, int label, double * votes) const
{
  double scratch[kHoeffdingMaxClasses];
  return HoeffdingVoteAndScore(Shape(), View(), m_Nodes.child[node], x, label, votes, scratch);
}

std::uint8_t
HoeffdingTree::ScoreLeaf(int node, const float * x, int label) const
{
  double votes[kHoeffdingMaxClasses];
  return HoeffdingScoreLeaf(Shape(), View(), m_Nodes.child[node], x, label, votes);
}

void
HoeffdingTree::LearnAtLeaf(int node, const float * x, int label, std::uint32_t weight, std::uint8_t scoreBits)
{
  if (weight == 0)
    return;
  const HoeffdingTreeShape s = Shape();
  const HoeffdingTreeView  v = View();
  const int                slot = m_Nodes.child[node];
  HoeffdingLearnCounts(s, v, slot, label, weight, scoreBits);
  for (int j = 0; j < m_SubspaceSize; ++j)
    HoeffdingLearnAttribute(s, v, slot, j, x, label, weight);
}

void
HoeffdingTree::Learn(const float * x, int label, std::uint32_t weight)
{
  if (weight == 0)
    return;
  const int node = LeafNode(x);
  LearnAtLeaf(node, x, label, weight, ScoreLeaf(node, x, label));
  const int slot = m_Nodes.child[node];
  if (HoeffdingSplitDue(View(), slot, m_Options.gracePeriod))
  {
    m_WeightAtLastCheck[slot] = m_Weight[slot];
    AttemptSplit(node);
  }
}

void
HoeffdingTree::AttemptDueSplits()
{
  // Splits append nodes whose fresh slots are not due, so the loop need not see them.
  const int nodes = NumberOfNodes();
  for (int node = 0; node < nodes; ++node)
  {
    if (m_Nodes.attribute[node] >= 0)
      continue;
    const int slot = m_Nodes.child[node];
    if (!HoeffdingSplitDue(View(), slot, m_Options.gracePeriod))
      continue;
    m_WeightAtLastCheck[slot] = m_Weight[slot];
    AttemptSplit(node);
  }
}

void
HoeffdingTree::AttemptSplit(int node)
{
  const int                  slot = m_Nodes.child[node];
  HoeffdingSplit             split;
  std::vector<std::uint32_t> childCounts(std::size_t(std::max(2, m_NominalStride / m_Classes)) * m_Classes);
  if (!HoeffdingDecideSplit(Shape(), View(), slot, split, childCounts.data()))
    return;
  const int a = split.attribute;
  const int branches = split.branches;
  const int depth = m_SlotDepth[slot] + 1;
  const int firstChild = NumberOfNodes();
  m_Nodes.attribute[node] = a;
  m_Nodes.threshold[node] = split.threshold;
  m_Nodes.child[node] = firstChild;
  m_Nodes.missingBranch[node] = split.heaviest;
  for (int b = 0; b < branches; ++b)
  {
    const int childSlot = NewLeafSlot(b == 0 ? slot : -1, childCounts.data() + std::size_t(b) * m_Classes, depth);
    m_Nodes.attribute.push_back(-1);
    m_Nodes.threshold.push_back(0.0f);
    m_Nodes.child.push_back(childSlot);
    m_Nodes.missingBranch.push_back(0);
    m_Nodes.depth.push_back(depth);
  }
  m_Leaves += branches - 1;
}

int
HoeffdingTree::Depth() const
{
  int depth = 0;
  for (int d : m_Nodes.depth)
    depth = std::max(depth, d);
  return depth;
}

} // namespace canopy::streaming
