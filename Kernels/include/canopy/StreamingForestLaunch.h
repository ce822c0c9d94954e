// The streaming forest on a device (Marron et al.): all trees of an adaptive random forest of
// Hoeffding trees in flat arrays, and the per-item work of one test-then-train batch as functions of
// (tree, instance), (segment, attribute) or (tree, slot), called by the CUDA kernels
// (StreamingForest.cu) and by their host loops (StreamingForestCPU.cxx, the kernels' reference and an
// emulation the CPU tests run). The tree math is HoeffdingTreeFlat.h, which the CPU forest calls too.
//
// A batch, as the CPU StreamingForest::TestThenTrain:
//  1. route: every tree finds each instance's leaf, scores the leaf's predictors (NBAdaptive), draws
//     the instance's Poisson weight; a member's tree votes (normalised leaf votes times its accuracy)
//     and records whether it was right; learning keys (tree, slot) for instances of weight > 0;
//  2. votes summed over trees in tree order per instance (the CPU's order), the argmax predicted;
//  3. keys sorted stably, so each (tree, slot) run holds its instances in stream order;
//  4. learn: one thread per (run, attribute) applies the run's instances in order (class counts by
//     the attribute -1 thread): no atomics, Gaussians updated in the CPU's order, bit for bit;
//  5. split checks of every due slot, in parallel;
//  6. the splits applied on the device, in node order per tree (StreamingForestGrow.h);
//  7. ADWIN's replacements (rare), from the host as node writes and slot initialisations.
// No ITK or CUDA types here.
#pragma once

#include "canopy/HoeffdingTreeFlat.h"

#include <cstdint>

struct CUstream_st;

