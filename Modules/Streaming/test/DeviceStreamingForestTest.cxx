// The device streaming forest's schedule, run by its host emulation (the CUDA kernels' item functions
// as host loops, in host memory), learns the same trees and predicts the same as the CPU forest.
#include "canopy/Errors.h"
#include "canopy/StreamingAdwinLaunch.h"
#include "canopyForestParity.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

using namespace canopy::streaming;
using namespace canopy::streaming::testing;

TEST(DeviceStreamingForest, EmulationLearnsTheCpuForestsTrees)
{
  for (const ParityCase & c : ParityCases())
  {
    SCOPED_TRACE(Describe(c));
    ExpectSameForests(c, DeviceStreamingForest::Executor::HostEmulation);
  }
}

TEST(DeviceStreamingForest, EmulationGrowsItsArraysAndReplacesTrees)
{
  // Many leaves (capacity doublings) and drifts that replace trees with background trees.
  ParityCase c;
  c.generator = "sea:drift_every=4000,noise=0.05";
  c.instances = 24000;
  c.batch = 200;
  c.options.trees = 6;
  c.options.tree.gracePeriod = 20;
  c.options.tree.tieThreshold = 0.2;
  DeviceStreamingForest probe(
    MakeGenerator(c.generator, 1)->Schema(), c.options, DeviceStreamingForest::Executor::HostEmulation);
  const int initialCapacity = probe.NodeCapacity();
  ExpectSameForests(c, DeviceStreamingForest::Executor::HostEmulation);
  auto                      stream = MakeGenerator(c.generator, c.options.seed);
  DeviceStreamingForest     forest(stream->Schema(), c.options, DeviceStreamingForest::Executor::HostEmulation);
  InstanceBatch             batch;
  std::vector<std::int32_t> predictions;
  for (std::uint64_t index = 0; index < std::uint64_t(c.instances); index += std::uint64_t(c.batch))
  {
    stream->NextBatch(batch, std::size_t(c.batch));
    forest.TestThenTrain(batch, index, predictions);
  }
  EXPECT_GT(forest.NodeCapacity(), initialCapacity);
  EXPECT_GT(forest.DriftsDetected(), 0);
}

TEST(DeviceStreamingForest, EmulationGrowsItsArraysWhenABatchsSplitsDoNotFit)
{
  // The grow step applies a batch's splits on the device; a tree whose splits would not fit its arrays
  // changes nothing, the host grows the arrays and runs the step again. Large batches on many trees with
  // a short grace period and a loose tie threshold split nearly every leaf each batch, so a tree's
  // leaves double from batch to batch and outgrow the arrays: the forest is still the CPU's.
  ParityCase c;
  c.generator = "sea";
  c.instances = 40000;
  c.batch = 5000;
  c.options.trees = 6;
  c.options.tree.gracePeriod = 20;
  c.options.tree.tieThreshold = 0.5;
  ExpectSameForests(c, DeviceStreamingForest::Executor::HostEmulation);
  auto                      stream = MakeGenerator(c.generator, c.options.seed);
  DeviceStreamingForest     forest(stream->Schema(), c.options, DeviceStreamingForest::Executor::HostEmulation);
  InstanceBatch             batch;
  std::vector<std::int32_t> predictions;
  for (std::uint64_t index = 0; index < std::uint64_t(c.instances); index += std::uint64_t(c.batch))
  {
    stream->NextBatch(batch, std::size_t(c.batch));
    forest.TestThenTrain(batch, index, predictions);
  }
  EXPECT_GT(forest.Timings().growRetries, 0) << "no batch's splits overflowed the arrays";
  EXPECT_GT(forest.Timings().splitsApplied, 0);
}

TEST(DeviceStreamingForest, CudaIsAnErrorInACpuOnlyBuild)
{
  if (CudaStreamingForestCompiledIn())
    GTEST_SKIP() << "this build has CUDA";
  auto stream = MakeGenerator("randomtree", 1);
  EXPECT_THROW(DeviceStreamingForest(stream->Schema(), StreamingForestOptions{}, DeviceStreamingForest::Executor::Cuda),
               canopy::Error);
}

