// Symmetric distance between two surface meshes (issue 4): every vertex of one mesh to the closest
// point on the cells (not just the vertices) of the other, through vtkCellLocator.
#pragma once

#include "canopySurfaceMetrics.h" // SurfaceDistances

#include <vtkPolyData.h>

namespace canopy
{

/** Distances in mm (the meshes' units) from the vertices of test to the surface of reference and
 * back, summarised as SummarizeSurfaceDistances does. Both meshes must be in the same frame (LPS
 * from ReadMesh / LabelToMesh). canopy::Error for a null mesh or a mesh with points but no
 * polygons; a mesh without points counts as an empty surface. */
SurfaceDistances
ComputeMeshDistances(vtkPolyData * test, vtkPolyData * reference);

} // namespace canopy
