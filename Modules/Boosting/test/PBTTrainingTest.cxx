// PBT training on synthetic problems: accuracy, both weak-learner kinds, calibration, stopping rules,
// determinism (seed, thread count), and recursive vs stack-based evaluation.
#include "PBTTrainingTestSupport.h"
#include "canopy/Errors.h"
#include "canopyAdaBoost.h"
#include "canopyPBTTraining.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

using namespace canopy;
using namespace canopy::testing;

namespace
{

PBTTrainingOptions
SmallOptions(WeakLearnerKind kind)
{
  PBTTrainingOptions o;
  o.maxDepth = 3;
  o.weakLearnersPerNode = 10;
  o.featureCandidatesPerRound = 8;
  o.minSamplesToSplit = 50;
  o.kind = kind;
  return o;
}

void
ExpectSameModel(const PBTModel & a, const PBTModel & b)
{
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  ASSERT_EQ(a.learners.size(), b.learners.size());
  ASSERT_EQ(a.tables.size(), b.tables.size());
  EXPECT_EQ(0, std::memcmp(a.nodes.data(), b.nodes.data(), a.nodes.size() * sizeof(PBTNodeFlat)));
  EXPECT_EQ(0, std::memcmp(a.learners.data(), b.learners.data(), a.learners.size() * sizeof(PBTWeakLearnerFlat)));
  EXPECT_EQ(0, std::memcmp(a.tables.data(), b.tables.data(), a.tables.size() * sizeof(float)));
}

/** Stack and recursive posteriors of every sample agree. */
void
ExpectRecursiveMatchesStack(const PBTModel & model, const ResponseMatrix & m)
{
  const PBTView view = model.View();
  double        worst = 0.0;
  for (std::int64_t s = 0; s < m.numSamples; ++s)
  {
    auto        responseOf = [&](int f) { return m.at(f, s); };
    const float stack = PbtPosteriorStack<kPBTStackSize>(view, responseOf);
    const float recursive = PbtPosteriorRecursive(view, responseOf);
    ASSERT_TRUE(stack >= 0.0f && stack <= 1.0f + 1e-6f) << stack;
    worst = std::max(worst, static_cast<double>(std::abs(stack - recursive)));
  }
  EXPECT_LE(worst, 1e-6);
}

} // namespace

class PBTTrainingKinds : public ::testing::TestWithParam<WeakLearnerKind>
{
};

TEST_P(PBTTrainingKinds, SeparableProblemIsLearned)
{
  // Feature 3 alone separates the classes (gap of 1 around 0), the rest is noise.
  SyntheticProblem p = MakeGaussianProblem(20, 4000, 0, 0.0, 0.0, 11);
  for (std::int64_t s = 0; s < p.responses.numSamples; ++s)
  {
    p.responses.values[3 * p.responses.numSamples + s] = p.labels[s] * (0.5f + std::abs(p.responses.at(3, s)));
  }
  PBTModel model = TrainPBT(p.responses, p.labels, {}, SmallOptions(GetParam()));
  EXPECT_GE(Accuracy(EvaluatePBTOnMatrix(model, p.responses), p.labels), 0.99);
  EXPECT_EQ(model.learners.at(0).feature, 3);
}

TEST_P(PBTTrainingKinds, NoisyProblemGeneralises)
{
  // 5 informative features (shift 0.8) among 60, 10% flipped labels: the Bayes accuracy is about 0.87.
  const SyntheticProblem train = MakeGaussianProblem(60, 6000, 5, 0.8, 0.1, 21);
  const SyntheticProblem test = MakeGaussianProblem(60, 6000, 5, 0.8, 0.1, 22);
  PBTTrainingOptions     o = SmallOptions(GetParam());
  o.maxDepth = 2; // deeper trees of weak nodes overfit this small, noisy set
  o.featureCandidatesPerRound = 30;
  const PBTModel model = TrainPBT(train.responses, train.labels, {}, o);
  const double   trainAccuracy = Accuracy(EvaluatePBTOnMatrix(model, train.responses), train.labels);
  const double   testAccuracy = Accuracy(EvaluatePBTOnMatrix(model, test.responses), test.labels);
  EXPECT_GE(trainAccuracy, 0.84);
  EXPECT_GE(testAccuracy, 0.82);
  EXPECT_LE(model.Depth(), o.maxDepth);
  ExpectRecursiveMatchesStack(model, test.responses);
  // The trained model, given a feature bank, is a valid model.
  PBTModel complete = model;
  complete.features.resize(60);
  complete.sampleBox = { { 7, 7, 7 } };
  EXPECT_NO_THROW(complete.Validate("trained"));
}

