// Math of very fast decision trees (Domingos & Hulten 2000; Marron et al.), shared by the CPU
// streaming forest and a later CUDA one: the Hoeffding bound, split merits from integer class counts,
// the Gaussian estimator of a numeric attribute per class (MOA's default observer) and Poisson
// weights of online bagging. Counts are integers (Poisson weights are whole numbers), so the sums a
// GPU forms with atomics equal the CPU's; merits are computed from those counts in a fixed order.
// Logarithms, exponentials and erf come from PortableMath.h (+ - * / only), so host and device round
// identically and the CPU and CUDA forests take the same decisions bit for bit.
#pragma once

#include "canopy/HostDevice.h"
#include "canopy/PortableMath.h"

#include <cmath>
#include <cstdint>

namespace canopy
{

/** epsilon = sqrt(R^2 ln(1/delta) / (2n)): with probability 1 - delta the true mean of a variable
 * with range R lies within epsilon of the mean of n observations. */
CANOPY_HD double
HoeffdingBound(double range, double delta, double n)
{
  return std::sqrt(range * range * PortableLog(1.0 / delta) / (2.0 * n));
}

/** Entropy in bits of a class distribution given by counts (0 for an empty one). */
CANOPY_HD double
EntropyOfCounts(const std::uint32_t * counts, int classes)
{
  double total = 0.0;
  for (int c = 0; c < classes; ++c)
    total += double(counts[c]);
  if (total <= 0.0)
    return 0.0;
  double h = 0.0;
  for (int c = 0; c < classes; ++c)
  {
    if (counts[c] > 0)
    {
      const double p = double(counts[c]) / total;
      h -= p * PortableLog2(p);
    }
  }
  return h;
}

/** Gini impurity 1 - sum p_c^2 of a class distribution (0 for an empty one). */
CANOPY_HD double
GiniOfCounts(const std::uint32_t * counts, int classes)
{
  double total = 0.0;
  for (int c = 0; c < classes; ++c)
    total += double(counts[c]);
  if (total <= 0.0)
    return 0.0;
  double sumSquares = 0.0;
  for (int c = 0; c < classes; ++c)
  {
    const double p = double(counts[c]) / total;
    sumSquares += p * p;
  }
  return 1.0 - sumSquares;
}

enum class SplitCriterion : std::int32_t
{
  InfoGain = 0,
  Gini = 1
};

CANOPY_HD double
ImpurityOfCounts(SplitCriterion criterion, const std::uint32_t * counts, int classes)
{
  return criterion == SplitCriterion::Gini ? GiniOfCounts(counts, classes) : EntropyOfCounts(counts, classes);
}

/** Range R of the merit in the Hoeffding bound: log2(classes) for information gain, 1 for Gini. */
CANOPY_HD double
MeritRange(SplitCriterion criterion, int classes)
{
  if (criterion == SplitCriterion::Gini)
    return 1.0;
  return classes > 2 ? PortableLog2(double(classes)) : 1.0;
}

/** Merit of splitting a node with class counts `parent` into `branches` children whose class counts
 * are branchCounts[b * classes + c]: impurity(parent) - sum_b (n_b / n) impurity(b), n the branches'
 * total. As MOA and river: the branches hold only what the leaf observed since it was made, while the
 * parent's counts include what it inherited from its own parent's split, so the branches are weighed
 * among themselves (weighing them by the parent's total shrank every merit, and the gaps the Hoeffding
 * bound tests, by observed / total: a young leaf split later than MOA's). A split that leaves fewer
 * than two branches with more than `minBranchFraction` of the weight has merit -infinity (it would not
 * separate anything). */
CANOPY_HD double
SplitMeritOfCounts(SplitCriterion        criterion,
                   const std::uint32_t * parent,
                   const std::uint32_t * branchCounts,
                   int                   branches,
                   int                   classes,
                   double                minBranchFraction = 0.01)
{
  double total = 0.0;
  for (int c = 0; c < classes; ++c)
    total += double(parent[c]);
  if (total <= 0.0)
    return 0.0;
  double branchTotal = 0.0;
  for (int k = 0; k < branches * classes; ++k)
    branchTotal += double(branchCounts[k]);
  if (branchTotal <= 0.0)
    return -INFINITY;
  double weighted = 0.0;
  int    heavyBranches = 0;
  for (int b = 0; b < branches; ++b)
  {
    const std::uint32_t * counts = branchCounts + b * classes;
    double                n = 0.0;
    for (int c = 0; c < classes; ++c)
      n += double(counts[c]);
    if (n / branchTotal > minBranchFraction)
      ++heavyBranches;
    weighted += (n / branchTotal) * ImpurityOfCounts(criterion, counts, classes);
  }
  if (heavyBranches < 2)
    return -INFINITY;
  return ImpurityOfCounts(criterion, parent, classes) - weighted;
}

/** The same merit for real-valued branch weights (numeric splits, whose branch weights are
 * estimated from Gaussians): impurities of the distributions w[b * classes + c]. */
CANOPY_HD double
ImpurityOfWeights(SplitCriterion criterion, const double * w, int classes)
{
  double total = 0.0;
  for (int c = 0; c < classes; ++c)
    total += w[c];
  if (total <= 0.0)
    return 0.0;
  double value = criterion == SplitCriterion::Gini ? 1.0 : 0.0;
  for (int c = 0; c < classes; ++c)
  {
    const double p = w[c] / total;
    if (criterion == SplitCriterion::Gini)
      value -= p * p;
    else if (p > 0.0)
      value -= p * PortableLog2(p);
  }
  return value;
}

/** SplitMeritOfWeights with the parent's total and impurity (ImpurityOfWeights) given: a numeric
 * attribute's candidate thresholds share them (computed once instead of once per threshold); the same
 * merit bit for bit. */
CANOPY_HD double
SplitMeritOfWeightsGivenParent(SplitCriterion criterion,
                               double         parentTotal,
                               double         parentImpurity,
                               const double * branchWeights,
                               int            branches,
                               int            classes,
                               double         minBranchFraction = 0.01)
{
  if (parentTotal <= 0.0)
    return 0.0;
  double branchTotal = 0.0;
  for (int k = 0; k < branches * classes; ++k)
    branchTotal += branchWeights[k];
  if (branchTotal <= 0.0)
    return -INFINITY;
  double weighted = 0.0;
  int    heavyBranches = 0;
  for (int b = 0; b < branches; ++b)
  {
    double n = 0.0;
    for (int c = 0; c < classes; ++c)
      n += branchWeights[b * classes + c];
    if (n / branchTotal > minBranchFraction)
      ++heavyBranches;
    weighted += (n / branchTotal) * ImpurityOfWeights(criterion, branchWeights + b * classes, classes);
  }
  if (heavyBranches < 2)
    return -INFINITY;
  return parentImpurity - weighted;
}

CANOPY_HD double
SplitMeritOfWeights(SplitCriterion criterion,
                    const double * parent,
                    const double * branchWeights,
                    int            branches,
                    int            classes,
                    double         minBranchFraction = 0.01)
{
  double total = 0.0;
  for (int c = 0; c < classes; ++c)
    total += parent[c];
  if (total <= 0.0)
    return 0.0;
  return SplitMeritOfWeightsGivenParent(criterion,
                                        total,
                                        ImpurityOfWeights(criterion, parent, classes),
                                        branchWeights,
                                        branches,
                                        classes,
                                        minBranchFraction);
}

/** Running weighted mean and variance of one numeric attribute within one class (Welford, updated in
 * instance order: a GPU version must apply a leaf's updates in the same order to match bit for bit).
 * Weights are whole numbers (Poisson draws). */
struct GaussianEstimator
{
  double        mean = 0.0;
  double        m2 = 0.0; // sum of weighted squared deviations
  std::uint32_t weight = 0;
  float         minValue = INFINITY;
  float         maxValue = -INFINITY;
};

CANOPY_HD void
AddToGaussian(GaussianEstimator & g, float value, std::uint32_t weight)
{
  if (weight == 0)
    return;
  const double x = double(value);
  const double total = double(g.weight) + double(weight);
  const double delta = x - g.mean;
  g.mean += double(weight) * delta / total;
  g.m2 += double(weight) * delta * (x - g.mean);
  g.weight += weight;
  g.minValue = value < g.minValue ? value : g.minValue;
  g.maxValue = value > g.maxValue ? value : g.maxValue;
}

CANOPY_HD double
GaussianStdDev(const GaussianEstimator & g)
{
  return g.weight > 1 ? std::sqrt(g.m2 / (double(g.weight) - 1.0)) : 0.0;
}

/** Density of the estimator's normal at x; with no spread, 1 at the mean and 0 elsewhere (MOA). */
CANOPY_HD double
GaussianDensity(const GaussianEstimator & g, double x)
{
  if (g.weight == 0)
    return 0.0;
  const double sd = GaussianStdDev(g);
  if (sd <= 0.0)
    return x == g.mean ? 1.0 : 0.0;
  const double z = (x - g.mean) / sd;
  return PortableExp(-0.5 * z * z) / (sd * 2.5066282746310002); // sqrt(2 pi)
}

/** Estimated weight of the class's instances with value <= x (MOA's lessThan + equalTo, clipped to
 * [0, weight]); outside [min, max] it is all or nothing. */
CANOPY_HD double
GaussianWeightAtOrBelow(const GaussianEstimator & g, double x)
{
  if (g.weight == 0 || x < double(g.minValue))
    return 0.0;
  if (x >= double(g.maxValue))
    return double(g.weight);
  const double sd = GaussianStdDev(g);
  const double w = double(g.weight);
  if (sd <= 0.0)
    return x >= g.mean ? w : 0.0;
  // MOA: equalTo = density * w, lessThan = cdf * w - equalTo; the left branch takes both.
  const double cdf = 0.5 * (1.0 + PortableErf((x - g.mean) / (sd * 1.4142135623730951)));
  return cdf * w;
}

/** Poisson(lambda) draw from one uniform u in [0, 1) by inverting the CDF (lambda <= ~30), given
 * expNegLambda = exp(-lambda). The same u gives the same k on any IEEE machine when multiply-adds are
 * not contracted. */
CANOPY_HD std::uint32_t
          PoissonFromUniform(double u, double lambda, double expNegLambda)
{
  double        p = expNegLambda;
  double        cdf = p;
  std::uint32_t k = 0;
  while (u >= cdf && k < 1000)
  {
    ++k;
    p *= lambda / double(k);
    cdf += p;
  }
  return k;
}

/** PoissonFromUniform(u, lambda, expNegLambda) for many u: the CDF the inversion accumulates depends
 * on lambda only, so it is tabulated once (with the same arithmetic) and a draw is a search; the same
 * k for every u. */
class PoissonTable
{
public:
  PoissonTable(double lambda, double expNegLambda)
  {
    double p = expNegLambda, cdf = p;
    m_Cdf[0] = cdf;
    for (std::uint32_t k = 1; k <= kMax; ++k)
    {
      p *= lambda / double(k);
      cdf += p;
      m_Cdf[k] = cdf;
    }
  }
  std::uint32_t operator()(double u) const
  {
    // The CDF never decreases (it adds p >= 0), so the entries <= u are a prefix of the table and the
    // search's k is their number. The first kFirst entries are counted without a branch (the search's
    // exit, at a random k, was mispredicted about once a draw); k = kFirst (u beyond them, rare for
    // lambda <= ~8) goes on searching.
    std::uint32_t k = 0;
    for (std::uint32_t i = 0; i < kFirst; ++i)
      k += u >= m_Cdf[i] ? 1u : 0u;
    if (k < kFirst)
      return k;
    while (k < kMax && u >= m_Cdf[k])
      ++k;
    return k;
  }

private:
  static constexpr std::uint32_t kMax = 1000, kFirst = 16;
  double                         m_Cdf[kMax + 1];
};

CANOPY_HD std::uint32_t
          PoissonFromUniform(double u, double lambda)
{
  return PoissonFromUniform(u, lambda, PortableExp(-lambda));
}

} // namespace canopy
