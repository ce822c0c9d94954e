// canopy train-forest / predict-forest: decision forests (Sharp 2008; CURFIL) on 2D images or 3D
// volumes, with filter-bank channels, a held-out evaluation (seeded split, Dice per class, pixel and
// mean class accuracy) and k-fold cross-validation over a small grid.
#include "canopy/AtomicFile.h"
#include "canopy/Errors.h"
#include "canopyCheckedImageReader.h"
#include "canopyCommands.h"
#include "canopyConfigure.h"
#include "canopyDataset.h"
#include "canopyDistributedRun.h"
#include "canopyForestCascade.h"
#include "canopyForestCheckpointRun.h"
#include "canopyForestDensePrediction.h"
#include "canopyForestFilterBank.h"
#include "canopyForestVolumeTraining.h"
#include "canopyImageIO.h"
#include "canopyLabelCleanup.h"
#include "canopyMpiCollective.h"
#include "canopyNcclReduction.h"
#include "canopyOptionChecks.h"
#include "canopyOutputPaths.h"
#include "canopyProgress.h"
#include "canopyReferencePose.h"
#include "canopyRuns.h"
#include "canopySegmentationFile.h"
#include "canopyShares.h"
#include "itkForestCascadeClassificationImageFilter.h"
#include "itkImageFileReader.h"
#include "itkRandomForestClassificationImageFilter.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <type_traits>

namespace canopy::app
{
namespace
{
using Image2 = itk::Image<float, 2>;

/** Axial slices "A:B:S" (z = A, A+S, ... < B). */
struct SliceSpec
{
  int  begin = 0, end = 0, step = 1;
  bool given = false;
};

SliceSpec
ParseSlices(const std::string & text, const std::string & parameter)
{
  SliceSpec s;
  if (text.empty())
    return s;
  char               c1 = 0, c2 = 0;
  std::istringstream in(text);
  if (!(in >> s.begin >> c1 >> s.end >> c2 >> s.step) || c1 != ':' || c2 != ':' || !in.eof() || s.begin < 0 ||
      s.end <= s.begin || s.step < 1)
  {
    CANOPY_THROW(parameter << ": '" << text << "' is not A:B:S with 0 <= A < B and S >= 1");
  }
  s.given = true;
  return s;
}

unsigned
FileDimension(const std::string & path, const std::string & parameter)
{
  if (std::filesystem::is_directory(path))
    return 3; // a DICOM series
  const auto     io = OpenImageChecked(path, parameter).io;
  const unsigned dims = io->GetNumberOfDimensions();
  return dims == 3 && io->GetDimensions(2) == 1 ? 2 : std::min(dims, 3u);
}

/** Components per pixel of an image file (1 for a DICOM folder). */
int
FileComponents(const std::string & path)
{
  if (std::filesystem::is_directory(path))
    return 1;
  auto io = itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::ImageIOFactory::IOFileModeEnum::ReadMode);
  io->SetFileName(path);
  io->ReadImageInformation();
  return int(io->GetNumberOfComponents());
}

Image2::Pointer
Read2D(const std::string & path, const std::string & parameter)
{
  return ReadImageChecked<Image2>(path, parameter);
}

/** Plane z of a volume as a 2D image (x, y geometry kept). */
Image2::Pointer
Slice(const FloatVolume * v, int z, const std::string & path)
{
  const auto size = v->GetLargestPossibleRegion().GetSize();
  if (z >= int(size[2]))
  {
    CANOPY_THROW("--slices: slice " << z << " is outside " << path << " (" << size[2] << " planes)");
  }
  auto s = Image2::New();
  s->SetRegions(Image2::SizeType{ { size[0], size[1] } });
  s->SetSpacing(Image2::SpacingType(std::array<double, 2>{ v->GetSpacing()[0], v->GetSpacing()[1] }.data()));
  s->Allocate();
  const std::size_t plane = size[0] * size[1];
  std::copy_n(v->GetBufferPointer() + plane * z, plane, s->GetBufferPointer());
  return s;
}

std::vector<std::int32_t>
Labels(const float * p, std::size_t n)
{
  std::vector<std::int32_t> l(n);
  for (std::size_t i = 0; i < n; ++i)
    l[i] = std::int32_t(std::lround(p[i]));
  return l;
}

/** Loads image/label pairs as forest items: whole volumes (3D files), 2D images, or axial slices. */
void
LoadItems(const std::vector<std::string> &   images,
          const std::vector<std::string> &   labels,
          const SliceSpec &                  slices,
          const std::vector<std::string> &   bank,
          std::vector<ForestLabelledImage> & items,
          std::vector<std::string> &         names,
          int &                              dimension,
          const std::string &                stage,
          bool                               quiet,
          const ResolvedBackend &            filterBackend,
          const ReferencePoseOptions &       reference,
          bool                               training,
          nlohmann::json &                   poses)
{
  const bool  needsReference = ForestBankNeedsReference(bank);
  ProgressBar bar(stage, quiet);
  for (std::size_t i = 0; i < images.size(); ++i)
  {
    const unsigned dims = FileDimension(images[i], "--image");
    FileDimension(labels[i], "--label");
    const int d = slices.given || dims == 2 ? 2 : 3;
    if (dimension != 0 && d != dimension)
    {
      CANOPY_THROW("--image " << images[i] << ": " << d << "D, but earlier images are " << dimension << "D");
    }
    dimension = d;
    if (dims == 2)
    {
      auto im = Read2D(images[i], "--image");
      auto lab = Read2D(labels[i], "--label");
      if (im->GetLargestPossibleRegion() != lab->GetLargestPossibleRegion())
      {
        CANOPY_THROW("--label " << labels[i] << ": size differs from its image " << images[i]);
      }
      items.push_back({ MakeForestImage<2>(im, bank, 0, filterBackend),
                        Labels(lab->GetBufferPointer(), lab->GetBufferedRegion().GetNumberOfPixels()) });
      names.push_back(images[i]);
    }
    else
    {
      auto im = ReadVolume(images[i], "--image");
      auto lab = ReadVolume(labels[i], "--label");
      if (im->GetLargestPossibleRegion() != lab->GetLargestPossibleRegion())
      {
        CANOPY_THROW("--label " << labels[i] << ": size differs from its image " << images[i]);
      }
      // The reference pose: the label's on training volumes with --reference-label (the detector's
      // otherwise), detected on held-out ones (their labels are only for scoring).
      std::optional<ReferenceFrame> frame;
      if (needsReference && !slices.given)
      {
        const bool          fromLabel = training && reference.label >= 0;
        const StructurePose pose = fromLabel ? ReferencePoseFromLabels(lab, reference.label, "--label " + labels[i])
                                             : DetectedReferencePose(reference, images[i], im, filterBackend);
        frame = ReferenceFrameOf(pose);
        poses.push_back({ { "image", images[i] },
                          { "source", fromLabel ? "label" : "detected" },
                          { "center_mm", pose.centerMm },
                          { "size_mm", pose.sizeMm } });
      }
      if (!slices.given)
      {
        items.push_back({ MakeForestImage<3>(im, bank, 0, filterBackend, frame ? &*frame : nullptr),
                          Labels(lab->GetBufferPointer(), lab->GetBufferedRegion().GetNumberOfPixels()) });
        names.push_back(images[i]);
      }
      for (int z = slices.begin; slices.given && z < slices.end; z += slices.step)
      {
        auto l = Slice(lab, z, labels[i]);
        items.push_back({ MakeForestImage<2>(Slice(im, z, images[i]), bank, 0, filterBackend),
                          Labels(l->GetBufferPointer(), l->GetBufferedRegion().GetNumberOfPixels()) });
        names.push_back(images[i] + "#z" + std::to_string(z));
      }
    }
    bar.Update(double(i + 1) / images.size());
  }
  bar.Finish();
}

nlohmann::json
Summary(std::vector<double> values)
{
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }), values.end());
  if (values.empty())
    return nullptr;
  std::sort(values.begin(), values.end());
  double sum = 0.0;
  for (double v : values)
    sum += v;
  const std::size_t n = values.size();
  return { { "mean", sum / n },
           { "median", n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]) },
           { "worst", values.front() },
           { "n", n } };
}