TEST_P(PBTTrainingKinds, SameSeedSameModelAnyThreadCount)
{
  const SyntheticProblem p = MakeGaussianProblem(40, 3000, 4, 0.6, 0.05, 31);
  PBTTrainingOptions     o = SmallOptions(GetParam());
  o.threads = 1;
  const PBTModel one = TrainPBT(p.responses, p.labels, {}, o);
  o.threads = 2;
  const PBTModel two = TrainPBT(p.responses, p.labels, {}, o);
  o.threads = 5;
  const PBTModel five = TrainPBT(p.responses, p.labels, {}, o);
  ExpectSameModel(one, two);
  ExpectSameModel(one, five);
  o.seed = 2; // a different seed draws different candidates
  const PBTModel other = TrainPBT(p.responses, p.labels, {}, o);
  bool           differs = other.learners.size() != one.learners.size();
  for (std::size_t i = 0; !differs && i < one.learners.size(); ++i)
  {
    differs = other.learners[i].feature != one.learners[i].feature;
  }
  EXPECT_TRUE(differs);
}

INSTANTIATE_TEST_SUITE_P(Kinds,
                         PBTTrainingKinds,
                         ::testing::Values(WeakLearnerKind::Stump, WeakLearnerKind::Histogram),
                         [](const auto & info)
                         { return info.param == WeakLearnerKind::Stump ? "Stump" : "Histogram"; });

TEST(PBTTraining, PurityStop)
{
  SyntheticProblem p = MakeGaussianProblem(10, 2000, 2, 1.0, 0.0, 41);
  for (std::int64_t s = 0; s < 2000; ++s)
  {
    p.labels[s] = s < 4 ? -1 : 1; // 99.8% positive
  }
  PBTTrainingOptions o = SmallOptions(WeakLearnerKind::Histogram);
  PBTModel           model = TrainPBT(p.responses, p.labels, {}, o);
  ASSERT_EQ(model.nodes.size(), 1u);
  EXPECT_TRUE(IsLeaf(model.nodes[0]));
  EXPECT_NEAR(model.nodes[0].empiricalPositive, 0.998, 1e-6);
  o.purityStop = 1.0; // only a perfectly pure node stops
  model = TrainPBT(p.responses, p.labels, {}, o);
  EXPECT_GT(model.nodes.size(), 1u);
}

TEST(PBTTraining, MinimumSamplesStop)
{
  const SyntheticProblem small = MakeGaussianProblem(10, 80, 3, 1.0, 0.0, 51);
  PBTTrainingOptions     o = SmallOptions(WeakLearnerKind::Histogram);
  o.minSamplesToSplit = 100;
  EXPECT_EQ(TrainPBT(small.responses, small.labels, {}, o).nodes.size(), 1u);
  o.minSamplesToSplit = 50;
  EXPECT_GT(TrainPBT(small.responses, small.labels, {}, o).nodes.size(), 1u);
  // Weights count by effective sample size: 80 samples, all weight on 10 of them -> 10 effective.
  std::vector<float> weights(80, 0.0f);
  for (int i = 0; i < 10; ++i)
  {
    weights[i * 8] = 1.0f;
  }
  o.minSamplesToSplit = 20;
  EXPECT_EQ(TrainPBT(small.responses, small.labels, weights, o).nodes.size(), 1u);
}