TEST(DeviceStreamingForest, DeviceAdwinStepEqualsTheCpuMonitorsWithDrift)
{
  // The device ADWIN step (a team per member; here its host loop).
  for (const ParityCase & c : DeviceAdwinDriftCases())
  {
    SCOPED_TRACE(Describe(c));
    ExpectSameForests(c, DeviceStreamingForest::Executor::HostEmulation);
  }
}

TEST(DeviceStreamingForest, AdwinOnHostThreadsOrOnTheDeviceLearnTheSameForest)
{
  // The host path (results copied back) and the device step, switched back and forth mid-stream,
  // give the same drifts, trees and detector states as the device step throughout.
  ParityCase c;
  c.generator = "sea:drift_every=3000,noise=0.05";
  c.options.trees = 6;
  auto                      stream = MakeGenerator(c.generator, c.options.seed);
  auto                      again = MakeGenerator(c.generator, c.options.seed);
  DeviceStreamingForest     switching(stream->Schema(), c.options, DeviceStreamingForest::Executor::HostEmulation);
  DeviceStreamingForest     device(stream->Schema(), c.options, DeviceStreamingForest::Executor::HostEmulation);
  InstanceBatch             batch, batch2;
  std::vector<std::int32_t> p1, p2;
  EXPECT_TRUE(device.AdwinOnDevice());
  for (std::uint64_t index = 0, k = 0; index < 20000; index += 500, ++k)
  {
    switching.SetAdwinOnDevice(k % 7 < 3);
    stream->NextBatch(batch, 500);
    again->NextBatch(batch2, 500);
    switching.TestThenTrain(batch, index, p1);
    device.TestThenTrain(batch2, index, p2);
    ASSERT_EQ(p1, p2) << index;
  }
  EXPECT_GT(device.DriftsDetected(), 0);
  EXPECT_EQ(switching.DriftsDetected(), device.DriftsDetected());
  EXPECT_EQ(switching.WarningsDetected(), device.WarningsDetected());
  switching.SetAdwinOnDevice(true);
  EXPECT_EQ(StateText(stream->Schema(), c.options, 20000, switching.State()),
            StateText(stream->Schema(), c.options, 20000, device.State()));
}

TEST(DeviceStreamingForest, StepTimesChangeNothingAndCoverEveryStep)
{
  // Timing the steps (host wall time in the emulation) learns the same forest, and every step of a
  // batch is timed: the updates too when ADWIN reset a tree (after the batch, counted with the next one).
  for (const bool adwinOnDevice : { true, false })
  {
    ParityCase c;
    c.generator = "randomtree";
    c.instances = 6000;
    c.batch = 500;
    c.options.trees = 4;
    c.stepTimes = true;
    ExpectSameForests(c, DeviceStreamingForest::Executor::HostEmulation);
    auto                      stream = MakeGenerator(c.generator, c.options.seed);
    DeviceStreamingForest     forest(stream->Schema(), c.options, DeviceStreamingForest::Executor::HostEmulation);
    InstanceBatch             batch;
    std::vector<std::int32_t> predictions;
    forest.SetAdwinOnDevice(adwinOnDevice);
    forest.SetStepTimes(true);
    EXPECT_TRUE(forest.StepTimes());
    for (std::uint64_t index = 0; index < 6000; index += 500)
    {
      stream->NextBatch(batch, 500);
      forest.TestThenTrain(batch, index, predictions);
    }
    const DeviceForestTimings & t = forest.Timings();
    EXPECT_TRUE(t.stepTimes);
    EXPECT_EQ(t.apiCalls, 0) << "the emulation makes no CUDA calls";
    for (int k = 0; k < kDeviceForestSteps; ++k)
    {
      const auto step = DeviceForestStep(k);
      if (step == DeviceForestStep::Adwin && !adwinOnDevice)
        EXPECT_EQ(t.stepSeconds[k], 0.0) << "ADWIN on host threads is not a device step";
      else if (step == DeviceForestStep::Sort)
        EXPECT_EQ(t.stepSeconds[k], 0.0) << "RandomTree's attributes are nominal: learning needs no sort";
      else if (step == DeviceForestStep::Updates) // the grow step applies the splits: only resets remain
        EXPECT_EQ(t.stepSeconds[k] > 0.0, forest.WarningsDetected() + forest.DriftsDetected() > 0);
      else
        EXPECT_GT(t.stepSeconds[k], 0.0) << DeviceForestStepName(step);
    }
    EXPECT_GT(t.stepSpan, t.stepSeconds[int(DeviceForestStep::Route)]);
  }
}

