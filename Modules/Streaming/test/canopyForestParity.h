// Runs the CPU streaming forest and a device forest (CUDA or its host emulation) side by side on the
// same stream, seed and batches, and checks they predict and learn the same: predictions batch by
// batch, then every member's tree (nodes, and the leaves' class counts), drifts and warnings.
#pragma once

#include "canopyDeviceStreamingForest.h"
#include "canopyStreamGenerators.h"
#include "canopyStreamingForest.h"
#include "canopyStreamingModelFile.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <memory>
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
  bool                   stepTimes = false; // the device forest's SetStepTimes (must change nothing)
  bool                   cudaGraphs = true; // the device forest's SetCudaGraphs (must change nothing)
};

inline std::string
Describe(const ParityCase & c)
{
  return c.generator + ", batch " + std::to_string(c.batch) + ", " + std::to_string(c.options.trees) + " trees" +
         (c.cudaGraphs ? "" : ", no graphs") + (c.stepTimes ? ", step times" : "");
}

/** The model file's text of a forest's state (what the resume tests compare: every statistic). */
inline std::string
StateText(const StreamSchema &           schema,
          const StreamingForestOptions & options,
          std::uint64_t                  instances,
          const StreamingForestState &   state)
{
  StreamingModel model{ schema, options, instances, "test", state };
  return StreamingModelToJson(model).dump();
}

/** Returns the accuracy both reached (after checking they agree). */
inline double
ExpectSameForests(const ParityCase & c, DeviceStreamingForest::Executor executor)
{
  auto                  stream = MakeGenerator(c.generator, c.options.seed);
  StreamingForest       cpu(stream->Schema(), c.options);
  DeviceStreamingForest device(stream->Schema(), c.options, executor);
  device.SetStepTimes(c.stepTimes);
  device.SetCudaGraphs(c.cudaGraphs);
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
  // Every statistic, the members' detectors bucket for bucket included (the model file's text).
  EXPECT_EQ(StateText(stream->Schema(), c.options, index, cpu.State()),
            StateText(stream->Schema(), c.options, index, device.State()))
    << Describe(c) << ": the forests' states";
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
 * several batch sizes, with NBAdaptive leaves; RandomTree and LED at batches of 5000; a smaller Gini /
 * naive-Bayes one; Agrawal with MOA's flat Gaussians; LED with majority-class leaves. */
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
  // Batches of 5000: the device learns a nominal forest's pairs in per-tree blocks from 4096 on
  // (2 classes, and LED's 10 with the route kernel for any class count).
  for (const char * generator : { "randomtree", "led" })
  {
    ParityCase large;
    large.generator = generator;
    large.instances = 40000;
    large.batch = 5000;
    large.options.trees = 10;
    large.options.seed = 7;
    cases.push_back(large);
  }
  // Numeric attributes at a batch of more than two of the device ADWIN step's segments (2048 results),
  // with drifts and warnings inside the batches.
  ParityCase parted;
  parted.generator = "sea:drift_every=6000,noise=0.1";
  parted.instances = 36000;
  parted.batch = 4500;
  parted.options.trees = 8;
  parted.options.seed = 11;
  parted.options.tree.gracePeriod = 30;
  cases.push_back(parted);
  ParityCase gini;
  gini.generator = "hyperplane";
  gini.instances = 10000;
  gini.batch = 250;
  gini.options.trees = 4;
  gini.options.tree.criterion = SplitCriterion::Gini;
  gini.options.tree.leafPrediction = LeafPrediction::NaiveBayes;
  cases.push_back(gini);
  ParityCase flat; // MOA's Gaussians without spread in naive Bayes (0 away from the mean)
  flat.generator = "agrawal:drift_every=2500";
  flat.instances = 6000;
  flat.batch = 100;
  flat.options.trees = 4;
  flat.options.tree.skipFlatGaussians = false;
  cases.push_back(flat);
  ParityCase led;
  led.generator = "led";
  led.instances = 10000;
  led.batch = 500;
  led.options.trees = 4;
  led.options.tree.leafPrediction = LeafPrediction::MajorityClass;
  cases.push_back(led);
  return cases;
}

/** A CPU forest, or a device forest on an executor, behind one interface (for the resume tests). */
class AnyForest
{
public:
  AnyForest(const StreamSchema &                    schema,
            const StreamingForestOptions &          options,
            const DeviceStreamingForest::Executor * executor)
  {
    if (executor)
      m_Device = std::make_unique<DeviceStreamingForest>(schema, options, *executor);
    else
      m_Cpu = std::make_unique<StreamingForest>(schema, options);
  }
  void TestThenTrain(const InstanceBatch & b, std::uint64_t first, std::vector<std::int32_t> & p)
  {
    m_Cpu ? m_Cpu->TestThenTrain(b, first, p) : m_Device->TestThenTrain(b, first, p);
  }
  StreamingForestState State() const { return m_Cpu ? m_Cpu->State() : m_Device->State(); }
  void                 Restore(const StreamingForestState & s) { m_Cpu ? m_Cpu->Restore(s) : m_Device->Restore(s); }

private:
  std::unique_ptr<StreamingForest>       m_Cpu;
  std::unique_ptr<DeviceStreamingForest> m_Device;
};

