// Training time of the demo-sized PBT on a synthetic response matrix (not a test: prints timings).
// Usage: PBTTrainingBenchmark [samples=40000] [features=1500] [threads=2] [kind=histogram|stump] [shift=0.25]
#include "PBTTrainingTestSupport.h"
#include "canopyAdaBoost.h"
#include "canopyPBTTraining.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace canopy;
using Clock = std::chrono::steady_clock;

int
main(int argc, char * argv[])
{
  const std::int64_t samples = argc > 1 ? std::atoll(argv[1]) : 40000;
  const int          features = argc > 2 ? std::atoi(argv[2]) : 1500;
  const int          threads = argc > 3 ? std::atoi(argv[3]) : 2;
  const bool         stump = argc > 4 && std::string(argv[4]) == "stump";
  const double       shift = argc > 5 ? std::atof(argv[5]) : 0.25;
  // 150 weakly informative features (mean shift +-shift) among noise, 5% label noise.
  const auto         t0 = Clock::now();
  const auto         train = testing::MakeGaussianProblem(features, samples, 150, shift, 0.05, 1);
  const auto         test = testing::MakeGaussianProblem(features, samples / 4, 150, shift, 0.05, 2);
  const auto         t1 = Clock::now();
  PBTTrainingOptions o; // the defaults: depth 6, 40 learners/node, 200 candidates/round, 64 bins
  o.threads = threads;
  o.kind = stump ? WeakLearnerKind::Stump : WeakLearnerKind::Histogram;
  BinResponses(train.responses, o.histogramBins, threads); // binning alone, for the breakdown
  const auto     t2 = Clock::now();
  const PBTModel model = TrainPBT(train.responses, train.labels, {}, o);
  const auto     t3 = Clock::now();
  const double   accuracy = testing::Accuracy(EvaluatePBTOnMatrix(model, test.responses, threads), test.labels);
  const auto     t4 = Clock::now();
  auto           seconds = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  std::printf("samples %lld features %d threads %d kind %s\n",
              static_cast<long long>(samples),
              features,
              threads,
              stump ? "stump" : "histogram");
  std::printf("nodes %zu learners %zu depth %d held-out accuracy %.4f\n",
              model.nodes.size(),
              model.learners.size(),
              model.Depth(),
              accuracy);
  std::printf("generate %.2f s, binning %.2f s, TrainPBT (incl. binning) %.2f s, evaluate %lld samples %.2f s\n",
              seconds(t0, t1),
              seconds(t1, t2),
              seconds(t2, t3),
              static_cast<long long>(samples / 4),
              seconds(t3, t4));
  return 0;
}
