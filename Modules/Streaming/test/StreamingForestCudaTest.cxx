// The CUDA streaming forest learns the same trees and predicts the same as the CPU forest (issue 11's
// "done when"): RandomTree (nominal) and SEA with drift (numeric) at batch sizes 1 to 1000, and
// Hyperplane (Gini, naive Bayes) and LED (majority class), same seed and batches; a model saved and
// loaded resumes exactly (CPU <-> CUDA); the ADWIN step on the device with drift at batch 1 to 4096.
// Skipped without a GPU.
#include "canopyForestParity.h"
#include "canopyTesting.h"

#include <gtest/gtest.h>

using namespace canopy::streaming;
using namespace canopy::streaming::testing;

TEST(StreamingForestCuda, LearnsTheCpuForestsTrees)
{
  CANOPY_REQUIRE_GPU();
  for (const ParityCase & c : ParityCases())
  {
    SCOPED_TRACE(Describe(c));
    const double accuracy = ExpectSameForests(c, DeviceStreamingForest::Executor::Cuda);
    std::cout << Describe(c) << ": accuracy " << accuracy << " on both\n";
  }
}

TEST(StreamingForestCuda, HundredTreesOnRandomTree)
{
  CANOPY_REQUIRE_GPU();
  ParityCase c;
  c.generator = "randomtree";
  c.instances = 30000;
  c.batch = 1000;
  c.options.trees = 100;
  ExpectSameForests(c, DeviceStreamingForest::Executor::Cuda);
}

TEST(StreamingForestCuda, ResumedFromASavedModelEqualsTheWholeRun)
{
  CANOPY_REQUIRE_GPU();
  constexpr DeviceStreamingForest::Executor cuda = DeviceStreamingForest::Executor::Cuda;
  for (const auto & [c, splitAt] : ResumeCases())
  {
    SCOPED_TRACE(Describe(c));
    const std::string file = ::testing::TempDir() + "/canopy-streaming-model-cuda.json";
    ExpectResumeEqualsWholeRun(c, splitAt, &cuda, &cuda, file);
    ExpectResumeEqualsWholeRun(c, splitAt, nullptr, &cuda, file);
    ExpectResumeEqualsWholeRun(c, splitAt, &cuda, nullptr, file);
  }
}

TEST(StreamingForestCuda, DeviceAdwinStepEqualsTheCpuMonitorsWithDrift)
{
  // The ADWIN step's warps (AdwinMemberStep.h) at batch sizes that cut its speculative segments
  // differently; ExpectSameForests compares every detector bucket for bucket.
  CANOPY_REQUIRE_GPU();
  for (const int batch : { 1, 7, 1000, 4096 })
  {
    ParityCase c;
    c.generator = "sea:drift_every=3000,noise=0.05";
    c.instances = batch == 1 ? 4000 : 24000;
    c.batch = batch;
    c.options.trees = 6;
    c.options.seed = 9;
    SCOPED_TRACE(Describe(c));
    ExpectSameForests(c, DeviceStreamingForest::Executor::Cuda);
  }
}
