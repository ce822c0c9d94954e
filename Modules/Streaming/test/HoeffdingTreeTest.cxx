// A single Hoeffding tree learns known concepts: nominal (RandomTree), numeric (SEA), and copes with
// missing values; its node pool grows with the tree.
#include "canopyHoeffdingTree.h"
#include "canopyPrequentialEvaluation.h"
#include "canopyStreamGenerators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

using namespace canopy::streaming;

namespace
{
/** Prequential accuracy of a tree over `count` instances, and over the last `tail` of them. */
std::pair<double, double>
Prequential(HoeffdingTree & tree, InstanceStream & stream, int count, int tail)
{
  InstanceBatch batch;
  stream.NextBatch(batch, count);
  int correct = 0, tailCorrect = 0;
  for (int i = 0; i < count; ++i)
  {
    const bool ok = tree.PredictClass(batch.Row(i)) == batch.labels[i];
    correct += ok;
    tailCorrect += ok && i >= count - tail;
    tree.Learn(batch.Row(i), batch.labels[i]);
  }
  return { double(correct) / count, double(tailCorrect) / tail };
}
} // namespace

TEST(HoeffdingTree, LearnsANoiselessRandomTreeConcept)
{
  auto          stream = MakeGenerator("randomtree:noise=0", 3);
  HoeffdingTree tree(stream->Schema(), HoeffdingTreeOptions{});
  const auto [accuracy, last] = Prequential(tree, *stream, 50000, 10000);
  // The concept is a tree over the same attributes: the learner finds it (measured: 1.0 on the tail).
  EXPECT_GT(last, 0.99) << "overall " << accuracy;
  EXPECT_GT(tree.NumberOfLeaves(), 4);
  EXPECT_EQ(tree.NumberOfNodes(), int(tree.Nodes().attribute.size()));
}

TEST(HoeffdingTree, LearnsThePapersRandomTreeStream)
{
  // 10 binary attributes, 2 classes, 5 levels, 20% noise: the paper's RT. Noise on the class alone caps
  // accuracy at 0.9, noise on the attributes lowers it further (MOA's tree: 68.8% on the paper's RT).
  auto                 stream = MakeGenerator("randomtree", 1);
  HoeffdingTreeOptions o;
  o.gracePeriod = 200;
  HoeffdingTree tree(stream->Schema(), o);
  const auto [accuracy, last] = Prequential(tree, *stream, 100000, 20000);
  EXPECT_GT(accuracy, 0.70);
  EXPECT_GT(last, 0.72);
  EXPECT_LT(last, 0.90);
}

TEST(HoeffdingTree, MajorityClassAndNaiveBayesLeavesBothLearn)
{
  for (auto prediction : { LeafPrediction::MajorityClass, LeafPrediction::NaiveBayes })
  {
    auto                 stream = MakeGenerator("randomtree:noise=0", 5);
    HoeffdingTreeOptions o;
    o.leafPrediction = prediction;
    HoeffdingTree tree(stream->Schema(), o);
    // Majority-class leaves need their leaves split to the concept's depth: 100000 instances.
    const auto [accuracy, last] = Prequential(tree, *stream, 100000, 10000);
    EXPECT_GT(last, 0.97) << "leaf prediction " << int(prediction) << ", overall " << accuracy << ", leaves "
                          << tree.NumberOfLeaves();
  }
}

TEST(HoeffdingTree, GiniCriterionLearnsToo)
{
  auto                 stream = MakeGenerator("randomtree:noise=0", 3);
  HoeffdingTreeOptions o;
  o.criterion = canopy::SplitCriterion::Gini;
  HoeffdingTree tree(stream->Schema(), o);
  EXPECT_GT(Prequential(tree, *stream, 50000, 10000).second, 0.97);
}