TEST(PBTTraining, DepthLimit)
{
  const SyntheticProblem p = MakeGaussianProblem(30, 3000, 3, 0.4, 0.2, 61);
  PBTTrainingOptions     o = SmallOptions(WeakLearnerKind::Histogram);
  o.minSamplesToSplit = 2;
  for (int depth : { 0, 1, 4 })
  {
    o.maxDepth = depth;
    const PBTModel model = TrainPBT(p.responses, p.labels, {}, o);
    EXPECT_EQ(model.Depth(), depth);
  }
}

TEST(PBTTraining, EarlyStop)
{
  // Perfectly separable by feature 0: one learner reaches zero training error.
  SyntheticProblem p = MakeGaussianProblem(8, 2000, 0, 0.0, 0.0, 71);
  for (std::int64_t s = 0; s < 2000; ++s)
  {
    p.responses.values[s] = p.labels[s] > 0 ? 2.0f + p.responses.at(1, s) * 0.1f : -2.0f;
  }
  PBTTrainingOptions o = SmallOptions(WeakLearnerKind::Histogram);
  o.featureCandidatesPerRound = 0; // all
  o.earlyStopError = 0.0;
  PBTModel model = TrainPBT(p.responses, p.labels, {}, o);
  EXPECT_EQ(model.nodes[0].numLearners, 1);
  o.earlyStopError = -1.0; // never stop early
  model = TrainPBT(p.responses, p.labels, {}, o);
  EXPECT_EQ(model.nodes[0].numLearners, o.weakLearnersPerNode);
  // A loose early-stop bound on a noisy problem ends the root's boosting before the cap.
  const SyntheticProblem noisy = MakeGaussianProblem(20, 3000, 4, 1.0, 0.0, 72);
  o.earlyStopError = 0.2;
  model = TrainPBT(noisy.responses, noisy.labels, {}, o);
  EXPECT_LT(model.nodes[0].numLearners, o.weakLearnersPerNode);
}

TEST(PBTTraining, NaNResponsesAreTolerated)
{
  SyntheticProblem p = MakeGaussianProblem(12, 3000, 4, 1.0, 0.0, 81);
  for (std::size_t i = 0; i < p.responses.values.size(); i += 7)
  {
    p.responses.values[i] = std::numeric_limits<float>::quiet_NaN();
  }
  p.responses.values[5] = std::numeric_limits<float>::infinity();
  for (auto kind : { WeakLearnerKind::Stump, WeakLearnerKind::Histogram })
  {
    const PBTModel           model = TrainPBT(p.responses, p.labels, {}, SmallOptions(kind));
    const std::vector<float> posterior = EvaluatePBTOnMatrix(model, p.responses);
    for (float v : posterior)
    {
      ASSERT_TRUE(v >= 0.0f && v <= 1.0f + 1e-6f) << v;
    }
    EXPECT_GE(Accuracy(posterior, p.labels), 0.85);
  }
}

TEST(PBTTraining, CalibrationRecoversAKnownSigmoid)
{
  // y ~ Bernoulli(sigmoid(1.3 F - 0.4)): Platt scaling should recover (1.3, -0.4).
  std::mt19937_64                        rng(91);
  std::normal_distribution<float>        normal(0.0f, 1.5f);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const int                              n = 40000;
  std::vector<float>                     scores(n);
  std::vector<std::int8_t>               labels(n);
  std::vector<double>                    weights(n, 1.0 / n);
  for (int i = 0; i < n; ++i)
  {
    scores[i] = normal(rng);
    labels[i] = uniform(rng) < 1.0 / (1.0 + std::exp(-(1.3 * scores[i] - 0.4))) ? 1 : -1;
  }
  float scale = 0.0f, offset = 0.0f;
  FitPlattCalibration(scores, labels, weights, scale, offset);
  EXPECT_NEAR(scale, 1.3, 0.06);
  EXPECT_NEAR(offset, -0.4, 0.06);
  // Separable scores still give a finite, increasing calibration.
  for (int i = 0; i < n; ++i)
  {
    labels[i] = scores[i] > 0.0f ? 1 : -1;
  }
  FitPlattCalibration(scores, labels, weights, scale, offset);
  EXPECT_TRUE(std::isfinite(scale) && std::isfinite(offset));
  EXPECT_GT(scale, 2.0f);
}