namespace canopy
{

/** All P physical trees (member t's tree and background tree) in arrays of fixed per-tree capacity:
 * tree p's nodes start at p * nodeCapacity, its slots at p * slotCapacity. */
struct StreamForestArrays
{
  int                 trees = 0, nodeCapacity = 0, slotCapacity = 0;
  int                 maxBranches = 2; // children of a split: max(2, the most nominal values)
  std::int32_t *      attribute = nullptr;
  float *             threshold = nullptr;
  std::int32_t *      child = nullptr;
  std::int32_t *      missingBranch = nullptr;
  std::uint32_t *     classCounts = nullptr;   // slot * classes
  std::uint32_t *     nominalCounts = nullptr; // slot * nominalStride
  GaussianEstimator * gaussians = nullptr;     // slot * numericStride
  std::int32_t *      subspace = nullptr;      // slot * subspaceSize
  std::uint32_t *     weight = nullptr;
  std::uint32_t *     weightAtLastCheck = nullptr;
  std::uint32_t *     majorityCorrect = nullptr;
  std::uint32_t *     bayesCorrect = nullptr;
  std::int32_t *      slotDepth = nullptr;
  std::uint32_t *     childCounts = nullptr; // slot * maxBranches * classes: a split's children's counts
};

CANOPY_HD HoeffdingTreeView
StreamTreeView(const HoeffdingTreeShape & s, const StreamForestArrays & f, int p)
{
  const std::int64_t n = std::int64_t(p) * f.nodeCapacity, sl = std::int64_t(p) * f.slotCapacity;
  HoeffdingTreeView  v;
  v.attribute = f.attribute + n;
  v.threshold = f.threshold + n;
  v.child = f.child + n;
  v.missingBranch = f.missingBranch + n;
  v.classCounts = f.classCounts + sl * s.classes;
  v.nominalCounts = f.nominalCounts + sl * s.nominalStride;
  v.gaussians = f.gaussians + sl * s.numericStride;
  v.subspace = f.subspace + sl * s.subspaceSize;
  v.weight = f.weight + sl;
  v.weightAtLastCheck = f.weightAtLastCheck + sl;
  v.majorityCorrect = f.majorityCorrect + sl;
  v.bayesCorrect = f.bayesCorrect + sl;
  v.slotDepth = f.slotDepth + sl;
  return v;
}

/** Per physical tree, set by the host before each batch. */
struct StreamTreeInfo
{
  std::int32_t  active = 0; // 0: no tree here (a member without a background tree)
  std::int32_t  member = 0;
  std::int32_t  isMain = 0;        // 1: the member's voting tree; 0: its background tree
  std::int32_t  slots = 0;         // leaf slots in use
  std::uint64_t poissonStream = 0; // 2 t for the member's tree, 2 t + 1 for its background tree
};

constexpr std::uint32_t kStreamNoKey = 0xffffffffu; // an instance the tree does not learn (weight 0)

/** One batch: inputs and the device scratch of its steps. */
struct StreamBatchArgs
{
  const float *         x = nullptr; // n * attributes
  const std::int32_t *  labels = nullptr;
  int                   n = 0, members = 0;
  const std::uint64_t * firstIndex = nullptr; // the batch's first stream position, in the executor's
                                              // memory (uploaded with the batch: a captured batch's
                                              // launches then stay the same from batch to batch)
  std::uint64_t          seed = 0;
  double                 lambda = 6.0, expNegLambda = 0.0;
  const StreamTreeInfo * info = nullptr;        // P
  const double *         voteScale = nullptr;   // per member: its accuracy, or 1 for unweighted votes
  std::int32_t *         leaf = nullptr;        // P * n: leaf node
  std::uint8_t *         score = nullptr;       // P * n: HoeffdingScoreLeaf's bits
  std::uint32_t *        bagWeight = nullptr;   // P * n: Poisson weight
  double *               votes = nullptr;       // members * n * classes
  std::uint8_t *         correct = nullptr;     // members * n
  std::int32_t *         predictions = nullptr; // n
  std::uint32_t *        keys = nullptr;        // P * n: p * slotCapacity + slot, or kStreamNoKey
  // order, sortedKeys, sortedOrder: the sort's, null when learning is order-free (StreamLearnIsOrderFree)
  std::uint32_t * order = nullptr; // P * n: p * n + i
  std::uint32_t * sortedKeys = nullptr;
  std::uint32_t * sortedOrder = nullptr;
};

/** Step 1 for tree p, instance i. kClasses: the stream's class count when the caller fixes it at compile
 * time (the device's route kernels for small counts: the votes stay in registers), 0 for any. */
template<int kClasses = 0>
CANOPY_HD void
StreamRouteItem(const HoeffdingTreeShape & s, const StreamForestArrays & f, const StreamBatchArgs & b, int p, int i)
{
  constexpr int          kArray = kClasses > 0 ? kClasses : kHoeffdingMaxClasses;
  const int              classes = HoeffdingClassCount<kClasses>(s);
  const std::int64_t     pi = std::int64_t(p) * b.n + i;
  const StreamTreeInfo & info = b.info[p];
  if (b.order) // null for a forest that learns unsorted (StreamLearnIsOrderFree)
    b.order[pi] = std::uint32_t(pi);
  if (!info.active)
  {
    b.keys[pi] = kStreamNoKey;
    return;
  }
  const HoeffdingTreeView t = StreamTreeView(s, f, p);
  const float *           x = b.x + std::int64_t(i) * s.attributes;
  const int               label = b.labels[i];
  const int               node = HoeffdingFindLeafNode(s, t, x);
  const int               slot = t.child[node];
  double                  votes[kArray], scratch[kArray];
  b.leaf[pi] = node;
  const std::uint32_t w = PoissonFromUniform(
    CounterUniform(b.seed, info.poissonStream, *b.firstIndex + std::uint64_t(i)), b.lambda, b.expNegLambda);
  b.bagWeight[pi] = w;
  b.keys[pi] = w > 0 ? std::uint32_t(std::int64_t(p) * f.slotCapacity + slot) : kStreamNoKey;
  if (!info.isMain)
  {
    b.score[pi] = HoeffdingScoreLeaf<kClasses>(s, t, slot, x, label, scratch);
    return;
  }
  b.score[pi] = HoeffdingVoteAndScore<kClasses>(s, t, slot, x, label, votes, scratch);
  const std::int64_t mi = std::int64_t(info.member) * b.n + i;
  b.correct[mi] = HoeffdingArgMax(votes, classes) == label ? 1 : 0;
  const double scale = b.voteScale[info.member];
  double *     out = b.votes + mi * classes;
  for (int c = 0; c < classes; ++c)
    out[c] = scale > 0.0 ? votes[c] * scale : votes[c];
}

/** Step 2 for instance i: votes summed in member order, the most voted class (ties: smallest).
 * kClasses: as StreamRouteItem's. */
template<int kClasses = 0>
CANOPY_HD void
StreamSumVotesItem(const HoeffdingTreeShape & s, const StreamBatchArgs & b, int i)
{
  const int classes = HoeffdingClassCount<kClasses>(s);
  double    sum[kClasses > 0 ? kClasses : kHoeffdingMaxClasses];
  for (int c = 0; c < classes; ++c)
    sum[c] = 0.0;
  // Each class's sum adds the members' votes in member order, as before; the votes are loaded a chunk
  // of members at a time first, so the device has a chunk's loads in flight instead of one.
  constexpr int kChunk = 8;
  for (int t0 = 0; t0 < b.members; t0 += kChunk)
  {
    const int chunk = b.members - t0 < kChunk ? b.members - t0 : kChunk;
    for (int c = 0; c < classes; ++c)
    {
      double vote[kChunk];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int k = 0; k < kChunk; ++k)
        vote[k] = k < chunk ? b.votes[(std::int64_t(t0 + k) * b.n + i) * classes + c] : 0.0;
      for (int k = 0; k < chunk; ++k)
        sum[c] += vote[k];
    }
  }
  b.predictions[i] = HoeffdingArgMax(sum, classes);
}

