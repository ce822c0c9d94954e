// canopy fuse-shape and the fusion options of segment-shape (issues 10 and 13): a fitted mesh
// (segment-shape --mesh) and a voxel classifier's probability map (predict-forest --mode distribution)
// decide the structure's label together (Modules/ShapeFusion: log-odds in a band around the mesh,
// graph cut). fuse-shape reads a mesh written earlier, so many fusion settings can be compared on one
// fit without refitting (Testing/Regression/hippocampus-shape-fusion.sh). With several meshes (one
// --label each) the structures are fused jointly into one multi-label map (canopyJointShapeFusion.h).
#include "canopy/AtomicFile.h" // StagedOutputs
#include "canopy/Errors.h"
#include "canopyCheckedImageReader.h"
#include "canopyCommands.h"
#include "canopyImageIO.h"
#include "canopyJointShapeFusion.h"
#include "canopyMeshIO.h"
#include "canopyOptionChecks.h"
#include "canopyOutputPaths.h"
#include "canopyProgress.h"
#include "canopyShapeFusionOptions.h"
#include "canopyShapeModel.h" // MeshPoints, MeshTriangles

#include <itkSmoothingRecursiveGaussianImageFilter.h>
#include <itkVectorImage.h>
#include <vtkObject.h>

#include <algorithm>
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
  needs(
    c->add_option("--fusion-offset",
                  o.parameters.offsetMm,
                  "Offset o (mm) of the shape prior 1 / (1 + exp((d - o) / s)): its 0.5 level o outside the mesh (> 0 "
                  "grows it, < 0 shrinks it; within +-the band)")
      ->capture_default_str()
      ->check(CLI::Range(-100.0, 100.0)));
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
  return {
    { "probabilities", o.probabilities }, { "component", o.component },
    { "widthMm", o.parameters.widthMm },  { "voxelWeight", o.parameters.voxelWeight },
    { "bandMm", o.parameters.bandMm },    { "offsetMm", o.parameters.offsetMm },
    { "lambda", o.parameters.lambda },    { "bandVoxels", s.bandVoxels },
    { "meshVoxels", s.meshVoxels },       { "fusedVoxels", s.fusedVoxels },
    { "addedVoxels", s.addedVoxels },     { "removedVoxels", s.removedVoxels },
    { "graphNodes", s.graphCut.nodes },   { "graphSeconds", s.graphCut.buildSeconds + s.graphCut.maxFlowSeconds }
  };
}

