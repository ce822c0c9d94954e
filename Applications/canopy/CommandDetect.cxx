// canopy train-detector, detect and evaluate-poses (issue 9): marginal-space pose detectors trained
// from label maps, poses.json (+ Slicer markups, oriented boxes as a mesh, a PNG snapshot) from a volume,
// and pose errors against label maps.
#include "canopy/AtomicFile.h"
#include "canopy/Device.h"
#include "canopy/Errors.h"
#include "canopyBatchRun.h"
#include "canopyCommands.h"
#include "canopyConfigure.h"
#include "canopyDataset.h"
#include "canopyDetectorModelFile.h"
#include "canopyImageIO.h"
#include "canopyMeshIO.h"
#include "canopyOptionChecks.h"
#include "canopyOrientedBoxMesh.h"
#include "canopyOutputPaths.h"
#include "canopyPoseRuns.h"
#include "canopyProgress.h"
#include "canopySnapshot.h"
#include "canopyStructureOption.h"
#include "canopySurfaceMetrics.h" // RoundToLabels

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <set>

namespace canopy::app
{
namespace
{
/** --structure NAME=LABEL as the detector's structure list. */
std::vector<DetectorStructureSpec>
ParseStructureSpecs(const std::vector<std::string> & specs)
{
  std::vector<DetectorStructureSpec> out;
  for (const auto & option : ParseStructureOptions(specs))
    out.push_back({ option.name, option.label });
  return out;
}

PoseLabelMap::Pointer
ReadLabels(const std::string & path, const std::string & parameter)
{
  return RoundToLabels(ReadVolume(path, parameter), parameter + " " + path);
}

// ---------------------------------------------------------------------------------------------- train
/** Test-sized PBTs by default (depth 4, 30 learners per node, banks of 600 Haar and 1000 steerable
 * features): seconds per structure on a CPU (the phantom test's settings). */
DetectorTrainingOptions
CommandLineTrainingDefaults()
{
  DetectorTrainingOptions o;
  o.position.pbt.maxDepth = o.steerable.pbt.maxDepth = 4;
  o.position.pbt.weakLearnersPerNode = o.steerable.pbt.weakLearnersPerNode = 30;
  o.position.featureBankSize = 600;
  o.steerable.featureBankSize = 1000;
  return o;
}

struct TrainDetectorArguments
{
  std::vector<std::string> images, labels, structures;
  std::string              dataset, out, report, device = "auto", network;
  int                      maxVolumes = 0;
  double                   positionSpacing = 3.0;
  std::vector<double>      pyramid{ 2.0, 4.0 };
  DetectorTrainingOptions  options = CommandLineTrainingDefaults();
  bool                     quiet = false;
};

void
RunTrainDetector(TrainDetectorArguments & a)
{
  RunReport report("train-detector");
  if (!a.dataset.empty())
    ReadDataset(a.dataset, a.maxVolumes, a.images, a.labels);
  if (a.images.size() != a.labels.size())
    CANOPY_THROW("--image and --label must pair up (" << a.images.size() << " images, " << a.labels.size()
                                                      << " label maps)");
  std::vector<NamedPath> inputs{ { "--dataset", a.dataset } };
  for (std::size_t i = 0; i < a.images.size(); ++i)
  {
    inputs.push_back({ "--image", a.images[i] });
    inputs.push_back({ "--label", a.labels[i] });
  }
  inputs.push_back({ "--network", a.network });
  CheckOutputPaths({ { "--out", a.out }, { "--report", a.report } }, inputs);
  const auto structures = ParseStructureSpecs(a.structures);
  if (!a.network.empty())
  {
    std::vector<std::string> names;
    for (const auto & s : structures)
      names.push_back(s.name);
    a.options.network = ReadDetectionNetwork(a.network, names); // before any volume is read
  }
  if (a.images.size() < 2)
    CANOPY_THROW(
      "train-detector: " << a.images.size()
                         << " training volume(s); a detector needs at least 2 (--image/--label or --dataset)");
  if (a.pyramid.empty() || a.pyramid.size() > static_cast<std::size_t>(kMaxSteerableLevels))
    CANOPY_THROW("--pyramid: give 1 to " << kMaxSteerableLevels << " level spacings (mm)");
  for (double v : a.pyramid)
    if (!(std::isfinite(v) && v > 0.0))
      CANOPY_THROW("--pyramid: level spacings must be finite and > 0 mm, got " << v);
  DetectorTrainingOptions & o = a.options;
  o.position.workingSpacing = { { a.positionSpacing, a.positionSpacing, a.positionSpacing } };
  o.steerable.pyramid = SteerablePyramidOptions{ a.pyramid, {} };
  o.backend = ResolveBackend(BackendRequest::Parse(a.device));
  o.position.pbt.seed = o.steerable.pbt.seed = o.position.sampling.seed = o.seed;
  o.position.pbt.threads = o.steerable.pbt.threads;
  o.position.pbt.weakLearnersPerNode = o.steerable.pbt.weakLearnersPerNode;

  std::vector<DetectorTrainingSubject> subjects;
  {
    ProgressBar bar("reading", a.quiet);
    for (std::size_t i = 0; i < a.images.size(); ++i)
    {
      auto image = ReadVolume(a.images[i], "--image");
      auto labels = ReadLabels(a.labels[i], "--label");
      if (!SameGrid(image, labels))
        CANOPY_THROW("--label " << a.labels[i] << ": its grid (size, spacing, origin, direction) differs from --image "
                                << a.images[i]);
      subjects.push_back({ image, labels, "--label " + a.labels[i] });
      bar.Update(double(i + 1) / a.images.size(), std::filesystem::path(a.images[i]).filename().string());
    }
  }
  DetectorModel model;
  {
    ProgressBar bar("training", a.quiet);
    model =
      TrainDetector(subjects, structures, o, [&bar](double f, const std::string & stage) { bar.Update(f, stage); });
  }
  model.provenance = { { "images", a.images },
                       { "labels", a.labels },
                       { "device", o.backend.Describe() },
                       { "canopyVersion", CANOPY_VERSION_STRING },
                       { "created", report["started"] } };
  for (const auto & d : model.structures)
    std::cout << d.name << " (label " << d.label << "): " << d.orientations.size() << " orientations, "
              << d.sizesMm.size() << " sizes; training accuracy position "
              << d.training["positionTrainingAccuracy"].get<double>() << ", orientation "
              << d.training["orientationTrainingAccuracy"].get<double>() << ", scale "
              << d.training["scaleTrainingAccuracy"].get<double>() << '\n';
  for (const auto & p : model.network)
    std::cout << p.child << " given " << p.parent << ": offset (" << p.offsetMm.mean[0] << ", " << p.offsetMm.mean[1]
              << ", " << p.offsetMm.mean[2] << ") mm along the parent's axes, sd ("
              << std::sqrt(p.offsetMm.covariance[0][0]) << ", " << std::sqrt(p.offsetMm.covariance[1][1]) << ", "
              << std::sqrt(p.offsetMm.covariance[2][2]) << ") mm over " << p.subjects << " subjects\n";
  StagedOutputs outputs; // model and report together or not at all
  outputs.Write(a.out, [&](const std::string & t) { SaveDetectorModel(model, t); });
  if (!a.report.empty())
  {
    nlohmann::json trained = nlohmann::json::array();
    for (const auto & d : model.structures)
      trained.push_back({ { "name", d.name }, { "label", d.label }, { "training", d.training } });
    report["device"] = o.backend.Describe();
    report["parameters"] = { { "images", a.images },
                             { "labels", a.labels },
                             { "structures", a.structures },
                             { "positionSpacing", a.positionSpacing },
                             { "pyramid", a.pyramid },
                             { "candidates", o.candidates },
                             { "threshold", o.threshold },
                             { "seed", o.seed },
                             { "network", a.network },
                             { "searchSigmas", o.searchSigmas },
                             { "searchMarginMm", o.searchMarginMm },
                             { "steerableGrid", o.steerable.grid.size },
                             { "steerableFeatures", o.steerable.featureBankSize },
                             { "haarFeatures", o.position.featureBankSize },
                             { "weakLearners", o.steerable.pbt.weakLearnersPerNode } };
    report["structures"] = trained;
    report["output"] = a.out;
    outputs.Write(a.report, [&](const std::string & t) { report.Write(t); });
  }
  outputs.Commit();
  std::cout << "detector -> " << a.out << '\n';
}

// ---------------------------------------------------------------------------------------------- detect
/** detect --truth: how the stages score structure s's pose in the reference label map (TruthScores),
 * printed and returned for the report; {"absent": true} when the map lacks the structure's label. */
nlohmann::json
TruthRow(PoseDetector &           detector,
         int                      s,
         const NetworkDetection & entry,
         const PoseLabelMap &     labels,
         const std::string &      path)
{
  const auto &      d = detector.GetModel().structures.at(static_cast<std::size_t>(s));
  const int *       value = labels.GetBufferPointer();
  const std::size_t n = labels.GetLargestPossibleRegion().GetNumberOfPixels();
  if (std::find(value, value + n, d.label) == value + n)
  {
    std::cout << "  truth: label " << d.label << " is absent from --truth " << path << '\n';
    return { { "absent", true } };
  }
  const StructurePose truth = PoseFromLabel(&labels, d.label, "--truth " + path + " (structure " + d.name + ")");
  const TruthScores   t = detector.ScoreTruth(s, truth, entry.box);
  double              centreError = -1.0;
  if (entry.result.found)
  {
    double squares = 0.0;
    for (int k = 0; k < 3; ++k)
      squares +=
        (entry.result.pose.centerMm[k] - truth.centerMm[k]) * (entry.result.pose.centerMm[k] - truth.centerMm[k]);
    centreError = std::sqrt(squares);
  }
  std::cout << std::setprecision(4) << "  truth: posteriors position " << t.position << " (rank " << t.positionRank
            << " of " << t.searchedVoxels << " searched voxels; kept " << d.candidates << "), orientation "
            << t.orientation << ", scale " << t.scale << ", product " << t.Evidence() << " (threshold "
            << detector.ThresholdOf(s) << ")";
  if (centreError >= 0.0)
    std::cout << std::setprecision(2) << "; detected centre " << centreError << " mm from the truth";
  std::cout << '\n';
  nlohmann::json row = {
    { "position", t.position },        { "orientation", t.orientation },   { "scale", t.scale },
    { "evidence", t.Evidence() },      { "positionRank", t.positionRank }, { "searchedVoxels", t.searchedVoxels },
    { "candidatesKept", d.candidates }
  };
  if (centreError >= 0.0)
    row["centreErrorMm"] = centreError;
  return row;
}

/** The found structures' boxes, StructureIndex = position in poses.json. */
vtkSmartPointer<vtkPolyData>
FoundBoxesMesh(const std::vector<DetectedStructure> & structures)
{
  std::vector<OrientedBox> boxes;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < structures.size(); ++i)
  {
    const auto & s = structures[i];
    names.push_back(s.name);
    if (s.found)
      boxes.push_back({ s.pose.centerMm, s.pose.axes, s.pose.sizeMm, static_cast<int>(i), s.score });
  }
  return OrientedBoxesMesh(boxes, names);
}

/** Snapshot options: every found box outlined in its structure's colour, the slices through the first
 * found structure's centre (the volume's centre when none was found). */
SnapshotOptions
FoundBoxesSnapshot(const std::vector<DetectedStructure> & structures)
{
  // Not red or green (the snapshot's overlay and reference colours); yellow first.
  static const std::array<std::array<unsigned char, 3>, 6> kColours{ { { { 255, 255, 0 } },
                                                                       { { 0, 255, 255 } },
                                                                       { { 255, 0, 255 } },
                                                                       { { 255, 128, 0 } },
                                                                       { { 64, 128, 255 } },
                                                                       { { 255, 255, 255 } } } };
  SnapshotOptions                                          options;
  for (std::size_t i = 0; i < structures.size(); ++i)
  {
    const auto & s = structures[i];
    if (!s.found)
      continue;
    if (!options.sliceCentreMm)
      options.sliceCentreMm = s.pose.centerMm;
    options.boxes.push_back({ s.pose.centerMm, s.pose.axes, s.pose.sizeMm, kColours[i % kColours.size()] });
  }
  return options;
}

void
RequirePngExtension(const std::string & path, const std::string & parameter)
{
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (ext != ".png")
    CANOPY_THROW(parameter << " " << path << ": the snapshot is a PNG (give a name ending in .png)");
}

} // namespace