/** Learns instances [from, to) of the stream (which stands at `from`) in batches; appends predictions. */
inline void
LearnRange(AnyForest &                 forest,
           InstanceStream &            stream,
           std::uint64_t               from,
           std::uint64_t               to,
           int                         batchSize,
           std::vector<std::int32_t> & predictions)
{
  InstanceBatch             batch;
  std::vector<std::int32_t> p;
  for (std::uint64_t index = from; index < to;)
  {
    const std::size_t n =
      stream.NextBatch(batch, std::min<std::size_t>(std::size_t(batchSize), std::size_t(to - index)));
    ASSERT_GT(n, 0u);
    forest.TestThenTrain(batch, index, p);
    predictions.insert(predictions.end(), p.begin(), p.end());
    index += n;
  }
}

/** Learning the whole stream on the CPU equals learning its first `splitAt` instances on `first`,
 * saving the model to a file, loading it into a forest on `second` and learning the rest: the same
 * predictions for the rest and the same final state (nullptr: the CPU forest). */
inline void
ExpectResumeEqualsWholeRun(const ParityCase &                      c,
                           std::uint64_t                           splitAt,
                           const DeviceStreamingForest::Executor * first,
                           const DeviceStreamingForest::Executor * second,
                           const std::string &                     fileName)
{
  auto                      wholeStream = MakeGenerator(c.generator, c.options.seed);
  const StreamSchema        schema = wholeStream->Schema();
  AnyForest                 whole(schema, c.options, nullptr);
  std::vector<std::int32_t> wholePredictions, resumedPredictions, ignored;
  LearnRange(whole, *wholeStream, 0, splitAt, c.batch, ignored);
  const std::string atSplit = StateText(schema, c.options, splitAt, whole.State());
  LearnRange(whole, *wholeStream, splitAt, std::uint64_t(c.instances), c.batch, wholePredictions);

  auto      stream = MakeGenerator(c.generator, c.options.seed);
  AnyForest before(schema, c.options, first);
  LearnRange(before, *stream, 0, splitAt, c.batch, ignored);
  StreamingModel saved{ schema, c.options, splitAt, c.generator, before.State() };
  EXPECT_EQ(StateText(schema, c.options, splitAt, saved.state), atSplit) << Describe(c) << ": the state saved";
  SaveStreamingModel(saved, fileName);
  const StreamingModel loaded = LoadStreamingModel(fileName);
  EXPECT_EQ(loaded.instances, splitAt);
  EXPECT_EQ(StreamingModelToJson(loaded).dump(), StreamingModelToJson(saved).dump()) << "file round trip";
  AnyForest after(loaded.schema, loaded.options, second);
  after.Restore(loaded.state);
  LearnRange(after, *stream, loaded.instances, std::uint64_t(c.instances), c.batch, resumedPredictions);
  EXPECT_EQ(wholePredictions, resumedPredictions) << Describe(c) << ": predictions after resuming";
  EXPECT_EQ(StateText(schema, c.options, std::uint64_t(c.instances), after.State()),
            StateText(schema, c.options, std::uint64_t(c.instances), whole.State()))
    << Describe(c) << ": the final forests";
}

/** Resume cases: nominal RandomTree, and SEA with drifts and background trees (numeric, Gaussians). */
inline std::vector<std::pair<ParityCase, std::uint64_t>>
ResumeCases()
{
  ParityCase rt;
  rt.generator = "randomtree";
  rt.instances = 12000;
  rt.batch = 500;
  rt.options.trees = 5;
  rt.options.seed = 3;
  ParityCase sea;
  sea.generator = "sea:drift_every=3000,noise=0.05";
  sea.instances = 15000;
  sea.batch = 250;
  sea.options.trees = 6;
  sea.options.tree.gracePeriod = 20;
  sea.options.tree.tieThreshold = 0.2;
  sea.options.seed = 5;
  return { { rt, 5000 }, { sea, 6500 } };
}

/** The device ADWIN step's cases: SEA with drifts at batch sizes that cut its speculative segments
 * differently (every result a batch, a few, one segment, several segments). */
inline std::vector<ParityCase>
DeviceAdwinDriftCases()
{
  std::vector<ParityCase> cases;
  for (const int batch : { 1, 7, 1000, 4096 })
  {
    ParityCase c;
    c.generator = "sea:drift_every=3000,noise=0.05";
    c.instances = batch == 1 ? 4000 : 24000;
    c.batch = batch;
    c.options.trees = 6;
    c.options.seed = 9;
    cases.push_back(c);
  }
  return cases;
}

} // namespace canopy::streaming::testing
