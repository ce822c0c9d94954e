#include "canopyHoeffdingTree.h"

#include "canopy/Errors.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

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
  m_Shape.skipFlatGaussians = m_Options.skipFlatGaussians;
  m_Shape.splitConfidence = m_Options.splitConfidence;
  m_Shape.tieThreshold = m_Options.tieThreshold;
  m_SplitScreen = SplitScreenConstantsOf(m_Shape);
  NewLeafSlot(-1, nullptr, 0);
  m_Nodes.attribute.push_back(-1);
  m_Nodes.threshold.push_back(0.0f);
  m_Nodes.child.push_back(0);
  m_Nodes.missingBranch.push_back(0);
  m_Nodes.depth.push_back(0);
  m_Leaves = 1;
}

HoeffdingTree::HoeffdingTree(const StreamSchema &         schema,
                             const HoeffdingTreeOptions & options,
                             const HoeffdingTreeState &   state)
  : HoeffdingTree(schema, options, state.streamKey)
{
  ValidateHoeffdingTreeState(state, schema, options, "Hoeffding tree state");
  m_LeavesCreated = state.leavesCreated;
  m_Nodes = state.nodes;
  m_ClassCounts = state.classCounts;
  m_NominalCounts = state.nominalCounts;
  m_Gaussians = state.gaussians;
  m_Subspace = state.subspace;
  m_Weight = state.weight;
  m_WeightAtLastCheck = state.weightAtLastCheck;
  m_MajorityCorrect = state.majorityCorrect;
  m_BayesCorrect = state.bayesCorrect;
  m_SlotDepth = state.slotDepth;
  m_Leaves = int(m_Weight.size()); // every slot is one leaf's (validated)
}

HoeffdingTreeState
HoeffdingTree::State() const
{
  return { m_StreamKey,         m_LeavesCreated,   m_Nodes,        m_ClassCounts,
           m_NominalCounts,     m_Gaussians,       m_Subspace,     m_Weight,
           m_WeightAtLastCheck, m_MajorityCorrect, m_BayesCorrect, m_SlotDepth };
}

