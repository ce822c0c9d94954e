// canopy msd-experiment: train one-vs-rest PBTs on a seeded split of an MSD dataset, segment the
// held-out subjects and report Dice per class (mean, median, worst) with timings.
#include "canopy/Errors.h"
#include "canopyCommands.h"
#include "canopyDataset.h"
#include "canopyImageIO.h"
#include "canopyOptionChecks.h"
#include "canopyOutputPaths.h"
#include "canopyOverlapMetrics.h"
#include "canopyPBTCascade.h"
#include "canopyPBTClassification.h"
#include "canopyPBTVolumeTraining.h"
#include "canopyProgress.h"
#include "canopySurfaceMetrics.h"
#include "canopyValueSummary.h"
#include "itkGraphCutRegularizationImageFilter.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>

namespace canopy::app
{
namespace
{

struct ExperimentArguments
{
  std::string              dataset, out, device = "auto", report;
  std::vector<int>         classes{ 1, 2 };
  double                   trainFraction = 0.8;
  double                   lambda = 0.3;
  int                      maxSubjects = 0;
  bool                     multiClass = false;                // one model of all classes, decided jointly
  int                      autoContext = 1, contextFolds = 4; // auto-context stages (implies multiClass)
  std::uint64_t            splitSeed = 1;
  std::vector<double>      spacing{ 1.0 }, boxMm{ 36.0 };
  PBTVolumeTrainingOptions options;
  bool                     quiet = false;
};

void
RunExperiment(ExperimentArguments & a)
{
  RunReport report("msd-experiment");
  for (const auto * option : { &a.spacing, &a.boxMm })
  {
    if (option->size() != 1 && option->size() != 3)
      CANOPY_THROW((option == &a.spacing ? "--spacing" : "--box-mm")
                   << ": give one value or three (x y z), got " << option->size());
  }
  CheckOutputFolder({ "--out", a.out });
  CheckOutputPaths({ { "--report", a.report } }, { { "--dataset", a.dataset } });
  std::vector<std::string> images, labels;
  ReadDataset(a.dataset, 0, images, labels);
  auto order = SeededPermutation(images.size(), a.splitSeed);
  if (a.maxSubjects > 0 && order.size() > static_cast<std::size_t>(a.maxSubjects))
    order.resize(a.maxSubjects);
  const auto trainCount = static_cast<std::size_t>(std::lround(a.trainFraction * order.size()));
  if (trainCount == 0 || trainCount >= order.size())
  {
    CANOPY_THROW("--train-fraction " << a.trainFraction << " leaves no training or no test subject of "
                                     << order.size());
  }
  for (int d = 0; d < 3; ++d)
  {
    a.options.workingSpacing[d] = a.spacing[a.spacing.size() == 3 ? d : 0];
    a.options.sampleBoxMm[d] = a.boxMm[a.boxMm.size() == 3 ? d : 0];
  }
  a.options.backend = ResolveBackend(BackendRequest::Parse(a.device));
  a.options.sampling.seed = a.options.pbt.seed;

  // Read every subject once.
  std::vector<FloatVolume::Pointer> subjectImages(order.size());
  std::vector<LabelImage::Pointer>  subjectLabels(order.size());
  {
    ProgressBar bar("reading", a.quiet);
    for (std::size_t k = 0; k < order.size(); ++k)
    {
      subjectImages[k] = ReadVolume(images[order[k]], "--dataset image");
      subjectLabels[k] = RoundToLabels(ReadVolume(labels[order[k]], "--dataset label"), labels[order[k]]);
      if (!SameGrid(subjectImages[k], subjectLabels[k]))
        CANOPY_THROW(labels[order[k]] << ": its grid differs from " << images[order[k]]);
      bar.Update(double(k + 1) / order.size());
    }
  }
  std::filesystem::create_directories(a.out); // once every subject has been read: a bad input leaves nothing

  // One-vs-rest PBT per class, or one multi-class / auto-context model of all of them.
  std::vector<PBTModelFile> models;
  nlohmann::json            trainingReport = nlohmann::json::array();
  const bool                cascade = a.multiClass || a.autoContext > 1;
  PBTClassModel             classModel;
  if (cascade)
  {
    std::vector<ClassLabelledVolume> volumes;
    for (std::size_t k = 0; k < trainCount; ++k)
    {
      auto mask = MaskVolume::New();
      mask->CopyInformation(subjectLabels[k]);
      mask->SetRegions(subjectLabels[k]->GetLargestPossibleRegion());
      mask->Allocate();
      const auto n = mask->GetLargestPossibleRegion().GetNumberOfPixels();
      for (itk::SizeValueType i = 0; i < n; ++i)
      {
        const int v = subjectLabels[k]->GetBufferPointer()[i];
        mask->GetBufferPointer()[i] = static_cast<unsigned char>(v >= 1 && v <= 255 ? v : 0);
      }
      volumes.push_back({ subjectImages[k], mask, std::filesystem::path(images[order[k]]).filename().string() });
    }
    PBTCascadeTrainingOptions options;
    options.volume = a.options;
    options.labels = a.classes;
    options.stages = a.autoContext;
    options.folds = a.contextFolds;
    options.foldSeed = a.splitSeed;
    ProgressBar                        bar("train " + std::to_string(a.autoContext) + " stage(s)", a.quiet);
    std::vector<PBTCascadeStageReport> stages;
    const auto                         start = std::chrono::steady_clock::now();
    classModel =
      TrainPBTCascade(volumes, options, &stages, [&bar](double f, const std::string & s) { bar.Update(f, s); });
    const double seconds = SecondsSince(start);
    bar.Finish();
    SavePBTClassModel(classModel, (std::filesystem::path(a.out) / "pbt-classes.json").string());
    for (std::size_t k = 0; k < stages.size(); ++k)
      trainingReport.push_back({ { "stage", k + 1 },
                                 { "seconds", stages[k].trainSeconds },
                                 { "outOfFoldSeconds", stages[k].outOfFoldSeconds } });
    trainingReport.push_back({ { "totalSeconds", seconds } });
    std::cout << a.classes.size() << " classes x " << a.autoContext << " stage(s): trained on " << trainCount
              << " subjects in " << seconds << " s\n";
  }
  for (int value : cascade ? std::vector<int>{} : a.classes)
  {
    std::vector<LabelledVolume> volumes;
    for (std::size_t k = 0; k < trainCount; ++k)
    {
      auto mask = LabelToMask(subjectLabels[k], value);
      volumes.push_back({ subjectImages[k], mask, std::filesystem::path(images[order[k]]).filename().string() });
    }
    ProgressBar             bar("train class " + std::to_string(value), a.quiet);
    PBTVolumeTrainingReport result;
    const auto              start = std::chrono::steady_clock::now();
    models.push_back(
      TrainPBTFromVolumes(volumes, a.options, &result, [&bar](double f, const std::string & s) { bar.Update(f, s); }));
    const double seconds = SecondsSince(start);
    bar.Finish();
    SavePBTModelFile(models.back(),
                     (std::filesystem::path(a.out) / ("class" + std::to_string(value) + "-pbt.json")).string());
    trainingReport.push_back({ { "class", value },
                               { "seconds", seconds },
                               { "samples", result.samples },
                               { "responseSeconds", result.responseSeconds },
                               { "treeSeconds", result.trainSeconds },
                               { "nodes", result.nodes },
                               { "featuresUsed", result.featuresUsed },
                               { "trainingAccuracy", result.trainingAccuracy } });
    std::cout << "class " << value << ": trained on " << trainCount << " subjects in " << seconds << " s ("
              << result.samples << " samples, " << result.nodes << " nodes, training accuracy "
              << result.trainingAccuracy << ")\n";
  }

  // Segment the held-out subjects: label = argmax_c p_c where that p_c >= 0.5, else background. With
  // --lambda > 0 the union of the classes (p = min(1, sum_c p_c)) is regularised by a graph cut first
  // and its voxels take the class of highest posterior.
  std::map<int, std::vector<double>> dice, volumeDifference;
  nlohmann::json                     subjects = nlohmann::json::array();
  std::vector<double>                seconds;
  ProgressBar                        bar("segmenting", a.quiet);
  PBTEvaluationOptions               evaluation;
  for (std::size_t k = trainCount; k < order.size(); ++k)
  {
    const auto                        start = std::chrono::steady_clock::now();
    std::vector<FloatVolume::Pointer> probabilities;
    for (const auto & model : models)
      probabilities.push_back(ClassifyVolume(subjectImages[k], model, a.options.backend, evaluation));
    const auto          n = subjectImages[k]->GetLargestPossibleRegion().GetNumberOfPixels();
    MaskVolume::Pointer jointLabels; // the multi-class model's decision (a graph cut per class with --lambda)
    if (cascade)
    {
      const auto posteriors = ClassifyVolumeClasses(subjectImages[k], classModel, a.options.backend, evaluation);
      jointLabels = a.lambda > 0.0 ? JointLabelsWithGraphCut(posteriors, classModel.labels, a.lambda, 6)
                                   : JointLabels(posteriors, classModel.labels);
    }
    MaskVolume::Pointer foreground;
    if (a.lambda > 0.0 && !cascade)
    {
      auto unionProbability = FloatVolume::New();
      unionProbability->CopyInformation(subjectImages[k]);
      unionProbability->SetRegions(subjectImages[k]->GetLargestPossibleRegion());
      unionProbability->Allocate();
      for (itk::SizeValueType i = 0; i < n; ++i)
      {
        float sum = 0.0f;
        for (const auto & p : probabilities)
          sum += p->GetBufferPointer()[i];
        unionProbability->GetBufferPointer()[i] = std::min(1.0f, sum);
      }
      auto graphCut = itk::GraphCutRegularizationImageFilter<FloatVolume, MaskVolume>::New();
      graphCut->SetInput(unionProbability);
      graphCut->SetLambda(a.lambda);
      graphCut->Update();
      foreground = graphCut->GetOutput();
    }
    auto segmentation = LabelImage::New();
    segmentation->CopyInformation(subjectImages[k]);
    segmentation->SetRegions(subjectImages[k]->GetLargestPossibleRegion());
    segmentation->Allocate();
    for (itk::SizeValueType i = 0; i < n && jointLabels; ++i)
      segmentation->GetBufferPointer()[i] = jointLabels->GetBufferPointer()[i];
    for (itk::SizeValueType i = 0; i < n && !jointLabels; ++i)
    {
      int   best = 0;
      float bestP = 0.5f;
      if (foreground)
        bestP = foreground->GetBufferPointer()[i] ? 0.0f : 2.0f; // inside: any class; outside: none
      for (std::size_t c = 0; c < models.size(); ++c)
      {
        const float p = probabilities[c]->GetBufferPointer()[i];
        if (p >= bestP)
        {
          bestP = p;
          best = a.classes[c];
        }
      }
      segmentation->GetBufferPointer()[i] = best;
    }
    seconds.push_back(SecondsSince(start));
    nlohmann::json subject = { { "image", images[order[k]] }, { "seconds", seconds.back() } };
    for (int value : a.classes)
    {
      const auto m = ComputeOverlap(LabelToMask(segmentation, value), LabelToMask(subjectLabels[k], value));
      dice[value].push_back(m.dice);
      volumeDifference[value].push_back(m.volumeDifferencePercent);
      subject["dice"][std::to_string(value)] = m.dice;
      subject["volumeDifferencePercent"][std::to_string(value)] = m.volumeDifferencePercent;
    }
    subjects.push_back(subject);
    bar.Update(double(k - trainCount + 1) / (order.size() - trainCount));
  }
  bar.Finish();

  nlohmann::json perClass;
  std::cout << "held-out subjects: " << order.size() - trainCount << " (trained on " << trainCount << ", split seed "
            << a.splitSeed << ")\n";
  for (int value : a.classes)
  {
    perClass[std::to_string(value)] = ValueSummary(dice[value]);
    const auto & s = perClass[std::to_string(value)];
    const auto   v = ValueSummary(volumeDifference[value]);
    if (s.is_null()) // the class in neither label map of any held-out subject
    {
      std::cout << "class " << value << ": absent from every held-out subject and its segmentation\n";
      continue;
    }
    std::cout << std::fixed << std::setprecision(4) << "class " << value << " Dice: mean " << s["mean"].get<double>()
              << "  median " << s["median"].get<double>() << "  worst " << s["worst"].get<double>();
    if (!v.is_null())
      std::cout << std::setprecision(1) << "  (volume difference: mean " << v["mean"].get<double>() << "%)";
    std::cout << '\n';
  }
  const nlohmann::json timing = ValueSummary(seconds);
  std::cout << "per-volume segmentation time: mean " << timing["mean"].get<double>() << " s on "
            << a.options.backend.Describe() << '\n';
  if (!a.report.empty())
  {
    report["dataset"] = a.dataset;
    report["device"] = a.options.backend.Describe();
    report["split"] = { { "seed", a.splitSeed }, { "train", trainCount }, { "test", order.size() - trainCount } };
    report["training"] = trainingReport;
    report["dice"] = perClass;
    report["perVolumeSeconds"] = timing;
    report["subjects"] = subjects;
    report.Write(a.report);
  }
}

} // namespace

void
RegisterExperimentCommand(CLI::App & app)
{
  auto   args = std::make_shared<ExperimentArguments>();
  auto & o = args->options;
  o.sampling.positivesPerVolume = 400;
  o.sampling.negativesPerVolume = 600;
  o.sampling.nearBoundaryMm = 4.0;
  o.featureBankSize = 1000;
  o.sampling.weightByPrior = true; // small structures: see SamplingOptions::weightByPrior
  o.pbt.maxDepth = 6;
  o.pbt.weakLearnersPerNode = 40;
  o.pbt.featureCandidatesPerRound = 100;
  auto * c = app.add_subcommand("msd-experiment",
                                "Train one-vs-rest PBTs on a seeded split of an MSD dataset and report Dice per class");
  c->add_option("--dataset", args->dataset, "MSD dataset.json")->required()->check(CLI::ExistingFile);
  c->add_option("--out", args->out, "Folder for the models")->required();
  c->add_option("--classes", args->classes, "Label values, one PBT each")
    ->capture_default_str()
    ->check(CLI::PositiveNumber);
  c->add_option("--train-fraction", args->trainFraction, "Share of subjects used for training")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 1.0));
  c->add_option("--max-subjects", args->maxSubjects, "Use only this many subjects of the split (0: all)")
    ->capture_default_str()
    ->check(CLI::NonNegativeNumber);
  c->add_option("--split-seed", args->splitSeed, "Seed of the train/test split")->capture_default_str();
  c->add_option("--spacing", args->spacing, "Working spacing in mm (1 or 3 values)")
    ->capture_default_str()
    ->check(FinitePositive());
  c->add_option("--box-mm", args->boxMm, "Haar sample box in mm (1 or 3 values)")
    ->capture_default_str()
    ->check(FinitePositive());
  c->add_option("--features", o.featureBankSize, "Random Haar features to choose from")
    ->capture_default_str()
    ->check(CLI::Range(1, 1000000));
  c->add_option("--depth", o.pbt.maxDepth, "Tree depth")->capture_default_str()->check(CLI::Range(0, 30));
  c->add_option("--learners", o.pbt.weakLearnersPerNode, "Weak learners per node")
    ->capture_default_str()
    ->check(CLI::Range(1, 1000));
  c->add_option("--candidates", o.pbt.featureCandidatesPerRound, "Features tried per boosting round (0: all)")
    ->capture_default_str()
    ->check(CLI::NonNegativeNumber);
  c->add_option("--positives", o.sampling.positivesPerVolume, "Positive samples per subject")
    ->capture_default_str()
    ->check(CLI::PositiveNumber);
  c->add_option("--negatives", o.sampling.negativesPerVolume, "Negative samples per subject")
    ->capture_default_str()
    ->check(CLI::PositiveNumber);
  c->add_flag("--prior-weights,!--no-prior-weights",
              o.sampling.weightByPrior,
              "Weight samples by their stratum's share of the volume (true class balance)");
  c->add_option("--near-boundary-mm", o.sampling.nearBoundaryMm, "Distance band for boundary negatives")
    ->capture_default_str()
    ->check(FinitePositive());
  c->add_option("--seed", o.pbt.seed, "Training seed")->capture_default_str();
  c->add_flag("--multi-class",
              args->multiClass,
              "One model of all classes (one-vs-rest PBTs, normalised posteriors decided jointly; --lambda: a graph "
              "cut per class)");
  c->add_option("--auto-context",
                args->autoContext,
                "Auto-context stages of the multi-class model (stage k reads stage k-1's class maps; 1: none)")
    ->capture_default_str()
    ->check(CLI::Range(1, 8));
  c->add_option("--context-folds", args->contextFolds, "Folds of the out-of-fold maps the later stages train on")
    ->capture_default_str()
    ->check(CLI::Range(2, 1000));
  c->add_option("--lambda", args->lambda, "Graph-cut surface weight (mm) on the union of the classes; 0: none")
    ->capture_default_str()
    ->check(FiniteNonNegative());
  c->add_option("--device", args->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  c->add_option("--report", args->report, "Write the JSON report here");
  c->add_flag("--quiet", args->quiet, "No progress bars");
  c->callback([args] { RunExperiment(*args); });
}

} // namespace canopy::app
