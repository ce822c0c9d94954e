// Mesh files by extension: .vtk (legacy 4.2, "SPACE=LPS" in the header line as 3D Slicer writes
// it), .vtp (XML, a "SPACE" field-data string as Slicer writes it) and .stl (binary, SPACE=LPS in
// the 80-byte header). Writing goes through a temporary file and a rename.
#pragma once

#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

#include <string>

namespace canopy
{

/** Coordinate frame assumed for the points of a mesh file without a SPACE tag (a file's tag always
 * wins, as in Slicer). Canopy and Slicer >= 4.11 write LPS (as ITK images); ITK-SNAP and older
 * Slicer write RAS = (-x, -y, z) of LPS without saying so. */
enum class MeshSpace
{
  LPS,
  RAS
};

/** Writes `mesh` (LPS points) to path; the extension (.vtk, .vtp, .stl, any case) picks the format.
 * canopy::Error naming `parameter` and the path for an unknown extension or a failed write (no
 * file is left behind). */
void
WriteMesh(vtkPolyData * mesh, const std::string & path, const std::string & parameter = "mesh");

/** canopy::Error "<parameter> <path>: unknown mesh format ..." unless the path ends in .vtk, .vtp or
 * .stl (any case): lets a command fail before its work when the output name is wrong. */
void
RequireMeshExtension(const std::string & path, const std::string & parameter);

/** A mesh read from .vtk / .vtp / .stl. */
struct MeshFile
{
  vtkSmartPointer<vtkPolyData> mesh;        // points in LPS
  std::string                  spaceInFile; // "LPS", "RAS" or "" (no tag)
  bool                         convertedFromRAS = false;
};

/** Reads a polygonal mesh and returns it in LPS: the file's SPACE tag (.vtk / .stl header,
 * .vtp "SPACE" field) decides, `untagged` when there is none. canopy::Error naming `parameter` and
 * the path for a missing file, an unknown extension, a file that is not polygonal data, or a mesh
 * without points. */
MeshFile
ReadMesh(const std::string & path, MeshSpace untagged = MeshSpace::LPS, const std::string & parameter = "mesh");

/** "LPS" or "RAS" when `header` holds "SPACE=LPS" / "SPACE=RAS" (case-insensitive), else "". */
std::string
CoordinateSpaceInHeader(const std::string & header);

} // namespace canopy