TEST(DeviceStreamingForest, BatchPlansChangeOnlyWhenTheLaunchesDo)
{
  // A CUDA graph is captured again only when a batch's launches change (BatchPlan compared as bytes),
  // the second batch in a row they are the same: after the first batch, after arrays grew (the last,
  // smaller batch runs call by call). The emulation counts the captures the
  // CUDA executor would make; far fewer than batches means the plan's bytes are stable from batch to
  // batch (padding included). Graphs on or off, the same forest.
  for (const bool graphs : { true, false })
  {
    ParityCase c;
    c.generator = "randomtree";
    c.instances = 20050; // 200 batches of 100, then one of 50
    c.batch = 100;
    c.options.trees = 10;
    c.cudaGraphs = graphs;
    ExpectSameForests(c, DeviceStreamingForest::Executor::HostEmulation);
    auto                      stream = MakeGenerator(c.generator, c.options.seed);
    DeviceStreamingForest     forest(stream->Schema(), c.options, DeviceStreamingForest::Executor::HostEmulation);
    InstanceBatch             batch;
    std::vector<std::int32_t> predictions;
    forest.SetCudaGraphs(graphs);
    EXPECT_EQ(forest.CudaGraphs(), graphs);
    for (std::uint64_t index = 0; index < std::uint64_t(c.instances); index += batch.Size())
    {
      stream->NextBatch(batch, std::min<std::size_t>(100, std::size_t(c.instances) - index));
      forest.TestThenTrain(batch, index, predictions);
    }
    const DeviceForestTimings & t = forest.Timings();
    EXPECT_EQ(t.batches, 201);
    if (!graphs)
      EXPECT_EQ(t.graphCaptures, 0);
    else
    {
      EXPECT_GE(t.graphCaptures, 1) << "the second batch (the first runs call by call)";
      EXPECT_LE(t.graphCaptures, 16) << "node and slot capacities double a few times, nothing else changes";
    }
    std::cout << (graphs ? "graphs on" : "graphs off") << ": " << t.graphCaptures << " captures in " << t.batches
              << " batches, " << forest.NodeCapacity() << " nodes and " << forest.SlotCapacity() << " slots per tree\n";
  }
}

TEST(DeviceStreamingForest, AdwinTeamThreadsAreOneOfTheBuiltSizes)
{
  DeviceStreamingForest forest(
    MakeGenerator("randomtree", 1)->Schema(), StreamingForestOptions{}, DeviceStreamingForest::Executor::HostEmulation);
  EXPECT_EQ(forest.AdwinTeamThreads(), canopy::kStreamAdwinBlockThreads);
  forest.SetAdwinTeamThreads(512);
  EXPECT_EQ(forest.AdwinTeamThreads(), 512);
  try
  {
    forest.SetAdwinTeamThreads(300);
    FAIL() << "a block of 300 threads was accepted";
  }
  catch (const std::exception & e)
  {
    EXPECT_NE(std::string(e.what()).find("300"), std::string::npos) << e.what();
  }
  EXPECT_EQ(forest.AdwinTeamThreads(), 512);
}