struct TrainArguments
{
  std::vector<std::string> images, labels;
  std::string              dataset, out, report, device = "auto", channels = "intensity", sampling = "uniform",
                                    classWeights = "none", slices, testSlices, postprocess = "none", checkpoint;
  int              maxVolumes = 0, classes = 0, samplesPerImage = 2000, cv = 0, autoContext = 1, contextFolds = 4;
  double           testFraction = 0.0, boundaryShare = 0.0, focusShare = 0.0;
  int              boundaryBand = 3, focusBand = 1;
  std::uint64_t    splitSeed = 1;
  std::vector<int> gridDepth, gridFeatures;
  std::vector<std::string> contextChannels; // auto-context: channels derived from the class maps
  ForestTrainingOptions    options;
  ReferencePoseOptions     reference; // pose channels' reference pose per volume
  bool quiet = false, distributed = false, checkpointGiven = false, restart = false, focusUniform = false;
};

/** Pose channels and the --reference-* options agree (train-forest). */
void
CheckReferenceOptions(const TrainArguments & a, const std::vector<std::string> & bank, bool slices, bool heldOut)
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
CheckpointPath(const TrainArguments & a)
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

/** What determines the forest besides the training files and samples (the checkpoint's fingerprint):
 * not the device, threads, GPU memory limits or process count, which give the same forest. */
nlohmann::json
CheckpointArguments(const TrainArguments & a, int numClasses, int dimension)
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