void
ValidateHoeffdingTreeState(const HoeffdingTreeState &   t,
                           const StreamSchema &         schema,
                           const HoeffdingTreeOptions & options,
                           const std::string &          context)
{
  const std::size_t C = std::size_t(schema.NumberOfClasses());
  const int         A = schema.NumberOfAttributes();
  std::size_t       nominalStride = 0, numericStride = 0;
  for (const auto & a : schema.attributes)
    (a.nominal ? nominalStride : numericStride) += a.nominal ? a.values.size() * C : C;
  const std::size_t subspaceSize =
    options.subspaceSize > 0 ? std::size_t(std::min(options.subspaceSize, A)) : std::size_t(A);
  const HoeffdingTreeNodes & n = t.nodes;
  const std::size_t          N = n.attribute.size(), S = t.weight.size();
  auto                       fail = [&](const std::string & field, const std::string & what)
  { CANOPY_THROW(context << ": \"" << field << "\" " << what); };
  auto size = [&](const char * field, std::size_t got, std::size_t want)
  {
    if (got != want)
      fail(field, "has " + std::to_string(got) + " entries; " + std::to_string(want) + " expected");
  };
  if (N == 0)
    fail("attribute", "is empty: a tree has at least its root");
  if (S == 0)
    fail("weight", "is empty: a tree has at least one leaf slot");
  size("threshold", n.threshold.size(), N);
  size("child", n.child.size(), N);
  size("missingBranch", n.missingBranch.size(), N);
  size("depth", n.depth.size(), N);
  size("classCounts", t.classCounts.size(), S * C);
  size("nominalCounts", t.nominalCounts.size(), S * nominalStride);
  size("gaussians", t.gaussians.size(), S * numericStride);
  size("subspace", t.subspace.size(), S * subspaceSize);
  size("weightAtLastCheck", t.weightAtLastCheck.size(), S);
  size("majorityCorrect", t.majorityCorrect.size(), S);
  size("bayesCorrect", t.bayesCorrect.size(), S);
  size("slotDepth", t.slotDepth.size(), S);
  // One tree: node 0 the root; an inner node's children a contiguous run after it; each other node the
  // child of exactly one node (so no cycles, and every node reachable); every slot one leaf's.
  std::vector<std::uint8_t> hasParent(N, 0), slotUsed(S, 0);
  if (n.depth[0] != 0)
    fail("depth", "of the root is " + std::to_string(n.depth[0]) + ", not 0");
  for (std::size_t k = 0; k < N; ++k)
  {
    const std::string at = " at node " + std::to_string(k);
    const int         a = n.attribute[k];
    if (a < -1 || a >= A)
      fail("attribute", "is " + std::to_string(a) + at + " (-1 for a leaf, else 0 to " + std::to_string(A - 1) + ")");
    if (a < 0)
    {
      const std::int64_t slot = n.child[k];
      if (slot < 0 || std::size_t(slot) >= S)
        fail("child",
             "of leaf node " + std::to_string(k) + " is slot " + std::to_string(slot) + ", not 0 to " +
               std::to_string(S - 1));
      if (slotUsed[std::size_t(slot)]++)
        fail("child", "of leaf node " + std::to_string(k) + ": slot " + std::to_string(slot) + " has two leaves");
      if (t.slotDepth[std::size_t(slot)] != n.depth[k])
        fail("slotDepth", "of slot " + std::to_string(slot) + " differs from its leaf's depth");
      continue;
    }
    const std::int64_t branches =
      schema.attributes[std::size_t(a)].nominal ? std::int64_t(schema.attributes[std::size_t(a)].values.size()) : 2;
    const std::int64_t first = n.child[k];
    if (first <= std::int64_t(k) || first + branches > std::int64_t(N))
      fail("child",
           "of node " + std::to_string(k) + " is " + std::to_string(first) + ": its " + std::to_string(branches) +
             " children must lie after it and before " + std::to_string(N));
    if (n.missingBranch[k] < 0 || n.missingBranch[k] >= branches)
      fail("missingBranch", "is " + std::to_string(n.missingBranch[k]) + at);
    if (!std::isfinite(n.threshold[k]))
      fail("threshold", "is not finite" + at);
    for (std::int64_t b = 0; b < branches; ++b)
    {
      const std::size_t c = std::size_t(first + b);
      if (hasParent[c]++)
        fail("child", "of node " + std::to_string(k) + ": node " + std::to_string(c) + " has two parents");
      if (std::int64_t(n.depth[c]) != std::int64_t(n.depth[k]) + 1)
        fail("depth", "of node " + std::to_string(c) + " is not its parent's + 1");
    }
  }
  for (std::size_t k = 1; k < N; ++k)
    if (!hasParent[k])
      fail("child", "lists no parent of node " + std::to_string(k));
  for (std::size_t s = 0; s < S; ++s)
    if (!slotUsed[s])
      fail("child", "names no leaf of slot " + std::to_string(s));
  for (std::size_t k = 0; k < t.subspace.size(); ++k)
    if (t.subspace[k] < 0 || t.subspace[k] >= A)
      fail("subspace", "holds attribute " + std::to_string(t.subspace[k]) + " (0 to " + std::to_string(A - 1) + ")");
  for (std::size_t k = 0; k < t.gaussians.size(); ++k)
  {
    const GaussianEstimator & g = t.gaussians[k];
    const bool fresh = g.weight == 0 && g.mean == 0.0 && g.m2 == 0.0 && std::isinf(g.minValue) && g.minValue > 0 &&
                       std::isinf(g.maxValue) && g.maxValue < 0;
    const bool used = g.weight > 0 && std::isfinite(g.mean) && std::isfinite(g.m2) && g.m2 >= 0.0 &&
                      std::isfinite(g.minValue) && std::isfinite(g.maxValue) && g.minValue <= g.maxValue;
    if (!fresh && !used)
      fail("gaussians", "entry " + std::to_string(k) + " is neither unused nor finite with min <= max");
  }
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
  // HoeffdingSplitDue on the arrays themselves: a view per node was ~1% of a forest's time.
  // One branch per node, on "a leaf and due": leaves and inner nodes alternate in the pool without a
  // pattern, so a branch on "leaf" was mispredicted often. An inner node reads slot 0's weights (slot 0
  // always exists: the root's, reused by a split's first child) and is not due.
  const int           nodes = NumberOfNodes();
  const std::uint32_t grace = std::uint32_t(m_Options.gracePeriod);
  for (int node = 0; node < nodes; ++node)
  {
    // Masks, not conditions: the compiler turned "leaf ? child : 0" back into the branch.
    const std::uint32_t leafMask = std::uint32_t(m_Nodes.attribute[std::size_t(node)] >> 31); // ~0 for a leaf
    const std::size_t   slot = std::uint32_t(m_Nodes.child[std::size_t(node)]) & leafMask;
    const std::uint32_t dueMask = leafMask & (0u - std::uint32_t(m_Weight[slot] - m_WeightAtLastCheck[slot] >= grace));
    if (dueMask == 0)
      continue;
    m_WeightAtLastCheck[slot] = m_Weight[slot];
    AttemptSplit(node);
  }
}

void
HoeffdingTree::AttemptSplit(int node)
{
  const int      slot = m_Nodes.child[node];
  HoeffdingSplit split;
  // Kept between checks: a forest checks ~0.1 leaves per tree and instance, most without a split, and an
  // allocation each time was a few % of its time.
  std::vector<std::uint32_t> & childCounts = m_ChildCounts;
  childCounts.resize(std::size_t(std::max(2, m_NominalStride / m_Classes)) * m_Classes);
  const HoeffdingTreeShape shape = Shape();
  const HoeffdingTreeView  view = View();
  if (CertainlyNoSplit(shape, view, slot, m_SplitScreen) ||
      !HoeffdingDecideSplit(shape, view, slot, split, childCounts.data()))
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
