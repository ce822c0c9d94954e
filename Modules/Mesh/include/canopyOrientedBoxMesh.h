// Oriented boxes (e.g. detected poses: centre, unit axes, size) as one polygonal mesh for WriteMesh:
// 8 corners and 12 outward triangles per box, with cell data naming each box's structure and score, so
// the boxes open in 3D Slicer and ParaView coloured by structure.
#pragma once

#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

#include <array>
#include <string>
#include <vector>

namespace canopy
{

struct OrientedBox
{
  std::array<double, 3>                centerMm{};    // LPS
  std::array<std::array<double, 3>, 3> axes{};        // unit rows: the edge directions
  std::array<double, 3>                sizeMm{};      // full edge lengths along the axes
  int                                  structure = 0; // index into the mesh's "StructureNames"
  double                               score = 0.0;
};

/** A mesh of the boxes: box b's corners are points 8b..8b+7, corner c = centre + sum over k of
 * (bit k of c ? +1 : -1) x axes[k] x sizeMm[k] / 2 (points stored as doubles); its 12 triangles are
 * cells 12b..12b+11, wound so that their normals point out of the box. Cell data: "StructureIndex"
 * (int, OrientedBox::structure) and "Score" (double); field data: "StructureNames" (strings, indexed
 * by StructureIndex). */
vtkSmartPointer<vtkPolyData>
OrientedBoxesMesh(const std::vector<OrientedBox> & boxes, const std::vector<std::string> & structureNames);

} // namespace canopy