DetectOutcome
RunDetect(const DetectArguments & a)
{
  RunReport report("detect");
  CheckOutputPaths({ { "--output", a.output },
                     { "--markups", a.markups },
                     { "--centres", a.centres },
                     { "--boxes", a.boxes },
                     { "--snapshot", a.snapshot },
                     { "--report", a.report } },
                   { { "--model", a.model }, { "--input", a.input }, { "--truth", a.truth } });
  if (a.output.empty() && a.markups.empty() && a.centres.empty() && a.boxes.empty())
    CANOPY_THROW("detect: no output chosen (give --output for the poses file, or markups, centres or boxes)");
  if (!a.boxes.empty())
    RequireMeshExtension(a.boxes, "--boxes"); // before the work, not after
  if (!a.snapshot.empty())
    RequirePngExtension(a.snapshot, "--snapshot");
  DetectionOptions options;
  options.backend = ResolveBackend(BackendRequest::Parse(a.device));
  options.thresholdOverride = a.threshold;
  options.useNetwork = !a.ignoreNetwork;
  options.prior = a.prior;
  options.refineStepMm = a.refineStepMm;
  options.refineReach = a.refineReach;
  ValidateDetectionOptions(options, "detect");
  const auto model = LoadDetectorModel(a.model);
  const auto image = ReadVolume(a.input, "--input");
  ReportSlicerProgress(0.1);
  PoseDetector detector(model, options);
  detector.SetImage(image, "--input " + a.input);
  ReportSlicerProgress(0.2);
  const PoseLabelMap::Pointer    truthLabels = a.truth.empty() ? nullptr : ReadLabels(a.truth, "--truth");
  std::vector<DetectedStructure> found;
  nlohmann::json                 timings = nlohmann::json::array();
  for (const auto & entry : detector.DetectAll()) // the network's order; results in model order
  {
    const auto & r = entry.result;
    const auto & t = entry.timings;
    found.push_back(r);
    std::cout << std::fixed << std::setprecision(2) << r.name << ": "
              << (r.found ? (r.lowConfidence ? "found (low confidence: below its threshold, child of a found parent)"
                                             : "found")
                          : "NOT FOUND (best score below the threshold)")
              << ", score " << std::setprecision(4) << r.score << std::setprecision(2);
    if (r.found)
      std::cout << ", centre (" << r.pose.centerMm[0] << ", " << r.pose.centerMm[1] << ", " << r.pose.centerMm[2]
                << ") mm LPS, size " << r.pose.sizeMm[0] << " x " << r.pose.sizeMm[1] << " x " << r.pose.sizeMm[2]
                << " mm";
    std::cout << ", " << std::setprecision(3) << r.seconds << " s; searched " << entry.searched;
    if (entry.box.Voxels() > 0)
      std::cout << " (" << entry.box.Voxels() << " of " << entry.gridVoxels << " working voxels)";
    if (entry.priorUsed && r.found)
      std::cout << "; log prior centre " << entry.centreLogPrior << ", orientation " << entry.orientationLogPrior
                << ", size " << entry.sizeLogPrior;
    std::cout << '\n';
    nlohmann::json row = { { "name", r.name },
                           { "searched", entry.searched },
                           { "seconds", r.seconds },
                           { "positionSeconds", t.positionSeconds },
                           { "orientationSeconds", t.orientationSeconds },
                           { "scaleSeconds", t.scaleSeconds },
                           { "aggregateSeconds", t.aggregateSeconds },
                           { "refineSeconds", t.refineSeconds },
                           { "refineHypotheses", t.refineHypotheses },
                           { "lowConfidence", r.lowConfidence },
                           { "positionVoxels", t.positionVoxels },
                           { "orientationHypotheses", t.orientationHypotheses },
                           { "scaleHypotheses", t.scaleHypotheses } };
    if (!entry.parent.empty())
      row["parent"] = entry.parent;
    if (entry.priorUsed)
    {
      row["prior"] = { { "priorOrientations", entry.priorOrientations }, { "priorSizes", entry.priorSizes } };
      if (r.found)
        row["prior"].update({ { "centreLogPrior", entry.centreLogPrior },
                              { "orientationLogPrior", entry.orientationLogPrior },
                              { "sizeLogPrior", entry.sizeLogPrior } });
    }
    if (entry.box.Voxels() > 0)
      row["searchBox"] = { { "lo", entry.box.lo },
                           { "hi", entry.box.hi },
                           { "voxels", entry.box.Voxels() },
                           { "gridVoxels", entry.gridVoxels } };
    if (truthLabels)
      row["truth"] = TruthRow(detector, static_cast<int>(timings.size()), entry, *truthLabels, a.truth);
    timings.push_back(row);
  }
  ReportSlicerProgress(0.9);
  StagedOutputs outputs;
  if (!a.output.empty())
    outputs.Write(a.output, [&](const std::string & t) { WritePosesFile(found, t); });
  const nlohmann::json markups = PosesToSlicerMarkups(found);
  const auto           writeJson = [&outputs](const std::string & path, const nlohmann::json & doc)
  {
    const std::string text = doc.dump(2);
    outputs.Write(path,
                  [&](const std::string & t) { WriteFileAtomically(t, [&](std::ostream & o) { o << text << '\n'; }); });
  };
  if (!a.markups.empty())
    writeJson(a.markups, markups);
  if (!a.centres.empty()) // the point list alone: one markup, as a Slicer CLI point-file output loads it
    writeJson(a.centres, { { "@schema", markups["@schema"] }, { "markups", { markups["markups"][0] } } });
  if (!a.boxes.empty())
  {
    const auto mesh = FoundBoxesMesh(found);
    outputs.Write(a.boxes, [&](const std::string & t) { WriteMesh(mesh, t, "--boxes"); });
  }
  if (!a.snapshot.empty())
    outputs.Write(a.snapshot,
                  [&](const std::string & t)
                  { WriteOrthogonalSnapshot(image, nullptr, t, FoundBoxesSnapshot(found)); });
  if (!a.report.empty())
  {
    report["device"] = options.backend.Describe();
    report["parameters"] = { { "model", a.model },
                             { "input", a.input },
                             { "threshold", a.threshold },
                             { "ignoreNetwork", a.ignoreNetwork },
                             { "priorWeight", a.prior.weight },
                             { "childHypotheses", a.prior.hypotheses },
                             { "priorOrientations", a.prior.orientationSamples },
                             { "priorSizes", a.prior.sizeSamples },
                             { "childThreshold", a.prior.childThreshold },
                             { "refineStepMm", a.refineStepMm },
                             { "refineReach", a.refineReach } };
    report["output"] = a.output;
    report["outputs"] = {
      { "markups", a.markups }, { "centres", a.centres }, { "boxes", a.boxes }, { "snapshot", a.snapshot }
    };
    report["poses"] = PosesToJson(found);
    report["stages"] = timings;
    outputs.Write(a.report, [&](const std::string & t) { report.Write(t); });
  }
  outputs.Commit();
  if (!a.output.empty())
    std::cout << "poses -> " << a.output << '\n';
  return { options.backend.Describe(), found };
}

