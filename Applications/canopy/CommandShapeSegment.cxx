// canopy segment-shape (issue 10 part 5): the mean mesh of a shape model placed at an initial pose
// (found in the input by a pose detector, read from a detector's poses.json, or a label map for
// experiments), refined coarse to fine with the model's boundary classifiers, written as a mesh with
// correspondence ids and as a label map on the input grid.
#include "canopy/AtomicFile.h" // StagedOutputs
#include "canopy/Errors.h"
#include "canopyBoundaryRefinement.h"
#include "canopyCommands.h"
#include "canopyDetectorModelFile.h"
#include "canopyFitQualityOptions.h"
#include "canopyImageIO.h"
#include "canopyInitialPose.h"
#include "canopyMeshIO.h"
#include "canopyOptionChecks.h"
#include "canopyOutputPaths.h"
#include "canopyPoseRuns.h"
#include "canopyProgress.h"
#include "canopyShapeFusionOptions.h"
#include "canopyShapeOutputs.h"
#include "canopyShapeSegmentationModel.h"

#include <vtkObject.h>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <optional>

namespace canopy::app
{
namespace
{
const ShapeModel &
ChooseStructure(const ShapeSegmentationModel & model, const SegmentShapeArguments & a)
{
  if (!a.structure.empty())
  {
    const ShapeModel & s = model.shapes.Structure(a.structure);
    if (!model.Boundary(s.structure))
      CANOPY_THROW("--shape " << a.shape << ": structure " << s.structure
                              << " has no boundary classifiers (train-shape --boundary)");
    return s;
  }
  std::vector<const ShapeModel *> ready;
  for (const auto & s : model.shapes.structures)
    if (model.Boundary(s.structure))
      ready.push_back(&s);
  if (ready.empty())
    CANOPY_THROW("--shape " << a.shape
                            << ": no structure has boundary classifiers (train it with train-shape --boundary)");
  if (ready.size() > 1)
  {
    std::ostringstream names;
    for (const auto * s : ready)
      names << ' ' << s->structure;
    CANOPY_THROW("--shape " << a.shape << ": several structures (" << names.str().substr(1)
                            << "); choose one with --structure");
  }
  return *ready.front();
}

/** The shape model's structure found in the input by --detector (matched by name): fully automatic. A
 * detector without the structure, or a structure it does not find, is an error naming the files: no
 * made-up pose. `detected` receives the detector's entry (score, time). */
StructurePose
DetectPose(const SegmentShapeArguments & a,
           const std::string &           structure,
           const FloatVolume *           image,
           const ResolvedBackend &       backend,
           DetectedStructure &           detected)
{
  const DetectorModel model = LoadDetectorModel(a.detector);
  std::ostringstream  names;
  int                 index = -1;
  for (std::size_t s = 0; s < model.structures.size(); ++s)
  {
    names << (s ? ", " : "") << model.structures[s].name;
    if (model.structures[s].name == structure)
      index = static_cast<int>(s);
  }
  if (index < 0)
    CANOPY_THROW("--detector " << a.detector << ": no structure named \"" << structure
                               << "\", the structure of --shape " << a.shape << " (the detector has: " << names.str()
                               << ")");
  DetectionOptions options;
  options.backend = backend;
  options.thresholdOverride = a.detectionThreshold;
  PoseDetector detector(model, options);
  detector.SetImage(image, "--input " + a.input);
  detected = detector.Detect(index);
  return FoundPose({ detected }, structure, "--detector " + a.detector + " on --input " + a.input);
}

} // namespace

SegmentShapeOutcome
RunSegmentShape(SegmentShapeArguments & a)
{
  vtkObject::GlobalWarningDisplayOff();
  RunReport report("segment-shape");
  CheckOutputPaths({ { "--output", a.output }, { "--mesh", a.mesh }, { "--report", a.report } },
                   { { "--shape", a.shape },
                     { "--input", a.input },
                     { "--detector", a.detector },
                     { "--pose", a.pose },
                     { "--init-label", a.initLabel },
                     { "--start-labels", a.startLabels },
                     { "--probabilities", a.fusion.probabilities } });
  RequireVolumeFormat(a.output, "--output");
  if (!a.mesh.empty())
    RequireMeshExtension(a.mesh, "--mesh");
  if (int(!a.detector.empty()) + int(!a.pose.empty()) + int(!a.initLabel.empty()) + int(a.imageCenter) != 1)
    CANOPY_THROW("segment-shape: give exactly one of --detector (a pose detector), --pose (a detector's poses.json), "
                 "--init-label (a label map) and --init-image-center");
  if (a.detectionThreshold >= 0 && a.detector.empty())
    CANOPY_THROW("--detection-threshold needs --detector");
  const auto                   backend = ResolveBackend(BackendRequest::Parse(a.device));
  const ShapeSegmentationModel model = LoadShapeSegmentationModel(a.shape);
  const ShapeModel &           shape = ChooseStructure(model, a);
  const BoundaryClassifiers &  classifiers = *model.Boundary(shape.structure);
  const auto                   image = ReadVolume(a.input, "--input");
  ReportSlicerProgress(0.05);
  itk::Image<float, 3>::Pointer probability; // the voxel classifier's, read before the work starts
  if (!a.fusion.probabilities.empty())
    probability = ReadStructureProbability(a.fusion, shape.label, image);

  // The initial pose: the model's pose onto the detected (or labelled) pose.
  StructurePose       target;
  std::string         initialisation;
  double              detectionScore = -1;
  DetectedStructure   detected;
  const StructurePose modelPose = PoseOfModel(shape);
  // --start-labels: the pose of the structure's label in a voxel classifier's label map, a second start
  // (or the only one where the detector finds nothing); none when the map lacks the label.
  const int                    labelValue = a.initLabelValue != 0 ? a.initLabelValue : shape.label;
  std::optional<StructurePose> labelStart;
  std::string                  labelStartNote;
  if (!a.startLabels.empty())
  {
    const auto labels = RoundToLabels(ReadVolume(a.startLabels, "--start-labels"), "--start-labels " + a.startLabels);
    try
    {
      labelStart = PoseFromLabel(labels, labelValue, "--start-labels " + a.startLabels);
    }
    catch (const Error & e)
    {
      labelStartNote = e.what();
      std::cerr << "canopy: warning: segment-shape: no second start: " << labelStartNote << '\n';
    }
  }
  bool detectorMissed = false;
  if (!a.detector.empty())
  {
    try
    {
      target = DetectPose(a, shape.structure, image, backend, detected);
      detectionScore = detected.score;
      initialisation = "pose detected by " + a.detector;
    }
    catch (const Error &)
    {
      if (!labelStart || detected.found || detected.name.empty()) // not a miss, or nothing to fall back on
        throw;
      detectorMissed = true;
      detectionScore = detected.score;
      target = *labelStart;
      initialisation = "pose of the structure in --start-labels " + a.startLabels + " (the detector found nothing)";
    }
  }
  else if (!a.pose.empty())
  {
    target = FoundPose(ReadPosesFile(a.pose), shape.structure, "--pose " + a.pose, &detectionScore);
    initialisation = "detected pose (" + a.pose + ")";
  }
  else if (a.imageCenter)
  {
    // The mean shape at its mean size and the model's orientation where the training structures lay
    // relative to their volumes' centres: a start for volumes cropped like the training ones (a prior of
    // the data; no detector and no label).
    target = modelPose;
    const Eigen::Vector3d centre = ImageCenterMm(image) + classifiers.offsetFromImageCenterMm +
                                   Eigen::Vector3d(modelPose.centerMm[0], modelPose.centerMm[1], modelPose.centerMm[2]);
    // the mean's vertex centroid (0 in the model frame) lands at the offset; the pose's centre is the
    // volume's centroid
    target.centerMm = { { centre(0), centre(1), centre(2) } };
    initialisation = "training position relative to the volume's centre (automatic for volumes cropped like "
                     "the training ones)";
  }
  else
  {
    const int  value = a.initLabelValue != 0 ? a.initLabelValue : shape.label;
    const auto labels = RoundToLabels(ReadVolume(a.initLabel, "--init-label"), "--init-label " + a.initLabel);
    target = PoseFromLabel(labels, value, "--init-label " + a.initLabel);
    initialisation = "pose of a label map (" + a.initLabel + "): not fully automatic";
  }
  Similarity start = SimilarityBetweenPoses(modelPose, target, !a.ignorePoseAxes);
  CheckPoseInsideImage(shape,
                       start,
                       image,
                       !a.detector.empty() ? "--detector " + a.detector + " on --input " + a.input
                       : !a.pose.empty()   ? "--pose " + a.pose
                       : a.imageCenter     ? std::string("--init-image-center")
                                           : "--init-label " + a.initLabel);

  ReportSlicerProgress(0.2);
  const auto             begin = std::chrono::steady_clock::now();
  const SteerablePyramid pyramid =
    SteerablePyramid::Build(NormalizeBoundaryIntensities(image, classifiers.normalization), classifiers.Pyramid());
  PBTBoundaryScorer   scorer(classifiers, pyramid, backend);
  std::vector<double> ranges;
  for (const auto & level : classifiers.levels)
    ranges.push_back(level.searchMm);
  ShapeRefinementResult result = RefineShape(shape, scorer, start, a.refinement, ranges);
  // The second start, refined alike; kept when its finest-level mean boundary score beats the first fit's.
  double firstStartScore = result.levels.back().meanScore, labelStartScore = -1;
  bool   labelStartChosen = detectorMissed;
  if (labelStart && !detectorMissed)
  {
    const Similarity second = SimilarityBetweenPoses(modelPose, *labelStart, !a.ignorePoseAxes);
    CheckPoseInsideImage(shape, second, image, "--start-labels " + a.startLabels);
    ShapeRefinementResult other = RefineShape(shape, scorer, second, a.refinement, ranges);
    labelStartScore = other.levels.back().meanScore;
    if (labelStartScore > firstStartScore + a.startLabelsMargin)
    {
      result = std::move(other);
      start = second;
      labelStartChosen = true;
      initialisation += ", replaced by the pose of the structure in --start-labels " + a.startLabels;
    }
  }
  else if (detectorMissed)
    labelStartScore = firstStartScore;
  ReportSlicerProgress(0.8);
  const FitQuality      quality = AssessShapeFit(shape, scorer, start, result, a.quality);
  ShapeFusionStatistics fusion; // with --probabilities: the mesh and the voxel map decide together
  LabelImage::Pointer   labels;
  if (probability)
    labels = FuseMeshWithProbabilities(
      result.points, result.triangles, probability, shape.label, a.fusion.parameters, &fusion);
  else
    labels = VoxelizeMesh(result.points, result.triangles, image, shape.label);
  const double seconds = SecondsSince(begin);

  std::int64_t labelled = 0;
  for (std::size_t k = 0; k < labels->GetLargestPossibleRegion().GetNumberOfPixels(); ++k)
    labelled += labels->GetBufferPointer()[k] != 0;
  ReportSlicerProgress(0.9);
  StagedOutputs outputs; // label map, mesh and report appear together or not at all
  outputs.Write(a.output, [&](const std::string & t) { WriteVolume(labels.GetPointer(), t, "--output"); });
  if (!a.mesh.empty())
    outputs.Write(a.mesh,
                  [&](const std::string & t)
                  { WriteMesh(CorrespondenceMesh(result.points, result.triangles), t, "--mesh"); });
  if (!a.report.empty())
  {
    nlohmann::json levels = nlohmann::json::array();
    for (const auto & l : result.levels)
      levels.push_back({ { "vertices", l.vertices },
                         { "iterations", l.iterations },
                         { "searchMm", l.searchMm },
                         { "meanMoveMm", l.meanMoveMm },
                         { "meanScore", l.meanScore },
                         { "projectionRmsMm", l.projectionRmsMm },
                         { "clampedModes", l.clampedModes },
                         { "mahalanobis", l.mahalanobis },
                         { "scale", l.scale },
                         { "centerMm", { l.centerMm(0), l.centerMm(1), l.centerMm(2) } },
                         { "seconds", l.seconds },
                         { "scoringSeconds", l.scoringSeconds } });
    report["parameters"] = { { "shape", a.shape },
                             { "input", a.input },
                             { "detector", a.detector },
                             { "detectionThreshold", a.detectionThreshold },
                             { "pose", a.pose },
                             { "initLabel", a.initLabel },
                             { "device", backend.Describe() },
                             { "displacements", a.refinement.displacements },
                             { "iterationsPerLevel", a.refinement.iterationsPerLevel },
                             { "freeIterations", a.refinement.freeIterations },
                             { "startSpreadMm", a.refinement.startSpreadMm },
                             { "keptStarts", a.refinement.keptStarts },
                             { "startMargin", a.refinement.startMargin } };
    report["structure"] = shape.structure;
    report["initialisation"] = initialisation;
    if (!a.startLabels.empty())
      report["labelStart"] = {
        { "labels", a.startLabels },          { "found", labelStart.has_value() },
        { "note", labelStartNote },           { "margin", a.startLabelsMargin },
        { "detectorMissed", detectorMissed }, { "firstScore", detectorMissed ? -1.0 : firstStartScore },
        { "score", labelStartScore },         { "chosen", labelStartChosen }
      };
    report["fullyAutomatic"] = a.initLabel.empty();
    if (detectionScore >= 0)
      report["detectionScore"] = detectionScore;
    if (!a.detector.empty())
      report["detection"] = PosesToJson({ detected })["structures"][0]; // the pose refinement started from
    report["levels"] = levels;
    report["startScores"] = result.startScores;
    report["finestScores"] = result.finestScores;
    report["chosenStart"] = result.chosenStart;
    report["scale"] = result.pose.scale;
    report["sigmas"] = std::vector<double>(result.sigmas.data(), result.sigmas.data() + result.sigmas.size());
    report["labelledVoxels"] = labelled;
    report["fitQuality"] = FitQualityJson(quality, a.quality);
    report["fit_suspect"] = quality.suspect;
    if (probability)
      report["fusion"] = ShapeFusionReport(a.fusion, fusion);
    report["refinementSeconds"] = result.seconds;
    report["scoringSeconds"] = scorer.ScoringSeconds();
    report["seconds"] = seconds;
    outputs.Write(a.report, [&](const std::string & t) { report.Write(t); });
  }
  outputs.Commit();
  std::cout << shape.structure << ": " << result.points.cols() << " vertices refined over " << result.levels.size()
            << " levels from the " << initialisation << ", " << labelled << " voxels labelled, " << std::fixed
            << std::setprecision(3) << seconds << " s on " << backend.Describe() << '\n';
  PrintFitQuality(shape.structure, quality);
  const auto          spacing = image->GetSpacing();
  SegmentShapeOutcome outcome;
  outcome.device = backend.Describe();
  outcome.structure = shape.structure;
  outcome.initialisation = initialisation;
  outcome.labelledVoxels = labelled;
  outcome.labelledVolumeMm3 = double(labelled) * spacing[0] * spacing[1] * spacing[2];
  outcome.detectionScore = detectionScore;
  outcome.quality = quality;
  return outcome;
}

void
RegisterSegmentShapeCommand(CLI::App & app)
{
  auto   args = std::make_shared<SegmentShapeArguments>();
  auto * c = app.add_subcommand(
    "segment-shape", "Segment a structure by refining its shape model's mean mesh with boundary classifiers");
  c->add_option("--shape", args->shape, "Shape model with boundary classifiers (train-shape --boundary)")->required();
  c->add_option("--input", args->input, "Volume to segment")->required();
  c->add_option("--output", args->output, "Label map on the input's grid (the structure's label value)")->required();
  c->add_option("--mesh", args->mesh, "Refined mesh (.vtk, .vtp, .stl) with point data CorrespondenceId");
  c->add_option("--detector",
                args->detector,
                "Initial pose: found in --input by this pose detector (train-detector; its structure named like the "
                "shape model's): fully automatic");
  c->add_option("--detection-threshold", args->detectionThreshold, "Replace the detector's threshold (0..1)")
    ->check(FiniteIn(0.0, 1.0));
  c->add_option("--pose", args->pose, "Initial pose: poses.json of canopy detect (the entry named like the structure)");
  c->add_option("--init-label",
                args->initLabel,
                "Initial pose from a label map (centroid, principal axes, extents of the structure's label): for "
                "experiments, not fully automatic");
  c->add_flag("--init-image-center",
              args->imageCenter,
              "Initial pose: the mean shape at its mean size and orientation, centred in the input volume (for volumes "
              "cropped around the structure)");
  c->add_option(
    "--init-label-value", args->initLabelValue, "Label value in --init-label or --start-labels (default: the model's)");
  c->add_option("--start-labels",
                args->startLabels,
                "A second start: the pose of the structure's label in this label map of a voxel classifier (e.g. "
                "predict-forest --mode argmax; automatic). Both starts are refined and the second fit kept when its "
                "finest-level mean boundary score is higher by more than --start-labels-margin; where --detector "
                "finds nothing, it is the only start");
  c->add_option("--start-labels-margin",
                args->startLabelsMargin,
                "With --start-labels: the second fit replaces the first only when its mean boundary score is higher "
                "by more than this")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 1.0, false));
  c->add_option("--structure", args->structure, "Structure to segment when the model holds several");
  c->add_flag("--ignore-pose-axes", args->ignorePoseAxes, "Keep the model's orientation (use only centre and size)");
  c->add_option("--displacements", args->refinement.displacements, "Candidate offsets per vertex and iteration")
    ->capture_default_str()
    ->check(CLI::Range(2, 1024));
  c->add_option("--iterations", args->refinement.iterationsPerLevel, "Iterations per mesh level")
    ->capture_default_str()
    ->check(CLI::Range(1, 1000));
  c->add_option("--smoothing", args->refinement.smoothingPasses, "Smoothing passes of the displacements per iteration")
    ->capture_default_str()
    ->check(CLI::Range(0, 1000));
  c->add_option("--bound", args->refinement.bound, "Shape coefficients bounded to +/- this many standard deviations")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 100.0, true));
  c->add_option("--free-iterations",
                args->refinement.freeIterations,
                "Final iterations on the finest level without the shape-space projection (smoothing only)")
    ->capture_default_str()
    ->check(CLI::Range(0, 1000));
  c->add_option("--start-spread",
                args->refinement.startSpreadMm,
                "0: refine from the initial pose only; > 0 (mm): also from the six starts shifted by +/- this along "
                "the pose's axes, keeping the coarse fit with the best mean boundary score")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 100.0, false));
  c->add_option("--kept-starts",
                args->refinement.keptStarts,
                "With --start-spread: the coarse fits that go on through the finer levels, the initial pose's and "
                "the others with the best mean boundary scores")
    ->capture_default_str()
    ->check(CLI::Range(1, 7));
  c->add_option("--start-margin",
                args->refinement.startMargin,
                "With --start-spread: another start replaces the initial pose only when its finest-level mean "
                "boundary score is higher by more than this")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 1.0, false));
  AddShapeFusionOptions(c,
                        args->fusion,
                        "Label from the refined mesh and this voxel classifier's probability map together (on the "
                        "input's grid; predict-forest --mode distribution): see fuse-shape");
  AddFitQualityOptions(c, args->quality);
  c->add_option("--device", args->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  c->add_option("--report", args->report, "Write a JSON run report here");
  c->add_flag("--quiet", args->quiet, "No progress output");
  c->callback([args] { (void)RunSegmentShape(*args); });
}
} // namespace canopy::app
