// The adaptive random forest: beats a single tree, recovers after drift, and gives the same result for
// any number of threads.
#include "canopyHoeffdingTree.h"
#include "canopyPrequentialEvaluation.h"
#include "canopyStreamGenerators.h"
#include "canopyStreamingForest.h"

#include <gtest/gtest.h>

using namespace canopy::streaming;

namespace
{
/** Runs a forest prequentially over `count` instances in batches; returns the evaluator and the
 * sequence of predictions. */
PrequentialEvaluator
RunForest(StreamingForest &           forest,
          InstanceStream &            stream,
          int                         count,
          int                         batchSize,
          int                         window,
          std::vector<std::int32_t> * allPredictions = nullptr)
{
  PrequentialEvaluator      evaluation(stream.Schema().NumberOfClasses(), window);
  InstanceBatch             batch;
  std::vector<std::int32_t> predictions;
  std::uint64_t             index = 0;
  while (int(index) < count)
  {
    const std::size_t n = stream.NextBatch(batch, std::min<std::size_t>(batchSize, count - index));
    forest.TestThenTrain(batch, index, predictions);
    for (std::size_t i = 0; i < n; ++i)
      evaluation.Add(predictions[i], batch.labels[i]);
    if (allPredictions)
      allPredictions->insert(allPredictions->end(), predictions.begin(), predictions.end());
    index += n;
  }
  evaluation.Finish();
  return evaluation;
}

double
SingleTreeAccuracy(InstanceStream & stream, int count)
{
  HoeffdingTree        tree(stream.Schema(), StreamingForestOptions::DefaultTreeOptions());
  PrequentialEvaluator evaluation(stream.Schema().NumberOfClasses(), 1000);
  InstanceBatch        batch;
  stream.NextBatch(batch, count);
  for (int i = 0; i < count; ++i)
  {
    evaluation.Add(tree.PredictClass(batch.Row(i)), batch.labels[i]);
    tree.Learn(batch.Row(i), batch.labels[i]);
  }
  return evaluation.Accuracy();
}
} // namespace

TEST(StreamingForest, BeatsASingleTreeOnRandomTree)
{
  const int              count = 30000;
  auto                   treeStream = MakeGenerator("randomtree", 11);
  const double           single = SingleTreeAccuracy(*treeStream, count);
  auto                   forestStream = MakeGenerator("randomtree", 11);
  StreamingForestOptions o;
  o.trees = 20;
  StreamingForest forest(forestStream->Schema(), o);
  const double    ensemble = RunForest(forest, *forestStream, count, 100, 1000).Accuracy();
  EXPECT_GT(ensemble, single + 0.01) << "forest " << ensemble << ", tree " << single;
}

TEST(StreamingForest, SameResultForAnyNumberOfThreads)
{
  std::vector<std::vector<std::int32_t>> runs;
  std::vector<std::int64_t>              nodes;
  std::int64_t                           forestDrifts = 0;
  // Threads 1, 2, 3 handing trees to any free worker, then 2 and 3 keeping each tree on its worker.
  for (int run = 0; run < 5; ++run)
  {
    auto                   stream = MakeGenerator("sea:drift_every=5000", 4);
    StreamingForestOptions o;
    o.trees = 10;
    o.threads = run < 3 ? run + 1 : run - 1;
    StreamingForest forest(stream->Schema(), o);
    forest.SetSameWorkers(run >= 3);
    std::vector<std::int32_t> predictions;
    RunForest(forest, *stream, 15000, 250, 1000, &predictions);
    runs.push_back(predictions);
    nodes.push_back(forest.TotalNodes());
    forestDrifts = forest.DriftsDetected();
  }
  for (std::size_t k = 1; k < runs.size(); ++k)
  {
    EXPECT_EQ(runs[0], runs[k]) << "run " << k;
    EXPECT_EQ(nodes[0], nodes[k]) << "run " << k;
  }
  EXPECT_GT(forestDrifts, 0) << "the stream's drifts should replace trees, so the test covers the monitor's "
                                "decisions applied after the learning";
}

TEST(StreamingForest, RecoversAfterAnAbruptDrift)
{
  // SEA with 10% label noise; the concept changes (theta 8 -> 9 -> 7) every 20000 instances. Accuracy
  // in the windows right after a change drops; within 5000 instances it is back near the level before.
  auto                   stream = MakeGenerator("sea:drift_every=20000", 6);
  StreamingForestOptions o;
  o.trees = 10;
  StreamingForest forest(stream->Schema(), o);
  const auto      evaluation = RunForest(forest, *stream, 60000, 100, 1000);
  const auto &    curve = evaluation.Curve();
  ASSERT_EQ(curve.size(), 60u);
  EXPECT_GT(forest.DriftsDetected(), 0);
  for (int change : { 20, 40 }) // curve index of the first window after the change
  {
    // Means over 3 windows of 1000 (a window's accuracy alone varies by about 0.01).
    const double before = (curve[change - 3].window + curve[change - 2].window + curve[change - 1].window) / 3;
    const double dip = std::min(curve[change].window, curve[change + 1].window);
    const double after = (curve[change + 5].window + curve[change + 6].window + curve[change + 7].window) / 3;
    EXPECT_GT(before, 0.85) << "change " << change;
    EXPECT_LT(dip, before - 0.03) << "change " << change; // the drift is visible
    EXPECT_GT(after, before - 0.03) << "change " << change << ": 5000-8000 instances after it";
  }
}

