// canopy mesh: label map -> surface mesh file (.vtk 4.2 / .vtp / .stl) in LPS.
#include "canopy/Errors.h"
#include "canopyCommands.h"
#include "canopyImageIO.h"
#include "canopyLabelMesh.h"
#include "canopyMeshIO.h"
#include "canopyOptionChecks.h"
#include "canopyOutputPaths.h"
#include "canopyProgress.h"

#include <vtkObject.h>

#include <algorithm>
#include <iomanip>
#include <iostream>

namespace canopy::app
{
namespace
{
struct MeshArguments
{
  std::string      input, output, report;
  LabelMeshOptions options;
};

void
RunMesh(const MeshArguments & a)
{
  vtkObject::GlobalWarningDisplayOff(); // VTK's own messages would repeat our errors
  RequireMeshExtension(a.output, "--output");
  CheckOutputPaths({ { "--output", a.output }, { "--report", a.report } }, { { "--input", a.input } });
  RunReport  report("mesh");
  const auto labels = RoundToLabels(ReadVolume(a.input, "--input"), "--input " + a.input);
  const auto found = FindLabels(labels);
  if (found.empty())
    CANOPY_THROW("--input " << a.input << ": the label map has no non-zero voxel");
  if (a.options.label != 0 && std::find(found.begin(), found.end(), a.options.label) == found.end())
    CANOPY_THROW("--label " << a.options.label << ": no voxel of " << a.input << " has this label");
  const auto mesh = LabelToMesh(labels, a.options);
  WriteMesh(mesh, a.output, "--output");
  const auto m = ComputeMeshMeasures(mesh);
  std::cout << "mesh of " << (a.options.label != 0 ? "label " + std::to_string(a.options.label) : "all labels")
            << " -> " << a.output << ": " << m.points << " points, " << m.triangles << " triangles, area " << std::fixed
            << std::setprecision(1) << m.areaMm2 << " mm2, volume " << std::setprecision(3) << m.volumeMm3 / 1000.0
            << " ml\n";
  if (!a.report.empty())
  {
    report["parameters"] = { { "input", a.input },
                             { "output", a.output },
                             { "label", a.options.label },
                             { "smoothingIterations", a.options.smoothingIterations },
                             { "smoothingPassBand", a.options.smoothingPassBand },
                             { "decimation", a.options.decimation } };
    report["mesh"] = { { "points", m.points },
                       { "triangles", m.triangles },
                       { "areaMm2", m.areaMm2 },
                       { "volumeMm3", m.volumeMm3 },
                       { "space", "LPS" } };
    report.Write(a.report);
  }
}
} // namespace

void
RegisterMeshCommand(CLI::App & app)
{
  auto   args = std::make_shared<MeshArguments>();
  auto & o = args->options;
  auto * c = app.add_subcommand("mesh", "Surface mesh of a label map (.vtk, .vtp or .stl, LPS coordinates)");
  c->add_option("--input", args->input, "Label map")->required();
  c->add_option("--output", args->output, "Mesh to write: .vtk (legacy 4.2, SPACE=LPS), .vtp or .stl")->required();
  c->add_option("--label", o.label, "Label to mesh (0: every label, one surface each, point array 'Label')")
    ->capture_default_str();
  c->add_option("--smooth", o.smoothingIterations, "Windowed-sinc smoothing iterations (0: none)")
    ->capture_default_str();
  c->add_option("--pass-band", o.smoothingPassBand, "Smoothing pass band (0, 2]; lower smooths more")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 2.0, true));
  c->add_option("--decimate", o.decimation, "Fraction of triangles to remove, [0, 1)")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 0.99));
  c->add_option("--report", args->report, "Write a JSON run report here");
  c->callback([args] { RunMesh(*args); });
}

} // namespace canopy::app
