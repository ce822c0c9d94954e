// canopy train-forest: a decision forest (Sharp 2008; CURFIL) or an auto-context cascade of forests
// on 2D images or 3D volumes, with filter-bank channels, a held-out evaluation (seeded split, Dice per
// class, pixel and mean class accuracy), k-fold cross-validation over a small grid, per-tree
// checkpoints and training over the processes of an MPI run.
#include "canopy/Errors.h"
#include "canopyCommands.h"
#include "canopyConfigure.h"
#include "canopyDataset.h"
#include "canopyDistributedRun.h"
#include "canopyForestCascade.h"
#include "canopyForestCheckpointRun.h"
#include "canopyForestDensePrediction.h"
#include "canopyForestFilterBank.h"
#include "canopyForestItems.h"
#include "canopyForestTrainRuns.h"
#include "canopyForestVolumeTraining.h"
#include "canopyLabelCleanup.h"
#include "canopyMpiCollective.h"
#include "canopyNcclReduction.h"
#include "canopyOptionChecks.h"
#include "canopyOutputPaths.h"
#include "canopyProgress.h"
#include "canopyReferencePose.h"
#include "canopyShares.h"
#include "canopyValueSummary.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <utility>

namespace canopy::app
{
namespace
{
/** Pose channels and the --reference-* options agree (train-forest). */
void
CheckReferenceOptions(const ForestTrainArguments & a, const std::vector<std::string> & bank, bool slices, bool heldOut)
{
  const ReferencePoseOptions & r = a.reference;
  const bool                   needs = ForestBankNeedsReference(bank);
  if (!needs)
  {
    if (r.Any() || !r.structure.empty())
      CANOPY_THROW("--reference-*: --channels " << a.channels << " has no pose channel (add pose to --channels)");
    return;
  }
  if (r.structure.empty())
    CANOPY_THROW("--channels " << a.channels
                               << ": pose channels need --reference-structure NAME (the structure whose pose "
                                  "is the frame, as detectors and poses files name it)");
  if (!r.poses.empty() && !r.detector.empty())
    CANOPY_THROW("--reference-poses and --reference-detector: give one source of detected poses");
  if (!r.Any())
    CANOPY_THROW("--channels " << a.channels
                               << ": pose channels need the training volumes' reference poses: --reference-label L "
                                  "(ground truth), --reference-poses FOLDER or --reference-detector MODEL");
  if (heldOut && !r.Detected())
    CANOPY_THROW("--test-fraction: the held-out volumes' reference poses must be detected (their labels are only "
                 "for scoring): give --reference-poses FOLDER or --reference-detector MODEL");
  if (slices)
    CANOPY_THROW("--slices: pose channels are for 3D volumes (a reference pose is 3D)");
}

/** --checkpoint's file ("" when off): the path given, or OUT.partial when given without one. */
std::string
CheckpointPath(const ForestTrainArguments & a)
{
  if (!a.checkpointGiven)
  {
    if (a.restart)
      CANOPY_THROW("--restart discards a checkpoint: give it with --checkpoint");
    return std::string();
  }
  if (a.cv > 0 || a.autoContext > 1)
  {
    CANOPY_THROW("--checkpoint saves the trees of one forest: --cv and --auto-context K > 1 are not checkpointed "
                 "(train them without --checkpoint)");
  }
  return a.checkpoint.empty() ? a.out + ".partial" : a.checkpoint;
}

/** --distributed: a process for every training image at most, refused before any process reads one. */
void
CheckDistributedTraining(std::size_t trainImages, int processes)
{
  if (std::size_t(processes) > trainImages)
  {
    CANOPY_THROW("--distributed: " << processes << " processes for " << trainImages
                                   << " training images; each process needs at least one (use mpirun -np "
                                   << trainImages << " or fewer)");
  }
}

/** A run's checked settings: what the options name, parsed once. */
struct TrainPlan
{
  std::vector<std::string>              bank;          // filter-bank channels
  std::optional<IntensityNormalization> normalization; // before the bank; empty: none
  SliceSpec                slices, testSlices;
  LabelCleanupOptions      cleanup;    // of the held-out labels
  std::string              checkpoint; // "" when off
};

/** Reads --dataset into the image and label lists and refuses bad options before any volume is read
 * (the output paths, the option values and their combinations); sets the options they imply. */
TrainPlan
CheckTrainArguments(ForestTrainArguments & a)
{
  if (!a.dataset.empty())
    ReadDataset(a.dataset, a.maxVolumes, a.images, a.labels);
  if (a.images.empty() || a.images.size() != a.labels.size())
  {
    CANOPY_THROW("--image and --label must pair up (" << a.images.size() << " images, " << a.labels.size()
                                                      << " labels), or give --dataset");
  }
  std::vector<NamedPath> inputs{ { "--dataset", a.dataset } };
  for (std::size_t i = 0; i < a.images.size(); ++i)
  {
    inputs.push_back({ "--image", a.images[i] });
    inputs.push_back({ "--label", a.labels[i] });
  }
  TrainPlan plan;
  plan.checkpoint = CheckpointPath(a);
  CheckOutputPaths({ { "--out", a.out }, { "--report", a.report }, { "--checkpoint", plan.checkpoint } }, inputs);
  if (a.sampling != "balanced" && a.sampling != "uniform")
  {
    CANOPY_THROW("--sampling: '" << a.sampling << "' is not balanced or uniform");
  }
  if (a.classWeights != "none" && a.classWeights != "balanced")
  {
    CANOPY_THROW("--class-weights: '" << a.classWeights << "' is not none or balanced");
  }
  if (a.testFraction < 0.0 || a.testFraction >= 1.0)
  {
    CANOPY_THROW("--test-fraction " << a.testFraction << " must be in [0, 1)");
  }
  if (a.cv < 0 || a.cv == 1)
  {
    CANOPY_THROW("--cv " << a.cv << ": give 0 (none) or at least 2 folds");
  }
  plan.bank = ParseForestFilterBank(a.channels, "--channels");
  if (plan.bank.empty())
  {
    CANOPY_THROW("--channels: give at least one channel (e.g. intensity)");
  }
  plan.normalization = NormalizationOf(a);
  plan.slices = ParseSlices(a.slices, "--slices");
  plan.testSlices = ParseSlices(a.testSlices, "--test-slices");
  CheckReferenceOptions(a, plan.bank, plan.slices.given || plan.testSlices.given, a.testFraction > 0.0);
  if (a.focusShare > 0.0 && a.autoContext < 2)
  {
    CANOPY_THROW("--focus-share draws from the mistakes of an earlier auto-context stage: give --auto-context 2 or "
                 "more");
  }
  ParseContextChannels(a.contextChannels, "--context-channels");
  if (!a.contextChannels.empty() && a.autoContext < 2)
  {
    CANOPY_THROW("--context-channels derives channels from an earlier auto-context stage's maps: give --auto-context 2 "
                 "or more");
  }
  plan.cleanup = LabelCleanupOptions::Parse(a.postprocess, "--postprocess");
  a.options.balanceClasses = a.classWeights == "balanced";
  a.options.backend = BackendRequest::Parse(a.device); // training (GPU split search) and held-out prediction
  return plan;
}

/** The seeded split (as msd-experiment's): the first share of a permutation trains, the rest tests;
 * --test-slices without held-out images tests on other slices of the training volumes. */
TrainTestPairs
SplitPairs(const ForestTrainArguments & a, const TrainPlan & plan)
{
  TrainTestPairs pairs;
  const auto     order = SeededPermutation(a.images.size(), a.splitSeed);
  const auto     trainCount =
    a.testFraction > 0.0 ? std::size_t(std::lround((1.0 - a.testFraction) * order.size())) : order.size();
  if (trainCount == 0 || (a.testFraction > 0.0 && trainCount == order.size()))
  {
    CANOPY_THROW("--test-fraction " << a.testFraction << " leaves no training or no test image of " << order.size());
  }
  for (std::size_t i = 0; i < order.size(); ++i)
  {
    (i < trainCount ? pairs.trainImages : pairs.testImages).push_back(a.images[order[i]]);
    (i < trainCount ? pairs.trainLabels : pairs.testLabels).push_back(a.labels[order[i]]);
  }
  if (plan.testSlices.given && pairs.testImages.empty())
  {
    pairs.testImages = pairs.trainImages; // other slices of the same volumes
    pairs.testLabels = pairs.trainLabels;
  }
  return pairs;
}

/** The sampling of the training voxels the options ask for. */
ForestSamplingOptions
SamplingOptions(const ForestTrainArguments & a)
{
  ForestSamplingOptions sampling;
  sampling.samplesPerImage = a.samplesPerImage;
  sampling.balanced = a.sampling == "balanced";
  sampling.boundaryShare = a.boundaryShare;
  sampling.boundaryBand = a.boundaryBand;
  sampling.focusShare = a.focusShare;
  sampling.focusUniform = a.focusUniform;
  sampling.seed = a.options.seed;
  return sampling;
}

/** --cv: k-fold cross-validation over --grid-depth x --grid-features; a.options become the best. */
void
CrossValidate(ForestTrainArguments &                           a,
              const std::vector<const ForestLabelledImage *> & train,
              int                                              numClasses,
              const ForestSamplingOptions &                    sampling,
              Collective &                                     processes,
              const ShareRange &                               share,
              std::size_t                                      allImages,
              RunReport &                                      report)
{
  if (a.gridDepth.empty())
    a.gridDepth = { a.options.maxDepth };
  if (a.gridFeatures.empty())
    a.gridFeatures = { a.options.featureCandidates };
  std::vector<ForestTrainingOptions> grid;
  for (int d : a.gridDepth)
    for (int f : a.gridFeatures)
    {
      grid.push_back(a.options);
      grid.back().maxDepth = d;
      grid.back().featureCandidates = f;
    }
  if (a.distributed) // each fold's forest over the shards, on this process's GPU (the CPU's sums)
  {
    const BackendRequest device = BackendOfProcess(a.options.backend, MpiLocalRank());
    for (auto & o : grid)
    {
      o.shards = &processes;
      o.backend = device;
    }
  }
  ProgressBar bar("cross-validation", a.quiet);
  std::vector<ForestCrossValidationResult> results;
  OrStopAllProcesses(processes,
                     [&]
                     {
                       results = CrossValidateForest(
                         train,
                         numClasses,
                         sampling,
                         grid,
                         a.cv,
                         a.splitSeed,
                         [&](double f) { bar.Update(f); },
                         a.distributed ? share.begin : 0,
                         a.distributed ? allImages : 0);
                     });
  bar.Finish();
  std::size_t best = 0;
  const bool  root = processes.Rank() == 0; // one process prints
  for (std::size_t g = 0; g < results.size(); ++g)
  {
    if (root)
      std::cout << "cv: depth " << results[g].options.maxDepth << ", features " << results[g].options.featureCandidates
                << ": mean Dice " << results[g].meanDice << ", accuracy " << results[g].meanAccuracy << '\n';
    report["cv"].push_back({ { "depth", results[g].options.maxDepth },
                             { "features", results[g].options.featureCandidates },
                             { "meanDice", results[g].meanDice },
                             { "meanAccuracy", results[g].meanAccuracy },
                             { "foldDice", results[g].foldDice } });
    if (results[g].meanDice > results[best].meanDice)
      best = g;
  }
  const BackendRequest backend = a.options.backend;
  a.options = results[best].options;
  a.options.backend = backend;
  if (root)
    std::cout << "cv: best depth " << a.options.maxDepth << ", features " << a.options.featureCandidates << '\n';
}

/** The model file: the cascade (auto-context) or its one forest, with the filter bank, the
 * normalisation and the reference. */
void
WriteTrainedModel(const ForestTrainArguments & a, const TrainPlan & plan, ForestCascade & cascade)
{
  const std::vector<std::string> & bank = plan.bank;
  cascade.filterBank = bank;
  cascade.normalization = plan.normalization;
  if (ForestBankNeedsReference(bank))
  {
    const auto & r = a.reference;
    cascade.reference.structure = r.structure;
    cascade.reference.training = r.label > 0        ? "label " + std::to_string(r.label)
                                 : r.label == 0     ? "union of labels > 0"
                                 : !r.poses.empty() ? "detected poses (" + r.poses + ")"
                                                    : "detector " + r.detector;
  }
  if (a.autoContext > 1)
  {
    WriteForestCascadeJson(cascade, a.out);
    return;
  }
  ForestModel & model = cascade.stages.back();
  model.filterBank = bank;
  model.reference = cascade.reference;
  model.normalization = cascade.normalization;
  WriteForestModelJson(model, a.out);
}

/** The auto-context stages' times, samples and pooled held-out scores (report and console). */
void
ReportStages(const ForestTrainArguments & a, const TrainedCascade & trained, int numClasses, RunReport & report)
{
  for (std::size_t k = 0; a.autoContext > 1 && k < trained.stages.size(); ++k)
  {
    const ForestCascadeStageReport & s = trained.stages[k];
    nlohmann::json                   stage = { { "trainSeconds", s.trainSeconds },
                                               { "outOfFoldSeconds", s.outOfFoldSeconds },
                                               { "samples", s.samples } };
    if (!s.heldOutDice.empty())
    {
      stage["heldOutDice"] = s.heldOutDice; // pooled over the held-out images
      stage["heldOutPixelAccuracy"] = s.heldOutPixelAccuracy;
      if (!a.quiet)
      {
        std::cout << "auto-context stage " << k + 1 << ": pooled held-out Dice";
        for (int c = 1; c < numClasses; ++c)
          std::cout << " class " << c << " " << s.heldOutDice[c];
        std::cout << '\n';
      }
    }
    report["autoContext"].push_back(stage);
  }
}

nlohmann::json
TrainingParameters(const ForestTrainArguments &     a,
                   const std::vector<std::string> & bank,
                   const ForestCascade &            cascade,
                   int                              numClasses,
                   int                              dimension,
                   const LabelCleanupOptions &      cleanup)
{
  return { { "trees", a.options.numTrees },
           { "depth", a.options.maxDepth },
           { "features", a.options.featureCandidates },
           { "thresholds", a.options.thresholdCandidates },
           { "maxOffset", a.options.maxOffset },
           { "maxBox", a.options.maxBoxSize },
           { "samplesPerImage", a.samplesPerImage },
           { "sampling", a.sampling },
           { "boundaryShare", a.boundaryShare },
           { "boundaryBand", a.boundaryBand },
           { "focusShare", a.focusShare },
           { "focusBand", a.focusBand },
           { "focusUniform", a.focusUniform },
           { "contextChannels", a.contextChannels },
           { "classWeights", a.classWeights },
           { "channels", bank },
           { "normalization", a.normalize },
           { "referenceStructure", a.reference.structure },
           { "referenceTraining", cascade.reference.training },
           { "seed", a.options.seed },
           { "splitSeed", a.splitSeed },
           { "classes", numClasses },
           { "dimension", dimension },
           { "autoContextStages", a.autoContext },
           { "postprocess", cleanup.Describe() },
           { "contextFolds", a.contextFolds } };
}

/** The held-out images labelled by the trained model (post-processed as asked) and scored: Dice per
 * class (mean, median, worst), pixel and mean class accuracy. A forest predicts them; a cascade's are
 * `trainerLabels`, those its trainer predicted for them (one per image). */
void
EvaluateHeldOut(const ForestTrainArguments &                   a,
                const ForestCascade &                          cascade,
                const std::vector<ForestLabelledImage> &       test,
                const std::vector<std::vector<std::int32_t>> & trainerLabels,
                int                                            numClasses,
                int                                            dimension,
                const LabelCleanupOptions &                    cleanup,
                RunReport &                                    report)
{
  ForestLabelScores                all(numClasses);
  std::vector<std::vector<double>> dice(numClasses);
  ProgressBar                      bar("evaluating held-out images", a.quiet);
  ForestDensePredictionOptions     options;
  options.backend = a.device;
  // A cascade's held-out images were handed to its trainer (their tables now end with the last stage's
  // maps), which labelled them as predicting the cascade would: its labels are the ones to score.
  const bool fromTrainer = cascade.stages.size() > 1;
  if (fromTrainer && trainerLabels.size() != test.size())
    CANOPY_THROW("train-forest: the cascade's trainer labelled " << trainerLabels.size() << " of the " << test.size()
                                                                 << " held-out images");
  std::string backendUsed = fromTrainer ? ResolveBackend(BackendRequest::Parse(a.device)).Describe() : "";
  for (std::size_t i = 0; i < test.size(); ++i)
  {
    std::vector<std::int32_t> predicted(test[i].labels.size());
    if (fromTrainer)
      predicted = trainerLabels[i];
    else
      backendUsed =
        PredictForestDense(cascade.stages.back(), test[i].image, options, nullptr, predicted.data()).backendUsed;
    CleanUpLabels(predicted.data(), test[i].image.nx, test[i].image.ny, test[i].image.nz, dimension, cleanup);
    ForestLabelScores one(numClasses);
    one.Add(predicted.data(), test[i].labels.data(), predicted.size());
    all.Add(predicted.data(), test[i].labels.data(), predicted.size());
    for (int c = 0; c < numClasses; ++c)
      dice[c].push_back(one.Dice(c));
    bar.Update(double(i + 1) / test.size());
  }
  bar.Finish();
  for (int c = 0; c < numClasses; ++c)
  {
    report["dice"][std::to_string(c)] = ValueSummary(dice[c]);
    const auto & s = report["dice"][std::to_string(c)];
    if (!s.is_null())
      std::cout << "class " << c << ": Dice mean " << s["mean"].get<double>() << ", median "
                << s["median"].get<double>() << ", worst " << s["worst"].get<double>() << " (" << s["n"]
                << " images)\n";
  }
  report["pixelAccuracy"] = all.PixelAccuracy();
  report["meanClassAccuracy"] = all.MeanClassAccuracy();
  report["backend"] = backendUsed;
  std::cout << "pixel accuracy " << all.PixelAccuracy() << ", mean class accuracy " << all.MeanClassAccuracy()
            << " over " << test.size() << " held-out images\n";
}

std::vector<const ForestLabelledImage *>
Pointers(const std::vector<ForestLabelledImage> & items)
{
  std::vector<const ForestLabelledImage *> pointers;
  for (const auto & item : items)
    pointers.push_back(&item);
  return pointers;
}

/** The largest training label + 1 over every process's labels. */
int
ClassesInLabels(const std::vector<ForestLabelledImage> & train, Collective & processes)
{
  int numClasses = 0;
  for (const auto & item : train)
    for (auto l : item.labels)
      numClasses = std::max(numClasses, l + 1);
  std::int64_t most = numClasses;
  processes.MaxInPlace(&most, 1);
  return int(most);
}

void
RunTrain(ForestTrainArguments & a)
{
  RunReport       report("train-forest");
  const auto      start = std::chrono::steady_clock::now();
  const TrainPlan plan = CheckTrainArguments(a);
  TrainTestPairs  pairs = SplitPairs(a, plan);
  // --distributed: each process reads its consecutive share of the training images (the samples then
  // concatenate, in rank order, to the one-process set); rank 0 alone reads and scores the test images.
  const std::size_t allTrainImages = pairs.trainImages.size();
  Collective &      processes = RunProcesses(a.distributed);
  const bool        root = processes.Rank() == 0;
  ShareRange        share{ 0, pairs.trainImages.size() };
  if (a.distributed)
  {
    CheckDistributedTraining(pairs.trainImages.size(), processes.Size());
    share = ContiguousShare(pairs.trainImages.size(), processes.Rank(), processes.Size());
    pairs.trainImages = { pairs.trainImages.begin() + share.begin, pairs.trainImages.begin() + share.end };
    pairs.trainLabels = { pairs.trainLabels.begin() + share.begin, pairs.trainLabels.begin() + share.end };
    if (!root)
    {
      pairs.testImages.clear();
      pairs.testLabels.clear();
      a.quiet = true; // one progress display: rank 0's
    }
  }
  std::unique_ptr<ForestCheckpointRun> checkpointRun; // rank 0 reads the checkpoint before the images
  if (!plan.checkpoint.empty())
    checkpointRun = std::make_unique<ForestCheckpointRun>(processes, plan.checkpoint, a.restart, a.quiet);

  // The filter bank on the training device; on the CPU for --distributed runs, whose processes pick
  // their GPUs by local rank only later.
  ForestItemLoading loading;
  loading.slices = plan.slices;
  loading.bank = plan.bank;
  loading.normalization = plan.normalization;
  loading.filterBackend = a.distributed ? ResolvedBackend{} : ResolveBackend(a.options.backend);
  loading.reference = a.reference;
  loading.quiet = a.quiet;
  loading.stage = "loading training images";
  ForestItems train, test;
  const auto  loadStart = std::chrono::steady_clock::now();
  OnEveryProcess(processes,
                 "loading the training images",
                 [&] { LoadForestItems(pairs.trainImages, pairs.trainLabels, loading, train); });
  const double loadSeconds = SecondsSince(loadStart);
  loading.slices = plan.testSlices.given ? plan.testSlices : plan.slices;
  loading.training = false;
  loading.stage = "loading test images";
  test.dimension = train.dimension; // the held-out images are of the training images' dimension
  OnEveryProcess(processes,
                 "loading the test images", // rank 0's alone with --distributed
                 [&] { LoadForestItems(pairs.testImages, pairs.testLabels, loading, test); });
  const int dimension = test.dimension;
  if (ForestBankNeedsReference(plan.bank))
    report["referencePoses"] = { { "train", train.poses }, { "test", test.poses } };
  if (plan.normalization) // this process's images (rank 0's with --distributed)
  {
    ToJson(*plan.normalization, report["normalization"]);
    report["normalization"]["train"] = train.normalized;
    report["normalization"]["test"] = test.normalized;
  }
  const int numClasses = a.classes > 0 ? a.classes : ClassesInLabels(train.items, processes);
  if (a.distributed)
  {
    std::int64_t dims[2] = { dimension, -dimension };
    processes.MaxInPlace(dims, 2);
    OnEveryProcess(processes,
                   "checking the images' dimension",
                   [&]
                   {
                     if (dims[0] != -dims[1])
                       CANOPY_THROW("--image: the processes' images are " << -dims[1] << "D and " << dims[0] << "D");
                   });
  }
  const auto                  trainPointers = Pointers(train.items);
  const ForestSamplingOptions sampling = SamplingOptions(a);
  if (a.cv > 0)
    CrossValidate(a, trainPointers, numClasses, sampling, processes, share, allTrainImages, report);

  const auto     trainStart = std::chrono::steady_clock::now();
  TrainedCascade trained;
  if (a.distributed)
  {
    trained = TrainDistributed(a,
                               pairs,
                               trainPointers,
                               Pointers(test.items),
                               share,
                               allTrainImages,
                               loadSeconds,
                               numClasses,
                               dimension,
                               sampling,
                               processes,
                               checkpointRun.get());
    if (!root)
      return; // rank 0 writes the model and the report
  }
  else if (checkpointRun)
    trained = TrainFromCheckpoint(a, pairs, trainPointers, numClasses, dimension, sampling, *checkpointRun);
  else
    trained = TrainCascade(a, std::move(train.items), test.items, numClasses, sampling); // gives them up
  const std::size_t samples = trained.stages.front().samples;
  if (!a.quiet)
    std::cout << "trained " << a.options.numTrees << " trees per stage on " << samples << " samples of "
              << allTrainImages << " images, " << numClasses << " classes, " << plan.bank.size() << " channels"
              << (a.autoContext > 1 ? ", " + std::to_string(a.autoContext) + " auto-context stages" : "") << '\n';
  const double trainSeconds = SecondsSince(trainStart);
  WriteTrainedModel(a, plan, trained.cascade);
  ReportStages(a, trained, numClasses, report);

  report["images"] = { { "train", allTrainImages }, { "test", test.items.size() } };
  if (a.distributed)
  {
    std::int64_t bytes = 0;
    for (const auto & r : trained.ranks)
      bytes += r["bytesReduced"].get<std::int64_t>();
    report["distributed"] = { { "processes", processes.Size() },
                              { "bytesReduced", bytes },
                              { "ranks", trained.ranks } };
  }
  report["parameters"] = TrainingParameters(a, plan.bank, trained.cascade, numClasses, dimension, plan.cleanup);
  report["samples"] = samples;
  report["trainSeconds"] = trainSeconds;
  report["modelDepth"] = trained.cascade.stages.back().Depth();
  if (!test.items.empty())
    EvaluateHeldOut(
      a, trained.cascade, test.items, trained.stages.back().heldOutLabels, numClasses, dimension, plan.cleanup, report);
  report["seconds"] = SecondsSince(start);
  if (!a.report.empty())
    report.Write(a.report);
  if (checkpointRun)
    checkpointRun->Finish(); // the model and the report are written
}
} // namespace

void
RegisterTrainForestCommand(CLI::App & app)
{
  auto   t = std::make_shared<ForestTrainArguments>();
  auto & o = t->options;
  o.numTrees = 8;
  o.maxDepth = 14;
  o.featureCandidates = 100;
  auto * c = app.add_subcommand("train-forest", "Train a decision forest on labelled 2D images or 3D volumes");
  c->add_option("--image", t->images, "Training images (repeat; pairs with --label)");
  c->add_option("--label", t->labels, "Label maps (0..C-1; repeat)");
  c->add_option("--dataset", t->dataset, "MSD dataset.json instead of --image/--label")->check(CLI::ExistingFile);
  c->add_option("--max-volumes", t->maxVolumes, "Use at most this many dataset entries (0: all)")
    ->capture_default_str()
    ->check(CLI::NonNegativeNumber);
  c->add_option("--out", t->out, "Model file: JSON, or CBOR for a name ending in .cbor (large models read faster)")
    ->required();
  c->add_option("--trees", o.numTrees, "Trees")->capture_default_str()->check(CLI::Range(1, 64));
  c->add_option("--depth", o.maxDepth, "Maximum depth (the trainer's limit is 60)")
    ->capture_default_str()
    ->check(CLI::Range(0, 60));
  c->add_option("--features", o.featureCandidates, "Feature candidates per node")
    ->capture_default_str()
    ->check(CLI::Range(1, 1000000));
  c->add_option("--thresholds", o.thresholdCandidates, "Threshold candidates per feature")
    ->capture_default_str()
    ->check(CLI::Range(1, 1000000));
  c->add_option("--max-offset", o.maxOffset, "Box offsets within +- this many voxels")
    ->capture_default_str()
    ->check(CLI::Range(0, kForestMaxOffset - 1));
  c->add_option("--max-box", o.maxBoxSize, "Box edges up to this many voxels")
    ->capture_default_str()
    ->check(CLI::Range(1, kForestMaxBoxSize));
  c->add_option("--min-samples", o.minSamplesToSplit, "Smallest node that is split")
    ->capture_default_str()
    ->check(CLI::Range(2, 1 << 30));
  c->add_option("--samples-per-image", t->samplesPerImage, "Training voxels per image")
    ->capture_default_str()
    ->check(CLI::Range(1, 1 << 30));
  c->add_option("--sampling", t->sampling, "balanced (equal per class) or uniform")->capture_default_str();
  c->add_option("--boundary-share",
                t->boundaryShare,
                "Draw this share of each image's samples from the boundary band (voxels within --boundary-band of "
                "another label), the rest from outside it")
    ->capture_default_str()
    ->check(CLI::Range(0.0, 1.0));
  c->add_option("--boundary-band", t->boundaryBand, "Half-width of the boundary band in voxels (Chebyshev)")
    ->capture_default_str()
    ->check(CLI::Range(1, 1000));
  c->add_option("--class-weights", t->classWeights, "none or balanced (weight class c by N / (C N_c))")
    ->capture_default_str();
  c->add_option(
     "--channels",
     t->channels,
     "Filter bank: intensity,gaussian:S,gradient:S,log:S (S in mm), closing:R,tophat:R (grey closing and black "
     "top-hat, box half-width R mm), position (image box), pose (reference frame)")
    ->capture_default_str();
  c->add_option("--normalize",
                t->normalize,
                "Each image's intensities before the filter bank: percentile (its 1..99% range to 0..1: MR and other "
                "scans without absolute units), window (--window to 0..1, clipped: CT) or none (as they are: inputs "
                "already on one scale, and models before this option); stored in the model, so prediction maps every "
                "scan the same way")
    ->capture_default_str()
    ->check(CLI::IsMember({ "none", "percentile", "window" }));
  CLI::Option * window = c->add_option("--window", t->window, "LOW HIGH of --normalize window (e.g. Hounsfield units)")
                           ->expected(2)
                           ->capture_default_str();
  c->add_option("--reference-structure",
                t->reference.structure,
                "Pose channels: the structure whose pose is the frame (its name in poses files and detectors)");
  c->add_option("--reference-label",
                t->reference.label,
                "Pose channels: training volumes' frame from their label map's pose of this label (0: the union "
                "of labels > 0); held-out volumes still use detected poses")
    ->check(CLI::NonNegativeNumber);
  c->add_option("--reference-poses",
                t->reference.poses,
                "Pose channels: a folder of NAME.poses.json (canopy detect --output-dir) giving each volume's pose");
  c->add_option("--reference-detector",
                t->reference.detector,
                "Pose channels: a pose detector (train-detector) run on each volume for its pose");
  c->add_option("--classes", t->classes, "Number of classes (0: largest training label + 1)")
    ->capture_default_str()
    ->check(CLI::Range(0, 1 << 20));
  c->add_option("--seed", o.seed, "Training seed")->capture_default_str();
  c->add_option("--slices", t->slices, "Train on axial slices A:B:S of 3D inputs (a 2D model)");
  c->add_option(
     "--test-fraction", t->testFraction, "Hold out this share of the images (seeded split) and report scores")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 1.0));
  c->add_option(
    "--test-slices", t->testSlices, "Evaluate on these axial slices A:B:S (of the held-out images, or all)");
  c->add_option("--split-seed", t->splitSeed, "Seed of the split and of the folds")->capture_default_str();
  c->add_option("--cv", t->cv, "k-fold cross-validation over --grid-depth x --grid-features; trains with the best")
    ->capture_default_str();
  c->add_option("--grid-depth", t->gridDepth, "Depths for --cv")->delimiter(',')->check(CLI::Range(0, 30));
  c->add_option("--grid-features", t->gridFeatures, "Feature candidates for --cv")
    ->delimiter(',')
    ->check(CLI::Range(1, 1000000));
  c->add_option("--threads", o.threads, "CPU threads (0: all)")->capture_default_str()->check(CLI::NonNegativeNumber);
  c->add_option(
     "--auto-context",
     t->autoContext,
     "Auto-context stages (Tu & Bai 2010): stage k also reads stage k-1's class probability maps; 1: one forest")
    ->capture_default_str()
    ->check(CLI::Range(1, kForestCascadeMaxStages));
  c->add_option("--context-folds",
                t->contextFolds,
                "Folds of the out-of-fold probability maps the later stages train on (seeded by --split-seed)")
    ->capture_default_str()
    ->check(CLI::Range(2, 1000));
  c->add_option("--context-channels",
                t->contextChannels,
                "Auto-context: channels derived from every class map for the later stages, comma-separated: "
                "tophat:R (the map's black top-hat with a box of half-width R voxels: narrow dents of a class)")
    ->delimiter(',');
  c->add_option("--focus-share",
                t->focusShare,
                "Auto-context: stages after the first draw this share of each image's samples from the earlier "
                "stage's out-of-fold mistakes and the voxels within --focus-band of them")
    ->capture_default_str()
    ->check(CLI::Range(0.0, 1.0));
  c->add_flag("--focus-uniform",
              t->focusUniform,
              "Draw the --focus-share samples uniformly (the classes as the mistakes and their neighbours hold "
              "them), whatever --sampling says");
  c->add_option("--focus-band", t->focusBand, "Half-width in voxels (Chebyshev) around the mistakes for --focus-share")
    ->capture_default_str()
    ->check(CLI::Range(0, 1000));
  c->add_option("--postprocess",
                t->postprocess,
                "Held-out labels: none, or largest (largest component per class), fill (holes per class), full "
                "(26-connectivity), comma-separated")
    ->capture_default_str();
  c->add_flag("--flip-pairs", o.flipPairs, "Also train on the horizontal mirror of every sample (CURFIL 5.3)");
  auto * budget = c->add_option_function<double>(
    "--gpu-budget-mb",
    [&o](double mb) { o.gpuMemoryBudget = static_cast<std::size_t>(mb * 1048576.0); },
    "GPU training: device memory to use in MiB (0: automatic)");
  budget->check(FiniteIn(0.0, 1.0e7));
  c->add_option("--gpu-cache-images", o.gpuImageCacheImages, "GPU training: images kept on the device (0: automatic)")
    ->capture_default_str()
    ->check(CLI::NonNegativeNumber);
  c->add_option("--gpu-slice-samples", o.gpuSliceSamples, "GPU training: samples per slice (0: automatic)")
    ->capture_default_str()
    ->check(CLI::NonNegativeNumber);
  c->add_option("--device", t->device, "Backend for training and the held-out prediction: auto, cpu, cuda or cuda:N")
    ->capture_default_str();
  c->add_option("--report", t->report, "Write the JSON report here");
  c->add_flag("--quiet", t->quiet, "No progress bars");
  auto * checkpoint =
    c->add_option("--checkpoint",
                  t->checkpoint,
                  "After each tree, save the trees grown so far here (default OUT.partial when given without a "
                  "file); a rerun with the same arguments resumes from it and writes the same model; removed when "
                  "done")
      ->expected(0, 1);
  c->add_flag("--restart", t->restart, "With --checkpoint: discard an existing checkpoint and start afresh");
  c->add_flag("--distributed",
              t->distributed,
              "Train over the processes of an MPI run (mpirun -np N canopy train-forest ...): each reads its share "
              "of the images; the same forest as one process; rank 0 writes the model and report");
  c->callback(
    [t, checkpoint, window]
    {
      t->checkpointGiven = checkpoint->count() > 0;
      if (window->count() > 0 && t->normalize != "window")
        CANOPY_THROW("--window applies to --normalize window (given: --normalize " << t->normalize << ")");
      RunTrain(*t);
    });
}
} // namespace canopy::app
