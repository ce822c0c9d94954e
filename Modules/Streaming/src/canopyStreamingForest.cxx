#include "canopyStreamingForest.h"

#include "canopy/CounterRandom.h"
#include "canopy/Errors.h"
#include "canopyNominalLeafVotes.h"
#include "canopyPoissonBuckets.h"
#include "canopyTreeParallel.h"

#include <algorithm>
#include <cmath>

namespace canopy::streaming
{
namespace
{
/** Asks for the cache lines a leaf's votes read (class counts, predictor scores, subspace, nominal
 * counts or Gaussians); a hint only. */
void
PrefetchSlot(const HoeffdingTreeShape & s, const HoeffdingTreeView & v, int slot)
{
  const std::int64_t sl = slot;
  __builtin_prefetch(v.classCounts + sl * s.classes);
  __builtin_prefetch(v.majorityCorrect + sl);
  __builtin_prefetch(v.bayesCorrect + sl);
  __builtin_prefetch(v.subspace + sl * s.subspaceSize);
  const char * nominal = reinterpret_cast<const char *>(v.nominalCounts + sl * s.nominalStride);
  for (std::size_t b = 0; b < std::size_t(s.nominalStride) * sizeof(std::uint32_t); b += 64)
    __builtin_prefetch(nominal + b);
  const char * gaussians = reinterpret_cast<const char *>(v.gaussians + sl * s.numericStride);
  for (std::size_t b = 0; b < std::size_t(s.numericStride) * sizeof(GaussianEstimator) && b < 512; b += 64)
    __builtin_prefetch(gaussians + b);
}

/** HoeffdingFindLeafNode for the kLanes instances from `first` at once: every lane steps one level per
 * round and a lane at its leaf stays there (a select, not a branch), so the lanes' loads overlap and the
 * loop ends once per group rather than once per instance at a depth the core cannot predict. The same
 * branch rules, so the same leaves. */
template<int kLanes>
void
FindLeafNodes(const HoeffdingTreeShape & s,
              const HoeffdingTreeView &  t,
              const InstanceBatch &      batch,
              std::size_t                first,
              std::int32_t *             leaves)
{
  int           node[kLanes];
  const float * x[kLanes];
  for (int l = 0; l < kLanes; ++l)
  {
    node[l] = 0;
    x[l] = batch.Row(first + std::size_t(l));
  }
  for (bool any = true; any;)
  {
    any = false;
    for (int l = 0; l < kLanes; ++l)
    {
      const int   a = t.attribute[node[l]];
      const bool  inner = a >= 0;
      const int   read = inner ? a : 0; // a lane at its leaf reads attribute 0 and ignores it
      const float v = x[l][read];
      int         branch;
      if (HoeffdingIsMissing(v))
        branch = t.missingBranch[node[l]];
      else if (s.values[read] > 0)
        branch = int(v);
      else
        branch = v <= t.threshold[node[l]] ? 0 : 1;
      const int next = t.child[node[l]] + branch;
      node[l] = inner ? next : node[l];
      any = any || inner;
    }
  }
  for (int l = 0; l < kLanes; ++l)
    leaves[first + std::size_t(l)] = node[l];
}
/** A node of the walk over binary attributes (BinaryWalk): its first child (a leaf: itself) above
 * kWalkShiftBits, below them the bit of the instance's attribute mask that picks the branch (a leaf:
 * bit 63, never set, so a lane at its leaf stays there). */
constexpr int           kWalkShiftBits = 8;
constexpr std::uint64_t kLeafBit = 63;
constexpr std::uint64_t kMissingMask = ~std::uint64_t(0); // no mask of attributes 0..62

/** The tree's nodes as BinaryWalk reads them: one load per level instead of the attribute, the value's
 * kind and the child. */
void
BinaryWalkNodes(const HoeffdingTreeView & t, int nodes, std::vector<std::uint64_t> & walk)
{
  walk.resize(std::size_t(nodes));
  for (int node = 0; node < nodes; ++node)
  {
    const int a = t.attribute[node];
    walk[std::size_t(node)] = a >= 0
                                ? (std::uint64_t(std::uint32_t(t.child[node])) << kWalkShiftBits) | std::uint64_t(a)
                                : (std::uint64_t(std::uint32_t(node)) << kWalkShiftBits) | kLeafBit;
  }
}

/** FindLeafNodes for kLanes instances whose attributes are all binary and present, given as bit masks
 * (bit a: attribute a's value, BinaryAttributeMasks): every node's branch is its attribute's bit, so a
 * level is one load, a shift and an add per lane. The same leaves as HoeffdingFindLeafNode (a present
 * binary value v takes branch int(v)). */
template<int kLanes>
void
BinaryWalk(const std::uint64_t * walk, const std::uint64_t * masks, std::int32_t * leaves)
{
  std::uint64_t node[kLanes];
  for (int l = 0; l < kLanes; ++l)
    node[l] = 0;
  for (bool moved = true; moved;)
  {
    moved = false;
    for (int l = 0; l < kLanes; ++l)
    {
      const std::uint64_t w = walk[node[l]];
      const std::uint64_t next = (w >> kWalkShiftBits) + ((masks[l] >> (w & 63)) & 1u);
      moved = moved || next != node[l];
      node[l] = next;
    }
  }
  for (int l = 0; l < kLanes; ++l)
    leaves[l] = std::int32_t(node[l]);
}

/** Whether every attribute is nominal with two values: attribute a's counts then start at 2 * classes * a
 * in a slot, which the loops below use instead of the shape's offset and value count (two loads fewer on
 * each instance's chain). */
bool
AllBinary(const HoeffdingTreeShape & s)
{
  bool binary = true;
  for (int a = 0; a < s.attributes; ++a)
    binary = binary && s.values[a] == 2 && s.offset[a] == 2 * s.classes * a;
  return binary;
}

/** Where a tree's votes of a batch go: votes[instance * classes + class], NBAdaptive's score bits, the
 * 0/1 results; the votes scaled by `scale` unless it is 0. */
struct TreeVotes
{
  double *       votes;
  std::uint8_t * score;
  std::uint8_t * correct;
  double         scale;
};

/** VoteTree's loop for a forest of nominal attributes (NominalVoteAndScore for every instance), in two
 * passes over the batch: the naive-Bayes products first (short independent bodies, so the core keeps
 * several instances' load-and-multiply chains in flight), then the divisions, scores and votes. The
 * same operations on the same values as one pass. */
template<int kClasses>
void
NominalVotesAndScores(const HoeffdingTreeShape & s,
                      const HoeffdingTreeView &  v,
                      const InstanceBatch &      batch,
                      const std::int32_t *       leaves,
                      const TreeVotes &          out)
{
  const std::size_t                n = batch.Size();
  const int                        classes = kClasses > 0 ? kClasses : s.classes;
  thread_local std::vector<double> terms; // numerators then denominators, instance by instance
  const bool                       bayesTerms = s.leafPrediction != HoeffdingLeafPrediction::MajorityClass;
  if (bayesTerms)
  {
    terms.resize(2 * n * std::size_t(classes));
    constexpr std::size_t kAhead = 4;
    std::size_t           i = 0;
    if constexpr (kClasses == 2)
    {
      const bool    binary = AllBinary(s); // attribute a's rows at 4a
      constexpr int kLanes = 4;
      for (; i + kLanes <= n; i += kLanes)
      {
        int           slots[kLanes];
        const float * x[kLanes];
        double *      laneTerms[kLanes];
        for (int l = 0; l < kLanes; ++l)
        {
          if (i + kAhead + l < n)
            PrefetchSlot(s, v, v.child[leaves[i + kAhead + l]]);
          slots[l] = v.child[leaves[i + l]];
          x[l] = batch.Row(i + l);
          laneTerms[l] = terms.data() + 4 * (i + l);
        }
        if (binary)
          detail::NominalNaiveBayesTermsOfTwoClasses<kLanes, true>(s, v, slots, x, laneTerms);
        else
          detail::NominalNaiveBayesTermsOfTwoClasses<kLanes>(s, v, slots, x, laneTerms);
      }
    }
    for (; i < n; ++i)
    {
      if (i + kAhead < n)
        PrefetchSlot(s, v, v.child[leaves[i + kAhead]]);
      double * numerator = terms.data() + 2 * i * std::size_t(classes);
      detail::NominalNaiveBayesTerms<kClasses>(s, v, v.child[leaves[i]], batch.Row(i), numerator, numerator + classes);
    }
  }
  for (std::size_t i = 0; i < n; ++i)
  {
    double *       votes = out.votes + i * std::size_t(classes);
    const int      label = batch.labels[i];
    const double * numerator = bayesTerms ? terms.data() + 2 * i * std::size_t(classes) : nullptr;
    out.score[i] = detail::NominalVoteAndScoreFromTerms<kClasses>(
      s, v, v.child[leaves[i]], label, numerator, numerator + (bayesTerms ? classes : 0), votes);
    int best = 0;
    for (int c = 1; c < classes; ++c)
      best = votes[c] > votes[best] ? c : best;
    out.correct[i] = best == label ? 1 : 0;
    if (out.scale > 0.0)
      for (int c = 0; c < classes; ++c)
        votes[c] *= out.scale;
  }
}
} // namespace

/** Each instance's binary attributes as a bit mask (bit a: attribute a's value), or kMissingMask when
 * one is missing (or not 0 or 1); into masks[batch.Size()], returning the end. */
std::uint64_t *
BinaryAttributeMasks(const InstanceBatch & batch, std::uint64_t * masks)
{
  for (std::size_t i = 0; i < batch.Size(); ++i)
  {
    const float * x = batch.Row(i);
    std::uint64_t mask = 0;
    bool          binary = true;
    for (int a = 0; a < batch.attributes; ++a)
    {
      binary = binary && (x[a] == 0.0f || x[a] == 1.0f); // false for NaN
      mask |= std::uint64_t(x[a] == 1.0f) << a;
    }
    masks[i] = binary ? mask : kMissingMask;
  }
  return masks + batch.Size();
}

struct StreamingForest::Member
{
  std::unique_ptr<HoeffdingTree> tree, background;
  ForestMemberMonitor            monitor;
  /** What the monitor decided on a batch, in order, applied once the trees have learnt it: a
   * background tree started (`tree`), or the tree replaced by the background tree or by `tree`. */
  struct Event
  {
    bool                           replace = false, withBackground = false;
    std::unique_ptr<HoeffdingTree> tree;
  };
  std::vector<Event> events;

