// canopy fuse-shape and the fusion options of segment-shape (issues 10 and 13): a fitted mesh
// (segment-shape --mesh) and a voxel classifier's probability map (predict-forest --mode distribution)
// decide the structure's label together (Modules/ShapeFusion: log-odds in a band around the mesh,
// graph cut). fuse-shape reads a mesh written earlier, so many fusion settings can be compared on one
// fit without refitting (Testing/Regression/hippocampus-shape-fusion.sh).
#include "canopy/AtomicFile.h" // StagedOutputs
#include "canopy/Errors.h"
#include "canopyCheckedImageReader.h"
#include "canopyCommands.h"
#include "canopyImageIO.h"
#include "canopyMeshIO.h"
#include "canopyOptionChecks.h"
#include "canopyOutputPaths.h"
#include "canopyProgress.h"
#include "canopyShapeFusionOptions.h"
#include "canopyShapeModel.h" // MeshPoints, MeshTriangles

#include <itkVectorImage.h>
#include <vtkObject.h>

#include <chrono>
#include <cmath>
#include <iostream>

namespace canopy::app
{
void
AddShapeFusionOptions(CLI::App * c, ShapeFusionOptions & o, const std::string & probabilitiesHelp)
{
  auto *     probabilities = c->add_option("--probabilities", o.probabilities, probabilitiesHelp);
  const auto needs = [probabilities](CLI::Option * option) { return option->needs(probabilities); };
  needs(c->add_option("--probability-component",
                      o.component,
                      "Component of --probabilities holding the structure (default: its label value; a scalar map "
                      "is the probability itself)")
          ->check(CLI::Range(0, 1 << 16)));
  needs(c->add_option("--fusion-width",
                      o.parameters.widthMm,
                      "Width s (mm) of the shape prior 1 / (1 + exp(d / s)), d the signed distance to the mesh")
          ->capture_default_str()
          ->check(FinitePositive()));
  needs(c->add_option("--fusion-voxel-weight",
                      o.parameters.voxelWeight,
                      "Weight w of the voxel log-odds: logit p = w logit(p_voxel) - d / s (0: the mesh alone)")
          ->capture_default_str()
          ->check(FiniteNonNegative()));
  needs(c->add_option("--fusion-band", o.parameters.bandMm, "Beyond this distance (mm) from the mesh its label stands")
          ->capture_default_str()
          ->check(FiniteNonNegative()));
  needs(c->add_option("--fusion-lambda",
                      o.parameters.lambda,
                      "Surface weight of the graph cut on the fused probability (mm; 0: the fused probability at 0.5)")
          ->capture_default_str()
          ->check(FiniteNonNegative()));
}

itk::Image<float, 3>::Pointer
ReadStructureProbability(const ShapeFusionOptions & o, int label, const itk::ImageBase<3> * grid)
{
  using VectorVolume = itk::VectorImage<float, 3>;
  const std::string where = "--probabilities " + o.probabilities;
  const auto        file = OpenImageChecked(o.probabilities, "--probabilities");
  const unsigned    dims = file.io->GetNumberOfDimensions();
  if (dims != 3)
    CANOPY_THROW(where << ": expected a 3D volume, the file has " << dims << " dimension(s)");
  const auto     map = ReadImageChecked<VectorVolume>(file, o.probabilities, "--probabilities");
  const unsigned components = map->GetNumberOfComponentsPerPixel();
  const int      component = o.component >= 0 ? o.component : components == 1 ? 0 : label;
  if (component >= int(components))
    CANOPY_THROW(where << ": no component " << component << " (the file has " << components << "; "
                       << (o.component >= 0 ? "--probability-component" : "the structure's label value")
                       << " chooses it)");
  if (grid)
  {
    const auto size = map->GetLargestPossibleRegion().GetSize();
    bool       same = size == grid->GetLargestPossibleRegion().GetSize();
    for (int i = 0; i < 3; ++i)
    {
      same = same && std::abs(map->GetOrigin()[i] - grid->GetOrigin()[i]) <= 1e-3 &&
             std::abs(map->GetSpacing()[i] - grid->GetSpacing()[i]) <= 1e-3;
      for (int j = 0; j < 3; ++j)
        same = same && std::abs(map->GetDirection()(i, j) - grid->GetDirection()(i, j)) <= 1e-3;
    }
    if (!same)
      CANOPY_THROW(where << ": not on the grid of --input (size, origin, spacing or direction differ); predict the "
                            "probabilities on the input itself");
  }
  auto probability = itk::Image<float, 3>::New();
  probability->CopyInformation(map);
  probability->SetRegions(map->GetLargestPossibleRegion());
  probability->Allocate();
  const float *     in = map->GetBufferPointer();
  float *           out = probability->GetBufferPointer();
  const std::size_t n = probability->GetLargestPossibleRegion().GetNumberOfPixels();
  for (std::size_t i = 0; i < n; ++i)
  {
    const float p = in[i * components + std::size_t(component)];
    if (!(p >= -1e-4f && p <= 1.0001f))
      CANOPY_THROW(where << ": component " << component << " is not a probability (" << p << " at voxel " << i << ")");
    out[i] = std::clamp(p, 0.0f, 1.0f);
  }
  return probability;
}

nlohmann::json
ShapeFusionReport(const ShapeFusionOptions & o, const ShapeFusionStatistics & s)
{
  return { { "probabilities", o.probabilities },
           { "component", o.component },
           { "widthMm", o.parameters.widthMm },
           { "voxelWeight", o.parameters.voxelWeight },
           { "bandMm", o.parameters.bandMm },
           { "lambda", o.parameters.lambda },
           { "bandVoxels", s.bandVoxels },
           { "meshVoxels", s.meshVoxels },
           { "fusedVoxels", s.fusedVoxels },
           { "addedVoxels", s.addedVoxels },
           { "removedVoxels", s.removedVoxels },
           { "graphNodes", s.graphCut.nodes },
           { "graphSeconds", s.graphCut.buildSeconds + s.graphCut.maxFlowSeconds } };
}

namespace
{
struct FuseShapeArguments
{
  std::string        mesh, output, report;
  int                label = 1;
  ShapeFusionOptions fusion;
};

void
RunFuseShape(const FuseShapeArguments & a)
{
  vtkObject::GlobalWarningDisplayOff();
  RunReport report("fuse-shape");
  CheckOutputPaths({ { "--output", a.output }, { "--report", a.report } },
                   { { "--mesh", a.mesh }, { "--probabilities", a.fusion.probabilities } });
  RequireVolumeFormat(a.output, "--output");
  const auto             begin = std::chrono::steady_clock::now();
  const auto             mesh = ReadMesh(a.mesh, MeshSpace::LPS, "--mesh").mesh;
  const Eigen::Matrix3Xd points = MeshPoints(mesh);
  const Eigen::Matrix3Xi triangles = MeshTriangles(mesh);
  const auto             probability = ReadStructureProbability(a.fusion, a.label);
  ShapeFusionStatistics  statistics;
  LabelImage::Pointer    labels;
  try
  {
    labels = FuseMeshWithProbabilities(points, triangles, probability, a.label, a.fusion.parameters, &statistics);
  }
  catch (const Error & e)
  {
    CANOPY_THROW("--mesh " << a.mesh << " with --probabilities " << a.fusion.probabilities << ": " << e.what());
  }
  StagedOutputs outputs;
  outputs.Write(a.output, [&](const std::string & t) { WriteVolume(labels.GetPointer(), t, "--output"); });
  if (!a.report.empty())
  {
    report["mesh"] = a.mesh;
    report["label"] = a.label;
    report["fusion"] = ShapeFusionReport(a.fusion, statistics);
    report["seconds"] = SecondsSince(begin);
    outputs.Write(a.report, [&](const std::string & t) { report.Write(t); });
  }
  outputs.Commit();
  std::cout << "fused: " << statistics.meshVoxels << " voxels inside the mesh, " << statistics.fusedVoxels
            << " labelled (" << statistics.addedVoxels << " added, " << statistics.removedVoxels << " removed)\n";
}
} // namespace

void
RegisterFuseShapeCommand(CLI::App & app)
{
  auto   args = std::make_shared<FuseShapeArguments>();
  auto * c = app.add_subcommand("fuse-shape",
                                "Label a structure from a fitted mesh (segment-shape --mesh) and a voxel classifier's "
                                "probability map together: log-odds in a band around the mesh, then a graph cut");
  c->add_option("--mesh", args->mesh, "Fitted surface mesh (.vtk, .vtp, .stl; LPS mm)")->required();
  c->add_option("--output", args->output, "Label map on the grid of --probabilities")->required();
  c->add_option("--label", args->label, "Label value of the structure in --output (and its default component)")
    ->capture_default_str()
    ->check(CLI::Range(1, 1 << 16));
  c->add_option("--report", args->report, "Write a JSON run report here");
  AddShapeFusionOptions(c,
                        args->fusion,
                        "Voxel classifier's probabilities on the grid of the segmented volume (predict-forest --mode "
                        "distribution: one component per class)");
  c->get_option("--probabilities")->required();
  c->callback([args] { RunFuseShape(*args); });
}
} // namespace canopy::app
