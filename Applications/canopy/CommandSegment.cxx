// canopy segment: classify -> graph-cut regularisation -> (mesh), the volume segmentation pipeline of
// Birkbeck et al. §4.1.
#include "canopy/AtomicFile.h"
#include "canopy/Device.h"
#include "canopy/Errors.h"
#include "canopyBatchRun.h"
#include "canopyClassifySteps.h"
#include "canopyCommands.h"
#include "canopyImageIO.h"
#include "canopyLabelMesh.h"
#include "canopyMeshIO.h"
#include "canopyOptionChecks.h"
#include "canopyOutputPaths.h"
#include "canopyPBTClassesRuns.h"
#include "canopyPBTClassification.h"
#include "canopyProgress.h"
#include "canopyRegularization.h"
#include "canopyRuns.h"
#include "canopySegmentationFile.h"
#include "canopySnapshot.h"
#include "itkCastImageFilter.h"

#include <vtkCellArray.h>
#include <vtkPoints.h>

#include <cmath>
#include <filesystem>
#include <iostream>

namespace canopy::app
{
namespace
{
/** The graph-cut settings of this run and where they came from: --lambda, the model's
 * recommendation, or the old default for models without one. */
struct RegularizationChoice
{
  double       lambda = kDefaultLambdaMm;
  unsigned int neighborhood = 6;
  std::string  lambdaSource;
};

RegularizationChoice
ChooseRegularization(const SegmentArguments & a, const PBTModelFile & model)
{
  RegularizationChoice c;
  c.neighborhood = a.neighborhoodGiven || !model.regularization
                     ? a.neighborhood
                     : static_cast<unsigned>(model.regularization->neighborhood);
  if (a.lambdaGiven)
  {
    c.lambda = a.lambda;
    c.lambdaSource = "--lambda";
  }
  else if (model.regularization)
  {
    c.lambda = model.regularization->lambda;
    c.lambdaSource = "model";
  }
  else
  {
    c.lambda = kDefaultLambdaMm;
    c.lambdaSource = "default (the model recommends none)";
  }
  return c;
}

/** Mesh of label 1, or an empty mesh (no points, no triangles) when nothing is labelled. */
vtkSmartPointer<vtkPolyData>
MeshOfLabels(const MaskVolume * labels, std::int64_t labelled, const SegmentArguments & a)
{
  if (labelled == 0)
  {
    auto empty = vtkSmartPointer<vtkPolyData>::New();
    empty->SetPoints(vtkSmartPointer<vtkPoints>::New());
    empty->SetPolys(vtkSmartPointer<vtkCellArray>::New());
    return empty;
  }
  auto cast = itk::CastImageFilter<MaskVolume, LabelImage>::New();
  cast->SetInput(labels);
  cast->Update();
  LabelMeshOptions meshOptions;
  meshOptions.label = 1;
  meshOptions.smoothingIterations = a.smoothing;
  meshOptions.decimation = a.decimation;
  return LabelToMesh(cast->GetOutput(), meshOptions);
}

/** The segment written to segmentation files: --segment-name, else the model file's name. */
SegmentDescription
SegmentOf(const SegmentArguments & a)
{
  SegmentDescription segment;
  segment.labelValue = 1;
  segment.name = a.segmentName.empty() ? std::filesystem::path(a.model).stem().string() : a.segmentName;
  segment.color = ParseSegmentColor(a.segmentColor, "--segment-color");
  return segment;
}

/** The label map as a volume, or as a Slicer segmentation when the output's name ends in .seg.nrrd
 * (`path` may be its temporary name, which does not). */
void
WriteLabels(const MaskVolume *         labels,
            const SegmentDescription & segment,
            bool                       asSegmentation,
            const std::string &        path,
            const std::string &        parameter)
{
  if (asSegmentation)
    WriteSegmentationFile(labels, { segment }, path, parameter);
  else
    WriteVolume(labels, path, parameter);
}
} // namespace

SegmentOutcome
RunSegment(const SegmentArguments & a)
{
  RunReport report("segment");
  CheckOutputPaths({ { "--output", a.output },
                     { "--segmentation", a.segmentation },
                     { "--probability", a.probability },
                     { "--class-probabilities", a.classProbabilities },
                     { "--mesh", a.mesh },
                     { "--snapshot", a.snapshot },
                     { "--report", a.report } },
                   { { "--model", a.model }, { "--input", a.input }, { "--snapshot-reference", a.snapshotReference } });
  RequireVolumeFormat(a.output, "--output");
  RequireVolumeFormat(a.probability, "--probability");
  RequireVolumeFormat(a.classProbabilities, "--class-probabilities");
  if (!a.segmentation.empty() && !IsSegmentationPath(a.segmentation))
  {
    CANOPY_THROW("--segmentation " << a.segmentation << ": a segmentation file name ends in .seg.nrrd");
  }
  const SegmentDescription segment = SegmentOf(a);
  if (!a.mesh.empty())
  {
    RequireMeshExtension(a.mesh, "--mesh"); // fail before the work, not after
  }
  {
    const PBTClassModel classes = LoadPBTClassModel(a.model); // binary files read as one class, one stage
    if (classes.NumberOfClasses() > 1 || classes.NumberOfStages() > 1)
    {
      return RunSegmentClasses(a, classes);
    }
  }
  const auto           backend = ResolveBackend(BackendRequest::Parse(a.device));
  const auto           model = LoadPBTModelFile(a.model);
  const auto           image = ReadVolume(a.input, "--input");
  FloatVolume::Pointer snapshotReference;
  if (!a.snapshotReference.empty())
  {
    snapshotReference = MaskAsFloat(ReadMask(a.snapshotReference, "--snapshot-reference", {}));
  }
  CheckWorkingGrid(image, model.workingSpacing, a.model);
  const RegularizationChoice regularization = ChooseRegularization(a, model);

  // Progress shares (Slicer's one 0..1 bar): classification dominates, then the cut, then the outputs.
  PBTClassificationTimings timings;
  const auto               probability =
    ClassifyWithProgress(image, model, backend, !a.nonProbabilistic, a.quiet, timings, { 0.0, 0.8 });

  auto              start = std::chrono::steady_clock::now();
  RegularizedLabels cut;
  {
    ProgressBar bar("graph cut", a.quiet, { 0.8, 0.95 });
    cut = RegularizeProbabilityMap(probability, regularization.lambda, static_cast<int>(regularization.neighborhood));
  }
  const double graphCutSeconds = SecondsSince(start);
  if (cut.RemovedFraction() > 0.5)
  {
    std::cerr << "canopy: warning: the graph cut (lambda " << regularization.lambda << " mm, "
              << regularization.lambdaSource << ") kept " << cut.confidentKept << " of the " << cut.confident
              << " voxels with p >= 0.5 (removed " << std::lround(100.0 * cut.RemovedFraction())
              << "%); a smaller --lambda keeps small structures\n";
  }
  if (cut.labelled == 0)
  {
    std::cerr << "canopy: warning: the segmentation is empty (no voxel labelled 1)"
              << (a.mesh.empty() ? "" : "; the mesh has no triangles") << '\n';
  }

  // Everything is computed before anything is written; the outputs appear together or not at all.
  StagedOutputs outputs;
  if (!a.probability.empty())
  {
    outputs.Write(a.probability,
                  [&](const std::string & t) { WriteVolume(probability.GetPointer(), t, "--probability"); });
  }
  if (!a.classProbabilities.empty()) // background 1 - p, class 1 p: as a one-class model's map
  {
    const auto map = ClassProbabilityMap({ probability }, { 1 });
    outputs.Write(a.classProbabilities,
                  [&](const std::string & t) { WriteVolume(map.GetPointer(), t, "--class-probabilities"); });
  }
  outputs.Write(a.output,
                [&](const std::string & t)
                { WriteLabels(cut.labels, segment, IsSegmentationPath(a.output), t, "--output"); });
  if (!a.segmentation.empty())
  {
    outputs.Write(a.segmentation,
                  [&](const std::string & t)
                  { WriteSegmentationFile(cut.labels.GetPointer(), { segment }, t, "--segmentation"); });
  }
  nlohmann::json meshReport;
  if (!a.mesh.empty())
  {
    start = std::chrono::steady_clock::now();
    const auto mesh = MeshOfLabels(cut.labels, cut.labelled, a);
    outputs.Write(a.mesh, [&](const std::string & t) { WriteMesh(mesh, t, "--mesh"); });
    const MeshMeasures measures = ComputeMeshMeasures(mesh);
    meshReport = { { "path", a.mesh },
                   { "points", measures.points },
                   { "triangles", measures.triangles },
                   { "areaMm2", measures.areaMm2 },
                   { "volumeMm3", measures.volumeMm3 },
                   { "seconds", SecondsSince(start) } };
  }
  if (!a.snapshot.empty())
  {
    const auto overlay = MaskAsFloat(cut.labels);
    outputs.Write(a.snapshot,
                  [&](const std::string & t)
                  { WriteOrthogonalSnapshot(image, overlay, t, SnapshotOptions{}, snapshotReference.GetPointer()); });
  }
  if (!a.report.empty())
  {
    report["device"] = backend.Describe();
    report["parameters"] = { { "model", a.model },
                             { "input", a.input },
                             { "lambda", regularization.lambda },
                             { "lambdaSource", regularization.lambdaSource },
                             { "neighborhood", regularization.neighborhood },
                             { "probabilistic", !a.nonProbabilistic } };
    report["outputs"] = { { "labels", a.output },
                          { "probability", a.probability },
                          { "classProbabilities", a.classProbabilities },
                          { "snapshot", a.snapshot } };
    report["timings"] = ToJson(timings);
    report["timings"]["graphCutSeconds"] = graphCutSeconds;
    report["timings"]["maxFlowSeconds"] = cut.statistics.maxFlowSeconds;
    report["graphCut"] = { { "nodes", cut.statistics.nodes },
                           { "edges", cut.statistics.arcs },
                           { "graphBytesEstimate", cut.statistics.graphBytes },
                           { "energy", cut.statistics.energy },
                           { "voxelsAtLeastHalf", cut.confident },
                           { "voxelsAtLeastHalfKept", cut.confidentKept },
                           { "voxelsLabelled", cut.labelled } };
    if (!meshReport.is_null())
      report["mesh"] = meshReport;
    outputs.Write(a.report, [&](const std::string & t) { report.Write(t); });
  }
  outputs.Commit();

  std::cout << "segmented " << a.input << " on " << backend.Describe() << ": classification "
            << timings.prepareSeconds + timings.evaluateSeconds + timings.resampleSeconds << " s (evaluation "
            << timings.evaluateSeconds << " s), graph cut " << graphCutSeconds << " s (" << cut.statistics.nodes
            << " nodes, lambda " << regularization.lambda << " mm from " << regularization.lambdaSource
            << ")\n  labels: " << a.output << " (" << cut.labelled << " voxels)\n";
  if (!meshReport.is_null())
  {
    std::cout << "  mesh: " << a.mesh << " (" << meshReport["triangles"] << " triangles, "
              << meshReport["areaMm2"].get<double>() / 100.0 << " cm^2)\n";
  }
  if (!a.snapshot.empty())
  {
    std::cout << "  snapshot: " << a.snapshot << '\n';
  }
  if (!a.segmentation.empty())
  {
    std::cout << "  segmentation: " << a.segmentation << " (segment '" << segment.name << "')\n";
  }

  SegmentOutcome outcome;
  outcome.device = backend.Describe();
  outcome.lambda = regularization.lambda;
  outcome.lambdaSource = regularization.lambdaSource;
  outcome.neighborhood = regularization.neighborhood;
  outcome.labelledVoxels = cut.labelled;
  const auto spacing = cut.labels->GetSpacing();
  outcome.labelledVolumeMm3 = static_cast<double>(cut.labelled) * spacing[0] * spacing[1] * spacing[2];
  outcome.meshTriangles = meshReport.is_null() ? 0 : meshReport["triangles"].get<std::int64_t>();
  return outcome;
}

/** segment --inputs LIST --output-dir DIR: every volume through RunSegment (canopyBatchRun.h). */
void
RunSegmentBatch(const SegmentArguments & a, BatchOptions batch)
{
  for (const auto & [option, value] : { std::pair<const char *, const std::string *>{ "--mesh", &a.mesh },
                                        { "--probability", &a.probability },
                                        { "--class-probabilities", &a.classProbabilities },
                                        { "--segmentation", &a.segmentation },
                                        { "--snapshot", &a.snapshot } })
    if (!value->empty())
      CANOPY_THROW(option << ": not with --inputs (a batch writes one label map per volume"
                          << (option == std::string("--class-probabilities") ? "; --class-probabilities-dir DIR "
                                                                               "writes each volume's maps"
                                                                             : "")
                          << ")");
  if (!a.classProbabilitiesDir.empty())
  {
    std::error_code same;
    if (std::filesystem::exists(batch.outputDir) &&
        std::filesystem::equivalent(a.classProbabilitiesDir, batch.outputDir, same))
      CANOPY_THROW("--class-probabilities-dir "
                   << a.classProbabilitiesDir << ": the folder of --output-dir (the maps are named as the label maps)");
    if (std::filesystem::exists(a.classProbabilitiesDir) && !std::filesystem::is_directory(a.classProbabilitiesDir))
      CANOPY_THROW("--class-probabilities-dir " << a.classProbabilitiesDir << ": exists and is not a folder");
    std::filesystem::create_directories(a.classProbabilitiesDir);
  }
  batch.command = "segment";
  batch.doneVerb = "segmented";
  batch.report = a.report;
  batch.quiet = a.quiet;
  batch.device = a.device;
  batch.parameters = { { "model", a.model } };
  RunBatch(batch,
           [&](const std::string & input, const std::string & output, const std::string & device)
           {
             SegmentArguments one = a;
             one.input = input;
             one.output = output;
             one.device = device;
             if (!a.classProbabilitiesDir.empty())
               one.classProbabilities =
                 (std::filesystem::path(a.classProbabilitiesDir) / std::filesystem::path(output).filename()).string();
             one.report.clear();
             one.quiet = true;
             const SegmentOutcome outcome = RunSegment(one);
             return nlohmann::json{ { "backend", outcome.device }, { "lambda", outcome.lambda } };
           });
}

void
RegisterSegmentCommand(CLI::App & app)
{
  auto   args = std::make_shared<SegmentArguments>();
  auto * c =
    app.add_subcommand("segment", "Segment a volume: PBT probabilities, graph-cut regularisation, optional mesh");
  c->add_option("--model", args->model, "Model file from train-pbt")->required();
  auto * input = c->add_option("--input", args->input, "Volume to segment (any ITK format or a DICOM folder)");
  auto * output = c->add_option(
    "--output", args->output, "Label map to write (0/1, input's grid; the class values for multi-class models)");
  auto   batch = std::make_shared<BatchOptions>();
  auto * inputs = c->add_option(
    "--inputs", batch->list, "Batch: a dataset.json (its training and test images) or a folder of volumes");
  auto * outputDir =
    c->add_option("--output-dir", batch->outputDir, "Batch: the label maps' folder (NAME + --output-suffix)");
  c->add_option("--output-suffix", batch->suffix, "Batch: appended to each input's name without its extension")
    ->capture_default_str();
  c->add_flag(
    "--distributed", batch->distributed, "Batch: spread the volumes over the processes of an MPI run (mpirun -np N)");
  input->excludes(inputs);
  output->excludes(outputDir);
  inputs->needs(outputDir);
  c->add_option("--mesh", args->mesh, "Surface mesh to write (.vtk legacy 4.2 with SPACE=LPS, .vtp or .stl)");
  c->add_option("--probability", args->probability, "Also write the probability map here");
  c->add_option("--class-probabilities",
                args->classProbabilities,
                "Also write every class's probability here (float vector volume on the input's grid: component 0 "
                "the background, component L class L; predict-forest --mode distribution's layout, read by "
                "fuse-shape --probabilities / --ensemble-probabilities)");
  c->add_option("--class-probabilities-dir",
                args->classProbabilitiesDir,
                "Batch: each volume's class probabilities in this folder, named as its label map");
  c->add_option(
    "--segmentation",
    args->segmentation,
    "Also write the labels as a 3D Slicer segmentation (.seg.nrrd, a named segment); --output may be one too");
  c->add_option("--segment-name", args->segmentName, "Segment name in segmentations (default: the model file's name)");
  c->add_option("--segment-color", args->segmentColor, "Segment colour in segmentations, R,G,B in [0, 1]")
    ->capture_default_str();
  auto * lambda = c->add_option("--lambda",
                                args->lambda,
                                "Surface weight of the graph cut in mm (0: threshold at 0.5); default: the model's "
                                "recommended lambda, 1 for models without one; multi-class models: a graph cut per "
                                "class only when given")
                    ->check(FiniteNonNegative());
  auto * neighborhood = c->add_option("--neighborhood",
                                      args->neighborhood,
                                      "Graph-cut neighbourhood, 6 or 26 (default: the model's, else 6)")
                          ->check(CLI::IsMember({ 6u, 26u }));
  c->add_option("--smooth", args->smoothing, "Mesh smoothing iterations")->capture_default_str();
  c->add_option("--decimate", args->decimation, "Fraction of mesh triangles to remove")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 0.99));
  c->add_option("--device", args->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  c->add_flag("--non-probabilistic", args->nonProbabilistic, "Descend one branch per node (epsilon1 = 0.5)");
  c->add_option("--snapshot", args->snapshot, "Write a PNG of orthogonal slices with the label overlaid");
  c->add_option("--snapshot-reference", args->snapshotReference, "Label map outlined in green on the snapshot");
  c->add_option("--report", args->report, "Write a JSON run report here");
  c->add_flag("--quiet", args->quiet, "No progress bars");
  c->callback(
    [args, lambda, neighborhood, batch]
    {
      args->lambdaGiven = lambda->count() > 0;
      args->neighborhoodGiven = neighborhood->count() > 0;
      if (!batch->list.empty())
        return RunSegmentBatch(*args, *batch);
      if (args->input.empty() || args->output.empty())
        CANOPY_THROW("segment: give --input and --output, or --inputs and --output-dir");
      if (!args->classProbabilitiesDir.empty())
        CANOPY_THROW("--class-probabilities-dir: for a batch (--inputs); one --input writes --class-probabilities");
      if (batch->distributed)
        CANOPY_THROW("--distributed: spreads a batch (--inputs) over processes; one --input runs on one");
      (void)RunSegment(*args);
    });
}

} // namespace canopy::app