/** Step 4 for sorted position e and attribute j (j == subspaceSize: class counts and scores). Only a
 * run's first position works; it applies the run's instances in order. */
CANOPY_HD void
StreamLearnRunItem(const HoeffdingTreeShape & s,
                   const StreamForestArrays & f,
                   const StreamBatchArgs &    b,
                   std::int64_t               total,
                   std::int64_t               e,
                   int                        j)
{
  const std::uint32_t key = b.sortedKeys[e];
  if (key == kStreamNoKey || (e > 0 && b.sortedKeys[e - 1] == key))
    return;
  const int               p = int(key / std::uint32_t(f.slotCapacity));
  const int               slot = int(key % std::uint32_t(f.slotCapacity));
  const HoeffdingTreeView t = StreamTreeView(s, f, p);
  for (std::int64_t k = e; k < total && b.sortedKeys[k] == key; ++k)
  {
    const std::int64_t  pi = b.sortedOrder[k];
    const int           i = int(pi - std::int64_t(p) * b.n);
    const int           label = b.labels[i];
    const std::uint32_t w = b.bagWeight[pi];
    if (j == s.subspaceSize)
      HoeffdingLearnCounts(s, t, slot, label, w, b.score[pi]);
    else
      HoeffdingLearnAttribute(s, t, slot, j, b.x + std::int64_t(i) * s.attributes, label, w);
  }
}

/** Whether step 4 may add a batch's pairs in any order: with no numeric attribute, everything a pair
 * teaches a leaf is an integer count (class counts, weight, the two scores' right counts, nominal
 * counts), and integer sums do not depend on their order, so the pairs need no sort into runs (the
 * device adds them with atomics) and the trees are the ones the ordered runs learn. Gaussians (numeric
 * attributes) round differently in another order: those forests sort. */
CANOPY_HD bool
StreamLearnIsOrderFree(const HoeffdingTreeShape & s)
{
  return s.numericStride == 0;
}