namespace
{

/** detect --inputs LIST --output-dir DIR: every volume through RunDetect (canopyBatchRun.h). */
void
RunDetectBatch(const DetectArguments & a, BatchOptions batch)
{
  for (const auto & [option, value] : { std::pair{ "--markups", &a.markups },
                                        std::pair{ "--centres", &a.centres },
                                        std::pair{ "--boxes", &a.boxes },
                                        std::pair{ "--snapshot", &a.snapshot } })
    if (!value->empty())
      CANOPY_THROW(option << ": not with --inputs (a batch writes one poses file per volume)");
  batch.command = "detect";
  batch.doneVerb = "searched";
  batch.report = a.report;
  batch.quiet = a.quiet;
  batch.device = a.device;
  batch.parameters = { { "model", a.model },
                       { "threshold", a.threshold },
                       { "ignoreNetwork", a.ignoreNetwork },
                       { "refineStepMm", a.refineStepMm },
                       { "refineReach", a.refineReach } };
  RunBatch(batch,
           [&](const std::string & input, const std::string & output, const std::string & device)
           {
             DetectArguments one = a;
             one.input = input;
             one.output = output;
             one.device = device;
             one.report.clear();
             one.quiet = true;
             (void)RunDetect(one);
             return nlohmann::json();
           });
}

// ---------------------------------------------------------------------------------------------- evaluate
struct EvaluatePosesArguments
{
  std::string              test, reference, json;
  std::vector<std::string> structures;
};

double
Median(std::vector<double> v)
{
  if (v.empty())
    return NAN;
  std::sort(v.begin(), v.end());
  return 0.5 * (v[v.size() / 2] + v[(v.size() - 1) / 2]);
}

void
RunEvaluatePoses(const EvaluatePosesArguments & a)
{
  RunReport report("evaluate-poses");
  CheckOutputPaths({ { "--json", a.json } }, { { "--test", a.test }, { "--reference", a.reference } });
  const auto          structures = ParseStructureSpecs(a.structures);
  const auto          test = ReadPosesFile(a.test);
  const auto          labels = ReadLabels(a.reference, "--reference");
  nlohmann::json      rows = nlohmann::json::array();
  std::vector<double> centres, orientations, sizes;
  int                 missed = 0;
  std::cout << std::fixed << std::setprecision(2);
  for (const auto & spec : structures)
  {
    const auto entry = std::find_if(test.begin(), test.end(), [&](const auto & t) { return t.name == spec.name; });
    if (entry == test.end())
      CANOPY_THROW("--test " << a.test << ": has no structure named '" << spec.name << "'");
    const auto truth =
      PoseFromLabel(labels, spec.label, "--reference " + a.reference + " (structure " + spec.name + ")");
    nlohmann::json row = { { "name", spec.name }, { "label", spec.label }, { "found", entry->found } };
    if (!entry->found)
    {
      ++missed;
      rows.push_back(row);
      std::cout << spec.name << ": not found\n";
      continue;
    }
    double              d2 = 0.0, worstSize = 0.0;
    std::vector<double> axisDegrees, sizePercent;
    for (int k = 0; k < 3; ++k)
    {
      d2 += std::pow(entry->pose.centerMm[k] - truth.centerMm[k], 2);
      axisDegrees.push_back(AxisAngleDegrees(entry->pose.axes[k], truth.axes[k]));
      sizePercent.push_back(100.0 * (entry->pose.sizeMm[k] / truth.sizeMm[k] - 1.0));
      worstSize = std::max(worstSize, std::abs(sizePercent.back()));
    }
    const double centre = std::sqrt(d2), orientation = *std::max_element(axisDegrees.begin(), axisDegrees.end());
    // An axis whose reference size is within 10% of another's is not defined by the shape (a turn in
    // that plane changes nothing): its error is reported but left out of definedAxesErrorDegrees.
    double defined = -1.0;
    for (int k = 0; k < 3; ++k)
    {
      bool ambiguous = false;
      for (int j = 0; j < 3; ++j)
        ambiguous = ambiguous || (j != k && std::abs(truth.sizeMm[k] / truth.sizeMm[j] - 1.0) < 0.1);
      if (!ambiguous)
        defined = std::max(defined, axisDegrees[k]);
    }
    row["definedAxesErrorDegrees"] = defined < 0.0 ? nlohmann::json(nullptr) : nlohmann::json(defined);
    centres.push_back(centre);
    orientations.push_back(orientation);
    sizes.push_back(worstSize);
    row.update(
      { { "centerErrorMm", centre },
        { "orientationErrorDegrees", orientation },
        { "axisErrorDegrees", axisDegrees },
        { "sizeErrorPercent", sizePercent },
        { "worstSizeErrorPercent", worstSize },
        { "reference", { { "center_mm", truth.centerMm }, { "axes", truth.axes }, { "size_mm", truth.sizeMm } } } });
    rows.push_back(row);
    std::cout << spec.name << ": centre " << centre << " mm, orientation " << orientation << " deg (axes "
              << axisDegrees[0] << ", " << axisDegrees[1] << ", " << axisDegrees[2] << "), size " << sizePercent[0]
              << " / " << sizePercent[1] << " / " << sizePercent[2] << " %\n";
  }
  const nlohmann::json summary = { { "structures", structures.size() },
                                   { "notFound", missed },
                                   { "medianCenterErrorMm", Median(centres) },
                                   { "medianOrientationErrorDegrees", Median(orientations) },
                                   { "medianWorstSizeErrorPercent", Median(sizes) } };
  std::cout << "summary: " << structures.size() - missed << " of " << structures.size() << " found; median centre "
            << Median(centres) << " mm, orientation " << Median(orientations) << " deg, size " << Median(sizes)
            << " %\n";
  if (!a.json.empty())
  {
    report["parameters"] = { { "test", a.test }, { "reference", a.reference }, { "structures", a.structures } };
    report["structures"] = rows;
    report["summary"] = summary;
    report.Write(a.json);
  }
}
} // namespace

