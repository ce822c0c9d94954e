// Mesh files by extension: .vtk (legacy 4.2, "SPACE=LPS" in the header line as 3D Slicer writes
// it), .vtp (XML, a "SPACE" field-data string as Slicer writes it) and .stl (binary, SPACE=LPS in
// the 80-byte header). Writing goes through a temporary file and a rename.
#pragma once

#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

#include <string>

namespace canopy
{

/** Coordinate frame of the points in a mesh file. Canopy meshes are LPS (as ITK images); Slicer
 * before 4.11 and ITK-SNAP write RAS = (-x, -y, z) of LPS. */
enum class MeshSpace
{
  FromFile, // the file's SPACE tag; LPS when it has none (Slicer's assumption since 4.11)
  LPS,
  RAS
};

/** Writes `mesh` (LPS points) to path; the extension (.vtk, .vtp, .stl, any case) picks the format.
 * canopy::Error naming `parameter` and the path for an unknown extension or a failed write (no
 * file is left behind). */
void
WriteMesh(vtkPolyData * mesh, const std::string & path, const std::string & parameter = "mesh");

/** A mesh read from .vtk / .vtp / .stl. */
struct MeshFile
{
  vtkSmartPointer<vtkPolyData> mesh; // points in LPS
  std::string                  spaceInFile; // "LPS", "RAS" or "" (no tag)
  bool                         convertedFromRAS = false;
};

/** Reads a polygonal mesh and returns it in LPS. `space` says how to read the points: FromFile
 * trusts the file's tag; LPS / RAS are for files without a tag, and a file whose tag says
 * otherwise is an error. canopy::Error naming `parameter` and the path for a missing file, an
 * unknown extension, a file that is not polygonal data, or a mesh without points. */
MeshFile
ReadMesh(const std::string & path, MeshSpace space = MeshSpace::FromFile, const std::string & parameter = "mesh");

/** "LPS" or "RAS" when `header` holds "SPACE=LPS" / "SPACE=RAS" (case-insensitive), else "". */
std::string
CoordinateSpaceInHeader(const std::string & header);

} // namespace canopy