TEST(StreamingForest, InstanceByInstanceAndBatchesBothLearn)
{
  for (int batchSize : { 1, 1000 })
  {
    auto                   stream = MakeGenerator("randomtree:noise=0", 8);
    StreamingForestOptions o;
    o.trees = 5;
    o.threads = 1; // a parallel loop per instance costs more than it saves
    StreamingForest forest(stream->Schema(), o);
    const auto      evaluation = RunForest(forest, *stream, 20000, batchSize, 1000);
    // Leaves see 3 of the 10 attributes each, so a forest of 5 approaches the noiseless concept slowly.
    EXPECT_GT(evaluation.Curve().back().window, 0.85) << "batch " << batchSize;
    const double firstWindow = evaluation.Curve().front().window;
    EXPECT_GT(evaluation.Curve().back().window, firstWindow + 0.1) << "batch " << batchSize;
  }
}

TEST(StreamingForest, SeveralBatchesPerCallEqualOneCallPerBatch)
{
  // TestThenTrainBatches runs each member through a call's batches without waiting for the others: the
  // predictions, trees, drifts and warnings must be those of one TestThenTrain per batch. SEA with
  // drifts (background trees started and trees replaced inside a call), batches of 250 with a shorter
  // last one, calls of 1, 3 and 7 batches, 1 and 3 threads, both worker modes, the monitors beside the
  // learning (windows of 1 and 3) and after it (7).
  const int count = 15100, batchSize = 250;
  auto      run = [&](int                         threads,
                  bool                        sameWorkers,
                  int                         window,
                  std::vector<std::int32_t> & predictions,
                  std::vector<std::int64_t> & drifts)
  {
    const bool             adwinBeside = window != 7; // both ways of reading the results
    auto                   stream = MakeGenerator("sea:drift_every=5000", 4);
    StreamingForestOptions o;
    o.trees = 10;
    o.threads = threads;
    auto forest = std::make_unique<StreamingForest>(stream->Schema(), o);
    forest->SetSameWorkers(sameWorkers);
    forest->SetAdwinBeside(adwinBeside);
    std::vector<InstanceBatch>             batches(static_cast<std::size_t>(window));
    std::vector<std::vector<std::int32_t>> batchPredictions(batches.size());
    for (std::uint64_t index = 0; int(index) < count;)
    {
      std::size_t   k = 0;
      std::uint64_t next = index;
      for (; k < batches.size() && int(next) < count; ++k)
        next += stream->NextBatch(batches[k], std::min<std::size_t>(batchSize, count - next));
      if (window == 1)
      {
        forest->TestThenTrain(batches[0], index, batchPredictions[0]);
        drifts.push_back(forest->DriftsDetected());
      }
      else
      {
        std::vector<std::int64_t> after(k);
        forest->TestThenTrainBatches(batches.data(), k, index, batchPredictions.data(), after.data());
        drifts.insert(drifts.end(), after.begin(), after.end());
      }
      for (std::size_t j = 0; j < k; ++j)
      {
        EXPECT_EQ(batchPredictions[j].size(), batches[j].Size());
        predictions.insert(predictions.end(), batchPredictions[j].begin(), batchPredictions[j].end());
      }
      index = next;
    }
    return forest;
  };
  std::vector<std::int32_t> reference;
  std::vector<std::int64_t> referenceDrifts; // the forest's drifts after each batch
  const auto                one = run(1, true, 1, reference, referenceDrifts);
  ASSERT_EQ(reference.size(), std::size_t(count));
  EXPECT_GT(one->DriftsDetected(), 0) << "the test should cover trees replaced inside a call";
  EXPECT_GT(one->WarningsDetected(), 0);
  const StreamingForestState expected = one->State();
  for (int threads : { 1, 3 })
    for (bool same : { false, true })
      for (int window : { 3, 7 })
      {
        std::vector<std::int32_t> predictions;
        std::vector<std::int64_t> drifts;
        const auto                forest = run(threads, same, window, predictions, drifts);
        const std::string         what = "threads " + std::to_string(threads) + ", window " + std::to_string(window);
        EXPECT_EQ(predictions, reference) << what;
        EXPECT_EQ(drifts, referenceDrifts) << what;
        EXPECT_EQ(forest->DriftsDetected(), one->DriftsDetected()) << what;
        EXPECT_EQ(forest->WarningsDetected(), one->WarningsDetected()) << what;
        const StreamingForestState got = forest->State();
        ASSERT_EQ(got.members.size(), expected.members.size());
        for (std::size_t m = 0; m < got.members.size(); ++m)
        {
          const auto & a = got.members[m];
          const auto & b = expected.members[m];
          EXPECT_EQ(a.tree.nodes.attribute, b.tree.nodes.attribute) << what << ", member " << m;
          EXPECT_EQ(a.tree.nodes.child, b.tree.nodes.child) << what << ", member " << m;
          EXPECT_EQ(a.tree.classCounts, b.tree.classCounts) << what << ", member " << m;
          EXPECT_EQ(a.tree.weight, b.tree.weight) << what << ", member " << m;
          EXPECT_EQ(a.hasBackground, b.hasBackground) << what << ", member " << m;
          if (a.hasBackground && b.hasBackground)
            EXPECT_EQ(a.background.classCounts, b.background.classCounts) << what << ", member " << m;
          EXPECT_EQ(a.monitor.seen, b.monitor.seen) << what << ", member " << m;
          EXPECT_EQ(a.monitor.correct, b.monitor.correct) << what << ", member " << m;
        }
      }
}