/** Step 4 of an order-free forest (StreamLearnIsOrderFree) for pair pi = p * n + i and attribute j
 * (j == subspaceSize: class counts and scores), unsorted; add(counter, w) adds w to a count (the
 * device: atomically). */
template<typename AddCount>
CANOPY_HD void
StreamLearnPairItem(const HoeffdingTreeShape & s,
                    const StreamForestArrays & f,
                    const StreamBatchArgs &    b,
                    std::int64_t               pi,
                    int                        j,
                    const AddCount &           add)
{
  const std::uint32_t key = b.keys[pi];
  if (key == kStreamNoKey)
    return;
  const int               p = int(key / std::uint32_t(f.slotCapacity));
  const int               slot = int(key % std::uint32_t(f.slotCapacity));
  const HoeffdingTreeView t = StreamTreeView(s, f, p);
  const int               i = int(pi - std::int64_t(p) * b.n);
  if (j == s.subspaceSize)
    HoeffdingLearnCounts(s, t, slot, b.labels[i], b.bagWeight[pi], b.score[pi], add);
  else
    HoeffdingLearnAttribute(s, t, slot, j, b.x + std::int64_t(i) * s.attributes, b.labels[i], b.bagWeight[pi], add);
}

/** A tree's learning counts kept apart for `slots` slots in `words` (the device's per-tree learn counts
 * a batch's pairs in shared memory so, then adds each non-zero word to the tree's count it stands for,
 * StreamLearnCountTarget). Only for an order-free forest (StreamLearnIsOrderFree: nominal attributes
 * only). Region by region: the two scores' right counts, the weight and the class counts as the tree
 * lays them out, then the nominal counts of the slot's observed attributes only, by subspace position j
 * (j, value, class), not by attribute: a slot learns about subspaceSize of the attributes. */
struct StreamLearnCounts
{
  std::uint32_t * words = nullptr;
  int             slots = 0, values = 2; // values: the most nominal values of an attribute

  /** Words per slot. */
  CANOPY_HD static int PerSlot(const HoeffdingTreeShape & s, int values)
  {
    return 3 + s.classes + s.subspaceSize * values * s.classes;
  }
  /** Tree view t with the counts HoeffdingLearnCounts adds to moved here. */
  CANOPY_HD HoeffdingTreeView CountsView(HoeffdingTreeView t) const
  {
    t.majorityCorrect = words;
    t.bayesCorrect = words + slots;
    t.weight = words + 2 * std::int64_t(slots);
    t.classCounts = words + 3 * std::int64_t(slots);
    t.nominalCounts = nullptr;
    return t;
  }
  CANOPY_HD std::uint32_t * Nominal(const HoeffdingTreeShape & s) const
  {
    return words + std::int64_t(slots) * (3 + s.classes);
  }
};

/** What pair (p, i) of tree view t teaches its slot, into counts (StreamLearnCounts): HoeffdingLearnCounts,
 * then each observed attribute's value as HoeffdingLearnAttribute counts it (a missing value teaches
 * nothing). */
template<typename AddCount>
CANOPY_HD void
StreamLearnPairIntoCounts(const HoeffdingTreeShape & s,
                          const HoeffdingTreeView &  t,
                          const StreamLearnCounts &  counts,
                          const StreamBatchArgs &    b,
                          int                        p,
                          int                        i,
                          int                        slot,
                          const AddCount &           add)
{
  const std::int64_t  pi = std::int64_t(p) * b.n + i;
  const int           label = b.labels[i];
  const std::uint32_t w = b.bagWeight[pi];
  HoeffdingLearnCounts(s, counts.CountsView(t), slot, label, w, b.score[pi], add);
  const float *        x = b.x + std::int64_t(i) * s.attributes;
  const std::int32_t * subspace = t.subspace + std::int64_t(slot) * s.subspaceSize;
  std::uint32_t *      nominal = counts.Nominal(s) + std::int64_t(slot) * s.subspaceSize * counts.values * s.classes;
  for (int j = 0; j < s.subspaceSize; ++j)
  {
    const float v = x[subspace[j]];
    if (!HoeffdingIsMissing(v))
      add(nominal + (j * counts.values + int(v)) * s.classes + label, w);
  }
}