namespace
{
using VectorVolume = itk::VectorImage<float, 3>;

struct FuseShapeArguments
{
  std::vector<std::string> meshes;
  std::vector<int>         labels; // one per mesh (default: 1 for one mesh)
  std::string              output, report;
  ShapeFusionOptions       fusion;
  std::vector<std::string> ensemble;        // --ensemble-probabilities: averaged with --probabilities
  double                   smoothingMm = 0; // --probability-smoothing: Gaussian sigma of every class map
};

using FloatVolume = itk::Image<float, 3>;

/** Sum of `b` into `a` (same grid and size: canopy::Error naming `path` otherwise). */
void
AddVolume(float *                   a,
          const itk::ImageBase<3> * aGrid,
          const float *             b,
          const itk::ImageBase<3> * bGrid,
          std::size_t               values,
          const std::string &       path)
{
  bool same = aGrid->GetLargestPossibleRegion().GetSize() == bGrid->GetLargestPossibleRegion().GetSize();
  for (int i = 0; i < 3; ++i)
    same = same && std::abs(aGrid->GetOrigin()[i] - bGrid->GetOrigin()[i]) <= 1e-3 &&
           std::abs(aGrid->GetSpacing()[i] - bGrid->GetSpacing()[i]) <= 1e-3;
  if (!same)
    CANOPY_THROW("--ensemble-probabilities " << path << ": not on the grid of --probabilities (size, origin or spacing "
                                             << "differ); predict every model on the same volume");
  for (std::size_t i = 0; i < values; ++i)
    a[i] += b[i];
}

/** Gaussian smoothing (sigma mm) of one scalar volume in place. */
void
SmoothVolume(FloatVolume * volume, double sigmaMm)
{
  auto smooth = itk::SmoothingRecursiveGaussianImageFilter<FloatVolume, FloatVolume>::New();
  smooth->SetInput(volume);
  smooth->SetSigma(sigmaMm);
  smooth->Update();
  const float * in = smooth->GetOutput()->GetBufferPointer();
  std::copy(in, in + volume->GetLargestPossibleRegion().GetNumberOfPixels(), volume->GetBufferPointer());
}

/** Every class of --probabilities (predict-forest --mode distribution) for the joint fusion: a 3D volume
 * whose components are probabilities (clamped to [0, 1]). */
VectorVolume::Pointer
ReadClassProbabilities(const std::string & path)
{
  const std::string where = "--probabilities " + path;
  const auto        file = OpenImageChecked(path, "--probabilities");
  if (file.io->GetNumberOfDimensions() != 3)
    CANOPY_THROW(where << ": expected a 3D volume, the file has " << file.io->GetNumberOfDimensions()
                       << " dimension(s)");
  auto              map = ReadImageChecked<VectorVolume>(file, path, "--probabilities");
  const std::size_t components = map->GetNumberOfComponentsPerPixel();
  float *           p = map->GetBufferPointer();
  for (std::size_t i = 0; i < map->GetLargestPossibleRegion().GetNumberOfPixels() * components; ++i)
  {
    if (!(p[i] >= -1e-4f && p[i] <= 1.0001f))
      CANOPY_THROW(where << ": component " << i % components << " is not a probability (" << p[i] << " at voxel "
                         << i / components << ")");
    p[i] = std::clamp(p[i], 0.0f, 1.0f);
  }
  return map;
}

nlohmann::json
StructureReport(const std::string & mesh, int label, const ShapeFusionStatistics & s)
{
  return { { "mesh", mesh },
           { "label", label },
           { "bandVoxels", s.bandVoxels },
           { "meshVoxels", s.meshVoxels },
           { "fusedVoxels", s.fusedVoxels },
           { "addedVoxels", s.addedVoxels },
           { "removedVoxels", s.removedVoxels } };
}

/** Several meshes, one multi-label map (Modules/ShapeFusion/include/canopyJointShapeFusion.h). */
void
RunJointFusion(const FuseShapeArguments & a, RunReport & report, StagedOutputs & outputs)
{
  if (a.fusion.component >= 0)
    CANOPY_THROW("--probability-component: only with one --mesh (with several, each --label is its own component)");
  if (a.fusion.parameters.lambda != 0)
    CANOPY_THROW("--fusion-lambda: must be 0 with several --mesh, not "
                 << a.fusion.parameters.lambda << " (the joint fusion has no multi-label graph cut)");
  const auto        map = ReadClassProbabilities(a.fusion.probabilities);
  const int         components = int(map->GetNumberOfComponentsPerPixel());
  const std::size_t voxels = map->GetLargestPossibleRegion().GetNumberOfPixels();
  for (const auto & path : a.ensemble)
  {
    const auto other = ReadClassProbabilities(path);
    if (int(other->GetNumberOfComponentsPerPixel()) != components)
      CANOPY_THROW("--ensemble-probabilities " << path << ": " << other->GetNumberOfComponentsPerPixel()
                                               << " classes, --probabilities " << components);
    AddVolume(map->GetBufferPointer(), map, other->GetBufferPointer(), other, voxels * components, path);
  }
  if (!a.ensemble.empty())
    for (std::size_t i = 0; i < voxels * components; ++i)
      map->GetBufferPointer()[i] /= float(a.ensemble.size() + 1);
  if (a.smoothingMm > 0)
  {
    auto component = FloatVolume::New();
    component->CopyInformation(map);
    component->SetRegions(map->GetLargestPossibleRegion());
    component->Allocate();
    float * c = component->GetBufferPointer();
    float * p = map->GetBufferPointer();
    for (int k = 0; k < components; ++k)
    {
      for (std::size_t i = 0; i < voxels; ++i)
        c[i] = p[i * components + k];
      SmoothVolume(component, a.smoothingMm);
      for (std::size_t i = 0; i < voxels; ++i)
        p[i * components + k] = std::clamp(c[i], 0.0f, 1.0f);
    }
  }
  std::vector<FusionStructure> structures;
  for (std::size_t j = 0; j < a.meshes.size(); ++j)
  {
    if (a.labels[j] >= components)
      CANOPY_THROW("--label " << a.labels[j] << " (of --mesh " << a.meshes[j] << "): --probabilities "
                              << a.fusion.probabilities << " has no class " << a.labels[j] << " (its " << components
                              << " components are the classes 0-" << components - 1 << ")");
    const auto mesh = ReadMesh(a.meshes[j], MeshSpace::LPS, "--mesh").mesh;
    structures.push_back({ MeshPoints(mesh), MeshTriangles(mesh), a.labels[j] });
  }
  JointShapeFusionStatistics statistics;
  LabelImage::Pointer        labels;
  try
  {
    labels = FuseMeshesWithClassProbabilities(structures, map, a.fusion.parameters, &statistics);
  }
  catch (const Error & e)
  {
    CANOPY_THROW("--mesh " << a.meshes[0] << " ... (" << a.meshes.size() << " meshes) with --probabilities "
                           << a.fusion.probabilities << ": " << e.GetDescription());
  }
  outputs.Write(a.output, [&](const std::string & t) { WriteVolume(labels.GetPointer(), t, "--output"); });
  const auto & p = a.fusion.parameters;
  report["fusion"] = { { "joint", true },
                       { "probabilities", a.fusion.probabilities },
                       { "ensembleProbabilities", a.ensemble },
                       { "probabilitySmoothingMm", a.smoothingMm },
                       { "widthMm", p.widthMm },
                       { "voxelWeight", p.voxelWeight },
                       { "bandMm", p.bandMm },
                       { "offsetMm", p.offsetMm },
                       { "lambda", p.lambda },
                       { "overlapVoxels", statistics.overlapVoxels },
                       { "contestedVoxels", statistics.contestedVoxels } };
  for (std::size_t j = 0; j < a.meshes.size(); ++j)
  {
    report["structures"].push_back(StructureReport(a.meshes[j], a.labels[j], statistics.structures[j]));
    const auto & s = statistics.structures[j];
    std::cout << "fused label " << a.labels[j] << ": " << s.meshVoxels << " voxels inside its mesh, " << s.fusedVoxels
              << " labelled (" << s.addedVoxels << " added, " << s.removedVoxels << " removed)\n";
  }
  std::cout << "meshes overlap in " << statistics.overlapVoxels << " voxels\n";
}

void
RunFuseShape(const FuseShapeArguments & given)
{
  vtkObject::GlobalWarningDisplayOff();
  RunReport          report("fuse-shape");
  FuseShapeArguments a = given;
  if (a.labels.empty())
    a.labels.assign(a.meshes.size() == 1 ? 1 : 0, 1);
  if (a.labels.size() != a.meshes.size())
    CANOPY_THROW("--label: " << a.labels.size() << " value(s) for " << a.meshes.size()
                             << " --mesh; give one --label per --mesh, in the same order");
  std::vector<NamedPath> inputs{ { "--probabilities", a.fusion.probabilities } };
  for (const auto & path : a.ensemble)
    inputs.push_back({ "--ensemble-probabilities", path });
  for (const auto & mesh : a.meshes)
    inputs.push_back({ "--mesh", mesh });
  CheckOutputPaths({ { "--output", a.output }, { "--report", a.report } }, inputs);
  RequireVolumeFormat(a.output, "--output");
  const auto    begin = std::chrono::steady_clock::now();
  StagedOutputs outputs;
  if (a.meshes.size() > 1)
    RunJointFusion(a, report, outputs);
  else
  {
    const std::string &    meshPath = a.meshes[0];
    const int              label = a.labels[0];
    const auto             mesh = ReadMesh(meshPath, MeshSpace::LPS, "--mesh").mesh;
    const Eigen::Matrix3Xd points = MeshPoints(mesh);
    const Eigen::Matrix3Xi triangles = MeshTriangles(mesh);
    const auto             probability = ReadStructureProbability(a.fusion, label);
    const std::size_t      voxels = probability->GetLargestPossibleRegion().GetNumberOfPixels();
    for (const auto & path : a.ensemble)
    {
      ShapeFusionOptions other = a.fusion;
      other.probabilities = path;
      const auto more = ReadStructureProbability(other, label);
      AddVolume(probability->GetBufferPointer(), probability, more->GetBufferPointer(), more, voxels, path);
    }
    for (std::size_t i = 0; !a.ensemble.empty() && i < voxels; ++i)
      probability->GetBufferPointer()[i] /= float(a.ensemble.size() + 1);
    if (a.smoothingMm > 0)
    {
      SmoothVolume(probability, a.smoothingMm);
      for (std::size_t i = 0; i < voxels; ++i)
        probability->GetBufferPointer()[i] = std::clamp(probability->GetBufferPointer()[i], 0.0f, 1.0f);
    }
    ShapeFusionStatistics statistics;
    LabelImage::Pointer   labels;
    try
    {
      labels = FuseMeshWithProbabilities(points, triangles, probability, label, a.fusion.parameters, &statistics);
    }
    catch (const Error & e)
    {
      CANOPY_THROW("--mesh " << meshPath << " with --probabilities " << a.fusion.probabilities << ": " << e.what());
    }
    outputs.Write(a.output, [&](const std::string & t) { WriteVolume(labels.GetPointer(), t, "--output"); });
    report["mesh"] = meshPath;
    report["label"] = label;
    report["fusion"] = ShapeFusionReport(a.fusion, statistics);
    report["fusion"]["ensembleProbabilities"] = a.ensemble;
    report["fusion"]["probabilitySmoothingMm"] = a.smoothingMm;
    std::cout << "fused: " << statistics.meshVoxels << " voxels inside the mesh, " << statistics.fusedVoxels
              << " labelled (" << statistics.addedVoxels << " added, " << statistics.removedVoxels << " removed)\n";
  }
  if (!a.report.empty())
  {
    report["seconds"] = SecondsSince(begin);
    outputs.Write(a.report, [&](const std::string & t) { report.Write(t); });
  }
  outputs.Commit();
}
} // namespace

