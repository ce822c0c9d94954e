// Label map -> triangle surface mesh in physical LPS coordinates (issue 4), and the measures of a
// closed mesh (area, enclosed volume).
#pragma once

#include "canopySurfaceMetrics.h" // LabelImage

#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

#include <cstdint>

namespace canopy
{

/** How LabelToMesh builds the surface. */
struct LabelMeshOptions
{
  /** Label value to mesh; 0 = every non-zero label, each a separate closed surface whose points
   * carry the label in the point array "Label". */
  int label = 0;
  /** Windowed-sinc smoothing iterations (vtkWindowedSincPolyDataFilter); 0 = none. */
  unsigned smoothingIterations = 0;
  /** Pass band of the smoothing filter, (0, 2]: lower smooths more. */
  double smoothingPassBand = 0.1;
  /** Fraction of triangles to remove by quadric decimation (vtkQuadricDecimation), [0, 1); 0 = none. */
  double decimation = 0.0;
};

/** Surface of a label (or of every label) by vtkDiscreteFlyingEdges3D: vertices half-way between a
 * label voxel and its neighbour, closed where labels touch the image border. Points are in the
 * physical LPS frame of the image (origin + direction * spacing * index), triangles oriented with
 * outward normals; decimation, then smoothing, run in physical space. canopy::Error when the
 * label is absent, labels is null, or an option is out of range. */
vtkSmartPointer<vtkPolyData>
LabelToMesh(const LabelImage * labels, const LabelMeshOptions & options = {});

/** The same for a binary mask (non-zero = inside, meshed as label 1; options.label must be 0 or 1). */
vtkSmartPointer<vtkPolyData>
LabelToMesh(const itk::Image<unsigned char, 3> * mask, const LabelMeshOptions & options = {});

/** Area (mm^2) and enclosed volume (mm^3, divergence theorem; meaningful for closed meshes) of the
 * polygons of a mesh, polygons fanned into triangles. */
struct MeshMeasures
{
  double       areaMm2 = 0, volumeMm3 = 0;
  std::int64_t points = 0, triangles = 0;
};

MeshMeasures
ComputeMeshMeasures(vtkPolyData * mesh);

} // namespace canopy
