// Distributed PBT training with ranks simulated by threads (no MPI needed): every rank trains the PBT
// one process trains on all samples, bit for bit, for 1 to 4 ranks, with histogram and stump learners,
// sample weights, soft-band routing and a strided quantile subsample; and ExactSum's order
// independence, on which that rests.
#include "canopy/ExactSum.h"
#include "canopyAdaBoost.h"
#include "canopyPBTTraining.h"
#include "canopyShares.h"
#include "canopyThreadCollective.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

namespace
{
using namespace canopy;

struct Problem
{
  ResponseMatrix           responses;
  std::vector<std::int8_t> labels;
  std::vector<float>       weights;
};

/** Features 0..2 carry the label (shifted Gaussians, one with NaNs); the rest are noise. */
Problem
MakeProblem(std::int64_t samples, int features, bool weighted, std::uint64_t seed)
{
  std::mt19937_64                  rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Problem                          p;
  p.responses.numFeatures = features;
  p.responses.numSamples = samples;
  p.responses.values.resize(std::size_t(features) * samples);
  for (std::int64_t s = 0; s < samples; ++s)
  {
    p.labels.push_back(rng() % 3 == 0 ? 1 : -1);
    if (weighted)
      p.weights.push_back(float(0.1 + (rng() % 1000) / 100.0));
  }
  for (int f = 0; f < features; ++f)
    for (std::int64_t s = 0; s < samples; ++s)
    {
      const double signal = f < 3 ? (0.8 - 0.2 * f) * p.labels[s] : 0.0;
      float        v = float(signal + normal(rng));
      if (f == 1 && s % 97 == 0)
        v = std::numeric_limits<float>::quiet_NaN();
      p.responses.values[std::size_t(f) * samples + s] = v;
    }
  return p;
}

/** Samples [begin, end) of a problem (the shard a rank holds). */
Problem
Shard(const Problem & p, std::int64_t begin, std::int64_t end)
{
  Problem out;
  out.responses.numFeatures = p.responses.numFeatures;
  out.responses.numSamples = end - begin;
  for (int f = 0; f < p.responses.numFeatures; ++f)
    for (std::int64_t s = begin; s < end; ++s)
      out.responses.values.push_back(p.responses.at(f, s));
  out.labels.assign(p.labels.begin() + begin, p.labels.begin() + end);
  if (!p.weights.empty())
    out.weights.assign(p.weights.begin() + begin, p.weights.begin() + end);
  return out;
}

template<typename T>
bool
SameBytes(const std::vector<T> & a, const std::vector<T> & b)
{
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

void
ExpectSameAsOneProcess(int ranks, const Problem & p, const PBTTrainingOptions & o)
{
  const PBTModel single = TrainPBT(p.responses, p.labels, p.weights, o);
  ASSERT_GT(single.nodes.size(), 2u) << "the problem should grow a tree";
  std::vector<PBTModel> models(ranks);
  RunThreadCollective(ranks,
                      [&](Collective & c)
                      {
                        // uneven shards: rank r holds a share of weight r + 1
                        const std::int64_t n = p.responses.numSamples;
                        const std::int64_t parts = std::int64_t(c.Size()) * (c.Size() + 1) / 2;
                        const std::int64_t before = std::int64_t(c.Rank()) * (c.Rank() + 1) / 2;
                        const Problem      mine = Shard(p, n * before / parts, n * (before + c.Rank() + 1) / parts);
                        PBTTrainingOptions shared = o;
                        shared.shards = &c;
                        models[c.Rank()] = TrainPBT(mine.responses, mine.labels, mine.weights, shared);
                      });
  for (int r = 0; r < ranks; ++r)
  {
    EXPECT_TRUE(SameBytes(single.nodes, models[r].nodes)) << ranks << " ranks, rank " << r << ": nodes differ";
    EXPECT_TRUE(SameBytes(single.learners, models[r].learners)) << ranks << " ranks, rank " << r << ": learners";
    EXPECT_TRUE(SameBytes(single.tables, models[r].tables)) << ranks << " ranks, rank " << r << ": tables";
  }
}

PBTTrainingOptions
SmallOptions()
{
  PBTTrainingOptions o;
  o.maxDepth = 3;
  o.weakLearnersPerNode = 6;
  o.featureCandidatesPerRound = 8;
  o.minSamplesToSplit = 40;
  o.histogramBins = 16;
  o.seed = 11;
  o.threads = 1;
  return o;
}

TEST(DistributedPBT, HistogramLearnersSameAsOneProcess)
{
  const Problem p = MakeProblem(3000, 20, false, 1);
  for (int ranks : { 1, 2, 3, 4 })
    ExpectSameAsOneProcess(ranks, p, SmallOptions());
}

TEST(DistributedPBT, StumpsAndWeightsSameAsOneProcess)
{
  const Problem p = MakeProblem(2500, 12, true, 2);
  auto          o = SmallOptions();
  o.kind = WeakLearnerKind::Stump;
  o.softBand = 0.2;
  for (int ranks : { 2, 3 })
    ExpectSameAsOneProcess(ranks, p, o);
  o.kind = WeakLearnerKind::Histogram;
  ExpectSameAsOneProcess(2, p, o);
}

TEST(DistributedPBT, StridedQuantileSubsampleSameAsOneProcess)
{
  // Over 40,000 samples the bin grids come from every (n / 20000)-th sample of the global order.
  const Problem p = MakeProblem(45003, 6, false, 3);
  auto          o = SmallOptions();
  o.maxDepth = 1;
  o.weakLearnersPerNode = 3;
  o.featureCandidatesPerRound = 0;
  ExpectSameAsOneProcess(3, p, o);
}

TEST(DistributedPBT, ThreadsDoNotMatter)
{
  const Problem p = MakeProblem(2000, 16, true, 4);
  auto          o = SmallOptions();
  const auto    one = TrainPBT(p.responses, p.labels, p.weights, o);
  o.threads = 3;
  const auto three = TrainPBT(p.responses, p.labels, p.weights, o);
  EXPECT_TRUE(SameBytes(one.nodes, three.nodes) && SameBytes(one.tables, three.tables));
}

TEST(ExactSum, OrderAndSplitDoNotMatter)
{
  std::mt19937_64     rng(5);
  std::vector<double> terms;
  for (int i = 0; i < 5000; ++i)
  {
    const double magnitude = std::ldexp(1.0, int(rng() % 120) - 80);
    terms.push_back((rng() % 2 ? 1.0 : -1.0) * magnitude * (1.0 + (rng() % 1000) / 1000.0));
  }
  terms.push_back(1e-300); // below the grid: truncated, the same way everywhere
  ExactSum    forward;
  long double reference = 0.0L;
  for (double t : terms)
  {
    forward.Add(t);
    reference += t;
  }
  std::shuffle(terms.begin(), terms.end(), rng);
  ExactSum left, right;
  for (std::size_t i = 0; i < terms.size(); ++i)
    (i < 1234 ? left : right).Add(terms[i]);
  right.Merge(left);
  EXPECT_EQ(forward.Value(), right.Value());
  EXPECT_NEAR(double(forward.Value()), double(reference), 1e-9 * std::abs(double(reference)) + 1e-12);

  // Over processes: each rank adds a share, one integer reduction gives everyone the same bits.
  std::vector<double> results(3);
  RunThreadCollective(3,
                      [&](Collective & c)
                      {
                        ExactSum   mine;
                        const auto share = ContiguousShare(terms.size(), c.Rank(), c.Size());
                        for (std::size_t i = share.begin; i < share.end; ++i)
                          mine.Add(terms[i]);
                        ExactSum::SumOverProcesses(c, &mine, 1);
                        results[c.Rank()] = mine.Value();
                      });
  for (double r : results)
    EXPECT_EQ(r, forward.Value());
}

TEST(ExactSum, SpecialValues)
{
  ExactSum s;
  s.Add(1.0);
  s.Add(-1.0);
  EXPECT_EQ(s.Value(), 0.0);
  s.Add(-0.25);
  EXPECT_EQ(s.Value(), -0.25);
  s.Add(std::numeric_limits<double>::infinity());
  EXPECT_EQ(s.Value(), std::numeric_limits<double>::infinity());
  s.Add(-1e300); // too large for the grid: an infinity
  EXPECT_TRUE(std::isnan(s.Value()));
  EXPECT_EQ(FixedWeight(1.0), std::int64_t(1) << 62);
  EXPECT_EQ(FixedWeight(-1.0), 0);
  EXPECT_EQ(FromFixedWeight(FixedWeight(0.375)), 0.375);
}

} // namespace
