// train-pbt --labels / --auto-context and segment for multi-class / auto-context PBT models.
#include "canopy/AtomicFile.h"
#include "canopy/Errors.h"
#include "canopyImageIO.h"
#include "canopyOutputPaths.h"
#include "canopyPBTClassesRuns.h"
#include "canopyProgress.h"
#include "canopySegmentationFile.h"
#include "canopySurfaceMetrics.h"

#include <filesystem>
#include <iostream>

namespace canopy::app
{

void
RunTrainPBTClasses(const TrainClassesArguments & a)
{
  RunReport                        report("train-pbt");
  std::vector<ClassLabelledVolume> volumes;
  {
    ProgressBar bar("reading", a.quiet);
    for (std::size_t i = 0; i < a.images.size(); ++i)
    {
      auto image = ReadVolume(a.images[i], "--image");
      auto labels = RoundToLabels(ReadVolume(a.labels[i], "--label"), a.labels[i]);
      if (!SameGrid(image, labels))
      {
        CANOPY_THROW("--label " << a.labels[i] << ": its grid (size, spacing, origin, direction) differs from --image "
                                << a.images[i]);
      }
      auto mask = MaskVolume::New(); // class values; any other value is background
      mask->CopyInformation(labels);
      mask->SetRegions(labels->GetLargestPossibleRegion());
      mask->Allocate();
      const auto n = labels->GetLargestPossibleRegion().GetNumberOfPixels();
      for (itk::SizeValueType j = 0; j < n; ++j)
      {
        const int v = labels->GetBufferPointer()[j];
        mask->GetBufferPointer()[j] = static_cast<unsigned char>(v >= 1 && v <= 255 ? v : 0);
      }
      volumes.push_back({ image, mask, std::filesystem::path(a.images[i]).filename().string() });
      bar.Update(double(i + 1) / a.images.size());
    }
  }
  std::vector<PBTCascadeStageReport> stages;
  PBTClassModel                      model;
  const auto                         start = std::chrono::steady_clock::now();
  {
    ProgressBar bar("training", a.quiet);
    model = TrainPBTCascade(volumes, a.options, &stages, [&bar](double f, const std::string & s) { bar.Update(f, s); });
  }
  const double seconds = SecondsSince(start);
  model.training = a.parameters;
  model.provenance = { { "images", a.images },
                       { "labels", a.labels },
                       { "device", a.options.volume.backend.Describe() },
                       { "canopyVersion", report["canopyVersion"] },
                       { "created", report["started"] } };
  SavePBTClassModel(model, a.out);
  nlohmann::json stageReport = nlohmann::json::array();
  std::cout << "trained " << model.NumberOfClasses() << " class(es) x " << model.NumberOfStages() << " stage(s) on "
            << volumes.size() << " volume(s) in " << seconds << " s on " << a.options.volume.backend.Describe() << '\n';
  for (std::size_t k = 0; k < stages.size(); ++k)
  {
    nlohmann::json classes = nlohmann::json::array();
    for (std::size_t c = 0; c < stages[k].classes.size(); ++c)
    {
      const auto & r = stages[k].classes[c];
      classes.push_back({ { "label", model.labels[c] },
                          { "samples", r.samples },
                          { "nodes", r.nodes },
                          { "featuresUsed", r.featuresUsed },
                          { "trainingAccuracy", r.trainingAccuracy },
                          { "responseSeconds", r.responseSeconds },
                          { "treeSeconds", r.trainSeconds } });
    }
    stageReport.push_back({ { "trainSeconds", stages[k].trainSeconds },
                            { "outOfFoldSeconds", stages[k].outOfFoldSeconds },
                            { "classes", classes } });
    std::cout << "  stage " << k + 1 << ": " << stages[k].trainSeconds << " s"
              << (k + 1 < stages.size() ? ", out-of-fold maps " + std::to_string(stages[k].outOfFoldSeconds) + " s"
                                        : "")
              << '\n';
  }
  std::cout << "  model: " << a.out << '\n';
  if (!a.report.empty())
  {
    report["parameters"] = a.parameters;
    report["device"] = a.options.volume.backend.Describe();
    report["output"] = a.out;
    report["stages"] = stageReport;
    report["timings"] = { { "trainSeconds", seconds } };
    report.Write(a.report);
  }
}

SegmentOutcome
RunSegmentClasses(const SegmentArguments & a, const PBTClassModel & model)
{
  RunReport report("segment");
  if (!a.mesh.empty() || !a.segmentation.empty() || !a.probability.empty() || !a.snapshot.empty() ||
      IsSegmentationPath(a.output))
  {
    CANOPY_THROW("--model " << a.model << ": holds " << model.NumberOfClasses() << " classes and "
                            << model.NumberOfStages()
                            << " stage(s); segment writes its label map to --output (a volume) only, not "
                               "--mesh, --segmentation, --probability or --snapshot (--class-probabilities writes "
                               "every class's map)");
  }
  const auto backend = ResolveBackend(BackendRequest::Parse(a.device));
  const auto image = ReadVolume(a.input, "--input");
  CheckWorkingGrid(image, model.workingSpacing, a.model);
  PBTEvaluationOptions options;
  options.probabilistic = !a.nonProbabilistic;
  auto                              start = std::chrono::steady_clock::now();
  std::vector<FloatVolume::Pointer> posteriors;
  {
    ProgressBar bar("classifying", a.quiet);
    posteriors = ClassifyVolumeClasses(image, model, backend, options, 0, [&bar](double f) { bar.Update(f); });
  }
  const double classifySeconds = SecondsSince(start);
  start = std::chrono::steady_clock::now();
  // Per-class graph cut only when asked: the model recommends no lambda for several classes.
  const bool   cut = a.lambdaGiven && a.lambda > 0.0;
  const auto   labels = cut ? JointLabelsWithGraphCut(posteriors, model.labels, a.lambda, int(a.neighborhood))
                            : JointLabels(posteriors, model.labels);
  const double decideSeconds = SecondsSince(start);
  std::int64_t labelled = 0;
  const auto   n = labels->GetLargestPossibleRegion().GetNumberOfPixels();
  for (itk::SizeValueType i = 0; i < n; ++i)
    labelled += labels->GetBufferPointer()[i] != 0;
  StagedOutputs outputs;
  outputs.Write(a.output, [&](const std::string & t) { WriteVolume(labels.GetPointer(), t, "--output"); });
  if (!a.classProbabilities.empty()) // the posteriors the joint decision read: its argmax is the joint label
  {
    const auto map = ClassProbabilityMap(posteriors, model.labels);
    outputs.Write(a.classProbabilities,
                  [&](const std::string & t) { WriteVolume(map.GetPointer(), t, "--class-probabilities"); });
  }
  if (!a.report.empty())
  {
    report["device"] = backend.Describe();
    report["parameters"] = { { "model", a.model },
                             { "input", a.input },
                             { "classes", model.labels },
                             { "stages", model.NumberOfStages() },
                             { "lambda", cut ? a.lambda : 0.0 },
                             { "neighborhood", a.neighborhood } };
    report["outputs"] = { { "labels", a.output }, { "classProbabilities", a.classProbabilities } };
    report["timings"] = { { "classifySeconds", classifySeconds }, { "decideSeconds", decideSeconds } };
    outputs.Write(a.report, [&](const std::string & t) { report.Write(t); });
  }
  outputs.Commit();
  std::cout << "segmented " << a.input << " on " << backend.Describe() << " with " << model.NumberOfClasses()
            << " classes x " << model.NumberOfStages() << " stage(s): classification " << classifySeconds << " s, "
            << (cut ? "graph cut per class (lambda " + std::to_string(a.lambda) + " mm) " : "joint decision ")
            << decideSeconds << " s\n  labels: " << a.output << " (" << labelled << " voxels)\n";
  if (!a.classProbabilities.empty())
    std::cout << "  class probabilities: " << a.classProbabilities << " (components 0.."
              << *std::max_element(model.labels.begin(), model.labels.end()) << ")\n";
  SegmentOutcome outcome;
  outcome.device = backend.Describe();
  outcome.lambda = cut ? a.lambda : 0.0;
  outcome.lambdaSource = cut ? "--lambda" : "none (joint decision)";
  outcome.neighborhood = a.neighborhood;
  outcome.labelledVoxels = labelled;
  const auto spacing = labels->GetSpacing();
  outcome.labelledVolumeMm3 = double(labelled) * spacing[0] * spacing[1] * spacing[2];
  return outcome;
}

} // namespace canopy::app
