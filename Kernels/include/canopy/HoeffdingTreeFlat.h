// One Hoeffding tree as flat arrays, and everything a CPU tree or a CUDA thread does with it: find an
// instance's leaf, leaf votes (majority class, naive Bayes), score the two leaf predictors, learn one
// instance at a leaf (class counts, then one attribute's statistics at a time), and the split decision
// of a leaf. canopy::streaming::HoeffdingTree and the CUDA forest (StreamingForest.cu) call these
// same functions on the same layout, so they take the same decisions bit for bit.
//
// Layout: nodes are parallel arrays (attribute, threshold, child, missingBranch); a leaf's `child` is
// its slot. A slot holds class counts [classes], nominal counts [nominalStride] (attribute offset +
// value * classes + class), Gaussians [numericStride] (attribute offset + class), its attribute
// subspace [subspaceSize] and scalars (weight, weight at the last split check, the two predictors'
// correct weights, depth).
#pragma once

#include "canopy/CounterRandom.h"
#include "canopy/HoeffdingMath.h"

#include <cstdint>

namespace canopy
{

constexpr int kHoeffdingMaxClasses = 64; // local arrays of a leaf's votes and branch weights

enum class HoeffdingLeafPrediction : std::int32_t
{
  MajorityClass = 0,
  NaiveBayes = 1,
  NaiveBayesAdaptive = 2
};

/** What all trees of a forest share: the stream's shape and the tree options. */
struct HoeffdingTreeShape
{
  int                     classes = 2, attributes = 0, subspaceSize = 0;
  int                     nominalStride = 0, numericStride = 0;
  const std::int32_t *    values = nullptr; // per attribute: nominal values, 0 for numeric
  const std::int32_t *    offset = nullptr; // per attribute: offset in a slot's nominal counts or Gaussians
  SplitCriterion          criterion = SplitCriterion::InfoGain;
  HoeffdingLeafPrediction leafPrediction = HoeffdingLeafPrediction::NaiveBayesAdaptive;
  int                     numericSplitPoints = 10;
  int                     maxDepth = 0;
  bool                    skipFlatGaussians = false; // naive Bayes: a Gaussian without spread gives no factor
  double                  splitConfidence = 1e-7, tieThreshold = 0.05;
};

/** One tree's arrays (nodes and leaf slots). */
struct HoeffdingTreeView
{
  std::int32_t *      attribute = nullptr;
  float *             threshold = nullptr;
  std::int32_t *      child = nullptr;
  std::int32_t *      missingBranch = nullptr;
  std::uint32_t *     classCounts = nullptr;
  std::uint32_t *     nominalCounts = nullptr;
  GaussianEstimator * gaussians = nullptr;
  std::int32_t *      subspace = nullptr;
  std::uint32_t *     weight = nullptr;
  std::uint32_t *     weightAtLastCheck = nullptr;
  std::uint32_t *     majorityCorrect = nullptr;
  std::uint32_t *     bayesCorrect = nullptr;
  std::int32_t *      slotDepth = nullptr;
};

/** A leaf's split decision: the attribute, the numeric threshold, the number of children, the child
 * a missing value follows and the children's class counts (branches * classes). */
struct HoeffdingSplit
{
  std::int32_t attribute = -1;
  float        threshold = 0.0f;
  std::int32_t branches = 0;
  std::int32_t heaviest = 0;
};

CANOPY_HD bool
HoeffdingIsMissing(float v)
{
  return v != v;
}

CANOPY_HD int
HoeffdingArgMax(const double * v, int n)
{
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (v[i] > v[best])
      best = i;
  return best;
}

/** The leaf node instance x reaches. */
CANOPY_HD int
HoeffdingFindLeafNode(const HoeffdingTreeShape & s, const HoeffdingTreeView & t, const float * x)
{
  int node = 0;
  for (int a = t.attribute[0]; a >= 0; a = t.attribute[node])
  {
    const float v = x[a];
    int         branch;
    if (HoeffdingIsMissing(v))
      branch = t.missingBranch[node];
    else if (s.values[a] > 0)
      branch = int(v);
    else
      branch = v <= t.threshold[node] ? 0 : 1;
    node = t.child[node] + branch;
  }
  return node;
}

/** The class count the leaf functions loop over: kClasses when it is given (> 0), so that a caller's
 * votes and scratch arrays of that size stay in registers on the device (each loop then has a fixed
 * trip count and unrolls; the arithmetic is the same), else the shape's. */
template<int kClasses>
CANOPY_HD int
HoeffdingClassCount(const HoeffdingTreeShape & s)
{
  return kClasses > 0 ? kClasses : s.classes;
}

/** votes[c] proportional to n_c prod_a P(x_a | c); numerators and denominators kept apart (one division
 * per class) and rescaled before they could overflow; all-zero densities fall back to the counts.
 * kClasses: HoeffdingClassCount's. */
template<int kClasses = 0>
CANOPY_HD void
HoeffdingNaiveBayesVotes(const HoeffdingTreeShape & s,
                         const HoeffdingTreeView &  t,
                         int                        slot,
                         const float *              x,
                         double *                   votes)
{
  const int             classes = HoeffdingClassCount<kClasses>(s);
  const std::int64_t    sl = slot;
  const std::uint32_t * counts = t.classCounts + sl * classes;
  const std::int32_t *  subspace = t.subspace + sl * s.subspaceSize;
  double                largest = 0.0;
  for (int c = 0; c < classes; ++c)
  {
    double numerator = double(counts[c]), denominator = 1.0;
    for (int j = 0; j < s.subspaceSize && numerator > 0.0; ++j)
    {
      const int   a = subspace[j];
      const float v = x[a];
      if (HoeffdingIsMissing(v))
        continue;
      if (s.values[a] > 0)
      {
        // Laplace-corrected frequency of the value within the class, as MOA's nominal observer.
        const std::uint32_t * n = t.nominalCounts + sl * s.nominalStride + s.offset[a] + c;
        std::uint64_t         classTotal = 0;
        for (int value = 0; value < s.values[a]; ++value)
          classTotal += n[value * classes];
        numerator *= double(n[int(v) * classes]) + 1.0;
        denominator *= double(classTotal) + double(s.values[a]);
      }
      else
      {
        const GaussianEstimator & g = t.gaussians[sl * s.numericStride + s.offset[a] + c];
        // A Gaussian without spread (no value yet, or one value, perhaps with a Poisson weight > 1)
        // gives 1 at its mean and 0 elsewhere (MOA), or, with skipFlatGaussians, no factor (river).
        if (s.skipFlatGaussians && !(g.weight > 1 && g.m2 > 0.0)) // no spread, without a square root
          continue;
        numerator *= GaussianDensity(g, double(v));
      }
      if (denominator > 1e200)
      {
        numerator *= 1e-200;
        denominator *= 1e-200;
      }
    }
    votes[c] = numerator / denominator;
    largest = votes[c] > largest ? votes[c] : largest;
  }
  if (!(largest > 0.0))
    for (int c = 0; c < classes; ++c)
      votes[c] = double(counts[c]);
}

/** The leaf's votes normalised to sum 1 (all 0 before the leaf saw anything): naive Bayes or the
 * class counts, as the leaf prediction option and (NBAdaptive) the leaf's scores decide. */
CANOPY_HD void
HoeffdingLeafVotes(const HoeffdingTreeShape & s, const HoeffdingTreeView & t, int slot, const float * x, double * votes)
{
  const std::uint32_t * counts = t.classCounts + std::int64_t(slot) * s.classes;
  const bool            bayes =
    s.leafPrediction == HoeffdingLeafPrediction::NaiveBayes ||
    (s.leafPrediction == HoeffdingLeafPrediction::NaiveBayesAdaptive && t.bayesCorrect[slot] > t.majorityCorrect[slot]);
  if (bayes)
    HoeffdingNaiveBayesVotes(s, t, slot, x, votes);
  else
    for (int c = 0; c < s.classes; ++c)
      votes[c] = double(counts[c]);
  double sum = 0.0;
  for (int c = 0; c < s.classes; ++c)
    sum += votes[c];
  for (int c = 0; c < s.classes; ++c)
    votes[c] = sum > 0.0 ? votes[c] / sum : 0.0;
}

constexpr std::uint8_t kHoeffdingMajorityRight = 1, kHoeffdingBayesRight = 2;

/** NBAdaptive's scores of the leaf's two predictors on (x, label), before learning it: bit 1 when the
 * majority class is right, bit 2 when naive Bayes is (MOA). 0 for other leaf predictions. kClasses:
 * HoeffdingClassCount's. */
template<int kClasses = 0>
CANOPY_HD std::uint8_t
          HoeffdingScoreLeaf(const HoeffdingTreeShape & s,
                             const HoeffdingTreeView &  t,
                             int                        slot,
                             const float *              x,
                             int                        label,
                             double *                   scratchVotes)
{
  if (s.leafPrediction != HoeffdingLeafPrediction::NaiveBayesAdaptive)
    return 0;
  const int             classes = HoeffdingClassCount<kClasses>(s);
  const std::uint32_t * counts = t.classCounts + std::int64_t(slot) * classes;
  int                   majority = 0;
  for (int c = 1; c < classes; ++c)
    if (counts[c] > counts[majority])
      majority = c;
  std::uint8_t bits = majority == label ? kHoeffdingMajorityRight : 0;
  HoeffdingNaiveBayesVotes<kClasses>(s, t, slot, x, scratchVotes);
  if (HoeffdingArgMax(scratchVotes, classes) == label)
    bits |= kHoeffdingBayesRight;
  return bits;
}

/** HoeffdingLeafVotes and HoeffdingScoreLeaf in one pass, computing naive Bayes once: the leaf's
 * normalised votes into votes[classes], NBAdaptive's score bits returned; scratch[classes]. kClasses:
 * HoeffdingClassCount's. */
template<int kClasses = 0>
CANOPY_HD std::uint8_t
          HoeffdingVoteAndScore(const HoeffdingTreeShape & s,
                                const HoeffdingTreeView &  t,
                                int                        slot,
                                const float *              x,
                                int                        label,
                                double *                   votes,
                                double *                   scratch)
{
  const int             classes = HoeffdingClassCount<kClasses>(s);
  const std::uint32_t * counts = t.classCounts + std::int64_t(slot) * classes;
  const bool            adaptive = s.leafPrediction == HoeffdingLeafPrediction::NaiveBayesAdaptive;
  const bool            bayes = s.leafPrediction == HoeffdingLeafPrediction::NaiveBayes ||
                     (adaptive && t.bayesCorrect[slot] > t.majorityCorrect[slot]);
  std::uint8_t bits = 0;
  if (bayes || adaptive)
    HoeffdingNaiveBayesVotes<kClasses>(s, t, slot, x, scratch);
  if (adaptive)
  {
    int majority = 0;
    for (int c = 1; c < classes; ++c)
      if (counts[c] > counts[majority])
        majority = c;
    bits = majority == label ? kHoeffdingMajorityRight : 0;
    if (HoeffdingArgMax(scratch, classes) == label)
      bits |= kHoeffdingBayesRight;
  }
  double sum = 0.0;
  for (int c = 0; c < classes; ++c)
  {
    votes[c] = bayes ? scratch[c] : double(counts[c]);
    sum += votes[c];
  }
  for (int c = 0; c < classes; ++c)
    votes[c] = sum > 0.0 ? votes[c] / sum : 0.0;
  return bits;
}

/** How learning adds w to a count: in place (the CPU forest, ordered runs), or as the caller says (the
 * device's atomics for a forest whose pairs are learnt in any order, StreamLearnPairItem). */
struct HoeffdingPlainAdd
{
  CANOPY_HD void operator()(std::uint32_t * count, std::uint32_t w) const { *count += w; }
};

/** Learning an instance of weight w at a slot, part 1: class counts, weight, predictor scores. */
template<typename AddCount = HoeffdingPlainAdd>
CANOPY_HD void
HoeffdingLearnCounts(const HoeffdingTreeShape & s,
                     const HoeffdingTreeView &  t,
                     int                        slot,
                     int                        label,
                     std::uint32_t              w,
                     std::uint8_t               scoreBits,
                     const AddCount &           add = AddCount{})
{
  if (scoreBits & kHoeffdingMajorityRight)
    add(t.majorityCorrect + slot, w);
  if (scoreBits & kHoeffdingBayesRight)
    add(t.bayesCorrect + slot, w);
  add(t.classCounts + std::int64_t(slot) * s.classes + label, w);
  add(t.weight + slot, w);
}

/** Part 2, for the slot's j-th observed attribute: its nominal counts or its class's Gaussian. Missing
 * values teach nothing (MOA). Gaussians depend on the order of updates: apply a slot's instances in
 * stream order (add: as HoeffdingLearnCounts', for the nominal counts). */
template<typename AddCount = HoeffdingPlainAdd>
CANOPY_HD void
HoeffdingLearnAttribute(const HoeffdingTreeShape & s,
                        const HoeffdingTreeView &  t,
                        int                        slot,
                        int                        j,
                        const float *              x,
                        int                        label,
                        std::uint32_t              w,
                        const AddCount &           add = AddCount{})
{
  const std::int64_t sl = slot;
  const int          a = t.subspace[sl * s.subspaceSize + j];
  const float        v = x[a];
  if (HoeffdingIsMissing(v))
    return;
  if (s.values[a] > 0)
    add(t.nominalCounts + sl * s.nominalStride + s.offset[a] + int(v) * s.classes + label, w);
  else
    AddToGaussian(t.gaussians[sl * s.numericStride + s.offset[a] + label], v, w);
}

/** True when the slot has seen gracePeriod weight since its last check (then it is checked). */
CANOPY_HD bool
HoeffdingSplitDue(const HoeffdingTreeView & t, int slot, int gracePeriod)
{
  return t.weight[slot] - t.weightAtLastCheck[slot] >= std::uint32_t(gracePeriod);
}

/** The best split of attribute a at a slot: its merit and (numeric) threshold. */
CANOPY_HD double
HoeffdingBestSplitOf(const HoeffdingTreeShape & s, const HoeffdingTreeView & t, int slot, int a, float * threshold)
{
  const std::int64_t    sl = slot;
  const std::uint32_t * parent = t.classCounts + sl * s.classes;
  *threshold = 0.0f;
  if (s.values[a] > 0)
    return SplitMeritOfCounts(
      s.criterion, parent, t.nominalCounts + sl * s.nominalStride + s.offset[a], s.values[a], s.classes);
  const GaussianEstimator * g = t.gaussians + sl * s.numericStride + s.offset[a];
  float                     low = INFINITY, high = -INFINITY;
  for (int c = 0; c < s.classes; ++c)
  {
    if (g[c].weight == 0)
      continue;
    low = g[c].minValue < low ? g[c].minValue : low;
    high = g[c].maxValue > high ? g[c].maxValue : high;
  }
  double best = -INFINITY;
  if (!(low < high))
    return best;
  double parentWeights[kHoeffdingMaxClasses], branchWeights[2 * kHoeffdingMaxClasses];
  double parentTotal = 0.0;
  for (int c = 0; c < s.classes; ++c)
  {
    parentWeights[c] = double(parent[c]);
    parentTotal += parentWeights[c];
  }
  // The parent's side of every threshold's merit, once (SplitMeritOfWeights: the same merits).
  const double parentImpurity = ImpurityOfWeights(s.criterion, parentWeights, s.classes);
  const int    points = s.numericSplitPoints;
  for (int i = 1; i <= points; ++i)
  {
    const float cut = float(double(low) + (double(high) - double(low)) * double(i) / double(points + 1));
    for (int c = 0; c < s.classes; ++c)
    {
      const double below = GaussianWeightAtOrBelow(g[c], double(cut));
      branchWeights[c] = below;
      branchWeights[s.classes + c] = double(g[c].weight) - below;
    }
    const double merit =
      SplitMeritOfWeightsGivenParent(s.criterion, parentTotal, parentImpurity, branchWeights, 2, s.classes);
    if (merit > best)
    {
      best = merit;
      *threshold = cut;
    }
  }
  return best;
}

/** The split decision of a slot (call when due): the best two candidates of its attributes (every
 * finite merit ranks above "no split", as river); a split when best - second > epsilon or epsilon <
 * tau. On a split, fills `split` and the children's class counts childCounts[branches * classes] (a
 * nominal attribute's value rows; for a numeric one the Gaussians' estimate of each side, rounded). */
CANOPY_HD bool
HoeffdingDecideSplit(const HoeffdingTreeShape & s,
                     const HoeffdingTreeView &  t,
                     int                        slot,
                     HoeffdingSplit &           split,
                     std::uint32_t *            childCounts)
{
  const std::int64_t    sl = slot;
  const std::uint32_t * counts = t.classCounts + sl * s.classes;
  int                   classesSeen = 0;
  for (int c = 0; c < s.classes; ++c)
    classesSeen += counts[c] > 0 ? 1 : 0;
  if (classesSeen < 2 || (s.maxDepth > 0 && t.slotDepth[slot] >= s.maxDepth))
    return false;
  // As river: "no split" is not a candidate of merit 0 (MOA's null split) but ranks below every
  // finite merit, so a leaf whose only finite candidate is one attribute splits on it, and the tie
  // rule may take a merit <= 0. Measured against MOA's rule on eight streams (seeds 1-5): level or
  // better on each (docs/ACCURACY.md, streaming).
  double firstMerit = -INFINITY, secondMerit = -INFINITY;
  int    firstAttribute = -1;
  float  firstThreshold = 0.0f;
  for (int j = 0; j < s.subspaceSize; ++j)
  {
    const int    a = t.subspace[sl * s.subspaceSize + j];
    float        cut = 0.0f;
    const double merit = HoeffdingBestSplitOf(s, t, slot, a, &cut);
    if (merit > firstMerit)
    {
      secondMerit = firstMerit;
      firstMerit = merit;
      firstAttribute = a;
      firstThreshold = cut;
    }
    else if (merit > secondMerit)
      secondMerit = merit;
  }
  const double epsilon = HoeffdingBound(MeritRange(s.criterion, s.classes), s.splitConfidence, double(t.weight[slot]));
  if (firstAttribute < 0 || !(firstMerit - secondMerit > epsilon || epsilon < s.tieThreshold))
    return false;

  const int a = firstAttribute;
  const int branches = s.values[a] > 0 ? s.values[a] : 2;
  if (s.values[a] > 0)
  {
    const std::uint32_t * rows = t.nominalCounts + sl * s.nominalStride + s.offset[a];
    for (int k = 0; k < branches * s.classes; ++k)
      childCounts[k] = rows[k];
  }
  else
  {
    const GaussianEstimator * g = t.gaussians + sl * s.numericStride + s.offset[a];
    for (int c = 0; c < s.classes; ++c)
    {
      const auto below = std::uint32_t(llround(GaussianWeightAtOrBelow(g[c], double(firstThreshold))));
      childCounts[c] = below < g[c].weight ? below : g[c].weight;
      childCounts[s.classes + c] = g[c].weight - childCounts[c];
    }
  }
  int    heaviest = 0;
  double heaviestWeight = -1.0;
  for (int b = 0; b < branches; ++b)
  {
    double w = 0.0;
    for (int c = 0; c < s.classes; ++c)
      w += double(childCounts[b * s.classes + c]);
    if (w > heaviestWeight)
    {
      heaviest = b;
      heaviestWeight = w;
    }
  }
  split.attribute = a;
  split.threshold = firstThreshold;
  split.branches = branches;
  split.heaviest = heaviest;
  return true;
}

/** Makes `slot` a fresh leaf: class counts `initialCounts` (or zeros), empty attribute statistics, the
 * given depth and attribute subspace. */
CANOPY_HD void
HoeffdingInitSlot(const HoeffdingTreeShape & s,
                  const HoeffdingTreeView &  t,
                  int                        slot,
                  const std::uint32_t *      initialCounts,
                  int                        depth,
                  const std::int32_t *       subspace)
{
  const std::int64_t sl = slot;
  for (int k = 0; k < s.nominalStride; ++k)
    t.nominalCounts[sl * s.nominalStride + k] = 0;
  for (int k = 0; k < s.numericStride; ++k)
    t.gaussians[sl * s.numericStride + k] = GaussianEstimator{};
  std::uint32_t total = 0;
  for (int c = 0; c < s.classes; ++c)
  {
    const std::uint32_t n = initialCounts ? initialCounts[c] : 0u;
    t.classCounts[sl * s.classes + c] = n;
    total += n;
  }
  t.weight[slot] = total;
  t.weightAtLastCheck[slot] = total;
  t.majorityCorrect[slot] = 0;
  t.bayesCorrect[slot] = 0;
  t.slotDepth[slot] = depth;
  for (int j = 0; j < s.subspaceSize; ++j)
    t.subspace[sl * s.subspaceSize + j] = subspace[j];
}

/** A leaf's attribute subspace: a partial Fisher-Yates shuffle of 0..attributes-1 from counter-based
 * draws keyed by (seed, the tree's stream key, the leaf's creation number). order[attributes] is
 * scratch; the first subspaceSize entries are the result. */
CANOPY_HD void
HoeffdingDrawSubspace(std::uint64_t  seed,
                      std::uint64_t  streamKey,
                      std::uint64_t  leafKey,
                      int            attributes,
                      int            subspaceSize,
                      std::int32_t * order)
{
  for (int a = 0; a < attributes; ++a)
    order[a] = a;
  if (subspaceSize >= attributes)
    return;
  for (int j = 0; j < subspaceSize; ++j)
  {
    const double u = CounterUniform(seed, streamKey, leafKey * 4096u + std::uint64_t(j));
    int          k = j + int(u * double(attributes - j));
    k = k < attributes - 1 ? k : attributes - 1;
    const std::int32_t swap = order[j];
    order[j] = order[k];
    order[k] = swap;
  }
}
} // namespace canopy
