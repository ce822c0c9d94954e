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

TEST(StreamingForestCuda, GraphsOffAndStepTimesChangeNothing)
{
  // The batch queued call by call (no CUDA graph) and the graph with step-timing event nodes in it
  // learn the CPU forest's trees too; a last batch smaller than the others (run call by call between
  // graph launches) included.
  CANOPY_REQUIRE_GPU();
  for (const bool graphs : { false, true })
  {
    ParityCase c;
    c.generator = "sea:drift_every=3000,noise=0.05";
    c.instances = 12345;
    c.batch = 1000;
    c.options.trees = 10;
    c.options.seed = 9;
    c.cudaGraphs = graphs;
    c.stepTimes = true;
    SCOPED_TRACE(Describe(c));
    ExpectSameForests(c, DeviceStreamingForest::Executor::Cuda);
    ParityCase h = c;
    h.generator = "randomtree";
    h.stepTimes = false;
    ExpectSameForests(h, DeviceStreamingForest::Executor::Cuda);
  }
}

TEST(StreamingForestCuda, StepTimesAndGraphCounts)
{
  // Every step is timed on the device (the updates when ADWIN reset a tree); a graph is captured a few
  // times (not per batch) and replaces tens of stream operations.
  CANOPY_REQUIRE_GPU();
  auto                   stream = MakeGenerator("randomtree", 1);
  StreamingForestOptions options;
  options.trees = 20;
  DeviceStreamingForest     forest(stream->Schema(), options, DeviceStreamingForest::Executor::Cuda);
  InstanceBatch             batch;
  std::vector<std::int32_t> predictions;
  forest.SetStepTimes(true);
  EXPECT_FALSE(forest.CudaGraphs()); // off by default
  forest.SetCudaGraphs(true);
  for (std::uint64_t index = 0; index < 20000; index += 500)
  {
    stream->NextBatch(batch, 500);
    forest.TestThenTrain(batch, index, predictions);
  }
  const DeviceForestTimings & t = forest.Timings();
  for (int k = 0; k < kDeviceForestSteps; ++k)
    if (DeviceForestStep(k) == DeviceForestStep::Sort) // nominal attributes only: learning needs no sort
      EXPECT_EQ(t.stepSeconds[k], 0.0);
    else if (DeviceForestStep(k) == DeviceForestStep::Updates) // the grow step splits: only resets remain
      EXPECT_EQ(t.stepSeconds[k] > 0.0, forest.WarningsDetected() + forest.DriftsDetected() > 0);
    else
      EXPECT_GT(t.stepSeconds[k], 0.0) << DeviceForestStepName(DeviceForestStep(k));
  EXPECT_GT(t.stepSpan, 0.0);
  EXPECT_GE(t.graphCaptures, 1);
  EXPECT_LE(t.graphCaptures, 12);
  EXPECT_GT(t.graphNodes, 20);
  std::cout << t.graphCaptures << " captures, " << t.graphNodes << " graph nodes, "
            << double(t.apiCalls) / double(t.batches) << " runtime calls per batch (step times on)\n";
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
  // The ADWIN step's blocks (AdwinMemberStep.h); ExpectSameForests compares every detector bucket for
  // bucket.
  CANOPY_REQUIRE_GPU();
  for (const ParityCase & c : DeviceAdwinDriftCases())
  {
    SCOPED_TRACE(Describe(c));
    ExpectSameForests(c, DeviceStreamingForest::Executor::Cuda);
  }
}
