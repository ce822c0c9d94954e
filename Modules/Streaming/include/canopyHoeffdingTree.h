// A Hoeffding tree (VFDT; Domingos & Hulten 2000) learning one instance at a time with integer
// weights. Every gracePeriod weight a leaf compares the best two split candidates of the attributes
// it observes: it splits when their merit differs by more than the Hoeffding bound for delta, or the
// bound falls below the tie threshold tau. Nominal attributes split multiway (one child per value);
// numeric ones split in two at one of numericSplitPoints thresholds spread evenly between the smallest
// and largest value seen, the class weights on each side estimated from per-class Gaussians (MOA's
// default GaussianNumericAttributeClassObserver with its 10 points).
//
// Storage suits a later GPU forest: the nodes are a growing pool of parallel arrays (no 2^depth
// layout), and each leaf owns a slot of flat statistics arrays (class counts; per-attribute,
// per-value, per-class counts; per-attribute, per-class Gaussians), as Marron et al.'s "leaf ids".
// Splitting reuses the leaf's slot for its first child.
#pragma once

#include "canopy/HoeffdingTreeFlat.h"
#include "canopySplitScreen.h"
#include "canopyStreamSchema.h"

#include <cstdint>
#include <string>
#include <vector>

namespace canopy::streaming
{

// MajorityClass, NaiveBayes, or NaiveBayesAdaptive: naive Bayes where it has predicted the leaf's
// training instances better (MOA).
using LeafPrediction = canopy::HoeffdingLeafPrediction;

struct HoeffdingTreeOptions
{
  int            gracePeriod = 200;      // n_min: weight a leaf sees between split attempts
  double         splitConfidence = 1e-7; // delta of the Hoeffding bound
  double         tieThreshold = 0.05;    // tau
  SplitCriterion criterion = SplitCriterion::InfoGain;
  LeafPrediction leafPrediction = LeafPrediction::NaiveBayesAdaptive;
  int            subspaceSize = 0;        // attributes observed per leaf, drawn at random; 0: all
  int            numericSplitPoints = 10; // candidate thresholds per numeric attribute
  int            maxDepth = 0;            // 0: unlimited
  // Naive Bayes at leaves: a class's Gaussian without spread (no value yet, or one value, perhaps with
  // a Poisson weight > 1) gives no factor (river) instead of 1 at its mean and 0 elsewhere (MOA). A
  // tree's default is MOA's; the forest's (StreamingForestOptions::DefaultTreeOptions) river's.
  bool skipFlatGaussians = false;
  std::uint64_t  seed = 0;                // draws of the leaves' attribute subsets
};

/** The tree's nodes, one entry per node in each array. */
struct HoeffdingTreeNodes
{
  std::vector<std::int32_t> attribute;     // the split attribute; -1 at a leaf
  std::vector<float>        threshold;     // numeric splits: values <= threshold go to the first child
  std::vector<std::int32_t> child;         // inner node: its first child (children are contiguous); leaf: its slot
  std::vector<std::int32_t> missingBranch; // the child a missing value follows (the heaviest at split time)
  std::vector<std::int32_t> depth;
};

/** Everything a tree holds besides its schema and options: nodes and leaf slots (for saving a model). */
struct HoeffdingTreeState
{
  std::uint64_t                  streamKey = 0, leavesCreated = 0;
  HoeffdingTreeNodes             nodes;
  std::vector<std::uint32_t>     classCounts, nominalCounts; // slot * classes, slot * nominal stride
  std::vector<GaussianEstimator> gaussians;                  // slot * numeric stride
  std::vector<std::int32_t>      subspace;                   // slot * subspace size
  std::vector<std::uint32_t>     weight, weightAtLastCheck, majorityCorrect, bayesCorrect;
  std::vector<std::int32_t>      slotDepth;
};

/** Checks that a state is a tree this schema and options could have grown, so that routing, learning and
 * splitting stay inside its arrays: array sizes, one tree over the nodes (children contiguous, after
 * their parent, each node one parent, depths), every slot one leaf's, attributes, branches, thresholds
 * and Gaussians in range. Throws canopy::Error starting with `context` and naming the field. */
void
ValidateHoeffdingTreeState(const HoeffdingTreeState &   state,
                           const StreamSchema &         schema,
                           const HoeffdingTreeOptions & options,
                           const std::string &          context);

class HoeffdingTree
{
public:
  HoeffdingTree(const StreamSchema & schema, const HoeffdingTreeOptions & options, std::uint64_t streamKey = 0);
  /** A tree as State() returned it (validated: ValidateHoeffdingTreeState). */
  HoeffdingTree(const StreamSchema & schema, const HoeffdingTreeOptions & options, const HoeffdingTreeState & state);

