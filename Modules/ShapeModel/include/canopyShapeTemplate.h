// The template mesh hierarchy of a shape model (issue 10 part 1): one subject's surface remeshed to
// about 600 / 1,200 / 2,400 vertices (Birkbeck 4.3: 602 / 1,202 / 2,402) with nested vertex sets.
//
// Why decimation and not a subdivided icosphere: an icosphere only has 10 * 4^k + 2 vertices
// (642, 2,562), and mapping a sphere onto an elongated, curved structure (a hippocampus, a caudate)
// stretches its triangles badly. Quadric decimation of the template's own surface (Garland &
// Heckbert; vtkQuadricDecimation) reaches any vertex count with triangles adapted to the shape. The
// coarser levels come from the finest by vertex-removal decimation (vtkDecimatePro), which keeps the
// surviving vertices where they were, so every coarse vertex is a vertex of the finest level: the
// levels are in exact correspondence and one set of shape coefficients describes them all.
#pragma once

#include "canopyShapeModel.h"

#include <vector>

namespace canopy
{
/** Levels (coarse to fine) of the surface: the finest with about max(levelVertices) vertices, each
 * coarser one a subset of its vertices. `mean` holds the surface's own coordinates. A surface with
 * too few vertices is first subdivided (each triangle into four). canopy::Error for an empty
 * surface, a level count below 4 vertices, or repeated counts. */
std::vector<ShapeLevel>
BuildTemplateHierarchy(vtkPolyData * surface, std::vector<int> levelVertices);

/** Each triangle split into four at its edge midpoints (shared between neighbours). */
vtkSmartPointer<vtkPolyData>
SubdivideMidpoints(vtkPolyData * mesh);
} // namespace canopy
