// The shared VFDT math against values worked out by hand (Quinlan's play-tennis counts).
#include "canopy/HoeffdingMath.h"
#include "canopy/CounterRandom.h"
#include "canopy/StreamingForestGrow.h"
#include "canopyPoissonBuckets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

using namespace canopy;

TEST(HoeffdingMath, BoundMatchesTheFormula)
{
  // sqrt(1 * ln(1e7) / 400) = sqrt(16.1181 / 400)
  EXPECT_NEAR(HoeffdingBound(1.0, 1e-7, 200.0), 0.200737, 1e-6);
  // Range log2(4) = 2, delta 0.01, n 50: sqrt(4 * 4.60517 / 100)
  EXPECT_NEAR(HoeffdingBound(MeritRange(SplitCriterion::InfoGain, 4), 0.01, 50.0), 0.429193, 1e-6);
  EXPECT_DOUBLE_EQ(MeritRange(SplitCriterion::InfoGain, 2), 1.0);
  EXPECT_DOUBLE_EQ(MeritRange(SplitCriterion::Gini, 7), 1.0);
  EXPECT_LT(HoeffdingBound(1.0, 1e-7, 10000.0), HoeffdingBound(1.0, 1e-7, 100.0)); // shrinks with n
}

TEST(HoeffdingMath, EntropyAndGiniOfCounts)
{
  const std::uint32_t even[2] = { 5, 5 }, tennis[2] = { 9, 5 }, pure[2] = { 7, 0 }, none[2] = { 0, 0 };
  EXPECT_DOUBLE_EQ(EntropyOfCounts(even, 2), 1.0);
  EXPECT_NEAR(EntropyOfCounts(tennis, 2), 0.940286, 1e-6);
  EXPECT_DOUBLE_EQ(EntropyOfCounts(pure, 2), 0.0);
  EXPECT_DOUBLE_EQ(EntropyOfCounts(none, 2), 0.0);
  EXPECT_NEAR(GiniOfCounts(tennis, 2), 90.0 / 196.0, 1e-12);
  EXPECT_DOUBLE_EQ(GiniOfCounts(even, 2), 0.5);
}

TEST(HoeffdingMath, SplitMeritOfOutlook)
{
  // Play tennis, outlook: sunny 2 yes / 3 no, overcast 4 / 0, rain 3 / 2.
  const std::uint32_t parent[2] = { 9, 5 };
  const std::uint32_t outlook[6] = { 2, 3, 4, 0, 3, 2 };
  EXPECT_NEAR(SplitMeritOfCounts(SplitCriterion::InfoGain, parent, outlook, 3, 2), 0.246750, 1e-6);
  EXPECT_NEAR(SplitMeritOfCounts(SplitCriterion::Gini, parent, outlook, 3, 2), 90.0 / 196.0 - 12.0 / 35.0, 1e-12);
  // The same with real weights (the numeric path).
  const double parentW[2] = { 9, 5 }, outlookW[6] = { 2, 3, 4, 0, 3, 2 };
  EXPECT_NEAR(SplitMeritOfWeights(SplitCriterion::InfoGain, parentW, outlookW, 3, 2), 0.246750, 1e-6);
  // All weight in one branch separates nothing: not a candidate.
  const std::uint32_t oneBranch[4] = { 9, 5, 0, 0 };
  EXPECT_TRUE(std::isinf(SplitMeritOfCounts(SplitCriterion::InfoGain, parent, oneBranch, 2, 2)));
}

TEST(HoeffdingMath, BranchesAreWeighedAmongThemselves)
{
  // A young leaf: 12 of its 20 class counts inherited from its parent's split, 8 observed since, 3 / 1
  // and 1 / 3 on the two sides. The branches' impurities are weighed by their share of the 8 observed
  // (MOA, river): H(10, 10) - H(3, 1) = 1 - 0.811278, not 1 - 8/20 H(3, 1).
  const std::uint32_t parent[2] = { 10, 10 }, branches[4] = { 3, 1, 1, 3 };
  const double        h31 = -(0.75 * std::log2(0.75) + 0.25 * std::log2(0.25));
  EXPECT_NEAR(SplitMeritOfCounts(SplitCriterion::InfoGain, parent, branches, 2, 2), 1.0 - h31, 1e-12);
  const double parentW[2] = { 10, 10 }, branchesW[4] = { 3, 1, 1, 3 };
  EXPECT_NEAR(SplitMeritOfWeights(SplitCriterion::InfoGain, parentW, branchesW, 2, 2), 1.0 - h31, 1e-12);
  // The 1% rule counts the branches' own total too: 1 of 8 observed is a branch, though 1 of 20 ...
  const std::uint32_t light[4] = { 7, 0, 0, 1 };
  EXPECT_FALSE(std::isinf(SplitMeritOfCounts(SplitCriterion::InfoGain, parent, light, 2, 2, 0.1)));
  // ... and nothing observed yet is no candidate.
  const std::uint32_t empty[4] = { 0, 0, 0, 0 };
  EXPECT_TRUE(std::isinf(SplitMeritOfCounts(SplitCriterion::InfoGain, parent, empty, 2, 2)));
}