TEST(HoeffdingTree, SplitsNumericAttributes)
{
  // SEA without noise: class x0 + x1 <= 8, a diagonal the tree approximates with axis-parallel cuts.
  auto          stream = MakeGenerator("sea:noise=0", 2);
  HoeffdingTree tree(stream->Schema(), HoeffdingTreeOptions{});
  const auto [accuracy, last] = Prequential(tree, *stream, 50000, 10000);
  EXPECT_GT(last, 0.95) << "overall " << accuracy;
  int numericSplits = 0;
  for (std::size_t n = 0; n < tree.Nodes().attribute.size(); ++n)
    numericSplits += tree.Nodes().attribute[n] >= 0;
  EXPECT_GT(numericSplits, 2);
}

TEST(HoeffdingTree, MissingValuesAreRoutedAndIgnoredInLearning)
{
  auto          stream = MakeGenerator("randomtree:noise=0", 3);
  HoeffdingTree tree(stream->Schema(), HoeffdingTreeOptions{});
  Prequential(tree, *stream, 20000, 1000);
  std::vector<float> x(stream->Schema().NumberOfAttributes(), NAN);
  const int          before = tree.NumberOfNodes();
  for (int i = 0; i < 1000; ++i)
    tree.Learn(x.data(), i % 2);
  std::vector<double> votes(2);
  tree.Predict(x.data(), votes.data());
  EXPECT_NEAR(votes[0] + votes[1], 1.0, 1e-12);
  EXPECT_GE(tree.NumberOfNodes(), before);
}

TEST(HoeffdingTree, ZeroWeightTeachesNothing)
{
  auto          stream = MakeGenerator("randomtree", 3);
  HoeffdingTree tree(stream->Schema(), HoeffdingTreeOptions{});
  InstanceBatch batch;
  stream->NextBatch(batch, 100);
  for (std::size_t i = 0; i < batch.Size(); ++i)
    tree.Learn(batch.Row(i), batch.labels[i], 0);
  EXPECT_EQ(tree.LeafClassCounts(0)[0] + tree.LeafClassCounts(0)[1], 0u);
}

TEST(HoeffdingTree, FlatGaussiansRuleOutAClassOrGiveNoFactor)
{
  // Class 0 seen at 1, 2, 3 on every attribute; class 1 once, at 5, with a Poisson weight of 6: its
  // Gaussians have no spread. At 4, MOA's estimator rules class 1 out (density 0 away from its mean);
  // with skipFlatGaussians (river) those factors are left out and class 1's prior (6 of 9) wins.
  auto stream = MakeGenerator("sea:noise=0", 2);
  for (bool skip : { false, true })
  {
    HoeffdingTreeOptions options;
    options.leafPrediction = LeafPrediction::NaiveBayes;
    options.gracePeriod = 1000;
    options.skipFlatGaussians = skip;
    HoeffdingTree tree(stream->Schema(), options);
    for (float v : { 1.0f, 2.0f, 3.0f })
    {
      const float x[3] = { v, v, v };
      tree.Learn(x, 0);
    }
    const float five[3] = { 5, 5, 5 }, four[3] = { 4, 4, 4 };
    tree.Learn(five, 1, 6);
    double votes[2];
    tree.Predict(four, votes);
    if (skip)
      EXPECT_GT(votes[1], 0.99);
    else
      EXPECT_EQ(votes[1], 0.0);
  }
}