/** The count of tree view t that word k of counts stands for. */
CANOPY_HD std::uint32_t *
          StreamLearnCountTarget(const HoeffdingTreeShape & s,
                                 const HoeffdingTreeView &  t,
                                 const StreamLearnCounts &  counts,
                                 std::int64_t               k)
{
  const std::int64_t n = counts.slots;
  if (k < 3 * n)
    return (k < n ? t.majorityCorrect : k < 2 * n ? t.bayesCorrect : t.weight) + k % n;
  k -= 3 * n;
  if (k < n * s.classes)
    return t.classCounts + k;
  k -= n * s.classes;
  const int          perSlot = s.subspaceSize * counts.values * s.classes;
  const std::int64_t slot = k / perSlot;
  const int          r = int(k % perSlot), j = r / (counts.values * s.classes);
  const int          value = (r / s.classes) % counts.values, c = r % s.classes;
  const int          a = t.subspace[slot * s.subspaceSize + j];
  return t.nominalCounts + slot * s.nominalStride + s.offset[a] + value * s.classes + c;
}

/** Step 5 for tree p, slot: when due, the check (weight at last check updated) and, on a split, the
 * decision into *split and the children's counts into childCounts. True on a split. */
CANOPY_HD bool
StreamSplitCheckItem(const HoeffdingTreeShape & s,
                     const StreamForestArrays & f,
                     const StreamTreeInfo *     info,
                     int                        gracePeriod,
                     int                        p,
                     int                        slot,
                     HoeffdingSplit *           split)
{
  if (!info[p].active || slot >= info[p].slots)
    return false;
  const HoeffdingTreeView t = StreamTreeView(s, f, p);
  if (!HoeffdingSplitDue(t, slot, gracePeriod))
    return false;
  t.weightAtLastCheck[slot] = t.weight[slot];
  std::uint32_t * children = f.childCounts + (std::int64_t(p) * f.slotCapacity + slot) * f.maxBranches * s.classes;
  return HoeffdingDecideSplit(s, t, slot, *split, children);
}

/** A node the host changed or added: tree p's node `node`. */
struct StreamNodeWrite
{
  std::int32_t p = 0, node = 0, attribute = -1, child = 0, missingBranch = 0;
  float        threshold = 0.0f;
};

CANOPY_HD void
StreamWriteNodeItem(const StreamForestArrays & f, const StreamNodeWrite & w)
{
  const std::int64_t k = std::int64_t(w.p) * f.nodeCapacity + w.node;
  f.attribute[k] = w.attribute;
  f.threshold[k] = w.threshold;
  f.child[k] = w.child;
  f.missingBranch[k] = w.missingBranch;
}

/** A leaf slot the host (re)starts: tree p's slot, with the class counts of branch `branch` of the
 * split of parentSlot (childCounts), or zeros when parentSlot < 0. */
struct StreamSlotInit
{
  std::int32_t p = 0, slot = 0, parentSlot = -1, branch = 0, depth = 0;
};

/** subspace: this init's subspaceSize attributes. Inits of one step must not share a parent slot
 * with a slot they start other than branch 0 of that parent (the split reuses it; it reads only
 * childCounts, which no init writes). */
CANOPY_HD void
StreamInitSlotItem(const HoeffdingTreeShape & s,
                   const StreamForestArrays & f,
                   const StreamSlotInit &     init,
                   const std::int32_t *       subspace)
{
  const HoeffdingTreeView t = StreamTreeView(s, f, init.p);
  const std::uint32_t *   counts =
    init.parentSlot < 0
        ? nullptr
        : f.childCounts +
          ((std::int64_t(init.p) * f.slotCapacity + init.parentSlot) * f.maxBranches + init.branch) * s.classes;
  HoeffdingInitSlot(s, t, init.slot, counts, init.depth, subspace);
}