  explicit Member(const DriftSettings & drift)
    : monitor(drift)
  {
  }
};

HoeffdingTreeOptions
StreamingForestOptions::ResolvedTreeOptions(int d) const
{
  HoeffdingTreeOptions o = tree;
  o.subspaceSize = subspaceSize < 0 ? std::max(1, int(std::lround(std::sqrt(double(d))))) : subspaceSize;
  o.seed = seed;
  return o;
}

StreamingForest::StreamingForest(const StreamSchema & schema, const StreamingForestOptions & options)
  : m_Schema(schema)
  , m_Options(options)
  , m_TreeOptions(options.tree)
  , m_Classes(schema.NumberOfClasses())
  , m_AllNominal(std::all_of(schema.attributes.begin(),
                             schema.attributes.end(),
                             [](const StreamAttribute & a) { return a.nominal; }))
  , m_AllBinary(schema.NumberOfAttributes() <= kMaxMaskAttributes &&
                std::all_of(schema.attributes.begin(),
                            schema.attributes.end(),
                            [](const StreamAttribute & a) { return a.nominal && a.values.size() == 2; }))
{
  if (m_Options.trees < 1)
    CANOPY_THROW("streaming forest: --trees " << m_Options.trees << ": give at least 1 tree");
  if (!(m_Options.lambda > 0.0 && m_Options.lambda <= 30.0))
    CANOPY_THROW("streaming forest: lambda " << m_Options.lambda << " is not in (0, 30]");
  m_TreeOptions = m_Options.ResolvedTreeOptions(schema.NumberOfAttributes());
  m_Poisson = std::make_unique<PoissonBuckets>(m_Options.lambda, std::exp(-m_Options.lambda));
  m_Parallel = std::make_unique<detail::TreeParallel>(m_Options.threads);
  for (int t = 0; t < m_Options.trees; ++t)
  {
    m_Members.push_back(std::make_unique<Member>(m_Options.Drift()));
    m_Members.back()->tree = NewTree(t);
  }
}

StreamingForest::~StreamingForest() = default;

std::unique_ptr<HoeffdingTree>
StreamingForest::NewTree(int t)
{
  return std::make_unique<HoeffdingTree>(m_Schema, m_TreeOptions, m_Members[t]->monitor.NextTreeKey(t));
}

void
StreamingForest::PrepareVotes(std::size_t instances, std::size_t largestBatch, bool keepCorrectness)
{
  const std::size_t trees = std::size_t(NumberOfTrees());
  // Every entry is written by VoteTree before it is read: no fill.
  m_Votes.resize(trees * instances * m_Classes);
  m_TreeStride = largestBatch;
  m_Correct.resize(trees * largestBatch);
  m_Leaf.resize(trees * largestBatch);
  m_Score.resize(keepCorrectness ? trees * largestBatch : 0);
}

void
StreamingForest::VoteTree(int                   t,
                          const InstanceBatch & batch,
                          bool                  keepCorrectness,
                          double *              treeVotes,
                          const std::uint64_t * masks)
{
  const std::size_t        n = batch.Size();
  const std::size_t        own = std::size_t(t) * m_TreeStride; // the tree's leaves, scores and results
  const Member &           m = *m_Members[std::size_t(t)];
  const double             accuracy = m.monitor.Accuracy();
  const HoeffdingTreeShape s = m.tree->Shape(); // once per batch, not per call
  const HoeffdingTreeView  v = m.tree->View();
  std::int32_t *           leaves = m_Leaf.data() + own;
  // The walks first: they are independent, so the core overlaps them, where one walk followed by its
  // leaf's votes kept it waiting on both in turn.
  constexpr int kLanes = 8;
  std::size_t   walked = 0;
  // Every attribute binary: the walk over bit masks where a group has no missing value, once the batch
  // is large enough to repay the nodes' words (a word per node; at batch 1 they cost more than the walk).
  const int nodes = m.tree->NumberOfNodes();
  if (masks && std::size_t(nodes) <= 16 * n)
  {
    thread_local std::vector<std::uint64_t> walk;
    BinaryWalkNodes(v, nodes, walk);
    for (; walked + kLanes <= n; walked += kLanes)
    {
      bool present = true;
      for (int l = 0; l < kLanes; ++l)
        present = present && masks[walked + std::size_t(l)] != kMissingMask;
      if (present)
        BinaryWalk<kLanes>(walk.data(), masks + walked, leaves + walked);
      else
        FindLeafNodes<kLanes>(s, v, batch, walked, leaves);
    }
  }
  for (; walked + kLanes <= n; walked += kLanes)
    FindLeafNodes<kLanes>(s, v, batch, walked, leaves);
  for (std::size_t i = walked; i < n; ++i)
    leaves[i] = HoeffdingFindLeafNode(s, v, batch.Row(i));
  // Then the leaves' votes (the same calls as HoeffdingTree::LeafNodeVotes/LeafNodeVotesAndScore), the
  // statistics of the leaf a few instances ahead prefetched: they are spread over the tree's slots.
  constexpr std::size_t kAhead = 4;
  if (keepCorrectness && m_AllNominal)
  {
    TreeVotes out{ treeVotes,
                   m_Score.data() + own,
                   m_Correct.data() + own,
                   m_Options.weightedVote && accuracy > 0.0 ? accuracy : 0.0 };
    if (m_Classes == 2)
      NominalVotesAndScores<2>(s, v, batch, leaves, out);
    else
      NominalVotesAndScores<0>(s, v, batch, leaves, out);
    return;
  }
  double scratch[kHoeffdingMaxClasses];
  for (std::size_t i = 0; i < n; ++i)
  {
    if (i + kAhead < n)
      PrefetchSlot(s, v, v.child[leaves[i + kAhead]]);
    double *      votes = treeVotes + i * m_Classes;
    const int     slot = v.child[leaves[i]];
    const float * x = batch.Row(i);
    if (keepCorrectness)
      m_Score[own + i] = HoeffdingVoteAndScore(s, v, slot, x, batch.labels[i], votes, scratch);
    else
      HoeffdingLeafVotes(s, v, slot, x, votes);
    int best = 0;
    for (int c = 1; c < m_Classes; ++c)
      best = votes[c] > votes[best] ? c : best;
    m_Correct[own + i] = keepCorrectness && best == batch.labels[i] ? 1 : 0;
    if (m_Options.weightedVote && accuracy > 0.0)
      for (int c = 0; c < m_Classes; ++c)
        votes[c] *= accuracy;
  }
}

void
StreamingForest::SumVotes(const InstanceBatch *       batches,
                          std::size_t                 count,
                          std::vector<std::int32_t> * predictions,
                          std::vector<double> *       probabilities)
{
  const int         trees = NumberOfTrees();
  const std::size_t classes = std::size_t(m_Classes);
  // Tree by tree over slices of a batch (contiguous reads), each sum still adding the trees in order;
  // the slices of every batch in one parallel call: on one thread this step took ~4% of a 1-thread run
  // (perf, dev machine), which alone caps 16 threads at ~10x (Amdahl), the speed-up measured on the
  // H100 host. Batch k's votes (tree, instance, class) start after the earlier batches' (PrepareVotes).
  constexpr std::size_t kSlice = 64; // instances
  if (probabilities && count != 1) // the probabilities are one batch's (instance, class)
    CANOPY_THROW("streaming forest: class probabilities for " << count << " batches in one call; give one");
  std::vector<std::size_t> firstSlice(count + 1, 0), firstInstance(count + 1, 0);
  for (std::size_t k = 0; k < count; ++k)
  {
    const std::size_t n = batches[k].Size();
    firstSlice[k + 1] = firstSlice[k] + (n + kSlice - 1) / kSlice;
    firstInstance[k + 1] = firstInstance[k] + n;
    predictions[k].resize(n);
    if (probabilities)
      probabilities->resize(n * classes);
  }
  m_Sums.resize(firstInstance[count] * classes);
  m_Parallel->For(
    int(firstSlice[count]),
    [&](int slice)
    {
      const std::size_t k =
        std::size_t(std::upper_bound(firstSlice.begin(), firstSlice.end(), std::size_t(slice)) - firstSlice.begin()) -
        1;
      const std::size_t n = batches[k].Size(), values = n * classes;
      const std::size_t first = (std::size_t(slice) - firstSlice[k]) * kSlice, last = std::min(n, first + kSlice);
      const double *    batchVotes = m_Votes.data() + std::size_t(trees) * firstInstance[k] * classes;
      double *          sums = m_Sums.data() + firstInstance[k] * classes;
      std::fill(sums + first * classes, sums + last * classes, 0.0);
      for (int t = 0; t < trees; ++t)
      {
        const double * votes = batchVotes + std::size_t(t) * values;
        for (std::size_t j = first * classes; j < last * classes; ++j)
          sums[j] += votes[j];
      }
      for (std::size_t i = first; i < last; ++i)
      {
        const double * sum = sums + i * classes;
        int            best = 0;
        for (int c = 1; c < m_Classes; ++c)
          best = sum[c] > sum[best] ? c : best;
        predictions[k][i] = best;
        if (probabilities)
        {
          double total = 0.0;
          for (int c = 0; c < m_Classes; ++c)
            total += sum[c];
          for (int c = 0; c < m_Classes; ++c)
            (*probabilities)[i * classes + c] = total > 0.0 ? sum[c] / total : 1.0 / m_Classes;
        }
      }
    });
}

void
StreamingForest::Vote(const InstanceBatch &       batch,
                      std::vector<std::int32_t> & predictions,
                      bool                        keepCorrectness,
                      std::vector<double> *       probabilities)
{
  const std::size_t n = batch.Size();
  PrepareVotes(n, n, keepCorrectness);
  m_Parallel->For(NumberOfTrees(),
                  [&](int t)
                  { VoteTree(t, batch, keepCorrectness, m_Votes.data() + std::size_t(t) * n * m_Classes, nullptr); });
  SumVotes(&batch, 1, &predictions, probabilities);
}

void
StreamingForest::LearnBatch(Member & m, int t, const InstanceBatch & batch, std::uint64_t firstIndex)
{
  // The trees learn the batch while the monitor reads its test results (on another worker when one is
  // idle): neither touches what the other does; the monitor's decisions wait in m.events until both are
  // done and are applied then, as if it had run after the learning.
  if (m_AdwinBeside)
    m_Parallel->Both([&] { LearnTrees(m, t, batch, firstIndex); }, [&] { ObserveResults(m, t, batch.Size()); });
  else
  {
    LearnTrees(m, t, batch, firstIndex);
    ObserveResults(m, t, batch.Size());
  }
  for (Member::Event & e : m.events)
  {
    if (!e.replace)
      m.background = std::move(e.tree);
    else
    {
      m.tree = e.withBackground ? std::move(m.background) : std::move(e.tree);
      m.background.reset();
    }
  }
  m.events.clear();
}

void
StreamingForest::ObserveResults(Member & m, int t, std::size_t n)
{
  // The new trees are made here, in the order the monitor asks for them (their keys count up).
  m.monitor.ObserveBatch(
    m_Correct.data() + std::size_t(t) * m_TreeStride,
    n,
    [&] { m.events.push_back({ false, false, NewTree(t) }); },
    [&](bool hasBackground) { m.events.push_back({ true, hasBackground, hasBackground ? nullptr : NewTree(t) }); });
}

void
StreamingForest::LearnTrees(Member & m, int t, const InstanceBatch & batch, std::uint64_t firstIndex)
{
  const std::size_t n = batch.Size();
  auto              weight = [&](std::uint64_t stream, std::size_t i)
  { return (*m_Poisson)(CounterUniform(m_Options.seed, stream, firstIndex + i)); };

  // The tree was routed and scored on the batch when voting; learn (HoeffdingTree::LearnAtLeaf's calls,
  // the tree's view taken once: learning does not grow its arrays), then check the due leaves.
  {
    const HoeffdingTreeShape s = m.tree->Shape();
    const HoeffdingTreeView  v = m.tree->View();
    const std::int32_t *     leaves = m_Leaf.data() + std::size_t(t) * m_TreeStride;
    const std::uint8_t *     scores = m_Score.data() + std::size_t(t) * m_TreeStride;
    const bool               binary = AllBinary(s);
    constexpr std::size_t    kAhead = 4; // the leaves are spread over the tree's slots
    for (std::size_t i = 0; i < n; ++i)
    {
      if (i + kAhead < n)
        PrefetchSlot(s, v, v.child[leaves[i + kAhead]]);
      const std::uint32_t w = weight(2 * std::uint64_t(t), i);
      if (w == 0)
        continue;
      const int     slot = v.child[leaves[i]];
      const float * x = batch.Row(i);
      const int     label = batch.labels[i];
      {
        // HoeffdingLearnCounts's additions, the scores' two without a branch (each predictor is right
        // about 3 times in 4, at random, so the branches were mispredicted): adding 0 changes nothing.
        const std::uint32_t bits = scores[i];
        v.majorityCorrect[slot] += w & (0u - std::uint32_t((bits & kHoeffdingMajorityRight) != 0));
        v.bayesCorrect[slot] += w & (0u - std::uint32_t((bits & kHoeffdingBayesRight) != 0));
        v.classCounts[std::int64_t(slot) * s.classes + label] += w;
        v.weight[slot] += w;
      }
      if (binary) // HoeffdingLearnAttribute's nominal count, its offset known
      {
        const std::int64_t    sl = slot;
        const std::int32_t *  subspace = v.subspace + sl * s.subspaceSize;
        std::uint32_t * const counts = v.nominalCounts + sl * s.nominalStride;
        for (int j = 0; j < s.subspaceSize; ++j)
        {
          const int   a = subspace[j];
          const float value = x[a];
          if (!HoeffdingIsMissing(value))
            counts[2 * s.classes * a + int(value) * s.classes + label] += w;
        }
      }
      else
        for (int j = 0; j < s.subspaceSize; ++j)
          HoeffdingLearnAttribute(s, v, slot, j, x, label, w);
    }
  }
  m.tree->AttemptDueSplits();
  if (m.background)
  {
    HoeffdingTree &           b = *m.background;
    std::vector<std::int32_t> leaf(n);
    std::vector<std::uint8_t> score(n);
    for (std::size_t i = 0; i < n; ++i)
    {
      leaf[i] = b.LeafNode(batch.Row(i));
      score[i] = b.ScoreLeaf(leaf[i], batch.Row(i), batch.labels[i]);
    }
    for (std::size_t i = 0; i < n; ++i)
      b.LearnAtLeaf(leaf[i], batch.Row(i), batch.labels[i], weight(2 * std::uint64_t(t) + 1, i), score[i]);
    b.AttemptDueSplits();
  }
}

void
StreamingForest::TestThenTrain(const InstanceBatch &       batch,
                               std::uint64_t               firstIndex,
                               std::vector<std::int32_t> & predictions)
{
  TestThenTrainBatches(&batch, 1, firstIndex, &predictions);
}

void
StreamingForest::TestThenTrainBatches(const InstanceBatch *       batches,
                                      std::size_t                 count,
                                      std::uint64_t               firstIndex,
                                      std::vector<std::int32_t> * predictions,
                                      std::int64_t *              driftsAfter)
{
  // One pass per member through the batches: a batch's votes (on the trees as they were after the batch
  // before), then its learning and ADWIN. A member's work touches only that member, and its work on
  // batch k needs only its own state after batch k - 1, so this equals voting with every tree on a
  // batch first, learning it, then the next batch; the members need not wait for each other between
  // batches. The votes are summed per batch in tree order after, so the predictions do not depend on
  // the threads nor on how the stream is grouped into calls.
  std::size_t instances = 0, largest = 0;
  for (std::size_t k = 0; k < count; ++k)
  {
    instances += batches[k].Size();
    largest = std::max(largest, batches[k].Size());
  }
  PrepareVotes(instances, largest, true);
  if (m_AllBinary) // the walks' masks, once for all trees
  {
    m_Masks.resize(instances);
    std::uint64_t * mask = m_Masks.data();
    for (std::size_t k = 0; k < count; ++k)
      mask = BinaryAttributeMasks(batches[k], mask);
  }
  const std::size_t trees = std::size_t(NumberOfTrees());
  if (driftsAfter)
    m_DriftsAfter.resize(trees * count);
  auto member = [&](int t)
  {
    std::uint64_t         first = firstIndex;
    double *              votes = m_Votes.data(); // batch k's votes: tree, instance, class
    const std::uint64_t * masks = m_AllBinary ? m_Masks.data() : nullptr;
    for (std::size_t k = 0; k < count; ++k)
    {
      const std::size_t n = batches[k].Size();
      VoteTree(t, batches[k], true, votes + std::size_t(t) * n * m_Classes, masks);
      LearnBatch(*m_Members[std::size_t(t)], t, batches[k], first);
      if (driftsAfter)
        m_DriftsAfter[std::size_t(t) * count + k] = m_Members[std::size_t(t)]->monitor.Drifts();
      first += n;
      votes += trees * n * m_Classes;
      masks = masks ? masks + n : nullptr;
    }
  };
  if (m_SameWorkers)
    m_Parallel->ForSameWorkers(NumberOfTrees(), member);
  else
    m_Parallel->For(NumberOfTrees(), member);
  SumVotes(batches, count, predictions, nullptr);
  for (std::size_t k = 0; driftsAfter && k < count; ++k)
  {
    driftsAfter[k] = 0;
    for (std::size_t t = 0; t < trees; ++t)
      driftsAfter[k] += m_DriftsAfter[t * count + k];
  }
}

void
StreamingForest::Predict(const InstanceBatch & batch, std::vector<std::int32_t> & predictions)
{
  Vote(batch, predictions, false);
}

void
StreamingForest::PredictProbabilities(const InstanceBatch &       batch,
                                      std::vector<std::int32_t> & predictions,
                                      std::vector<double> &       probabilities)
{
  Vote(batch, predictions, false, &probabilities);
}

std::int64_t
StreamingForest::DriftsDetected() const
{
  std::int64_t n = 0;
  for (const auto & m : m_Members)
    n += m->monitor.Drifts();
  return n;
}

std::int64_t
StreamingForest::WarningsDetected() const
{
  std::int64_t n = 0;
  for (const auto & m : m_Members)
    n += m->monitor.Warnings();
  return n;
}

std::int64_t
StreamingForest::TotalNodes() const
{
  std::int64_t n = 0;
  for (const auto & m : m_Members)
    n += m->tree->NumberOfNodes();
  return n;
}

const HoeffdingTree &
StreamingForest::Tree(int t) const
{
  return *m_Members.at(t)->tree;
}

StreamingForestState
StreamingForest::State() const
{
  StreamingForestState s;
  for (const auto & m : m_Members)
  {
    ForestMemberState member;
    member.monitor = m->monitor.State();
    member.tree = m->tree->State();
    member.hasBackground = bool(m->background);
    if (m->background)
      member.background = m->background->State();
    s.members.push_back(std::move(member));
  }
  return s;
}

void
StreamingForest::Restore(const StreamingForestState & s)
{
  if (s.members.size() != m_Members.size())
    CANOPY_THROW("streaming forest state: " << s.members.size() << " members for a forest of " << m_Members.size()
                                            << " trees");
  std::vector<std::unique_ptr<Member>> members;
  for (const ForestMemberState & state : s.members)
  {
    auto m = std::make_unique<Member>(m_Options.Drift());
    m->monitor.Restore(state.monitor);
    if (state.hasBackground != state.monitor.background)
      CANOPY_THROW("streaming forest state: a member's background tree and its monitor disagree");
    m->tree = std::make_unique<HoeffdingTree>(m_Schema, m_TreeOptions, state.tree);
    if (state.hasBackground)
      m->background = std::make_unique<HoeffdingTree>(m_Schema, m_TreeOptions, state.background);
    members.push_back(std::move(m));
  }
  m_Members.swap(members);
}

} // namespace canopy::streaming