/** --distributed: what is not distributed yet, refused before any process reads a volume. */
void
CheckDistributedTraining(const TrainArguments & a, std::size_t trainImages, int processes)
{
  if (a.cv > 0 || a.autoContext > 1)
  {
    CANOPY_THROW("--distributed trains one forest: --cv and --auto-context are not distributed yet");
  }
  if (std::size_t(processes) > trainImages)
  {
    CANOPY_THROW("--distributed: " << processes << " processes for " << trainImages
                                   << " training images; each process needs at least one (use mpirun -np "
                                   << trainImages << " or fewer)");
  }
}

void
RunTrain(TrainArguments & a)
{
  RunReport  report("train-forest");
  const auto start = std::chrono::steady_clock::now();
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
  const std::string checkpoint = CheckpointPath(a);
  CheckOutputPaths({ { "--out", a.out }, { "--report", a.report }, { "--checkpoint", checkpoint } }, inputs);
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
  const auto bank = ParseForestFilterBank(a.channels, "--channels");
  if (bank.empty())
  {
    CANOPY_THROW("--channels: give at least one channel (e.g. intensity)");
  }
  const SliceSpec slices = ParseSlices(a.slices, "--slices"), testSlices = ParseSlices(a.testSlices, "--test-slices");
  CheckReferenceOptions(a, bank, slices.given || testSlices.given, a.testFraction > 0.0);
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
  const auto cleanup = LabelCleanupOptions::Parse(a.postprocess, "--postprocess");
  a.options.balanceClasses = a.classWeights == "balanced";
  a.options.backend = BackendRequest::Parse(a.device); // training (GPU split search) and held-out prediction

  // Split of the pairs (seeded, as msd-experiment): the first share trains, the rest tests.
  std::vector<std::string> trainImages, trainLabels, testImages, testLabels;
  const auto               order = SeededPermutation(a.images.size(), a.splitSeed);
  const auto               trainCount =
    a.testFraction > 0.0 ? std::size_t(std::lround((1.0 - a.testFraction) * order.size())) : order.size();
  if (trainCount == 0 || (a.testFraction > 0.0 && trainCount == order.size()))
  {
    CANOPY_THROW("--test-fraction " << a.testFraction << " leaves no training or no test image of " << order.size());
  }
  for (std::size_t i = 0; i < order.size(); ++i)
  {
    (i < trainCount ? trainImages : testImages).push_back(a.images[order[i]]);
    (i < trainCount ? trainLabels : testLabels).push_back(a.labels[order[i]]);
  }
  if (testSlices.given && testImages.empty())
  {
    testImages = trainImages; // other slices of the same volumes
    testLabels = trainLabels;
  }
  // --distributed: each process reads its consecutive share of the training images (the samples then
  // concatenate, in rank order, to the one-process set); rank 0 alone reads and scores the test images.
  const std::size_t allTrainImages = trainImages.size();
  Collective &      processes = RunProcesses(a.distributed);
  const bool        root = processes.Rank() == 0;
  ShareRange        share{ 0, trainImages.size() };
  if (a.distributed)
  {
    CheckDistributedTraining(a, trainImages.size(), processes.Size());
    share = ContiguousShare(trainImages.size(), processes.Rank(), processes.Size());
    trainImages = { trainImages.begin() + share.begin, trainImages.begin() + share.end };
    trainLabels = { trainLabels.begin() + share.begin, trainLabels.begin() + share.end };
    if (!root)
    {
      testImages.clear();
      testLabels.clear();
      a.quiet = true; // one progress display: rank 0's
    }
  }
  std::unique_ptr<ForestCheckpointRun> checkpointRun; // rank 0 reads the checkpoint before the images
  if (!checkpoint.empty())
    checkpointRun = std::make_unique<ForestCheckpointRun>(processes, checkpoint, a.restart, a.quiet);
  // The filter bank on the training device; on the CPU for --distributed runs, whose processes pick
  // their GPUs by local rank only later.
  const ResolvedBackend filterBackend = a.distributed ? ResolvedBackend{} : ResolveBackend(a.options.backend);
  std::vector<ForestLabelledImage> train, test;
  nlohmann::json                   trainPoses = nlohmann::json::array(), testPoses = nlohmann::json::array();
  std::vector<std::string>         trainNames, testNames;
  int                              dimension = 0;
  const auto                       loadStart = std::chrono::steady_clock::now();
  OnEveryProcess(processes,
                 "loading the training images",
                 [&]
                 {
                   LoadItems(trainImages,
                             trainLabels,
                             slices,
                             bank,
                             train,
                             trainNames,
                             dimension,
                             "loading training images",
                             a.quiet,
                             filterBackend,
                             a.reference,
                             true,
                             trainPoses);
                 });
  const double loadSeconds = SecondsSince(loadStart);
  OnEveryProcess(processes,
                 "loading the test images", // rank 0's alone with --distributed
                 [&]
                 {
                   LoadItems(testImages,
                             testLabels,
                             testSlices.given ? testSlices : slices,
                             bank,
                             test,
                             testNames,
                             dimension,
                             "loading test images",
                             a.quiet,
                             filterBackend,
                             a.reference,
                             false,
                             testPoses);
                 });

  if (ForestBankNeedsReference(bank))
    report["referencePoses"] = { { "train", trainPoses }, { "test", testPoses } };
  int numClasses = a.classes;
  if (numClasses <= 0)
  {
    for (const auto & item : train)
      for (auto l : item.labels)
        numClasses = std::max(numClasses, l + 1);
    std::int64_t most = numClasses; // over every process's labels
    processes.MaxInPlace(&most, 1);
    numClasses = int(most);
  }
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
  std::vector<const ForestLabelledImage *> pointers;
  for (const auto & item : train)
    pointers.push_back(&item);
  ForestSamplingOptions sampling;
  sampling.samplesPerImage = a.samplesPerImage;
  sampling.balanced = a.sampling == "balanced";
  sampling.boundaryShare = a.boundaryShare;
  sampling.boundaryBand = a.boundaryBand;
  sampling.focusShare = a.focusShare;
  sampling.focusUniform = a.focusUniform;
  sampling.seed = a.options.seed;

  if (a.cv > 0)
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
    ProgressBar bar("cross-validation", a.quiet);
    const auto  results =
      CrossValidateForest(pointers, numClasses, sampling, grid, a.cv, a.splitSeed, [&](double f) { bar.Update(f); });
    bar.Finish();
    std::size_t best = 0;
    for (std::size_t g = 0; g < results.size(); ++g)
    {
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
    a.options = results[best].options;
    std::cout << "cv: best depth " << a.options.maxDepth << ", features " << a.options.featureCandidates << '\n';
  }

  // One forest, or an auto-context cascade (stage k reads the channels and stage k-1's class maps).
  ForestCascadeOptions cascadeOptions;
  cascadeOptions.stages = a.autoContext;
  cascadeOptions.folds = a.contextFolds;
  cascadeOptions.foldSeed = a.splitSeed;
  cascadeOptions.forest = a.options;
  cascadeOptions.sampling = sampling;
  cascadeOptions.focusBand = a.focusBand;
  cascadeOptions.contextChannels = a.contextChannels;
  cascadeOptions.prediction.backend = a.device;
  cascadeOptions.prediction.threads = a.options.threads;
  std::vector<const ForestLabelledImage *> testPointers;
  for (const auto & item : test)
    testPointers.push_back(&item);
  // One forest is a cascade of one stage (the same forest TrainForest gives for the seed); the
  // held-out images are scored per stage only for real cascades.
  const auto                            trainStart = std::chrono::steady_clock::now();
  std::vector<ForestCascadeStageReport> stageReports;
  ForestCascade                         cascade;
  nlohmann::json                        ranks; // per process, on rank 0 (--distributed)
  if (a.distributed)                           // one forest, each process holding its images' samples
  {
    ProgressBar             bar("training the forest (" + std::to_string(processes.Size()) + " processes)", a.quiet);
    const ForestTrainingSet set = MakeForestTrainingSet(pointers, numClasses, sampling, int(share.begin));
    ForestTrainingOptions   forest = a.options;
    // one GPU per process (by its rank on the machine), histograms summed through NCCL when built in
    const auto gpus = forest.backend.kind == BackendKind::CPU ? std::vector<DeviceInfo>{} : UsableCudaDevices();
    const int  localRank = MpiLocalRank(); // a collective call: on every rank
    if (!gpus.empty() && forest.backend.deviceIndex < 0)
      forest.backend.deviceIndex = gpus[localRank % int(gpus.size())].index;
    std::unique_ptr<NcclCollective> nccl;
    if (processes.AllTrue(!gpus.empty() && NcclReduction::Available()))
      OnEveryProcess(processes,
                     "starting NCCL",
                     [&] { nccl = std::make_unique<NcclCollective>(processes, forest.backend.deviceIndex); });
    forest.shards = nccl ? static_cast<Collective *>(nccl.get()) : &processes;
    if (checkpointRun)
      checkpointRun->Prepare(
        forest, CheckpointArguments(a, numClasses, dimension), TrainingDataFingerprint(trainImages, trainLabels, set));
    const std::int64_t  bytesBefore = forest.shards->BytesReduced(), reductionsBefore = forest.shards->Reductions();
    const auto          start = std::chrono::steady_clock::now();
    ForestTrainingStats trainStats;
    OrStopAllProcesses(processes, [&] { cascade.stages.push_back(TrainForest(set, forest, &trainStats)); });
    const double seconds = SecondsSince(start);
    bar.Finish();
    std::int64_t       samples = std::int64_t(set.samples.size());
    const std::int64_t mySamples = samples;
    processes.SumInPlace(&samples, 1);
    stageReports.assign(1, {});
    stageReports[0].trainSeconds = seconds;
    stageReports[0].samples = std::size_t(samples);
    ranks = GatherReports(processes,
                          { { "rank", processes.Rank() },
                            { "images", train.size() },
                            { "firstImage", share.begin },
                            { "samples", mySamples },
                            { "loadSeconds", loadSeconds },
                            { "trainSeconds", seconds },
                            { "bytesReduced", forest.shards->BytesReduced() - bytesBefore },
                            { "reductions", forest.shards->Reductions() - reductionsBefore },
                            { "gpu", trainStats.usedGpu },
                            { "nccl", nccl != nullptr } });
    if (!root)
      return; // rank 0 writes the model and the report
  }
  else if (checkpointRun) // one forest, resumed from and saved to the checkpoint tree by tree
  {
    ProgressBar             bar("training the forest", a.quiet);
    const ForestTrainingSet set = MakeForestTrainingSet(pointers, numClasses, sampling); // as the cascade's stage 1
    ForestTrainingOptions   forest = a.options;
    checkpointRun->Prepare(
      forest, CheckpointArguments(a, numClasses, dimension), TrainingDataFingerprint(trainImages, trainLabels, set));
    const auto save = forest.afterTree;
    forest.afterTree = [&](const ForestModel & trees)
    {
      save(trees);
      bar.Update(double(trees.NumberOfTrees()) / forest.numTrees);
    };
    const auto start = std::chrono::steady_clock::now();
    cascade.stages.push_back(TrainForest(set, forest));
    bar.Finish();
    stageReports.assign(1, {});
    stageReports[0].trainSeconds = SecondsSince(start);
    stageReports[0].samples = set.samples.size();
  }
  else
  {
    ProgressBar bar(a.autoContext > 1 ? "training the cascade" : "training the forest", a.quiet);
    cascadeOptions.progress = [&bar](const std::string &, double f) { bar.Update(f); };
    cascade = TrainForestCascade(pointers,
                                 numClasses,
                                 cascadeOptions,
                                 a.autoContext > 1 ? testPointers : std::vector<const ForestLabelledImage *>{},
                                 &stageReports);
    bar.Finish();
  }
  const std::size_t samples = stageReports.front().samples;
  if (!a.quiet)
    std::cout << "trained " << a.options.numTrees << " trees per stage on " << samples << " samples of "
              << allTrainImages << " images, " << numClasses << " classes, " << bank.size() << " channels"
              << (a.autoContext > 1 ? ", " + std::to_string(a.autoContext) + " auto-context stages" : "") << '\n';
  const double trainSeconds = SecondsSince(trainStart);
  cascade.filterBank = bank;
  if (ForestBankNeedsReference(bank))
  {
    const auto & r = a.reference;
    cascade.reference.structure = r.structure;
    cascade.reference.training = r.label > 0        ? "label " + std::to_string(r.label)
                                 : r.label == 0     ? "union of labels > 0"
                                 : !r.poses.empty() ? "detected poses (" + r.poses + ")"
                                                    : "detector " + r.detector;
  }
  ForestModel & model = cascade.stages.back();
  if (a.autoContext > 1)
  {
    WriteForestCascadeJson(cascade, a.out);
  }
  else
  {
    model.filterBank = bank;
    model.reference = cascade.reference;
    WriteForestModelJson(model, a.out);
  }
  for (std::size_t k = 0; a.autoContext > 1 && k < stageReports.size(); ++k)
  {
    nlohmann::json stage = { { "trainSeconds", stageReports[k].trainSeconds },
                             { "outOfFoldSeconds", stageReports[k].outOfFoldSeconds },
                             { "samples", stageReports[k].samples } };
    if (!stageReports[k].heldOutDice.empty())
    {
      stage["heldOutDice"] = stageReports[k].heldOutDice; // pooled over the held-out images
      stage["heldOutPixelAccuracy"] = stageReports[k].heldOutPixelAccuracy;
      if (!a.quiet)
      {
        std::cout << "auto-context stage " << k + 1 << ": pooled held-out Dice";
        for (int c = 1; c < numClasses; ++c)
          std::cout << " class " << c << " " << stageReports[k].heldOutDice[c];
        std::cout << '\n';
      }
    }
    report["autoContext"].push_back(stage);
  }

  report["images"] = { { "train", allTrainImages }, { "test", test.size() } };
  if (a.distributed)
  {
    std::int64_t bytes = 0;
    for (const auto & r : ranks)
      bytes += r["bytesReduced"].get<std::int64_t>();
    report["distributed"] = { { "processes", processes.Size() }, { "bytesReduced", bytes }, { "ranks", ranks } };
  }
  report["parameters"] = { { "trees", a.options.numTrees },
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
                           { "referenceStructure", a.reference.structure },
                           { "referenceTraining", cascade.reference.training },
                           { "seed", a.options.seed },
                           { "splitSeed", a.splitSeed },
                           { "classes", numClasses },
                           { "dimension", dimension },
                           { "autoContextStages", a.autoContext },
                           { "postprocess", cleanup.Describe() },
                           { "contextFolds", a.contextFolds } };
  report["samples"] = samples;
  report["trainSeconds"] = trainSeconds;
  report["modelDepth"] = model.Depth();

  if (!test.empty())
  {
    ForestLabelScores                all(numClasses);
    std::vector<std::vector<double>> dice(numClasses);
    ProgressBar                      bar("evaluating held-out images", a.quiet);
    ForestDensePredictionOptions     options;
    options.backend = a.device;
    std::string backendUsed;
    for (std::size_t i = 0; i < test.size(); ++i)
    {
      std::vector<std::int32_t> predicted(test[i].labels.size());
      if (cascade.stages.size() > 1)
        predicted = ArgMaxLabels(PredictForestCascade(cascade, test[i].image, options, &backendUsed), numClasses);
      else
        backendUsed = PredictForestDense(model, test[i].image, options, nullptr, predicted.data()).backendUsed;
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
      report["dice"][std::to_string(c)] = Summary(dice[c]);
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
  report["seconds"] = SecondsSince(start);
  if (!a.report.empty())
    report.Write(a.report);
  if (checkpointRun)
    checkpointRun->Finish(); // the model and the report are written
}

/** The segments of an argmax label map: classes 1..C-1, named from a comma-separated list or "class N". */
std::vector<SegmentDescription>
ForestSegments(int numClasses, const std::string & names)
{
  std::vector<std::string> given;
  std::stringstream        list(names);
  for (std::string name; std::getline(list, name, ',');)
    given.push_back(name);
  if (!names.empty() && given.size() != static_cast<std::size_t>(numClasses - 1))
  {
    CANOPY_THROW("--segment-names: '" << names << "' names " << given.size() << " classes; the model has "
                                      << numClasses - 1 << " besides the background (class 0)");
  }
  std::vector<SegmentDescription> segments;
  for (int c = 1; c < numClasses; ++c)
  {
    SegmentDescription segment;
    segment.labelValue = c;
    segment.name = given.empty() ? "class " + std::to_string(c) : given[c - 1];
    segment.color = SegmentColor(c - 1);
    segments.push_back(segment);
  }
  return segments;
}

template<unsigned D>
void
Predict(const PredictForestArguments & a, std::shared_ptr<const ForestCascade> cascade, RunReport & report)
{
  using Input = itk::VectorImage<float, D>;
  const auto                    input = ReadImageChecked<Input>(a.input, "--input");
  std::optional<ReferenceFrame> frame; // the input's reference pose, for pose channels
  if constexpr (D == 3)
  {
    if (!cascade->reference.Empty())
    {
      ReferencePoseOptions options;
      options.structure = cascade->reference.structure;
      options.poses = a.referencePoses;
      options.detector = a.referenceDetector;
      const auto scalar = a.referenceDetector.empty() ? FloatVolume::Pointer() : ReadVolume(a.input, "--input");
      const auto pose =
        DetectedReferencePose(options, a.input, scalar, ResolveBackend(BackendRequest::Parse(a.device)));
      frame = ReferenceFrameOf(pose);
      report["referencePose"] = { { "structure", options.structure },
                                  { "center_mm", pose.centerMm },
                                  { "axes", pose.axes },
                                  { "size_mm", pose.sizeMm } };
    }
  }
  ProgressBar bar("predict-forest", a.quiet);
  auto        run = [&](auto filter, auto setModel)
  {
    filter->SetInput(input);
    setModel(filter);
    if (frame)
      filter->SetReferenceFrame(*frame);
    filter->SetBackend(a.device);
    auto * raw = filter.GetPointer();
    filter->AddObserver(itk::ProgressEvent(),
                        [&bar, raw](const itk::EventObject &) { bar.Update(raw->GetProgress()); });
    filter->Update();
    bar.Finish();
    report["backend"] = filter->GetBackendUsed();
    using Output = typename std::remove_pointer_t<decltype(raw)>::OutputImageType;
    if constexpr (std::is_same_v<Output, itk::Image<std::int32_t, D>>)
    {
      if (a.mode == "argmax") // labels; post-processing of leaf indices would mean nothing
      {
        const auto size = filter->GetOutput()->GetLargestPossibleRegion().GetSize();
        CleanUpLabels(filter->GetOutput()->GetBufferPointer(),
                      int(size[0]),
                      int(size[1]),
                      D == 3 ? int(size[2]) : 1,
                      D,
                      LabelCleanupOptions::Parse(a.postprocess, "--postprocess"));
      }
    }
    const Output * output = filter->GetOutput();
    StagedOutputs  outputs; // the label map and its segmentation appear together or not at all
    if constexpr (std::is_same_v<Output, itk::Image<std::int32_t, 3>>)
    {
      if (a.mode == "argmax")
      {
        const auto segments = ForestSegments(cascade->NumberOfClasses(), a.segmentNames);
        outputs.Write(a.output,
                      [&](const std::string & t)
                      {
                        if (IsSegmentationPath(a.output))
                          WriteSegmentationFile(output, segments, t, "--output");
                        else
                          WriteVolume(output, t, "--output");
                      });
        if (!a.segmentation.empty())
          outputs.Write(a.segmentation,
                        [&](const std::string & t) { WriteSegmentationFile(output, segments, t, "--segmentation"); });
        outputs.Commit();
        return;
      }
    }
    outputs.Write(a.output, [&](const std::string & t) { WriteVolume(output, t, "--output"); });
    outputs.Commit();
  };
  if (cascade->stages.size() > 1)
  {
    const auto setCascade = [&cascade](auto & filter) { filter->SetCascade(cascade); };
    if (a.mode == "distribution")
      run(itk::ForestCascadeClassificationImageFilter<Input, itk::VectorImage<float, D>>::New(), setCascade);
    else
      run(itk::ForestCascadeClassificationImageFilter<Input, itk::Image<std::int32_t, D>>::New(), setCascade);
    return;
  }
  auto model = std::make_shared<ForestModel>(cascade->stages.front());
  model->filterBank = cascade->filterBank;
  model->reference = cascade->reference;
  const auto setModel = [&](auto & filter)
  {
    filter->SetModel(model);
    filter->SetMode(a.mode == "distribution" ? ForestOutputMode::Distribution
                    : a.mode == "leaves"     ? ForestOutputMode::ForestLeaves
                    : a.mode == "treeleaf"   ? ForestOutputMode::TreeLeaf
                                             : ForestOutputMode::ArgMax);
  };
  if (a.mode == "distribution")
    run(itk::RandomForestClassificationImageFilter<Input, itk::VectorImage<float, D>>::New(), setModel);
  else if (a.mode == "leaves")
    run(itk::RandomForestClassificationImageFilter<Input, itk::VectorImage<std::int32_t, D>>::New(), setModel);
  else
    run(itk::RandomForestClassificationImageFilter<Input, itk::Image<std::int32_t, D>>::New(), setModel);
}

/** A model with pose channels needs the input's reference pose, one source of it; a model without
 * them takes none. */
void
CheckPredictionReference(const PredictForestArguments & a, const ForestCascade & cascade)
{
  const bool given = !a.referencePoses.empty() || !a.referenceDetector.empty();
  if (cascade.reference.Empty())
  {
    if (given)
      CANOPY_THROW("--reference-*: --model " << a.model << " has no pose channel; it needs no reference pose");
    return;
  }
  if (!given)
    CANOPY_THROW("--model " << a.model << " reads pose channels in the frame of structure '"
                            << cascade.reference.structure << "' (trained on " << cascade.reference.training
                            << "): give --reference-poses (a poses.json of canopy detect) or --reference-detector "
                               "MODEL");
  if (!a.referencePoses.empty() && !a.referenceDetector.empty())
    CANOPY_THROW("--reference-poses and --reference-detector: give one source of the reference pose");
}

} // namespace

PredictForestOutcome
RunPredictForest(const PredictForestArguments & a)
{
  RunReport report("predict-forest");
  CheckOutputPaths({ { "--output", a.output }, { "--segmentation", a.segmentation }, { "--report", a.report } },
                   { { "--model", a.model }, { "--input", a.input } });
  RequireVolumeFormat(a.output, "--output");
  if (a.mode != "distribution" && a.mode != "argmax" && a.mode != "leaves" && a.mode != "treeleaf")
  {
    CANOPY_THROW("--mode: '" << a.mode << "' is not distribution, argmax, leaves or treeleaf");
  }
  if (!a.segmentation.empty() && !IsSegmentationPath(a.segmentation))
  {
    CANOPY_THROW("--segmentation " << a.segmentation << ": a segmentation file name ends in .seg.nrrd");
  }
  if ((!a.segmentation.empty() || IsSegmentationPath(a.output)) && a.mode != "argmax")
  {
    CANOPY_THROW("--mode " << a.mode << ": segmentations (.seg.nrrd) hold the labels of --mode argmax only");
  }
  BackendRequest::Parse(a.device);
  if (!std::filesystem::exists(a.model))
  {
    CANOPY_THROW("--model " << a.model << ": cannot open (no such file)");
  }
  auto      cascade = std::make_shared<const ForestCascade>(ReadForestOrCascadeJson(a.model));
  const int dims = int(FileDimension(a.input, "--input"));
  if (dims != cascade->Dimension())
  {
    CANOPY_THROW("--input " << a.input << ": a " << dims << "D image, but the model " << a.model << " is "
                            << cascade->Dimension() << "D");
  }
  const int components = FileComponents(a.input);
  const int channels = components * (cascade->filterBank.empty() ? 1 : int(cascade->filterBank.size()));
  if (channels != cascade->ImageChannels())
  {
    CANOPY_THROW("--model " << a.model << " reads " << cascade->ImageChannels() << " channels, but --input " << a.input
                            << " has " << components << " component(s), which give " << channels);
  }
  CheckPredictionReference(a, *cascade);
  if (LabelCleanupOptions::Parse(a.postprocess, "--postprocess").Any() && a.mode != "argmax")
  {
    CANOPY_THROW("--postprocess " << a.postprocess << ": applies to labels (--mode argmax), not to --mode " << a.mode);
  }
  if (cascade->stages.size() > 1 && a.mode != "distribution" && a.mode != "argmax")
  {
    CANOPY_THROW("--mode " << a.mode << ": " << a.model << " is an auto-context cascade of " << cascade->stages.size()
                           << " stages, which gives distribution or argmax");
  }
  if (a.mode == "argmax")
  {
    (void)ForestSegments(cascade->NumberOfClasses(),
                         a.segmentNames); // a bad --segment-names fails now, not after the prediction
  }
  if (dims == 2 && (!a.segmentation.empty() || IsSegmentationPath(a.output)))
  {
    CANOPY_THROW("--model " << a.model << ": a 2D model; segmentations (.seg.nrrd) are 3D");
  }
  if (dims == 2)
    Predict<2>(a, cascade, report);
  else
    Predict<3>(a, cascade, report);
  report["stages"] = cascade->stages.size();
  report["model"] = a.model;
  report["mode"] = a.mode;
  if (!a.report.empty())
    report.Write(a.report);
  PredictForestOutcome outcome;
  outcome.backend = report["backend"].get<std::string>();
  outcome.classes = cascade->NumberOfClasses();
  return outcome;
}

void
RegisterForestCommands(CLI::App & app)
{
  auto   t = std::make_shared<TrainArguments>();
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
  c->add_option("--out", t->out, "Model file (JSON)")->required();
  c->add_option("--trees", o.numTrees, "Trees")->capture_default_str()->check(CLI::Range(1, 64));
  c->add_option("--depth", o.maxDepth, "Maximum depth")->capture_default_str()->check(CLI::Range(0, 30));
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
    [t, checkpoint]
    {
      t->checkpointGiven = checkpoint->count() > 0;
      RunTrain(*t);
    });

  auto   p = std::make_shared<PredictForestArguments>();
  auto   batch = std::make_shared<std::array<std::string, 3>>(); // --inputs, --output-dir, --output-suffix
  auto   distributed = std::make_shared<bool>(false);
  auto * q =
    app.add_subcommand("predict-forest", "Label an image or volume (or a list of them) with a decision forest");
  q->add_option("--model", p->model, "Model file from train-forest")->required();
  auto * input = q->add_option("--input", p->input, "Image or volume (scalar, or one channel per component)");
  auto * output = q->add_option("--output", p->output, "Output image");
  auto * inputs = q->add_option(
    "--inputs", (*batch)[0], "Batch: a dataset.json (its training and test images) or a folder of volumes");
  auto * outputDir = q->add_option("--output-dir", (*batch)[1], "Batch: the outputs' folder (NAME + --output-suffix)");
  (*batch)[2] = ".nii.gz";
  q->add_option("--output-suffix", (*batch)[2], "Batch: appended to each input's name without its extension")
    ->capture_default_str();
  q->add_flag(
    "--distributed", *distributed, "Batch: spread the volumes over the processes of an MPI run (mpirun -np N)");
  input->excludes(inputs);
  output->excludes(outputDir);
  inputs->needs(outputDir);
  q->add_option("--mode", p->mode, "distribution, argmax, leaves or treeleaf")->capture_default_str();
  q->add_option("--segmentation",
                p->segmentation,
                "argmax: also write the labels as a 3D Slicer segmentation (.seg.nrrd, one segment per class > 0); "
                "--output may be one too");
  q->add_option(
    "--segment-names", p->segmentNames, "Segment names of classes 1, 2, ... (comma-separated; default: class N)");
  q->add_option("--device", p->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  q->add_option("--postprocess",
                p->postprocess,
                "argmax labels: none, or largest (largest component per class), fill (holes per class), full "
                "(26-connectivity), comma-separated")
    ->capture_default_str();
  q->add_option("--reference-poses",
                p->referencePoses,
                "Models with pose channels: the input's poses.json (canopy detect), or in a batch their folder "
                "(NAME.poses.json)");
  q->add_option("--reference-detector",
                p->referenceDetector,
                "Models with pose channels: a pose detector run on each input for the model's reference structure");
  q->add_option("--report", p->report, "Write the JSON report here");
  q->add_flag("--quiet", p->quiet, "No progress bars");
  q->callback(
    [p, batch, distributed]
    {
      if (!(*batch)[0].empty())
        return RunPredictForestBatch(*p, (*batch)[0], (*batch)[1], (*batch)[2], *distributed);
      if (p->input.empty() || p->output.empty())
        CANOPY_THROW("predict-forest: give --input and --output, or --inputs and --output-dir");
      if (*distributed)
        CANOPY_THROW("--distributed: spreads a batch (--inputs) over processes; one --input runs on one");
      (void)RunPredictForest(*p);
    });
}
} // namespace canopy::app