void
RegisterFuseShapeCommand(CLI::App & app)
{
  auto   args = std::make_shared<FuseShapeArguments>();
  auto * c = app.add_subcommand(
    "fuse-shape",
    "Label structures from fitted meshes (segment-shape --mesh) and a voxel classifier's probability map together: "
    "log-odds in a band around each mesh, then a graph cut (one mesh) or a joint decision over the classes (several "
    "meshes, one multi-label map)");
  c->add_option("--mesh",
                args->meshes,
                "Fitted surface mesh (.vtk, .vtp, .stl; LPS mm); repeat with one --label each for the joint fusion of "
                "touching structures into one label map")
    ->required();
  c->add_option("--output", args->output, "Label map on the grid of --probabilities")->required();
  c->add_option("--label",
                args->labels,
                "Label value of each --mesh's structure in --output, in order (and its component of --probabilities; "
                "default: 1 with one mesh)")
    ->check(CLI::Range(1, 1 << 16));
  c->add_option("--report", args->report, "Write a JSON run report here");
  AddShapeFusionOptions(c,
                        args->fusion,
                        "Voxel classifier's probabilities on the grid of the segmented volume (predict-forest --mode "
                        "distribution: one component per class)");
  c->get_option("--probabilities")->required();
  c->add_option("--ensemble-probabilities",
                args->ensemble,
                "More voxel classifiers' probabilities on the same grid with the same classes (repeat): the mean of "
                "them and --probabilities is fused");
  c->add_option("--probability-smoothing",
                args->smoothingMm,
                "Gaussian sigma (mm) applied to every class probability map before the fusion (0: none)")
    ->capture_default_str()
    ->check(FiniteNonNegative());
  c->callback([args] { RunFuseShape(*args); });
}
} // namespace canopy::app