  HoeffdingTreeState State() const;

  /** Class votes for x, summing to 1 (all 0 before anything was learnt), into votes[classes]. */
  void Predict(const float * x, double * votes) const;
  /** The most voted class (ties: the smallest index). */
  int PredictClass(const float * x) const;
  /** Learns one instance, then checks its leaf for a split when due. */
  void Learn(const float * x, int label, std::uint32_t weight = 1);

  // Batch learning (the forest's way, and the CUDA forest's): route and score the batch on the tree
  // as it is, learn every instance at the leaf found, then check all due leaves in node order.
  int LeafNode(const float * x) const;
  /** Leaf votes at a leaf node found by LeafNode (as Predict). */
  void LeafNodeVotes(int node, const float * x, double * votes) const;
  /** LeafNodeVotes and ScoreLeaf at once (naive Bayes computed once); returns the score bits. */
  std::uint8_t LeafNodeVotesAndScore(int node, const float * x, int label, double * votes) const;
  /** NBAdaptive's scores of the leaf's predictors on (x, label) (HoeffdingScoreLeaf). */
  std::uint8_t ScoreLeaf(int node, const float * x, int label) const;
  void         LearnAtLeaf(int node, const float * x, int label, std::uint32_t weight, std::uint8_t scoreBits);
  /** Split checks of every leaf that has seen gracePeriod weight since its last check, in node order. */
  void AttemptDueSplits();

  int                        NumberOfNodes() const { return int(m_Nodes.attribute.size()); }
  int                        NumberOfLeaves() const { return m_Leaves; }
  int                        Depth() const;
  const HoeffdingTreeNodes & Nodes() const { return m_Nodes; }
  const std::uint32_t * LeafClassCounts(int slot) const { return m_ClassCounts.data() + std::size_t(slot) * m_Classes; }
  int                   NumberOfSlots() const { return int(m_Weight.size()); }
  /** The shared math's view of this tree (HoeffdingTreeFlat.h); valid until the tree grows. */
  HoeffdingTreeShape Shape() const
  {
    HoeffdingTreeShape s = m_Shape; // its arrays from this tree, whatever copies were made
    s.values = m_Values.data();
    s.offset = m_Offset.data();
    return s;
  }
  HoeffdingTreeView View() const;

private:
  int  NewLeafSlot(int reuseSlot, const std::uint32_t * initialCounts, int depth);
  void AttemptSplit(int node);

  HoeffdingTreeOptions      m_Options;
  std::uint64_t             m_StreamKey;
  int                       m_Classes, m_Attributes, m_SubspaceSize;
  std::vector<std::int32_t> m_Values; // per attribute: number of nominal values, 0 for numeric
  std::vector<std::int32_t> m_Offset; // per attribute: offset in a slot's nominal counts or Gaussians
  int                       m_NominalStride = 0, m_NumericStride = 0;
  HoeffdingTreeShape        m_Shape; // the options and sizes; Shape() adds the arrays
  SplitScreenConstants      m_SplitScreen; // AttemptSplit's screen (canopySplitScreen.h)

  HoeffdingTreeNodes m_Nodes;
  int                m_Leaves = 0;
  std::uint64_t      m_LeavesCreated = 0;
  // Leaf slots.
  std::vector<std::uint32_t>     m_ClassCounts;   // slot * classes
  std::vector<std::uint32_t>     m_NominalCounts; // slot * nominalStride + offset + value * classes + class
  std::vector<GaussianEstimator> m_Gaussians;     // slot * numericStride + offset + class
  std::vector<std::int32_t>      m_Subspace;      // slot * subspaceSize: observed attributes
  std::vector<std::uint32_t>     m_Weight, m_WeightAtLastCheck, m_MajorityCorrect, m_BayesCorrect;
  std::vector<std::int32_t>      m_SlotDepth;
  std::vector<std::uint32_t>     m_ChildCounts; // AttemptSplit's scratch (the children's class counts)
};

} // namespace canopy::streaming