TEST(HoeffdingTree, SplitScreenNeverHidesASplit)
{
  // The screen AttemptSplit runs first says "no split" only where the shared decision says so too: random
  // leaves of 2 to 4 classes and attributes of 2 to 4 values, weakly to strongly informative (gaps near
  // epsilon), inherited parent counts, weights from 50 to 3,000 (epsilon above and below tau), both
  // criteria. It must also screen most no-split checks, or it is no use.
  std::uint64_t state = 12345;
  auto          uniform = [&state]
  {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return double(state >> 11) * (1.0 / 9007199254740992.0);
  };
  int screened = 0, splits = 0, noSplits = 0;
  for (int trial = 0; trial < 300000; ++trial)
  {
    const int                 classes = 2 + trial % 3, attributes = 5, subspaceSize = 3;
    std::vector<std::int32_t> values(attributes), offset(attributes);
    int                       stride = 0;
    for (int a = 0; a < attributes; ++a)
    {
      values[std::size_t(a)] = 2 + int(uniform() * 3.0);
      offset[std::size_t(a)] = stride;
      stride += values[std::size_t(a)] * classes;
    }
    canopy::HoeffdingTreeShape s;
    s.classes = classes;
    s.attributes = attributes;
    s.subspaceSize = subspaceSize;
    s.nominalStride = stride;
    s.values = values.data();
    s.offset = offset.data();
    s.criterion = trial % 2 == 0 ? canopy::SplitCriterion::InfoGain : canopy::SplitCriterion::Gini;
    s.splitConfidence = 0.01;
    s.tieThreshold = 0.05;
    std::vector<std::uint32_t> classCounts(static_cast<std::size_t>(classes)), nominal(std::size_t(stride), 0);
    std::vector<std::int32_t>  subspace = { int(trial % 5), int((trial + 2) % 5), int((trial + 4) % 5) };
    std::uint32_t              weight = 50 + std::uint32_t(uniform() * 2950.0);
    std::vector<double>        prior(static_cast<std::size_t>(classes));
    double                     priorSum = 0.0;
    for (double & p : prior)
      priorSum += (p = 0.05 + uniform());
    std::vector<std::uint32_t> observed(static_cast<std::size_t>(classes));
    for (int c = 0; c < classes; ++c)
      observed[std::size_t(c)] = std::uint32_t(double(weight) * prior[std::size_t(c)] / priorSum);
    for (int a = 0; a < attributes; ++a)
    {
      // A third of the attributes nearly constant (one value but for ~0-2%: the 1% threshold), the rest
      // informative from barely (gaps near epsilon) to strongly.
      const bool   constant = uniform() < 0.35;
      const double strength = std::pow(uniform(), 2.0) * 0.3, rest = uniform() * 0.02;
      for (int c = 0; c < classes; ++c)
      {
        std::vector<double> p(static_cast<std::size_t>(values[std::size_t(a)]));
        double              sum = 0.0;
        for (std::size_t v = 0; v < p.size(); ++v)
          sum += (p[v] = constant ? (v == 0 ? 1.0 - rest : rest / double(p.size() - 1))
                                  : 1.0 + strength * (uniform() - 0.5) * 4.0 + 0.01);
        std::uint32_t left = observed[std::size_t(c)];
        for (int v = 0; v < values[std::size_t(a)]; ++v)
        {
          const std::uint32_t take = v + 1 == values[std::size_t(a)]
                                       ? left
                                       : std::min(left, std::uint32_t(std::max(0.0, p[std::size_t(v)] / sum) * observed[std::size_t(c)]));
          nominal[std::size_t(offset[std::size_t(a)] + v * classes + c)] = take;
          left -= take;
        }
      }
    }
    for (int c = 0; c < classes; ++c)
      classCounts[std::size_t(c)] = observed[std::size_t(c)] + (trial % 4 == 0 ? std::uint32_t(uniform() * 200.0) : 0u);
    std::int32_t            depth = 1;
    canopy::HoeffdingTreeView t;
    t.classCounts = classCounts.data();
    t.nominalCounts = nominal.data();
    t.subspace = subspace.data();
    t.weight = &weight;
    t.slotDepth = &depth;
    std::vector<std::uint32_t> childCounts(static_cast<std::size_t>(4 * classes));
    canopy::HoeffdingSplit     split;
    const bool                 screen = CertainlyNoSplit(s, t, 0, SplitScreenConstantsOf(s));
    const bool                 decided = canopy::HoeffdingDecideSplit(s, t, 0, split, childCounts.data());
    ASSERT_FALSE(screen && decided) << "trial " << trial;
    screened += screen ? 1 : 0;
    splits += decided ? 1 : 0;
    noSplits += decided ? 0 : 1;
  }
  EXPECT_GT(splits, 1000);
  EXPECT_GT(screened, noSplits / 2);
  EXPECT_LT(screened, noSplits); // some no-split checks near a threshold are left to the decision
  std::printf("screened %d of %d checks without a split (%d splits)\n", screened, noSplits, splits);
}
