// canopy scribble-segment: segments a volume from sparse labels (scribbles) with a voxel classifier
// learnt online (Modules/ScribbleSegmentation); --model-in/--model-out carry the classifier from one
// round of scribbles to the next, so a round learns only its new strokes.
#include "canopy/AtomicFile.h"
#include "canopy/Errors.h"
#include "canopyCommands.h"
#include "canopyForestFilterBank.h"
#include "canopyImageGrid.h"
#include "canopyImageIO.h"
#include "canopyProgress.h"
#include "canopyScribbleRun.h"
#include "itkScribbleSegmentationImageFilter.h"

#include <chrono>
#include <cmath>
#include <iostream>

namespace canopy::app
{
namespace
{
using canopy::ScribbleClassifier;

/** The scribbles as labels 0-255 (0 = unlabelled); anything else is an error naming --scribbles. */
MaskVolume::Pointer
ReadScribbles(const std::string & path)
{
  const auto volume = ReadVolume(path, "--scribbles");
  auto       labels = MaskVolume::New();
  labels->CopyInformation(volume);
  labels->SetRegions(volume->GetLargestPossibleRegion());
  labels->Allocate();
  const auto n = volume->GetLargestPossibleRegion().GetNumberOfPixels();
  for (itk::SizeValueType i = 0; i < n; ++i)
  {
    const float v = volume->GetBufferPointer()[i];
    if (!(v >= 0.0f && v <= 255.0f && v == std::floor(v)))
      CANOPY_THROW("--scribbles " << path << ": voxel " << i << " holds " << v
                                  << "; scribbles are labels 0 (unlabelled) to 255");
    labels->GetBufferPointer()[i] = static_cast<unsigned char>(v);
  }
  return labels;
}

/** The label values present (sorted), as "1, 2". */
std::string
DescribeLabels(const MaskVolume * scribbles, std::size_t & count)
{
  bool       present[256] = {};
  const auto n = scribbles->GetLargestPossibleRegion().GetNumberOfPixels();
  for (itk::SizeValueType i = 0; i < n; ++i)
    present[scribbles->GetBufferPointer()[i]] = true;
  std::string text;
  count = 0;
  for (int v = 1; v < 256; ++v)
    if (present[v])
    {
      text += (count++ ? ", " : "") + std::to_string(v);
    }
  return text;
}

} // namespace

ScribbleOutcome
RunScribbleSegment(ScribbleArguments & a)
{
  RunReport  report("scribble-segment");
  const auto start = std::chrono::steady_clock::now();
  RequireVolumeFormat(a.output, "--output");
  RequireVolumeFormat(a.labelsOut, "--labels-out");
  if (!a.bank.empty())
    a.options.bank = ParseForestFilterBank(a.bank, "--bank");
  std::shared_ptr<ScribbleClassifier> classifier;
  if (!a.modelIn.empty())
    classifier = std::make_shared<ScribbleClassifier>(
      streaming::LoadStreamingModel(a.modelIn), a.options, "--model-in " + a.modelIn);
  const auto image = ReadVolume(a.image, "--image");
  const auto scribbles = ReadScribbles(a.scribbles);
  ReportSlicerProgress(0.1);
  RequireSameGrid(image, scribbles, "scribble-segment", "--image " + a.image, "--scribbles " + a.scribbles);
  std::size_t       labelCount = 0;
  const std::string labels = DescribeLabels(scribbles, labelCount);
  if (!classifier && labelCount < 2)
    CANOPY_THROW("--scribbles " << a.scribbles << ": " << labelCount << " label value(s) (" << labels
                                << "); at least 2 are needed to start a classifier (0 is unlabelled)");

  using Filter = itk::ScribbleSegmentationImageFilter<FloatVolume, MaskVolume>;
  auto filter = Filter::New();
  filter->SetInput(image);
  filter->SetScribbles(scribbles);
  filter->SetOptions(a.options);
  filter->SetForegroundLabel(a.foregroundLabel);
  if (classifier)
    filter->SetClassifier(classifier);
  filter->Update();
  classifier = filter->GetClassifier();
  ReportSlicerProgress(0.9);

  StagedOutputs outputs; // the outputs appear together or not at all
  outputs.Write(a.output, [&](const std::string & t) { WriteVolume(filter->GetOutput(), t, "--output"); });
  if (!a.labelsOut.empty())
    outputs.Write(a.labelsOut,
                  [&](const std::string & t) { WriteVolume(filter->GetLabelOutput(), t, "--labels-out"); });
  if (!a.modelOut.empty())
    outputs.Write(a.modelOut, [&](const std::string & t) { streaming::SaveStreamingModel(classifier->Model(), t); });
  outputs.Commit();

  report["image"] = a.image;
  report["scribbles"] = a.scribbles;
  report["labels"] = classifier->LabelValues();
  report["bank"] = classifier->Bank();
  report["voxels_learnt"] = filter->GetNumberOfVoxelsLearntLastUpdate();
  report["instances_learnt"] = classifier->InstancesLearnt();
  report["seconds"] = SecondsSince(start);
  if (!a.report.empty())
    report.Write(a.report);
  if (!a.quiet)
    std::cout << "learnt " << filter->GetNumberOfVoxelsLearntLastUpdate() << " labelled voxels ("
              << classifier->InstancesLearnt() << " instances in all), labels";
  for (int v : classifier->LabelValues())
    if (!a.quiet)
      std::cout << ' ' << v;
  if (!a.quiet)
    std::cout << '\n';
  return { classifier->LabelValues(),
           static_cast<std::int64_t>(filter->GetNumberOfVoxelsLearntLastUpdate()),
           static_cast<std::int64_t>(classifier->InstancesLearnt()) };
}

void
RegisterScribbleSegmentCommand(CLI::App & app)
{
  auto   a = std::make_shared<ScribbleArguments>();
  auto & o = a->options;
  auto * c = app.add_subcommand(
    "scribble-segment", "Segment a volume from scribbles (sparse labels) with a voxel classifier learnt online");
  c->add_option("--image", a->image, "Volume to segment")->required();
  c->add_option("--scribbles", a->scribbles, "Label map on the image's grid: 0 unlabelled, 1-255 a label")->required();
  c->add_option("--output", a->output, "Probability of the foreground label (float volume)")->required();
  c->add_option("--labels-out", a->labelsOut, "The most probable label at every voxel");
  c->add_option("--foreground-label", a->foregroundLabel, "Label whose probability --output holds (0: the largest)")
    ->capture_default_str()
    ->check(CLI::Range(0, 255));
  c->add_option("--model-in", a->modelIn, "Continue from a saved classifier (its bank and labels)");
  c->add_option("--model-out", a->modelOut, "Save the classifier (a streaming forest model file)");
  c->add_option(
    "--bank", a->bank, "Filter bank of a new classifier (default intensity,gaussian:1,gaussian:2,gradient:1,log:1)");
  c->add_option("--trees", o.trees, "Trees of a new classifier")->capture_default_str()->check(CLI::Range(1, 10000));
  c->add_option("--grace-period", o.gracePeriod, "Weight a leaf sees between split attempts (new classifier)")
    ->capture_default_str()
    ->check(CLI::Range(1, 1000000));
  c->add_option("--passes", o.passes, "Times each newly labelled voxel is streamed")
    ->capture_default_str()
    ->check(CLI::Range(1, 100));
  c->add_option("--seed", o.seed, "Seed of a new classifier")->capture_default_str();
  c->add_option("--threads", o.threads, "CPU threads (0: all)")->capture_default_str()->check(CLI::Range(0, 4096));
  c->add_option("--report", a->report, "Write the JSON report here");
  c->add_flag("--quiet", a->quiet, "No summary");
  c->callback([a] { (void)RunScribbleSegment(*a); });
}
} // namespace canopy::app