void
RegisterDetectCommands(CLI::App & app)
{
  auto   train = std::make_shared<TrainDetectorArguments>();
  auto * t = app.add_subcommand(
    "train-detector", "Train a marginal-space pose detector (position, orientation, scale PBTs) from label maps");
  t->add_option("--image", train->images, "Training image (repeat; pairs with --label)");
  t->add_option("--label", train->labels, "Training label map (repeat)");
  t->add_option("--dataset", train->dataset, "MSD dataset.json: its training pairs");
  t->add_option("--max-volumes", train->maxVolumes, "Use at most this many --dataset entries (0: all)")
    ->check(CLI::NonNegativeNumber);
  t->add_option("--structure", train->structures, "NAME=LABEL: a structure and its label value (repeat)")->required();
  t->add_option("--out", train->out, "Detector model to write (JSON)")->required();
  t->add_option("--position-spacing", train->positionSpacing, "Working grid of the position stage (mm)")
    ->capture_default_str()
    ->check(FiniteIn(0.25, 20.0));
  t->add_option("--pyramid", train->pyramid, "Steerable-feature pyramid levels (mm, comma-separated)")
    ->delimiter(',')
    ->capture_default_str();
  t->add_option("--candidates", train->options.candidates, "Position candidates kept (top K)")
    ->capture_default_str()
    ->check(CLI::Range(1, 100000));
  t->add_option("--perturbations", train->options.perturbations, "Perturbed copies of each training orientation")
    ->capture_default_str()
    ->check(CLI::Range(0, 1000));
  t->add_option("--threshold", train->options.threshold, "A structure is found when its best score reaches this")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 1.0));
  t->add_option("--network",
                train->network,
                "Hierarchical detection network (JSON: {\"structures\": [{\"name\": N, \"parent\": P}, ...]}); "
                "spatial priors are learnt from the same subjects");
  t->add_option("--search-sigmas", train->options.searchSigmas, "Child search box: standard deviations per side")
    ->capture_default_str()
    ->check(FiniteIn(0.1, 10.0));
  t->add_option("--search-margin", train->options.searchMarginMm, "Child search box: margin per side (mm)")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 1000.0));
  // Capacity and sampling of the stages (defaults: CommandLineTrainingDefaults, test-sized).
  t->add_option("--steerable-grid",
                train->options.steerable.grid.size,
                "Steerable-feature sample points per axis of a pose hypothesis (N^3 points spanning the box)")
    ->capture_default_str()
    ->check(CLI::Range(3, 9));
  t->add_option("--steerable-features",
                train->options.steerable.featureBankSize,
                "Random steerable features each pose stage's boosting draws from")
    ->capture_default_str()
    ->check(CLI::Range(10, 200000));
  t->add_option(
     "--haar-features", train->options.position.featureBankSize, "Random Haar features the position stage draws from")
    ->capture_default_str()
    ->check(CLI::Range(10, 200000));
  t->add_option(
     "--weak-learners", train->options.steerable.pbt.weakLearnersPerNode, "Weak learners per PBT node (every stage)")
    ->capture_default_str()
    ->check(CLI::Range(1, 1000));
  t->add_option("--seed", train->options.seed, "Random seed")->capture_default_str();
  t->add_option("--threads", train->options.steerable.pbt.threads, "CPU threads (0: all cores)")->capture_default_str();
  t->add_option("--device", train->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  t->add_option("--report", train->report, "Write a JSON run report here");
  t->add_flag("--quiet", train->quiet, "No progress bars");
  t->callback([train] { RunTrainDetector(*train); });

  auto   detect = std::make_shared<DetectArguments>();
  auto * d = app.add_subcommand("detect", "Find the poses (centre, axes, size) of a detector's structures in a volume");
  d->add_option("--model", detect->model, "Detector (from train-detector)")->required();
  auto * input = d->add_option("--input", detect->input, "Volume");
  auto * output = d->add_option("--output", detect->output, "poses.json to write");
  auto   batch = std::make_shared<BatchOptions>();
  batch->suffix = ".poses.json";
  auto * inputs = d->add_option(
    "--inputs", batch->list, "Batch: a dataset.json (its training and test images) or a folder of volumes");
  auto * outputDir =
    d->add_option("--output-dir", batch->outputDir, "Batch: the poses files' folder (NAME + --output-suffix)");
  d->add_option("--output-suffix", batch->suffix, "Batch: appended to each input's name without its extension")
    ->capture_default_str();
  d->add_flag(
    "--distributed", batch->distributed, "Batch: spread the volumes over the processes of an MPI run (mpirun -np N)");
  input->excludes(inputs);
  output->excludes(outputDir);
  inputs->needs(outputDir);
  d->add_option("--markups", detect->markups, "Also write 3D Slicer markups (.mrk.json): centres and oriented boxes");
  d->add_option("--centres",
                detect->centres,
                "Also write the centres alone as 3D Slicer markups (.mrk.json: one point list, a point per found "
                "structure)");
  d->add_option("--boxes",
                detect->boxes,
                "Also write the found structures' oriented boxes as one mesh (.vtk, .vtp or .stl; LPS mm; 12 "
                "triangles per box; cell data StructureIndex (the structure's place in poses.json) and Score, field "
                "data StructureNames)");
  d->add_option("--snapshot",
                detect->snapshot,
                "Also write a PNG of three orthogonal slices through the first found structure's centre (the "
                "volume's centre when none is found), each found box outlined and its centre marked");
  d->add_option("--threshold", detect->threshold, "Replace every structure's threshold (0..1)")
    ->check(FiniteIn(0.0, 1.0));
  d->add_option("--device", detect->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  d->add_option("--report", detect->report, "Write a JSON run report here (stage timings, hypothesis counts)");
  d->add_flag("--ignore-network",
              detect->ignoreNetwork,
              "Search every structure on the whole volume (the model's network unused; for comparisons)");
  d->add_option("--prior-weight",
                detect->prior.weight,
                "Network children: ranking score = PBT posteriors x exp(W x log prior) (0: the PBTs alone; "
                "found/missed is decided on the posteriors)")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 1000.0));
  d->add_option("--child-hypotheses",
                detect->prior.hypotheses,
                "Network children's orientations and sizes: the model's lists, draws from the prior given the "
                "detected parent, or both")
    ->capture_default_str()
    ->check(CLI::IsMember({ "model", "prior", "both" }));
  d->add_option("--prior-orientations", detect->prior.orientationSamples, "Prior orientations per child")
    ->capture_default_str()
    ->check(CLI::Range(1, 10000));
  d->add_option("--prior-sizes", detect->prior.sizeSamples, "Prior sizes per child")
    ->capture_default_str()
    ->check(CLI::Range(1, 10000));
  d->add_option("--truth",
                detect->truth,
                "Diagnosis: a reference label map of --input; the report's stage rows and the console give the "
                "stages' posteriors at each structure's true pose and the rank of its position among the "
                "searched voxels (a miss the classifiers cause, or one the search causes)");
  d->add_option("--child-threshold",
                detect->prior.childThreshold,
                "Network children of a found parent: found when their PBT posteriors' product reaches this "
                "(instead of the structure's threshold); found below the structure's threshold is marked "
                "\"lowConfidence\" in poses.json. Roots and children of a missed parent keep the threshold "
                "(default: unset)")
    ->check(FiniteIn(0.0, 1.0));
  d->add_option("--refine-step",
                detect->refineStepMm,
                "Centre refinement after the scale stage: shift the best poses on a lattice of this step (mm) and "
                "rescore them with the scale PBT (0: off). On by default: chosen on SynthSeg validation subjects "
                "08-10 (median centre 3.69 -> 3.07 mm; docs/ACCURACY.md)")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 20.0));
  d->add_option("--refine-reach",
                detect->refineReach,
                "Centre refinement: lattice steps per side ((2N+1)^3 offsets: 125 by default)")
    ->capture_default_str()
    ->check(CLI::Range(1, 5));
  d->add_flag("--quiet", detect->quiet, "No progress output");
  d->callback(
    [detect, batch]
    {
      if (!batch->list.empty())
        return RunDetectBatch(*detect, *batch);
      if (detect->input.empty() || detect->output.empty())
        CANOPY_THROW("detect: give --input and --output, or --inputs and --output-dir");
      if (batch->distributed)
        CANOPY_THROW("--distributed: spreads a batch (--inputs) over processes; one --input runs on one");
      (void)RunDetect(*detect);
    });

  auto   evaluate = std::make_shared<EvaluatePosesArguments>();
  auto * e =
    app.add_subcommand("evaluate-poses", "Pose errors (centre mm, orientation degrees, size %) against label maps");
  e->add_option("--test", evaluate->test, "poses.json (from detect)")->required();
  e->add_option("--reference", evaluate->reference, "Reference label map")->required();
  e->add_option("--structure", evaluate->structures, "NAME=LABEL (repeat)")->required();
  e->add_option("--json", evaluate->json, "Write the errors as JSON here");
  e->callback([evaluate] { RunEvaluatePoses(*evaluate); });
}
} // namespace canopy::app