TEST(PBTTraining, RecursiveMatchesStackOnRandomTrees)
{
  const int                             numFeatures = 12;
  std::mt19937_64                       rng(101);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  ResponseMatrix                        m;
  m.numFeatures = numFeatures;
  m.numSamples = 400;
  m.values.resize(numFeatures * 400);
  for (auto & v : m.values)
  {
    v = u(rng);
  }
  m.values[17] = std::numeric_limits<float>::quiet_NaN();
  for (int depth = 1; depth <= 10; ++depth)
  {
    for (float epsilon2 : { 0.0f, 0.1f, 0.3f })
    {
      PBTModel tree = MakeRandomTree(depth, numFeatures, 1000 + depth);
      tree.epsilon2 = epsilon2;
      ASSERT_NO_THROW(tree.Validate("random tree"));
      ASSERT_EQ(tree.Depth(), depth);
      SCOPED_TRACE(depth);
      ExpectRecursiveMatchesStack(tree, m);
      // The matrix evaluator is the stack form.
      const std::vector<float> all = EvaluatePBTOnMatrix(tree, m, 3);
      auto                     responseOf = [&](int f) { return m.at(f, 9); };
      EXPECT_EQ(all[9], PbtPosteriorStack<kPBTStackSize>(tree.View(), responseOf));
    }
  }
}

TEST(PBTTraining, BadInputIsRejected)
{
  const SyntheticProblem   p = MakeGaussianProblem(4, 100, 1, 1.0, 0.0, 111);
  const PBTTrainingOptions o = SmallOptions(WeakLearnerKind::Histogram);
  std::vector<std::int8_t> badLabels = p.labels;
  badLabels[3] = 0;
  EXPECT_THROW(TrainPBT(p.responses, badLabels, {}, o), canopy::Error);
  EXPECT_THROW(TrainPBT(p.responses, std::vector<std::int8_t>(99, 1), {}, o), canopy::Error);
  EXPECT_THROW(TrainPBT(p.responses, p.labels, std::vector<float>(100, -1.0f), o), canopy::Error);
  EXPECT_THROW(TrainPBT(p.responses, p.labels, std::vector<float>(100, 0.0f), o), canopy::Error);
  ResponseMatrix short_ = p.responses;
  short_.values.pop_back();
  EXPECT_THROW(TrainPBT(short_, p.labels, {}, o), canopy::Error);
  PBTTrainingOptions bad = o;
  bad.maxDepth = kPBTMaxDepth + 1;
  EXPECT_THROW(TrainPBT(p.responses, p.labels, {}, bad), canopy::Error);
  bad = o;
  bad.histogramBins = 300;
  EXPECT_THROW(TrainPBT(p.responses, p.labels, {}, bad), canopy::Error);
  bad = o;
  bad.purityStop = 0.4;
  EXPECT_THROW(TrainPBT(p.responses, p.labels, {}, bad), canopy::Error);
  // A model whose learners index features beyond the matrix is refused by the matrix evaluator.
  const PBTModel model = TrainPBT(p.responses, p.labels, {}, o);
  ResponseMatrix narrow;
  narrow.numFeatures = 0;
  narrow.numSamples = 0;
  if (!model.learners.empty())
  {
    EXPECT_THROW(EvaluatePBTOnMatrix(model, narrow), canopy::Error);
  }
}

TEST(PBTTraining, ProgressIsReportedInOrder)
{
  const SyntheticProblem p = MakeGaussianProblem(10, 1000, 3, 0.7, 0.0, 121);
  std::vector<double>    fractions;
  TrainPBT(p.responses,
           p.labels,
           {},
           SmallOptions(WeakLearnerKind::Stump),
           [&](double fraction, const std::string &) { fractions.push_back(fraction); });
  ASSERT_GE(fractions.size(), 2u);
  EXPECT_EQ(fractions.front(), 0.0);
  EXPECT_EQ(fractions.back(), 1.0);
  for (std::size_t i = 1; i < fractions.size(); ++i)
  {
    EXPECT_GE(fractions[i], fractions[i - 1]);
  }
}
