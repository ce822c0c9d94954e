// canopy predict-forest: labels, class probabilities or leaf indices of a decision forest or an
// auto-context cascade (train-forest) on an image's or volume's grid; batches of volumes in
// CommandForestBatch.cxx.
#include "canopy/AtomicFile.h"
#include "canopy/Errors.h"
#include "canopy/IntensityNormalization.h"
#include "canopyCheckedImageReader.h"
#include "canopyCommands.h"
#include "canopyForestCascade.h"
#include "canopyForestItems.h"
#include "canopyForestLabels.h"
#include "canopyImageIO.h"
#include "canopyLabelCleanup.h"
#include "canopyOptionChecks.h"
#include "canopyOutputPaths.h"
#include "canopyProgress.h"
#include "canopyReferencePose.h"
#include "canopyRuns.h"
#include "canopySegmentationFile.h"
#include "itkForestCascadeClassificationImageFilter.h"
#include "itkRandomForestClassificationImageFilter.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <type_traits>

namespace canopy::app
{
namespace
{
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

/** The labels of a class distribution at a foreground threshold (canopyForestLabels.h), on its grid. */
template<unsigned D>
typename itk::Image<std::int32_t, D>::Pointer
LabelsAtThreshold(const itk::VectorImage<float, D> * distribution, double threshold)
{
  auto labels = itk::Image<std::int32_t, D>::New();
  labels->CopyInformation(distribution);
  labels->SetRegions(distribution->GetLargestPossibleRegion());
  labels->Allocate();
  LabelsAtForegroundThreshold(distribution->GetBufferPointer(),
                              distribution->GetLargestPossibleRegion().GetNumberOfPixels(),
                              int(distribution->GetNumberOfComponentsPerPixel()),
                              threshold,
                              labels->GetBufferPointer());
  return labels;
}

template<unsigned D>
void
Predict(const PredictForestArguments & a, std::shared_ptr<const ForestCascade> cascade, RunReport & report)
{
  using Input = itk::VectorImage<float, D>;
  auto &     seconds = report["seconds"]; // where the time went, step by step
  auto       start = std::chrono::steady_clock::now();
  const auto input = ReadImageChecked<Input>(a.input, "--input");
  seconds["readInput"] = SecondsSince(start);
  std::optional<ReferenceFrame> frame; // the input's reference pose, for pose channels
  if constexpr (D == 3)
  {
    if (!cascade->reference.Empty())
    {
      ReferencePoseOptions options;
      options.structure = cascade->reference.structure;
      options.poses = a.referencePoses;
      options.detector = a.referenceDetector;
      start = std::chrono::steady_clock::now();
      const auto scalar = a.referenceDetector.empty() ? FloatVolume::Pointer() : ReadVolume(a.input, "--input");
      const auto pose =
        DetectedReferencePose(options, a.input, scalar, ResolveBackend(BackendRequest::Parse(a.device)));
      frame = ReferenceFrameOf(pose);
      seconds["referencePose"] = SecondsSince(start);
      report["referencePose"] = { { "structure", options.structure },
                                  { "center_mm", pose.centerMm },
                                  { "axes", pose.axes },
                                  { "size_mm", pose.sizeMm } };
    }
  }
  using LabelImage = itk::Image<std::int32_t, D>;
  // Labels (argmax or thresholded): post-processed, then written with their segmentation, if asked for.
  const auto writeLabels = [&](LabelImage * labels)
  {
    const auto size = labels->GetLargestPossibleRegion().GetSize();
    start = std::chrono::steady_clock::now();
    CleanUpLabels(labels->GetBufferPointer(),
                  int(size[0]),
                  int(size[1]),
                  D == 3 ? int(size[2]) : 1,
                  D,
                  LabelCleanupOptions::Parse(a.postprocess, "--postprocess"));
    seconds["postprocess"] = SecondsSince(start);
    start = std::chrono::steady_clock::now();
    StagedOutputs outputs; // the label map and its segmentation appear together or not at all
    if constexpr (D == 3)
    {
      const auto segments = ForestSegments(cascade->NumberOfClasses(), a.segmentNames);
      outputs.Write(a.output,
                    [&](const std::string & t)
                    {
                      if (IsSegmentationPath(a.output))
                        WriteSegmentationFile(labels, segments, t, "--output");
                      else
                        WriteVolume(labels, t, "--output");
                    });
      if (!a.segmentation.empty())
        outputs.Write(a.segmentation,
                      [&](const std::string & t) { WriteSegmentationFile(labels, segments, t, "--segmentation"); });
    }
    else
      outputs.Write(a.output, [&](const std::string & t) { WriteVolume(labels, t, "--output"); });
    outputs.Commit();
    seconds["write"] = SecondsSince(start);
  };
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
    start = std::chrono::steady_clock::now();
    filter->Update();
    bar.Finish();
    seconds["predict"] = SecondsSince(start);
    const canopy::ForestPredictionTimes & times = filter->GetPredictionTimes();
    seconds["channels"] = times.channelsSeconds;
    seconds["forest"] = times.forestSeconds;
    if (!times.contextSeconds.empty())
      seconds["context"] = times.contextSeconds;
    report["backend"] = filter->GetBackendUsed();
    if (const auto & ranges = filter->GetNormalizationRanges(); !ranges.empty() && cascade->normalization)
    {
      // The model's mapping and the intensities it took to 0 and 1 in this scan, per component.
      nlohmann::json & normalization = report["normalization"];
      ToJson(*cascade->normalization, normalization);
      for (const auto & range : ranges)
        normalization["mappedToZeroAndOne"].push_back({ range[0], range[1] });
    }
    using Output = typename std::remove_pointer_t<decltype(raw)>::OutputImageType;
    if constexpr (std::is_same_v<Output, itk::VectorImage<float, D>>)
    {
      if (a.mode == "argmax") // --threshold: the labels from the class distribution
      {
        start = std::chrono::steady_clock::now();
        const auto labels = LabelsAtThreshold(filter->GetOutput(), *a.foregroundThreshold);
        seconds["threshold"] = SecondsSince(start);
        return writeLabels(labels);
      }
    }
    if constexpr (std::is_same_v<Output, LabelImage>)
    {
      if (a.mode == "argmax")
        return writeLabels(filter->GetOutput());
    }
    start = std::chrono::steady_clock::now();
    StagedOutputs outputs;
    outputs.Write(a.output, [&](const std::string & t) { WriteVolume(filter->GetOutput(), t, "--output"); });
    outputs.Commit();
    seconds["write"] = SecondsSince(start);
  };
  // --threshold needs the class distribution; the labels are made from it afterwards.
  const bool distribution = a.mode == "distribution" || (a.mode == "argmax" && a.foregroundThreshold);
  if (cascade->stages.size() > 1)
  {
    const auto setCascade = [&cascade](auto & filter) { filter->SetCascade(cascade); };
    if (distribution)
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
    filter->SetMode(distribution           ? ForestOutputMode::Distribution
                    : a.mode == "leaves"   ? ForestOutputMode::ForestLeaves
                    : a.mode == "treeleaf" ? ForestOutputMode::TreeLeaf
                                           : ForestOutputMode::ArgMax);
  };
  if (distribution)
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
  const auto readStart = std::chrono::steady_clock::now();
  auto       cascade = std::make_shared<const ForestCascade>(ReadForestOrCascadeJson(a.model));
  report["seconds"]["readModel"] = SecondsSince(readStart);
  const int dims = int(ImageFileDimension(a.input, "--input"));
  if (dims != cascade->Dimension())
  {
    CANOPY_THROW("--input " << a.input << ": a " << dims << "D image, but the model " << a.model << " is "
                            << cascade->Dimension() << "D");
  }
  const int components = ImageFileComponents(a.input);
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
  if (a.foregroundThreshold && a.mode != "argmax")
  {
    CANOPY_THROW("--threshold " << *a.foregroundThreshold << ": applies to labels (--mode argmax), not to --mode "
                                << a.mode);
  }
  if (a.foregroundThreshold && !(*a.foregroundThreshold > 0.0 && *a.foregroundThreshold < 1.0))
  {
    CANOPY_THROW("--threshold " << *a.foregroundThreshold
                                << ": the foreground probability threshold must lie "
                                   "strictly between 0 and 1");
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
  if (a.foregroundThreshold)
    report["foregroundThreshold"] = *a.foregroundThreshold;
  if (!a.report.empty())
    report.Write(a.report);
  PredictForestOutcome outcome;
  outcome.backend = report["backend"].get<std::string>();
  outcome.classes = cascade->NumberOfClasses();
  return outcome;
}

void
RegisterPredictForestCommand(CLI::App & app)
{
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
  q->add_option("--threshold",
                p->foregroundThreshold,
                "argmax labels: background unless 1 - p(background) reaches this (0 < T < 1; chosen on held-out "
                "data, e.g. with canopy evaluate --thresholds); default: the most probable class");
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
