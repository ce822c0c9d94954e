// canopy train-pbt and canopy classify.
#include "canopy/Device.h"
#include "canopy/Errors.h"
#include "canopyAugmentation.h"
#include "canopyClassifySteps.h"
#include "canopyCommands.h"
#include "canopyDataset.h"
#include "canopyDistributedRun.h"
#include "canopyImageIO.h"
#include "canopyMpiCollective.h"
#include "canopyOptionChecks.h"
#include "canopyOutputPaths.h"
#include "canopyPBTClassesRuns.h"
#include "canopyPBTClassification.h"
#include "canopyPBTVolumeTraining.h"
#include "canopyProgress.h"
#include "canopyRegularization.h"
#include "canopyRuns.h"
#include "canopyShares.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace canopy::app
{
namespace
{

struct TrainArguments
{
  std::vector<std::string> images, labels;
  std::string              dataset, out, device = "auto", report, weakLearner = "histogram";
  std::vector<int>         positiveLabels;
  std::vector<int>         classLabels; // --labels (or 1..--classes): a multi-class model
  int                      classes = 0, autoContext = 1, contextFolds = 4;
  std::vector<double>      spacing{ 2.0 };
  std::vector<double>      boxMm{ 64.0 };
  std::string              normalize = "percentile";
  std::vector<double>      window{ -200.0, 300.0 };
  int                      maxVolumes = 0, augmentCopies = 0;
  std::uint64_t            augmentSeed = 1000;
  PBTVolumeTrainingOptions options;
  LambdaSelectionOptions   lambdaSelection;
  bool                     quiet = false, distributed = false;
};

/** Training volume `j` of the list (--image i = j / copies, copy j % copies with --augment), read,
 * checked and augmented; `cache` keeps the last image read, as copies of one image sit together. */
LabelledVolume
ReadTrainingVolume(const TrainArguments & a, std::size_t j, std::pair<std::size_t, LabelledVolume> & cache)
{
  const std::size_t copies = std::max(1, a.augmentCopies);
  const std::size_t i = j / copies;
  if (!cache.second.image || cache.first != i)
  {
    auto image = ReadVolume(a.images[i], "--image");
    auto mask = ReadMask(a.labels[i], "--label", a.positiveLabels);
    if (!SameGrid(image, mask))
    {
      CANOPY_THROW("--label " << a.labels[i] << ": its grid (size, spacing, origin, direction) differs from --image "
                              << a.images[i]);
    }
    cache = { i, { image, mask, std::filesystem::path(a.images[i]).filename().string() } };
  }
  if (a.augmentCopies == 0)
    return cache.second;
  const int           c = static_cast<int>(j % copies);
  AugmentationOptions augmentation;
  augmentation.seed = a.augmentSeed + 1000 * i + c;
  auto pair = AugmentVolume(cache.second.image, cache.second.mask, augmentation);
  return { pair.image, pair.label, cache.second.name + "#aug" + std::to_string(c) };
}

/** The training volumes [begin, end) of the list. */
std::vector<LabelledVolume>
ReadTrainingVolumes(const TrainArguments & a, std::size_t begin, std::size_t end)
{
  std::vector<LabelledVolume>            volumes;
  std::pair<std::size_t, LabelledVolume> cache;
  ProgressBar                            bar("reading", a.quiet);
  for (std::size_t j = begin; j < end; ++j)
  {
    volumes.push_back(ReadTrainingVolume(a, j, cache));
    bar.Update(double(j + 1 - begin) / (end - begin), volumes.back().name);
  }
  return volumes;
}

/** The volumes RecommendRegularization picks from a list of `count` (evenly spread), read by rank 0
 * of a distributed run: passed alone, they are all picked, in the same order. */
std::vector<LabelledVolume>
LambdaVolumes(const TrainArguments & a, std::size_t count, std::size_t first, const std::vector<LabelledVolume> & mine)
{
  const std::size_t           picks = std::min<std::size_t>(count, std::size_t(a.lambdaSelection.maxVolumes));
  std::vector<LabelledVolume> volumes;
  std::pair<std::size_t, LabelledVolume> cache;
  for (std::size_t k = 0; k < picks; ++k)
  {
    const std::size_t j = k * count / picks;
    volumes.push_back(j >= first && j < first + mine.size() ? mine[j - first] : ReadTrainingVolume(a, j, cache));
  }
  return volumes;
}

std::array<double, 3>
Triple(const std::vector<double> & values, const std::string & parameter)
{
  if (values.size() != 1 && values.size() != 3)
  {
    CANOPY_THROW(parameter << ": give one value or three (x y z), got " << values.size());
  }
  std::array<double, 3> t;
  for (int d = 0; d < 3; ++d)
  {
    t[d] = values[values.size() == 1 ? 0 : d];
    if (!(t[d] > 0.0) || !std::isfinite(t[d]))
    {
      CANOPY_THROW(parameter << ": values must be positive, got " << t[d]);
    }
  }
  return t;
}

void
RunTrain(TrainArguments & a)
{
  RunReport report("train-pbt");
  if (!a.dataset.empty())
  {
    ReadDataset(a.dataset, a.maxVolumes, a.images, a.labels);
  }
  std::vector<NamedPath> inputs{ { "--dataset", a.dataset } };
  for (const auto & image : a.images)
    inputs.push_back({ "--image", image });
  for (const auto & label : a.labels)
    inputs.push_back({ "--label", label });
  CheckOutputPaths({ { "--out", a.out }, { "--report", a.report } }, inputs);
  if (a.images.empty())
  {
    CANOPY_THROW("train-pbt: give --image/--label pairs or --dataset");
  }
  if (a.images.size() != a.labels.size())
  {
    CANOPY_THROW("train-pbt: " << a.images.size() << " --image but " << a.labels.size() << " --label; they must pair up");
  }
  auto & o = a.options;
  o.workingSpacing = Triple(a.spacing, "--spacing");
  o.sampleBoxMm = Triple(a.boxMm, "--box-mm");
  o.pbt.kind = a.weakLearner == "stump" ? WeakLearnerKind::Stump : WeakLearnerKind::Histogram;
  o.normalization.method = a.normalize;
  if (a.window.size() != 2 || !(a.window[0] < a.window[1]))
  {
    CANOPY_THROW("--window: give LOW HIGH with LOW < HIGH");
  }
  o.normalization.windowLow = a.window[0];
  o.normalization.windowHigh = a.window[1];
  o.backend = ResolveBackend(BackendRequest::Parse(a.device));
  o.sampling.seed = o.pbt.seed;
  if (a.classes > 0 && a.classLabels.empty())
  {
    for (int c = 1; c <= a.classes; ++c)
      a.classLabels.push_back(c);
  }
  else if (a.classes > 0 && int(a.classLabels.size()) != a.classes)
  {
    CANOPY_THROW("--classes " << a.classes << " disagrees with the " << a.classLabels.size() << " --labels given");
  }
  if (!a.classLabels.empty() || a.autoContext > 1)
  {
    if (a.distributed)
    {
      CANOPY_THROW("--distributed trains one binary PBT: --labels, --classes and --auto-context are not distributed "
                   "yet");
    }
    if (!a.positiveLabels.empty() || a.augmentCopies > 0)
    {
      CANOPY_THROW("--positive-label and --augment are for binary models; with --labels/--classes/--auto-context the "
                   "label maps' class values are used as they are");
    }
    TrainClassesArguments classes;
    classes.images = a.images;
    classes.labels = a.labels;
    classes.out = a.out;
    classes.report = a.report;
    classes.quiet = a.quiet;
    classes.options.volume = o;
    classes.options.labels = a.classLabels.empty() ? std::vector<int>{ 1 } : a.classLabels;
    classes.options.stages = a.autoContext;
    classes.options.folds = a.contextFolds;
    classes.options.foldSeed = o.pbt.seed;
    classes.parameters = { { "labels", classes.options.labels },
                           { "autoContext", a.autoContext },
                           { "contextFolds", a.contextFolds },
                           { "workingSpacing", o.workingSpacing },
                           { "sampleBoxMm", o.sampleBoxMm },
                           { "featureBankSize", o.featureBankSize },
                           { "minimumFeatureSize", o.minimumFeatureSize },
                           { "positivesPerVolume", o.sampling.positivesPerVolume },
                           { "negativesPerVolume", o.sampling.negativesPerVolume },
                           { "nearBoundaryMm", o.sampling.nearBoundaryMm },
                           { "maxDepth", o.pbt.maxDepth },
                           { "weakLearnersPerNode", o.pbt.weakLearnersPerNode },
                           { "featureCandidatesPerRound", o.pbt.featureCandidatesPerRound },
                           { "weakLearner", a.weakLearner },
                           { "seed", o.pbt.seed },
                           { "weightByPrior", o.sampling.weightByPrior } };
    RunTrainPBTClasses(classes);
    return;
  }

  // --distributed: each process reads its consecutive share of the training volumes (augmented copies
  // counted as volumes); their samples concatenate, in rank order, to the one-process training set.
  const std::size_t allVolumes = a.images.size() * std::size_t(std::max(1, a.augmentCopies));
  Collective &      processes = RunProcesses(a.distributed);
  const bool        root = processes.Rank() == 0;
  ShareRange        share{ 0, allVolumes };
  if (a.distributed)
  {
    if (std::size_t(processes.Size()) > allVolumes)
    {
      CANOPY_THROW("--distributed: " << processes.Size() << " processes for " << allVolumes
                                     << " training volumes; each process needs at least one (use mpirun -np "
                                     << allVolumes << " or fewer)");
    }
    share = ContiguousShare(allVolumes, processes.Rank(), processes.Size());
    if (!root)
      a.quiet = true; // one progress display: rank 0's
    // The boosting itself runs on the CPU; Haar responses on this process's GPU (its rank on the machine).
    const auto request = BackendRequest::Parse(a.device);
    const int  localRank = MpiLocalRank(); // a collective call: on every rank
    if (o.backend.useCuda)
      o.backend = ResolveBackend(BackendOfProcess(request, localRank));
    // Every process computes its responses on the same kind of device (as one process would), or none
    // on a GPU: --device auto falls back to the CPU everywhere, an explicit cuda request fails.
    const bool everywhere = processes.AllTrue(o.backend.useCuda);
    OnEveryProcess(processes,
                   "choosing the devices",
                   [&]
                   {
                     if (!o.backend.useCuda || everywhere)
                       return;
                     if (request.kind == BackendKind::CUDA)
                       CANOPY_THROW("--device " << a.device << ": another of the " << processes.Size()
                                                << " processes has no usable GPU; give --device cpu");
                     o.backend = ResolveBackend(BackendRequest::Parse("cpu"));
                   });
  }
  std::vector<LabelledVolume> volumes;
  const auto                  loadStart = std::chrono::steady_clock::now();
  OnEveryProcess(
    processes, "loading the training images", [&] { volumes = ReadTrainingVolumes(a, share.begin, share.end); });
  const double            loadSeconds = SecondsSince(loadStart);
  PBTVolumeTrainingReport result;
  PBTModelFile            model;
  nlohmann::json          ranks; // per process, on rank 0 (--distributed)
  {
    ProgressBar bar(a.distributed ? "training (" + std::to_string(processes.Size()) + " processes)" : "training",
                    a.quiet);
    PBTVolumeTrainingOptions mine = o;
    mine.pbt.shards = a.distributed ? &processes : nullptr;
    mine.firstVolume = share.begin;
    const std::int64_t bytesBefore = processes.BytesReduced(), reductionsBefore = processes.Reductions();
    const auto         start = std::chrono::steady_clock::now();
    OrStopAllProcesses(
      processes,
      [&]
      {
        model = TrainPBTFromVolumes(
          volumes, mine, &result, [&bar](double f, const std::string & stage) { bar.Update(f, stage); });
      });
    if (a.distributed)
    {
      ranks = GatherReports(processes,
                            { { "rank", processes.Rank() },
                              { "volumes", volumes.size() },
                              { "firstVolume", share.begin },
                              { "loadSeconds", loadSeconds },
                              { "prepareSeconds", result.prepareSeconds },
                              { "responseSeconds", result.responseSeconds },
                              { "trainSeconds", result.trainSeconds },
                              { "seconds", SecondsSince(start) },
                              { "device", result.backend },
                              { "bytesReduced", processes.BytesReduced() - bytesBefore },
                              { "reductions", processes.Reductions() - reductionsBefore } });
      if (!root)
        return; // rank 0 chooses lambda and writes the model and the report
      volumes = LambdaVolumes(a, allVolumes, share.begin, volumes);
    }
  }
  nlohmann::json parameters = {
    { "workingSpacing", o.workingSpacing },  { "sampleBoxMm", o.sampleBoxMm },
    { "featureBankSize", o.featureBankSize }, { "minimumFeatureSize", o.minimumFeatureSize },
    { "positivesPerVolume", o.sampling.positivesPerVolume }, { "negativesPerVolume", o.sampling.negativesPerVolume },
    { "nearBoundaryFraction", o.sampling.nearBoundaryFraction }, { "nearBoundaryMm", o.sampling.nearBoundaryMm },
    { "maxDepth", o.pbt.maxDepth }, { "weakLearnersPerNode", o.pbt.weakLearnersPerNode },
    { "featureCandidatesPerRound", o.pbt.featureCandidatesPerRound }, { "weakLearner", a.weakLearner },
    { "histogramBins", o.pbt.histogramBins }, { "softBand", o.pbt.softBand }, { "minSamplesToSplit", o.pbt.minSamplesToSplit },
    { "purityStop", o.pbt.purityStop }, { "seed", o.pbt.seed }, { "augmentCopies", a.augmentCopies },
    { "augmentSeed", a.augmentSeed }, { "positiveLabels", a.positiveLabels }, { "weightByPrior", o.sampling.weightByPrior } };
  {
    ProgressBar bar("choosing lambda", a.quiet);
    model.regularization =
      RecommendRegularization(model, volumes, o.backend, a.lambdaSelection, [&bar](double f) { bar.Update(f); });
  }
  model.training = parameters;
  model.provenance = { { "images", a.images }, { "labels", a.labels }, { "device", result.backend },
                       { "canopyVersion", report["canopyVersion"] }, { "created", report["started"] } };
  SavePBTModelFile(model, a.out);

  std::cout << "trained on " << allVolumes << " volume(s)"
            << (a.distributed ? " over " + std::to_string(processes.Size()) + " processes" : "") << ", "
            << result.samples << " samples, " << result.candidateFeatures << " candidate features ("
            << result.featuresUsed << " used), depth " << result.depth << ", " << result.nodes
            << " nodes; training accuracy " << result.trainingAccuracy << "\n  preparation " << result.prepareSeconds
            << " s, Haar responses " << result.responseSeconds << " s on " << result.backend << ", tree training "
            << result.trainSeconds << " s\n  model: " << a.out << '\n';
  const auto & selection = model.regularization->selection;
  const auto   best =
    std::find(a.lambdaSelection.grid.begin(), a.lambdaSelection.grid.end(), model.regularization->lambda) -
    a.lambdaSelection.grid.begin();
  std::cout << "  recommended graph-cut lambda " << model.regularization->lambda << " mm (mean Dice "
            << selection["meanDice"][best].get<double>() << " on " << selection["volumes"].size()
            << " training volume(s); " << selection["seconds"].get<double>() << " s)\n";
  if (!a.report.empty())
  {
    report["parameters"] = parameters;
    report["regularization"] = { { "lambda", model.regularization->lambda },
                                 { "neighborhood", model.regularization->neighborhood },
                                 { "selection", selection } };
    report["device"] = result.backend;
    report["output"] = a.out;
    if (a.distributed)
    {
      std::int64_t bytes = 0;
      for (const auto & r : ranks)
        bytes += r["bytesReduced"].get<std::int64_t>();
      report["distributed"] = { { "processes", processes.Size() }, { "bytesReduced", bytes }, { "ranks", ranks } };
    }
    report["result"] = { { "volumes", allVolumes }, { "samples", result.samples },
                         { "featuresUsed", result.featuresUsed }, { "depth", result.depth }, { "nodes", result.nodes },
                         { "trainingAccuracy", result.trainingAccuracy } };
    report["timings"] = { { "prepareSeconds", result.prepareSeconds }, { "responseSeconds", result.responseSeconds },
                          { "trainSeconds", result.trainSeconds } };
    report.Write(a.report);
  }
}

} // namespace

ClassifyOutcome
RunClassify(const ClassifyArguments & a)
{
  RunReport report("classify");
  CheckOutputPaths({ { "--output", a.output }, { "--snapshot", a.snapshot }, { "--report", a.report } },
                   { { "--model", a.model }, { "--input", a.input }, { "--snapshot-reference", a.snapshotReference } });
  RequireVolumeFormat(a.output, "--output");
  const auto backend = ResolveBackend(BackendRequest::Parse(a.device));
  const auto model = LoadPBTModelFile(a.model);
  const auto image = ReadVolume(a.input, "--input");
  CheckWorkingGrid(image, model.workingSpacing, a.model);
  PBTClassificationTimings timings;
  const auto probability = ClassifyWithProgress(image, model, backend, !a.nonProbabilistic, a.quiet, timings);
  WriteVolume(probability.GetPointer(), a.output, "--output");
  std::cout << "classified " << a.input << " on " << backend.Describe() << " (working grid " << timings.workingSize[0]
            << "x" << timings.workingSize[1] << "x" << timings.workingSize[2] << ", " << timings.slabs
            << " slab(s)): preparation " << timings.prepareSeconds << " s, evaluation " << timings.evaluateSeconds
            << " s, resampling " << timings.resampleSeconds << " s\n  probability map: " << a.output << '\n';
  WriteSnapshotIfAsked(image, probability, a.snapshot, a.snapshotReference);
  if (!a.report.empty())
  {
    report["device"] = backend.Describe();
    report["parameters"] = { { "model", a.model }, { "input", a.input }, { "probabilistic", !a.nonProbabilistic } };
    report["output"] = a.output;
    report["timings"] = ToJson(timings);
    report.Write(a.report);
  }
  ClassifyOutcome outcome;
  outcome.device = backend.Describe();
  const auto    n = probability->GetLargestPossibleRegion().GetNumberOfPixels();
  const float * p = probability->GetBufferPointer();
  for (itk::SizeValueType i = 0; i < n; ++i)
  {
    outcome.maximumProbability = std::max(outcome.maximumProbability, static_cast<double>(p[i]));
    outcome.voxelsAtLeastHalf += p[i] >= 0.5f;
  }
  return outcome;
}

void
RegisterTrainPBTCommand(CLI::App & app)
{
  auto   args = std::make_shared<TrainArguments>();
  auto * c = app.add_subcommand("train-pbt", "Train a probabilistic boosting tree voxel classifier (Haar features)");
  auto & o = args->options;
  c->add_option("--image", args->images, "Training volume (repeat; pairs with --label)");
  c->add_option("--label", args->labels, "Label map of the preceding --image (repeat)");
  c->add_option("--dataset", args->dataset, "MSD-style dataset.json instead of --image/--label")->check(CLI::ExistingFile);
  c->add_option("--max-volumes", args->maxVolumes, "Use at most this many dataset entries (0: all)")->check(CLI::NonNegativeNumber);
  c->add_option("--positive-label", args->positiveLabels, "Label value(s) of the positive class (default: any non-zero)");
  c->add_option("--out", args->out, "Model file to write (JSON)")->required();
  c->add_option("--labels",
                args->classLabels,
                "Class label values of a multi-class model (one-vs-rest PBTs decided jointly), e.g. 1,2")
    ->delimiter(',')
    ->check(CLI::Range(1, 255));
  c->add_option("--classes", args->classes, "A multi-class model of the labels 1..C")->check(CLI::Range(1, 255));
  c->add_option("--auto-context",
                args->autoContext,
                "Auto-context stages: stage k reads the intensity and stage k-1's class maps (1: none)")
    ->capture_default_str()
    ->check(CLI::Range(1, 8));
  c->add_option("--context-folds", args->contextFolds, "Folds of the out-of-fold maps the later stages train on")
    ->capture_default_str()
    ->check(CLI::Range(2, 1000));
  c->add_option("--spacing", args->spacing, "Working spacing in mm (1 or 3 values)")->capture_default_str();
  c->add_option("--box-mm", args->boxMm, "Haar sample box in mm (1 or 3 values)")->capture_default_str();
  c->add_option("--normalize", args->normalize, "Intensity normalisation: percentile (1..99%, MR) or window (fixed, CT)")
    ->capture_default_str()->check(CLI::IsMember({ "percentile", "window" }));
  c->add_option("--window", args->window, "LOW HIGH of the window normalisation (e.g. Hounsfield units)")->expected(2)->capture_default_str();
  c->add_option("--features", o.featureBankSize, "Random Haar features to choose from")->capture_default_str()->check(CLI::Range(1, 1000000));
  c->add_option("--min-feature-size", o.minimumFeatureSize, "Smallest cuboid edge, fraction of the box")
    ->capture_default_str()
    ->check(FiniteIn(0.01, 1.0));
  c->add_option("--depth", o.pbt.maxDepth, "Tree depth")->capture_default_str()->check(CLI::Range(0, 30));
  c->add_option("--learners", o.pbt.weakLearnersPerNode, "Weak learners per node")->capture_default_str()->check(CLI::Range(1, 1000));
  c->add_option("--candidates", o.pbt.featureCandidatesPerRound, "Features tried per boosting round (0: all)")->capture_default_str()->check(CLI::NonNegativeNumber);
  c->add_option("--weak-learner", args->weakLearner, "histogram (real AdaBoost) or stump (discrete AdaBoost)")->capture_default_str()
    ->check(CLI::IsMember({ "histogram", "stump" }));
  c->add_option("--min-samples", o.pbt.minSamplesToSplit, "Fewest samples a node needs to split")->capture_default_str()->check(CLI::PositiveNumber);
  c->add_option("--soft-band", o.pbt.softBand, "Training samples with |q-0.5| below this go to both children")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 0.5));
  c->add_option("--positives", o.sampling.positivesPerVolume, "Positive samples per volume")->capture_default_str()->check(CLI::PositiveNumber);
  c->add_option("--negatives", o.sampling.negativesPerVolume, "Negative samples per volume")->capture_default_str()->check(CLI::PositiveNumber);
  c->add_flag("--prior-weights", o.sampling.weightByPrior, "Weight samples by their stratum's share of the volume (true class balance)");
  c->add_option("--near-boundary-mm", o.sampling.nearBoundaryMm, "Distance band for boundary negatives")
    ->capture_default_str()
    ->check(FinitePositive());
  c->add_option("--augment", args->augmentCopies, "Train on this many randomly transformed and intensity-augmented copies of each volume (0: the volumes themselves)")->capture_default_str()->check(CLI::Range(0, 100));
  c->add_option("--augment-seed", args->augmentSeed, "Seed of the augmentations")->capture_default_str();
  c->add_option(
     "--lambda-grid",
     args->lambdaSelection.grid,
     "Graph-cut lambdas (mm, ascending) tried on the training volumes; the best mean Dice is stored in the model "
     "as the one `segment` uses")
    ->capture_default_str();
  c->add_option("--lambda-volumes",
                args->lambdaSelection.maxVolumes,
                "Training volumes classified to choose lambda (spread over the list)")
    ->capture_default_str()
    ->check(CLI::PositiveNumber);
  c->add_option("--seed", o.pbt.seed, "Random seed (features, samples, training)")->capture_default_str();
  c->add_option("--device", args->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  c->add_option("--report", args->report, "Write a JSON run report here");
  c->add_flag("--quiet", args->quiet, "No progress bars");
  c->add_flag("--distributed",
              args->distributed,
              "Train over the processes of an MPI run (mpirun -np N canopy train-pbt ...): each reads its share "
              "of the volumes; the model is the one-process model, bit for bit; rank 0 writes it");
  c->callback([args] { RunTrain(*args); });
}

void
RegisterClassifyCommand(CLI::App & app)
{
  auto   args = std::make_shared<ClassifyArguments>();
  auto * c = app.add_subcommand("classify", "Probability map of the positive class with a PBT model");
  c->add_option("--model", args->model, "Model file from train-pbt")->required();
  c->add_option("--input", args->input, "Volume to classify (any ITK format or a DICOM folder)")->required();
  c->add_option("--output", args->output, "Probability map to write (float, input's grid)")->required();
  c->add_option("--device", args->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  c->add_flag("--non-probabilistic", args->nonProbabilistic, "Descend one branch per node (epsilon1 = 0.5)");
  c->add_option("--snapshot", args->snapshot, "Write a PNG of orthogonal slices with the result overlaid");
  c->add_option("--snapshot-reference", args->snapshotReference, "Label map outlined in green on the snapshot");
  c->add_option("--report", args->report, "Write a JSON run report here");
  c->add_flag("--quiet", args->quiet, "No progress bars");
  c->callback([args] { (void)RunClassify(*args); });
}

} // namespace canopy::app
