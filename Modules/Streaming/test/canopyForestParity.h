// Runs the CPU streaming forest and a device forest (CUDA or its host emulation) side by side on the
// same stream, seed and batches, and checks they predict and learn the same: predictions batch by
// batch, then every member's tree (nodes, and the leaves' class counts), drifts and warnings.
#pragma once

#include "canopyDeviceStreamingForest.h"
#include "canopyStreamGenerators.h"
#include "canopyStreamingForest.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace canopy::streaming::testing
{

struct ParityCase
{
  std::string            generator;
  int                    instances = 5000;
  int                    batch = 100;
  StreamingForestOptions options;
};

inline std::string
Describe(const ParityCase & c)
{
  return c.generator + ", batch " + std::to_string(c.batch) + ", " + std::to_string(c.options.trees) + " trees";
}

/** Returns the accuracy both reached (after checking they agree). */
inline double
ExpectSameForests(const ParityCase & c, DeviceStreamingForest::Executor executor)
{
  auto                      stream = MakeGenerator(c.generator, c.options.seed);
  StreamingForest           cpu(stream->Schema(), c.options);
  DeviceStreamingForest     device(stream->Schema(), c.options, executor);
  InstanceBatch             batch;
  std::vector<std::int32_t> cpuPredictions, devicePredictions;
  std::uint64_t             index = 0;
  std::int64_t              correct = 0;
  while (index < std::uint64_t(c.instances))
  {
    const std::size_t n =
      stream->NextBatch(batch, std::min<std::size_t>(std::size_t(c.batch), std::size_t(c.instances) - index));
    cpu.TestThenTrain(batch, index, cpuPredictions);
    device.TestThenTrain(batch, index, devicePredictions);
    EXPECT_EQ(cpuPredictions, devicePredictions) << Describe(c) << ": predictions of the batch at " << index;
    if (cpuPredictions != devicePredictions)
      return 0.0;
    for (std::size_t i = 0; i < n; ++i)
      correct += cpuPredictions[i] == batch.labels[i] ? 1 : 0;
    index += n;
  }
  EXPECT_EQ(cpu.DriftsDetected(), device.DriftsDetected()) << Describe(c);
  EXPECT_EQ(cpu.WarningsDetected(), device.WarningsDetected()) << Describe(c);
  EXPECT_EQ(cpu.TotalNodes(), device.TotalNodes()) << Describe(c);
  EXPECT_GT(cpu.TotalNodes(), cpu.NumberOfTrees() + 2) << Describe(c) << ": the trees should have grown";
  for (int t = 0; t < cpu.NumberOfTrees(); ++t)
  {
    const HoeffdingTreeNodes & a = cpu.Tree(t).Nodes();
    const HoeffdingTreeNodes & b = device.TreeNodes(t);
    EXPECT_EQ(a.attribute, b.attribute) << Describe(c) << ", tree " << t;
    EXPECT_EQ(a.threshold, b.threshold) << Describe(c) << ", tree " << t;
    EXPECT_EQ(a.child, b.child) << Describe(c) << ", tree " << t;
    EXPECT_EQ(a.missingBranch, b.missingBranch) << Describe(c) << ", tree " << t;
    EXPECT_EQ(a.depth, b.depth) << Describe(c) << ", tree " << t;
    const int                  slots = cpu.Tree(t).NumberOfSlots();
    const int                  classes = int(stream->Schema().NumberOfClasses());
    const auto                 deviceCounts = device.TreeClassCounts(t);
    std::vector<std::uint32_t> cpuCounts;
    for (int s = 0; s < slots; ++s)
      cpuCounts.insert(cpuCounts.end(), cpu.Tree(t).LeafClassCounts(s), cpu.Tree(t).LeafClassCounts(s) + classes);
    EXPECT_EQ(cpuCounts, deviceCounts) << Describe(c) << ", tree " << t << ": leaf class counts";
  }
  return double(correct) / double(index);
}

/** The cases of the parity tests: the paper's RandomTree (nominal) and SEA with drift (numeric), at
 * several batch sizes, with NBAdaptive leaves; a smaller Gini / naive-Bayes one. */
inline std::vector<ParityCase>
ParityCases()
{
  std::vector<ParityCase> cases;
  for (int batch : { 1, 10, 100, 1000 })
  {
    ParityCase rt;
    rt.generator = "randomtree";
    rt.instances = batch == 1 ? 3000 : 20000;
    rt.batch = batch;
    rt.options.trees = 10;
    rt.options.seed = 3;
    cases.push_back(rt);
    ParityCase sea;
    sea.generator = "sea:drift_every=5000";
    sea.instances = batch == 1 ? 3000 : 20000;
    sea.batch = batch;
    sea.options.trees = 10;
    sea.options.seed = 5;
    cases.push_back(sea);
  }
  ParityCase gini;
  gini.generator = "hyperplane";
  gini.instances = 10000;
  gini.batch = 250;
  gini.options.trees = 4;
  gini.options.tree.criterion = SplitCriterion::Gini;
  gini.options.tree.leafPrediction = LeafPrediction::NaiveBayes;
  cases.push_back(gini);
  ParityCase led;
  led.generator = "led";
  led.instances = 10000;
  led.batch = 500;
  led.options.trees = 4;
  led.options.tree.leafPrediction = LeafPrediction::MajorityClass;
  cases.push_back(led);
  return cases;
}

} // namespace canopy::streaming::testing
