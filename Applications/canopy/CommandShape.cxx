// canopy train-shape: statistical shape models (issue 10 part 1) from training label maps.
#include "canopy/AtomicFile.h" // StagedOutputs
#include "canopy/Errors.h"
#include "canopyCommands.h"
#include "canopyConfigure.h"
#include "canopyDataset.h"
#include "canopyImageIO.h"
#include "canopyOptionChecks.h"
#include "canopyOutputPaths.h"
#include "canopyProgress.h"
#include "canopyShapeModelFile.h"
#include "canopyShapeSegmentationModel.h"
#include "canopyShapeTraining.h"
#include "canopyStructureOption.h"

#include <vtkObject.h>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <set>

namespace canopy::app
{
namespace
{
struct TrainShapeArguments
{
  std::vector<std::string> labels, images, structures;
  std::string              dataset, out, report;
  int                      maxVolumes = 0, leaveOneOut = 0;
  std::vector<int>         levels{ 600, 1200, 2400 };
  ShapeTrainingOptions     options;
  TrainingSurfaceOptions   surface;
  bool                     quiet = false;
  // Boundary classifiers (issue 10 part 2): trained with --boundary from the paired --image volumes.
  bool                      boundary = false;
  BoundaryClassifierOptions boundaryOptions;
  int                       boundaryDepth = 6;
  std::string               device = "auto";
};

nlohmann::json
StructureReport(const ShapeTrainingResult &              r,
                const std::vector<TrainingSurfaceInfo> & pieces,
                const std::vector<double> &              generalisation)
{
  const ShapeModel & m = r.model;
  nlohmann::json     levels = nlohmann::json::array(), compactness = nlohmann::json::array(),
                 subjects = nlohmann::json::array();
  for (const auto & level : m.levels)
    levels.push_back({ { "vertices", level.Vertices() }, { "triangles", level.triangles.cols() } });
  double cumulative = 0;
  for (Eigen::Index k = 0; k < m.spectrum.size(); ++k)
  {
    cumulative += m.spectrum(k);
    compactness.push_back(cumulative / m.spectrum.sum());
  }
  for (std::size_t s = 0; s < r.subjects.size(); ++s)
  {
    const auto & f = r.subjects[s];
    subjects.push_back({ { "name", f.name },
                         { "fitToSurfaceMeanMm", f.fitToSurfaceMeanMm },
                         { "surfaceToFitMeanMm", f.surfaceToFitMeanMm },
                         { "fitHausdorffMm", f.fitHausdorffMm },
                         { "procrustesRmsMm", f.procrustesRmsMm },
                         { "scale", f.pose.scale },
                         { "pieces", pieces[s].pieces },
                         { "droppedShare", pieces[s].droppedShare } });
  }
  nlohmann::json report = { { "name", m.structure },
                            { "label", m.label },
                            { "templateSubject", r.templateSubject },
                            { "levels", levels },
                            { "modes", m.Modes() },
                            { "capturedVarianceShare", m.CapturedVarianceShare() },
                            { "compactness", compactness },
                            { "meanFitToSurfaceMm", m.training["meanFitToSurfaceMm"] },
                            { "seconds", r.seconds },
                            { "subjects", subjects } };
  if (!generalisation.empty())
    report["leaveOneOutMeanVertexErrorMm"] = generalisation;
  return report;
}

/** The boundary classifiers of one structure: the corresponded training meshes (the template fitted
 * to each subject, in the subject's LPS frame) on the subjects' images. */
BoundaryClassifiers
TrainBoundaries(const TrainShapeArguments & a, const ShapeTrainingResult & result, nlohmann::json & report)
{
  const ShapeModel &                   model = result.model;
  std::vector<BoundaryTrainingSubject> subjects;
  const Eigen::Index                   n = model.Finest().Vertices();
  for (std::size_t s = 0; s < a.images.size(); ++s)
  {
    const Eigen::Map<const Eigen::Matrix3Xd> aligned(result.alignedShapes.col(Eigen::Index(s)).data(), 3, n);
    subjects.push_back({ "--image " + a.images[s],
                         ReadVolume(a.images[s], "--image"),
                         result.subjects[s].pose.Apply(Eigen::Matrix3Xd(aligned)) });
  }
  ProgressBar               bar("boundary classifiers of " + model.structure, a.quiet);
  BoundaryTrainingReport    trained;
  const BoundaryClassifiers classifiers = TrainBoundaryClassifiers(
    model, subjects, a.boundaryOptions, &trained, [&bar](double f, const std::string &) { bar.Update(f); });
  bar.Finish();
  std::cout << model.structure << ": boundary classifiers for " << classifiers.levels.size() << " levels, "
            << std::fixed << std::setprecision(1) << trained.seconds << " s (" << a.boundaryOptions.backend.Describe()
            << ")\n";
  report["boundary"] = classifiers.training;
  return classifiers;
}

void
RunTrainShape(TrainShapeArguments & a)
{
  vtkObject::GlobalWarningDisplayOff(); // VTK's own messages would repeat our errors
  RunReport report("train-shape");
  if (!a.dataset.empty())
    ReadDataset(a.dataset, a.maxVolumes, a.images, a.labels);
  std::vector<NamedPath> inputs{ { "--dataset", a.dataset } };
  for (const auto & label : a.labels)
    inputs.push_back({ "--label", label });
  for (const auto & image : a.images)
    inputs.push_back({ "--image", image });
  if (a.boundary && a.images.size() != a.labels.size())
    CANOPY_THROW("--boundary needs an --image for every --label (or --dataset): " << a.images.size() << " images, "
                                                                                  << a.labels.size() << " labels");
  if (!a.boundary && !a.images.empty() && a.dataset.empty())
    CANOPY_THROW("--image is only read with --boundary (boundary classifiers)");
  CheckOutputPaths({ { "--out", a.out }, { "--report", a.report } }, inputs);
  const auto structures = ParseStructureOptions(a.structures);
  if (a.labels.size() < 3)
    CANOPY_THROW("train-shape: " << a.labels.size()
                                 << " label maps; a shape model needs at least 3 (--label or --dataset)");
  for (int v : a.levels)
    if (v < 20 || v > 200000)
      CANOPY_THROW("--levels: " << v << " vertices is outside 20..200000");
  if (std::set<int>(a.levels.begin(), a.levels.end()).size() != a.levels.size())
    CANOPY_THROW("--levels: each vertex count may appear once");
  a.options.levelVertices = a.levels;

  std::vector<std::vector<ShapeTrainingSubject>> subjects(structures.size());
  std::vector<std::vector<TrainingSurfaceInfo>>  pieces(structures.size());
  {
    ProgressBar bar("reading labels", a.quiet);
    for (std::size_t i = 0; i < a.labels.size(); ++i)
    {
      const std::string subject = "--label " + a.labels[i];
      const auto        labels = RoundToLabels(ReadVolume(a.labels[i], "--label"), subject);
      for (std::size_t s = 0; s < structures.size(); ++s)
      {
        TrainingSurfaceInfo info;
        auto                surface = TrainingSurface(
          labels, structures[s].label, subject + " (structure " + structures[s].name + ")", a.surface, &info);
        if (info.pieces > 1)
          std::cerr << "canopy: warning: " << a.labels[i] << ": label " << structures[s].label << " is in "
                    << info.pieces << " pieces; kept the largest (dropped " << std::fixed << std::setprecision(1)
                    << 100.0 * info.droppedShare << "% of the surface)\n";
        subjects[s].push_back({ std::filesystem::path(a.labels[i]).filename().string(), surface });
        pieces[s].push_back(info);
      }
      bar.Update(double(i + 1) / double(a.labels.size()));
    }
  }

  if (a.boundary)
  {
    a.boundaryOptions.backend = ResolveBackend(BackendRequest::Parse(a.device));
    a.boundaryOptions.pbt.maxDepth = a.boundaryDepth;
    a.boundaryOptions.pbt.threads = int(a.options.threads);
  }
  ShapeSegmentationModel segmentation;
  ShapeModelFile &       file = segmentation.shapes;
  nlohmann::json         reports = nlohmann::json::array();
  for (std::size_t s = 0; s < structures.size(); ++s)
  {
    ProgressBar bar("fitting " + structures[s].name, a.quiet);
    const auto  result = TrainShapeModel(subjects[s], structures[s].name, structures[s].label, a.options);
    bar.Finish();
    std::vector<double> generalisation;
    if (a.leaveOneOut > 0)
      generalisation = LeaveOneOutGeneralisation(result.alignedShapes, a.leaveOneOut);
    const ShapeModel & m = result.model;
    std::cout << structures[s].name << " (label " << m.label << "): " << subjects[s].size() << " subjects, levels";
    for (const auto & level : m.levels)
      std::cout << ' ' << level.Vertices();
    std::cout << " vertices, " << m.Modes() << " modes holding " << std::fixed << std::setprecision(1)
              << 100.0 * m.CapturedVarianceShare() << "% of the variance, template fit " << std::setprecision(2)
              << m.training["meanFitToSurfaceMm"].get<double>() << " mm (mean surface distance), "
              << std::setprecision(1) << result.seconds << " s\n";
    reports.push_back(StructureReport(result, pieces[s], generalisation));
    file.structures.push_back(result.model);
    if (a.boundary)
      segmentation.boundaries.push_back(TrainBoundaries(a, result, reports.back()));
  }
  file.provenance = { { "canopyVersion", CANOPY_VERSION_STRING }, { "command", "train-shape" } };

  StagedOutputs outputs; // the model and the report appear together or not at all
  outputs.Write(a.out, [&](const std::string & t) { SaveShapeSegmentationModel(segmentation, t); });
  if (!a.report.empty())
  {
    report["parameters"] = { { "labels", a.labels },
                             { "dataset", a.dataset },
                             { "levels", a.levels },
                             { "variance", a.options.varianceShare },
                             { "passes", a.options.passes },
                             { "keepLargestPiece", a.surface.keepLargestPiece },
                             { "smoothingIterations", a.surface.smoothingIterations },
                             { "boundary", a.boundary } };
    report["output"] = a.out;
    report["structures"] = reports;
    outputs.Write(a.report, [&](const std::string & t) { report.Write(t); });
  }
  outputs.Commit();
  std::cout << "shape model -> " << a.out << '\n';
}
} // namespace

void
RegisterTrainShapeCommand(CLI::App & app)
{
  auto   args = std::make_shared<TrainShapeArguments>();
  auto * c = app.add_subcommand("train-shape",
                                "Statistical shape model (mean mesh hierarchy, PCA modes) of labelled structures");
  c->add_option("--label", args->labels, "Training label map (repeat; at least 3)");
  c->add_option("--dataset", args->dataset, "MSD dataset.json: its training label maps");
  c->add_option("--max-volumes", args->maxVolumes, "Use at most this many --dataset entries (0: all)")
    ->check(CLI::NonNegativeNumber);
  c->add_option("--structure", args->structures, "NAME=VALUE: a structure and its label value (repeat for several)")
    ->required();
  c->add_option("--out", args->out, "Shape model to write (JSON)")->required();
  c->add_option("--levels", args->levels, "Vertex counts of the mesh hierarchy, comma-separated")
    ->delimiter(',')
    ->capture_default_str();
  c->add_option("--variance", args->options.varianceShare, "Keep modes up to this share of the variance, (0, 1]")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 1.0, true));
  c->add_option("--passes",
                args->options.passes,
                "Correspondence passes: 1 fits the template subject; 2 fits again with the first pass's mean shape")
    ->capture_default_str()
    ->check(CLI::Range(1, 5));
  c->add_option("--smooth", args->surface.smoothingIterations, "Smoothing iterations of the training surfaces")
    ->capture_default_str()
    ->check(CLI::Range(0, 1000));
  c->add_flag("--keep-largest-piece",
              args->surface.keepLargestPiece,
              "A label in several pieces keeps its largest one (warning) instead of stopping with an error");
  c->add_option(
     "--leave-one-out", args->leaveOneOut, "Report the leave-one-out reconstruction error (mm) with 1..K modes")
    ->check(CLI::Range(0, 1000));
  c->add_option("--threads", args->options.threads, "Worker threads over subjects (0: all cores)")
    ->capture_default_str();
  c->add_option("--report", args->report, "Write a JSON run report here");
  c->add_flag("--quiet", args->quiet, "No progress bars");
  c->add_flag(
    "--boundary",
    args->boundary,
    "Also train boundary classifiers (a steerable-feature PBT per mesh level) from the paired --image volumes; "
    "canopy segment-shape needs them");
  c->add_option("--image", args->images, "Training image paired with each --label (in order; for --boundary)");
  c->add_option("--boundary-search",
                args->boundaryOptions.searchMm,
                "Per level, coarse to fine: search range along the normals (mm); negatives at 1/3, 2/3 and 1 of it")
    ->delimiter(',')
    ->capture_default_str()
    ->check(FiniteIn(0.0, 1000.0, true));
  c->add_option("--boundary-scale",
                args->boundaryOptions.frameScale,
                "Per level, coarse to fine: scale of the steerable sampling grid in the vertex frame")
    ->delimiter(',')
    ->capture_default_str()
    ->check(FiniteIn(0.0, 100.0, true));
  c->add_option(
     "--boundary-vertices", args->boundaryOptions.maxVerticesPerSubject, "Training vertices per subject and level")
    ->capture_default_str()
    ->check(CLI::Range(1, 1000000));
  c->add_option("--boundary-features", args->boundaryOptions.featureBankSize, "Candidate steerable features")
    ->capture_default_str()
    ->check(CLI::Range(1, 10000000));
  c->add_option("--boundary-depth", args->boundaryDepth, "Depth of each boundary PBT")
    ->capture_default_str()
    ->check(CLI::Range(0, 20));
  c->add_option("--device", args->device, "auto, cpu, cuda or cuda:N (boundary training responses)")
    ->capture_default_str();
  c->callback([args] { RunTrainShape(*args); });
}
} // namespace canopy::app