TEST(HoeffdingMath, GaussianEstimator)
{
  GaussianEstimator g, twice;
  for (float v : { 1.0f, 2.0f, 3.0f, 4.0f })
  {
    AddToGaussian(g, v, 1);
    AddToGaussian(twice, v, 2); // weight 2 is the value seen twice
  }
  EXPECT_DOUBLE_EQ(g.mean, 2.5);
  EXPECT_NEAR(GaussianStdDev(g), std::sqrt(5.0 / 3.0), 1e-12);
  EXPECT_DOUBLE_EQ(twice.mean, 2.5);
  EXPECT_NEAR(GaussianStdDev(twice), std::sqrt(10.0 / 7.0), 1e-12);
  EXPECT_EQ(g.minValue, 1.0f);
  EXPECT_EQ(g.maxValue, 4.0f);
  EXPECT_DOUBLE_EQ(GaussianWeightAtOrBelow(g, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(GaussianWeightAtOrBelow(g, 4.0), 4.0);
  EXPECT_NEAR(GaussianWeightAtOrBelow(g, 2.5), 2.0, 1e-12); // half of the weight below the mean
  EXPECT_NEAR(GaussianDensity(g, 2.5), 1.0 / (std::sqrt(5.0 / 3.0) * std::sqrt(2.0 * M_PI)), 1e-12);
}

TEST(HoeffdingMath, PoissonFromUniform)
{
  EXPECT_EQ(PoissonFromUniform(0.0, 1.0), 0u);
  EXPECT_EQ(PoissonFromUniform(0.3678, 1.0), 0u); // P(0) = e^-1 = 0.36788
  EXPECT_EQ(PoissonFromUniform(0.3679, 1.0), 1u);
  EXPECT_EQ(PoissonFromUniform(0.7357, 1.0), 1u); // P(<=1) = 2 e^-1 = 0.73576
  EXPECT_EQ(PoissonFromUniform(0.7358, 1.0), 2u);
  // Mean over an even grid of u approaches lambda.
  for (double lambda : { 1.0, 6.0 })
  {
    double    sum = 0;
    const int n = 100000;
    for (int i = 0; i < n; ++i)
      sum += PoissonFromUniform((i + 0.5) / n, lambda);
    EXPECT_NEAR(sum / n, lambda, 1e-3 * lambda);
  }
}

TEST(HoeffdingMath, CounterRandomIsAPureFunction)
{
  EXPECT_EQ(CounterBits(1, 2, 3), CounterBits(1, 2, 3));
  EXPECT_NE(CounterBits(1, 2, 3), CounterBits(1, 2, 4));
  EXPECT_NE(CounterBits(1, 2, 3), CounterBits(1, 3, 3));
  EXPECT_NE(CounterBits(1, 2, 3), CounterBits(2, 2, 3));
  double sum = 0;
  for (int i = 0; i < 100000; ++i)
  {
    const double u = CounterUniform(7, 0, i);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.005);
}

TEST(PortableMath, AgreesWithLibm)
{
  // log2, exp and erf from + - * / only (so host and device round alike) stay within ~1e-15 of libm.
  for (double x = 1e-300; x < 1e300; x *= 3.7)
    EXPECT_NEAR(PortableLog2(x), std::log2(x), 1e-15 * std::max(1.0, std::fabs(std::log2(x)))) << x;
  for (double x = 0.01; x < 10.0; x += 0.0137)
    EXPECT_NEAR(PortableLog(x), std::log(x), 2e-15 * std::max(1.0, std::fabs(std::log(x)))) << x;
  for (double x = -740.0; x < 700.0; x += 0.731)
    EXPECT_NEAR(PortableExp(x), std::exp(x), 4e-15 * std::exp(x)) << x;
  for (double x = -7.0; x < 7.0; x += 0.00731)
    EXPECT_NEAR(PortableErf(x), std::erf(x), 2e-15) << x;
  EXPECT_EQ(PortableLog2(8.0), 3.0);
  EXPECT_EQ(PortableExp(0.0), 1.0);
  EXPECT_EQ(PortableErf(0.0), 0.0);
  EXPECT_EQ(PortableLog2(0.0), -INFINITY);
  EXPECT_TRUE(std::isnan(PortableErf(NAN)));
}

TEST(PortableMath, FrexpEqualsLibm)
{
  // PortableFrexp reads a normal double's bits on the host: the same fraction and exponent as frexp,
  // normal and subnormal, positive and negative, and the edges of the exponent range.
  std::vector<double> xs = { 1.0, 0.5, 0.75, 2.0, 3.0, 1e300, 1e-300, DBL_MAX, DBL_MIN, DBL_MIN / 3.0, 4.9e-324, -2.5, -1e-310, INFINITY };
  for (double x = 1e-320; x < 1e305; x *= 1.37)
    xs.push_back(x);
  for (std::uint32_t n = 1; n < 100000; n += 7)
    xs.push_back(double(n)), xs.push_back(1.0 / double(n));
  for (const double x : xs)
  {
    int          e = 0, expected = 0;
    const double m = PortableFrexp(x, &e), reference = std::frexp(x, &expected);
    EXPECT_EQ(m, reference) << x;
    EXPECT_EQ(e, expected) << x;
  }
  int e = 0;
  EXPECT_TRUE(std::isnan(PortableFrexp(NAN, &e)));
}

TEST(HoeffdingMath, PoissonBucketsEqualTheInversionLoop)
{
  // The forest's bucketed draws equal the loop the CUDA kernels run: on random u, on every bucket's
  // edges, and on and beside every CDF value (where buckets ask the table).
  for (double lambda : { 0.5, 1.0, 6.0, 29.0, 30.0 })
  {
    const double                            e = std::exp(-lambda);
    const canopy::streaming::PoissonBuckets draw(lambda, e);
    auto                                    check = [&](double u)
    { ASSERT_EQ(draw(u), PoissonFromUniform(u, lambda, e)) << "lambda " << lambda << ", u " << u; };
    for (std::uint64_t i = 0; i < 200000; ++i)
      check(CounterUniform(5, 2, i));
    for (int j = 0; j < 256; ++j)
      for (double u : { double(j) / 256, double(j + 1) / 256 - 0x1.0p-53 })
        check(u);
    double p = e, cdf = p;
    for (std::uint32_t k = 0; k < 80 && cdf < 1.0; ++k)
    {
      // u on the 2^-53 grid (as CounterUniform's) at and around each CDF value.
      const double onGrid = std::floor(cdf * 0x1.0p53) * 0x1.0p-53;
      for (double u : { onGrid - 0x1.0p-53, onGrid, onGrid + 0x1.0p-53 })
        if (u >= 0.0 && u < 1.0)
          check(u);
      p *= lambda / double(k + 1);
      cdf += p;
    }
  }
}

TEST(HoeffdingMath, PoissonTableEqualsTheInversionLoop)
{
  // The CPU forest's tabulated draws equal the loop the CUDA kernels run, for every u.
  for (double lambda : { 1.0, 6.0, 29.0 })
  {
    const double       e = std::exp(-lambda);
    const PoissonTable table(lambda, e);
    for (std::uint64_t i = 0; i < 200000; ++i)
    {
      const double u = CounterUniform(3, 9, i);
      ASSERT_EQ(table(u), PoissonFromUniform(u, lambda, e)) << "lambda " << lambda << ", u " << u;
    }
    EXPECT_EQ(table(0.0), 0u);
    EXPECT_EQ(table(std::nextafter(1.0, 0.0)), PoissonFromUniform(std::nextafter(1.0, 0.0), lambda, e));
    // On and beside every CDF value the inversion accumulates (the table's entries, where the
    // branch-free count of the first entries and the search after them meet).
    double p = e, cdf = p;
    for (std::uint32_t k = 0; k < 60 && cdf < 1.0; ++k)
    {
      for (double u : { std::nextafter(cdf, 0.0), cdf, std::nextafter(cdf, 1.0) })
        if (u < 1.0)
          ASSERT_EQ(table(u), PoissonFromUniform(u, lambda, e)) << "lambda " << lambda << ", u " << u;
      p *= lambda / double(k + 1);
      cdf += p;
    }
  }
}

TEST(HoeffdingMath, SparseSubspaceDrawsAreTheShufflesFirstEntries)
{
  // The device's grow step draws a new leaf's subspace without the attributes-long permutation; it must
  // give the partial Fisher-Yates shuffle's first entries (HoeffdingDrawSubspace, the CPU tree's) for
  // every stream, leaf and size, the whole subspace and a single attribute included.
  int differing = 0, draws = 0;
  for (int attributes : { 1, 2, 3, 10, 54, 300 })
    for (int size : { 1, 2, 3, 7, 17, 300 })
    {
      if (size > attributes)
        continue;
      std::vector<std::int32_t> order(static_cast<std::size_t>(attributes)), sparse(static_cast<std::size_t>(size));
      std::vector<std::int32_t> moved(2 * static_cast<std::size_t>(size));
      for (std::uint64_t stream : { 0ull, 3ull, 77ull })
        for (std::uint64_t leaf = 0; leaf < 40; ++leaf)
        {
          canopy::HoeffdingDrawSubspace(9, stream, leaf, attributes, size, order.data());
          canopy::HoeffdingDrawSubspaceSparse(9, stream, leaf, attributes, size, sparse.data(), moved.data());
          ++draws;
          if (!std::equal(sparse.begin(), sparse.end(), order.begin()))
            ++differing;
        }
    }
  EXPECT_EQ(differing, 0) << "of " << draws << " draws";
  EXPECT_GT(draws, 1000);
}