namespace cuda
{
using StreamHandle = CUstream_st *;

/** Step 1 (route); a grid over P x n. */
void
LaunchStreamRoute(const HoeffdingTreeShape & s,
                  const StreamForestArrays & f,
                  const StreamBatchArgs &    b,
                  StreamHandle               stream);
/** Step 2 (vote sums); a grid over n. */
void
LaunchStreamSumVotes(const HoeffdingTreeShape & s, const StreamBatchArgs & b, StreamHandle stream);
/** Scratch bytes LaunchStreamSortKeys needs for `count` keys of keyBits bits. */
std::size_t
StreamSortScratchBytes(std::int64_t count, int keyBits);
/** Step 3: sortedKeys/sortedOrder = keys/order sorted stably by key (CUB radix sort on keyBits bits). */
void
LaunchStreamSortKeys(const StreamBatchArgs & b,
                     std::int64_t            count,
                     int                     keyBits,
                     void *                  scratch,
                     std::size_t             scratchBytes,
                     StreamHandle            stream);
/** Step 4 over count sorted positions, or, for an order-free forest (StreamLearnIsOrderFree), over the
 * count unsorted pairs with atomic adds (no sort needed before it). */
void
LaunchStreamLearn(const HoeffdingTreeShape & s,
                  const StreamForestArrays & f,
                  const StreamBatchArgs &    b,
                  std::int64_t               count,
                  StreamHandle               stream);
/** Step 5: split checks of all slots; the splits decided are listed in splits, *splitCount of them (in
 * no particular order), and splitOfSlot[p * slotCapacity + slot] = the slot's split's index + 1 (the
 * grow step, StreamingForestGrow.h, applies them in node order and clears the marks). */
void
LaunchStreamSplitChecks(const HoeffdingTreeShape & s,
                        const StreamForestArrays & f,
                        const StreamTreeInfo *     info,
                        int                        gracePeriod,
                        std::int32_t *             splitCount,
                        std::int32_t *             splitOfSlot,
                        HoeffdingSplit *           splits,
                        StreamHandle               stream);
/** Steps 6-7: node writes and slot initialisations (subspaces: count * subspaceSize; the two touch
 * disjoint arrays), one kernel over both. Returns the kernels launched (0 or 1). */
int
LaunchStreamApplyUpdates(const HoeffdingTreeShape & s,
                         const StreamForestArrays & f,
                         const StreamNodeWrite *    writes,
                         int                        writeCount,
                         const StreamSlotInit *     inits,
                         const std::int32_t *       subspaces,
                         int                        initCount,
                         StreamHandle               stream);
} // namespace cuda

namespace host
{
/** The same steps as loops on the host (the kernels' reference; arrays in host memory). */
void
StreamRoute(const HoeffdingTreeShape & s, const StreamForestArrays & f, const StreamBatchArgs & b);
void
StreamSumVotes(const HoeffdingTreeShape & s, const StreamBatchArgs & b);
void
StreamSortKeys(const StreamBatchArgs & b, std::int64_t count);
void
StreamLearn(const HoeffdingTreeShape & s, const StreamForestArrays & f, const StreamBatchArgs & b, std::int64_t count);
void
StreamSplitChecks(const HoeffdingTreeShape & s,
                  const StreamForestArrays & f,
                  const StreamTreeInfo *     info,
                  int                        gracePeriod,
                  std::int32_t *             splitCount,
                  std::int32_t *             splitOfSlot,
                  HoeffdingSplit *           splits);
void
StreamApplyUpdates(const HoeffdingTreeShape & s,
                   const StreamForestArrays & f,
                   const StreamNodeWrite *    writes,
                   int                        writeCount,
                   const StreamSlotInit *     inits,
                   const std::int32_t *       subspaces,
                   int                        initCount);
} // namespace host

} // namespace canopy
