#include "canopyForestTrainRuns.h"

#include "canopyConfigure.h"
#include "canopyDistributedRun.h"
#include "canopyForestCheckpointRun.h"
#include "canopyMpiCollective.h"
#include "canopyNcclReduction.h"
#include "canopyProgress.h"

#include "canopy/Device.h"
#include "canopy/Elapsed.h"
#include "canopy/Errors.h"

#include <chrono>
#include <memory>
#include <utility>

namespace canopy::app
{

std::optional<IntensityNormalization>
NormalizationOf(const ForestTrainArguments & a)
{
  if (a.normalize == "none")
    return std::nullopt;
  IntensityNormalization n;
  n.method = a.normalize;
  if (a.normalize == "window")
  {
    if (a.window.size() != 2 || !(a.window[0] < a.window[1]))
      CANOPY_THROW("--window: give LOW HIGH with LOW < HIGH");
    n.windowLow = a.window[0];
    n.windowHigh = a.window[1];
  }
  return n;
}

namespace
{
nlohmann::json
NormalizationJson(const std::optional<IntensityNormalization> & normalization)
{
  nlohmann::json out; // null: none
  if (normalization)
    ToJson(*normalization, out);
  return out;
}
} // namespace

nlohmann::json
CheckpointArguments(const ForestTrainArguments & a, int numClasses, int dimension)
{
  const ForestTrainingOptions & o = a.options;
  return { { "canopy", CANOPY_VERSION_STRING },
           { "trees", o.numTrees },
           { "depth", o.maxDepth },
           { "minSamples", o.minSamplesToSplit },
           { "features", o.featureCandidates },
           { "thresholds", o.thresholdCandidates },
           { "maxOffset", o.maxOffset },
           { "maxBox", o.maxBoxSize },
           { "bagging", o.baggingFraction },
           { "score", int(o.score) },
           { "classWeights", a.classWeights },
           { "flipPairs", o.flipPairs },
           { "seed", o.seed },
           { "channels", a.channels },
           { "normalization", NormalizationJson(NormalizationOf(a)) },
           { "samplesPerImage", a.samplesPerImage },
           { "sampling", a.sampling },
           { "boundaryShare", a.boundaryShare },
           { "boundaryBand", a.boundaryBand },
           { "classes", numClasses },
           { "dimension", dimension },
           { "slices", a.slices },
           { "testFraction", a.testFraction },
           { "splitSeed", a.splitSeed },
           // Pose channels: the reference poses are part of the training data (another detector or
           // poses file gives other channels, so other trees).
           { "referenceStructure", a.reference.structure },
           { "referenceLabel", a.reference.label },
           { "referencePoses", a.reference.poses.empty() ? nlohmann::json() : FileStamp(a.reference.poses) },
           { "referenceDetector", a.reference.detector.empty() ? nlohmann::json() : FileStamp(a.reference.detector) } };
}

ForestCascadeOptions
CascadeOptions(const ForestTrainArguments & a, const ForestSamplingOptions & sampling)
{
  ForestCascadeOptions options;
  options.stages = a.autoContext;
  options.folds = a.contextFolds;
  options.foldSeed = a.splitSeed;
  options.forest = a.options;
  options.sampling = sampling;
  options.focusBand = a.focusBand;
  options.contextChannels = a.contextChannels;
  options.prediction.backend = a.device;
  options.prediction.threads = a.options.threads;
  return options;
}

TrainedCascade
TrainDistributed(const ForestTrainArguments &                     a,
                 const TrainTestPairs &                           pairs,
                 const std::vector<const ForestLabelledImage *> & train,
                 const std::vector<const ForestLabelledImage *> & test,
                 const ShareRange &                               share,
                 std::size_t                                      allImages,
                 double                                           loadSeconds,
                 int                                              numClasses,
                 int                                              dimension,
                 const ForestSamplingOptions &                    sampling,
                 Collective &                                     processes,
                 ForestCheckpointRun *                            checkpointRun)
{
  const bool        cascade = a.autoContext > 1;
  const std::string what = cascade ? "the cascade" : "the forest";
  ProgressBar       bar("training " + what + " (" + std::to_string(processes.Size()) + " processes)", a.quiet);
  // a cascade draws its stages' sets itself (later stages: from the maps)
  const ForestTrainingSet set =
    cascade ? ForestTrainingSet{} : MakeForestTrainingSet(train, numClasses, sampling, int(share.begin));
  ForestTrainingOptions forest = a.options;
  // one GPU per process (by its rank on the machine; MpiLocalRank is a collective call: on every rank)
  forest.backend = BackendOfProcess(forest.backend, MpiLocalRank());
  const bool                      gpu = forest.backend.kind != BackendKind::CPU && !UsableCudaDevices().empty();
  std::unique_ptr<NcclCollective> nccl;
  if (processes.AllTrue(gpu && NcclReduction::Available()))
    OnEveryProcess(processes,
                   "starting NCCL",
                   [&] { nccl = std::make_unique<NcclCollective>(processes, forest.backend.deviceIndex); });
  forest.shards = nccl ? static_cast<Collective *>(nccl.get()) : &processes;
  if (checkpointRun)
    checkpointRun->Prepare(forest,
                           CheckpointArguments(a, numClasses, dimension),
                           TrainingDataFingerprint(pairs.trainImages, pairs.trainLabels, set));
  const std::int64_t  bytesBefore = forest.shards->BytesReduced(), reductionsBefore = forest.shards->Reductions();
  const auto          start = std::chrono::steady_clock::now();
  ForestTrainingStats trainStats;
  TrainedCascade      trained;
  if (cascade)
  {
    ForestCascadeOptions options = CascadeOptions(a, sampling);
    options.forest = forest;
    options.firstImage = share.begin;
    options.totalImages = allImages;
    if (forest.backend.deviceIndex >= 0) // the out-of-fold maps on this process's GPU too
      options.prediction.backend = "cuda:" + std::to_string(forest.backend.deviceIndex);
    options.progress = [&bar](const std::string &, double f) { bar.Update(f); };
    OrStopAllProcesses(
      processes, [&] { trained.cascade = TrainForestCascade(train, numClasses, options, test, &trained.stages); });
    trainStats.usedGpu = ResolveBackend(forest.backend).useCuda; // the cascade keeps no stats of its own
  }
  else
  {
    OrStopAllProcesses(processes, [&] { trained.cascade.stages.push_back(TrainForest(set, forest, &trainStats)); });
    trained.stages.assign(1, {});
    trained.stages[0].samples = set.samples.size();
  }
  const double seconds = SecondsSince(start);
  bar.Finish();
  const std::int64_t mySamples = std::int64_t(trained.stages.front().samples);
  for (auto & stage : trained.stages) // this process's samples -> all processes'
  {
    std::int64_t samples = std::int64_t(stage.samples);
    processes.SumInPlace(&samples, 1);
    stage.samples = std::size_t(samples);
  }
  if (!cascade)
    trained.stages[0].trainSeconds = seconds;
  trained.ranks =
    GatherReports(processes,
                  { { "rank", processes.Rank() },
                    { "images", train.size() },
                    { "firstImage", share.begin },
                    { "samples", mySamples },
                    { "loadSeconds", loadSeconds },
                    { "trainSeconds", seconds },
                    { "bytesReduced", forest.shards->BytesReduced() - bytesBefore },
                    { "reductions", forest.shards->Reductions() - reductionsBefore },
                    { "gpu", trainStats.usedGpu },
                    { "device", trainStats.usedGpu ? ResolveBackend(forest.backend).deviceIndex : -1 }, // as resolved
                    { "nccl", nccl != nullptr } });
  return trained;
}

TrainedCascade
TrainFromCheckpoint(const ForestTrainArguments &                     a,
                    const TrainTestPairs &                           pairs,
                    const std::vector<const ForestLabelledImage *> & train,
                    int                                              numClasses,
                    int                                              dimension,
                    const ForestSamplingOptions &                    sampling,
                    ForestCheckpointRun &                            checkpointRun)
{
  ProgressBar             bar("training the forest", a.quiet);
  const ForestTrainingSet set = MakeForestTrainingSet(train, numClasses, sampling); // as the cascade's stage 1
  ForestTrainingOptions   forest = a.options;
  checkpointRun.Prepare(forest,
                        CheckpointArguments(a, numClasses, dimension),
                        TrainingDataFingerprint(pairs.trainImages, pairs.trainLabels, set));
  const auto save = forest.afterTree;
  forest.afterTree = [&](const ForestModel & trees)
  {
    save(trees);
    bar.Update(double(trees.NumberOfTrees()) / forest.numTrees);
  };
  const auto     start = std::chrono::steady_clock::now();
  TrainedCascade trained;
  trained.cascade.stages.push_back(TrainForest(set, forest));
  bar.Finish();
  trained.stages.assign(1, {});
  trained.stages[0].trainSeconds = SecondsSince(start);
  trained.stages[0].samples = set.samples.size();
  return trained;
}

TrainedCascade
TrainCascade(const ForestTrainArguments &        a,
             std::vector<ForestLabelledImage> && train,
             std::vector<ForestLabelledImage> &  test,
             int                                 numClasses,
             const ForestSamplingOptions &       sampling)
{
  ForestCascadeOptions options = CascadeOptions(a, sampling);
  ProgressBar          bar(a.autoContext > 1 ? "training the cascade" : "training the forest", a.quiet);
  options.progress = [&bar](const std::string &, double f) { bar.Update(f); };
  TrainedCascade trained;
  if (a.autoContext > 1) // the held-out images get the stages' maps in their own tables, and are scored
    trained.cascade = TrainForestCascade(std::move(train), numClasses, options, test, &trained.stages);
  else
    trained.cascade = TrainForestCascade(
      std::move(train), numClasses, options, std::vector<const ForestLabelledImage *>{}, &trained.stages);
  bar.Finish();
  return trained;
}

} // namespace canopy::app