TEST(DeviceStreamingForest, EmulationLearnsTheCpuForestsTreesWithMissingBinaryValues)
{
  // The CPU forest walks a stream of binary attributes over bit masks, falling back to the shared walk
  // for a group of instances with a missing value; the emulation always runs the shared walk. RandomTree
  // with about 1% of the values missing (so most groups of 8 have none, some have one): the same
  // predictions and trees.
  StreamingForestOptions o;
  o.trees = 6;
  o.seed = 7;
  auto                      stream = MakeGenerator("randomtree", o.seed);
  StreamingForest           cpu(stream->Schema(), o);
  DeviceStreamingForest     device(stream->Schema(), o, DeviceStreamingForest::Executor::HostEmulation);
  InstanceBatch             batch;
  std::vector<std::int32_t> cpuPredictions, devicePredictions;
  std::uint64_t             state = 12345;
  int                       missing = 0;
  for (std::uint64_t index = 0; index < 12000; index += 500)
  {
    stream->NextBatch(batch, 500);
    for (float & v : batch.values)
    {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      if ((state >> 33) % 100 == 0)
      {
        v = std::numeric_limits<float>::quiet_NaN();
        ++missing;
      }
    }
    cpu.TestThenTrain(batch, index, cpuPredictions);
    device.TestThenTrain(batch, index, devicePredictions);
    ASSERT_EQ(cpuPredictions, devicePredictions) << "batch at " << index;
  }
  EXPECT_GT(missing, 500);
  EXPECT_EQ(cpu.TotalNodes(), device.TotalNodes());
  EXPECT_GT(cpu.TotalNodes(), 6 * 5) << "the trees should have grown";
  for (int t = 0; t < cpu.NumberOfTrees(); ++t)
  {
    EXPECT_EQ(cpu.Tree(t).Nodes().child, device.TreeNodes(t).child) << "tree " << t;
    EXPECT_EQ(cpu.Tree(t).Nodes().missingBranch, device.TreeNodes(t).missingBranch) << "tree " << t;
  }
}

TEST(DeviceStreamingForest, AccessorsSeeTheLastBatchLearnt)
{
  // TestThenTrain returns once a batch's predictions are back and completes its learning in the next
  // call; every accessor completes it first, so what it reads after each call is the CPU forest's after
  // the same batch. Finish completes it too, and twice is harmless.
  ParityCase c;
  c.generator = "sea:drift_every=4000,noise=0.05";
  c.instances = 16000;
  c.batch = 400;
  c.options.trees = 5;
  c.options.tree.gracePeriod = 20;
  c.options.tree.tieThreshold = 0.2;
  auto                      stream = MakeGenerator(c.generator, c.options.seed);
  StreamingForest           cpu(stream->Schema(), c.options);
  DeviceStreamingForest     device(stream->Schema(), c.options, DeviceStreamingForest::Executor::HostEmulation);
  InstanceBatch             batch;
  std::vector<std::int32_t> cpuPredictions, devicePredictions;
  for (std::uint64_t index = 0; index < std::uint64_t(c.instances); index += std::uint64_t(c.batch))
  {
    stream->NextBatch(batch, std::size_t(c.batch));
    cpu.TestThenTrain(batch, index, cpuPredictions);
    device.TestThenTrain(batch, index, devicePredictions);
    ASSERT_EQ(cpu.TotalNodes(), device.TotalNodes()) << "after the batch at " << index;
    ASSERT_EQ(cpu.DriftsDetected(), device.DriftsDetected()) << "after the batch at " << index;
    device.Finish();
    device.Finish();
    ASSERT_EQ(cpu.WarningsDetected(), device.WarningsDetected()) << "after the batch at " << index;
  }
  EXPECT_GT(cpu.DriftsDetected(), 0) << "the stream should replace trees";
  EXPECT_GT(device.Timings().batches, 0);
}
