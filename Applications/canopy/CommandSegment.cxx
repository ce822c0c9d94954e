// canopy segment: classify -> graph-cut regularisation -> (mesh), the volume segmentation pipeline of
// Birkbeck et al. §4.1.
#include "canopy/Device.h"
#include "canopy/Errors.h"
#include "canopyClassifySteps.h"
#include "canopyCommands.h"
#include "canopyImageIO.h"
#include "canopyLabelMesh.h"
#include "canopyMeshIO.h"
#include "canopyPBTClassification.h"
#include "canopyProgress.h"
#include "itkCastImageFilter.h"
#include "itkGraphCutRegularizationImageFilter.h"

#include <iostream>

namespace canopy::app
{
namespace
{
struct SegmentArguments
{
  std::string  model, input, output, mesh, probability, device = "auto", report, snapshot, snapshotReference;
  double       lambda = 1.0;
  unsigned int neighborhood = 6;
  unsigned     smoothing = 0;
  double       decimation = 0.0;
  bool         nonProbabilistic = false, quiet = false;
};

void
RunSegment(const SegmentArguments & a)
{
  RunReport report("segment");
  if (!a.mesh.empty())
  {
    RequireMeshExtension(a.mesh, "--mesh"); // fail before the work, not after
  }
  const auto backend = ResolveBackend(BackendRequest::Parse(a.device));
  const auto model = LoadPBTModelFile(a.model);
  const auto image = ReadVolume(a.input, "--input");

  PBTClassificationTimings timings;
  const auto probability = ClassifyWithProgress(image, model, backend, !a.nonProbabilistic, a.quiet, timings);
  if (!a.probability.empty())
  {
    WriteVolume(probability.GetPointer(), a.probability, "--probability");
  }

  auto       start = std::chrono::steady_clock::now();
  auto       graphCut = itk::GraphCutRegularizationImageFilter<FloatVolume, MaskVolume>::New();
  {
    ProgressBar bar("graph cut", a.quiet);
    graphCut->SetInput(probability);
    graphCut->SetLambda(a.lambda);
    graphCut->SetNeighborhood(a.neighborhood);
    graphCut->Update();
  }
  const double graphCutSeconds = SecondsSince(start);
  MaskVolume::Pointer labels = graphCut->GetOutput();
  WriteVolume(labels.GetPointer(), a.output, "--output");
  std::cout << "segmented " << a.input << " on " << backend.Describe() << ": classification "
            << timings.prepareSeconds + timings.evaluateSeconds + timings.resampleSeconds << " s (evaluation "
            << timings.evaluateSeconds << " s), graph cut " << graphCutSeconds << " s ("
            << graphCut->GetNumberOfGraphNodes() << " nodes, lambda " << a.lambda << " mm)\n  labels: " << a.output
            << '\n';

  nlohmann::json meshReport;
  if (!a.mesh.empty())
  {
    start = std::chrono::steady_clock::now();
    auto cast = itk::CastImageFilter<MaskVolume, LabelImage>::New();
    cast->SetInput(labels);
    cast->Update();
    LabelMeshOptions meshOptions;
    meshOptions.label = 1;
    meshOptions.smoothingIterations = a.smoothing;
    meshOptions.decimation = a.decimation;
    auto mesh = LabelToMesh(cast->GetOutput(), meshOptions);
    WriteMesh(mesh, a.mesh, "--mesh");
    const MeshMeasures measures = ComputeMeshMeasures(mesh);
    meshReport = { { "path", a.mesh }, { "points", measures.points }, { "triangles", measures.triangles },
                   { "areaMm2", measures.areaMm2 }, { "volumeMm3", measures.volumeMm3 },
                   { "seconds", SecondsSince(start) } };
    std::cout << "  mesh: " << a.mesh << " (" << measures.triangles << " triangles, " << measures.areaMm2 / 100.0
              << " cm^2)\n";
  }
  WriteSnapshotIfAsked(image, MaskAsFloat(labels), a.snapshot, a.snapshotReference);
  if (!a.report.empty())
  {
    report["device"] = backend.Describe();
    report["parameters"] = { { "model", a.model },          { "input", a.input },
                             { "lambda", a.lambda },        { "neighborhood", a.neighborhood },
                             { "probabilistic", !a.nonProbabilistic } };
    report["outputs"] = { { "labels", a.output }, { "probability", a.probability }, { "snapshot", a.snapshot } };
    report["timings"] = ToJson(timings);
    report["timings"]["graphCutSeconds"] = graphCutSeconds;
    report["timings"]["maxFlowSeconds"] = graphCut->GetMaxFlowSeconds();
    report["graphCut"] = { { "nodes", graphCut->GetNumberOfGraphNodes() },
                           { "edges", graphCut->GetNumberOfGraphEdges() },
                           { "graphBytesEstimate", graphCut->GetPeakGraphBytesEstimate() },
                           { "energy", graphCut->GetEnergy() } };
    if (!meshReport.is_null())
      report["mesh"] = meshReport;
    report.Write(a.report);
  }
}
} // namespace

void
RegisterSegmentCommand(CLI::App & app)
{
  auto   args = std::make_shared<SegmentArguments>();
  auto * c = app.add_subcommand("segment", "Segment a volume: PBT probabilities, graph-cut regularisation, optional mesh");
  c->add_option("--model", args->model, "Model file from train-pbt")->required();
  c->add_option("--input", args->input, "Volume to segment (any ITK format or a DICOM folder)")->required();
  c->add_option("--output", args->output, "Label map to write (0/1, input's grid)")->required();
  c->add_option("--mesh", args->mesh, "Surface mesh to write (.vtk legacy 4.2 with SPACE=LPS, .vtp or .stl)");
  c->add_option("--probability", args->probability, "Also write the probability map here");
  c->add_option("--lambda", args->lambda, "Surface weight of the graph cut in mm (0: threshold at 0.5)")
    ->capture_default_str()->check(CLI::NonNegativeNumber);
  c->add_option("--neighborhood", args->neighborhood, "Graph-cut neighbourhood, 6 or 26")
    ->capture_default_str()->check(CLI::IsMember({ 6u, 26u }));
  c->add_option("--smooth", args->smoothing, "Mesh smoothing iterations")->capture_default_str();
  c->add_option("--decimate", args->decimation, "Fraction of mesh triangles to remove")->capture_default_str()->check(CLI::Range(0.0, 0.99));
  c->add_option("--device", args->device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  c->add_flag("--non-probabilistic", args->nonProbabilistic, "Descend one branch per node (epsilon1 = 0.5)");
  c->add_option("--snapshot", args->snapshot, "Write a PNG of orthogonal slices with the label overlaid");
  c->add_option("--snapshot-reference", args->snapshotReference, "Label map outlined in green on the snapshot");
  c->add_option("--report", args->report, "Write a JSON run report here");
  c->add_flag("--quiet", args->quiet, "No progress bars");
  c->callback([args] { RunSegment(*args); });
}

} // namespace canopy::app
