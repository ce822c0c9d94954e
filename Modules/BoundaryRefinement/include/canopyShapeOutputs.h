// Outputs of shape segmentation (issue 10 part 4): the refined mesh with a per-vertex correspondence id
// (the vertex's index on the shape model's finest level, the same anatomical point in every subject),
// and a label map by voxelising the mesh on the input's grid with ITK's TriangleMeshToBinaryImageFilter
// (origin, spacing, direction and size of the input kept).
#pragma once

#include "canopySurfaceMetrics.h" // LabelImage

#include "itk_eigen.h" // ITK's own Eigen: one Eigen in every unit that also includes ITK IO
#include ITK_EIGEN(Core)
#include <itkImageBase.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

namespace canopy
{
/** Name of the point-data array holding each vertex's correspondence id. */
inline constexpr const char * kCorrespondenceIdArray = "CorrespondenceId";

/** A triangle mesh of the points (LPS mm) with point data CorrespondenceId = 0..n-1 (vtkIntArray,
 * also the active scalars). Written with WriteMesh: .vtk 4.2 and .vtp keep the array; .stl has no
 * per-vertex data (its triangles keep the model's order, so ids follow from triangle and corner). */
vtkSmartPointer<vtkPolyData>
CorrespondenceMesh(const Eigen::Matrix3Xd & points, const Eigen::Matrix3Xi & triangles);

/** `label` inside the closed triangle mesh (LPS mm), 0 outside, on the grid of `reference` (its
 * largest possible region, origin, spacing and direction). canopy::Error for an empty or non-finite
 * mesh, a label value of 0, or no reference. */
LabelImage::Pointer
VoxelizeMesh(const Eigen::Matrix3Xd &  points,
             const Eigen::Matrix3Xi &  triangles,
             const itk::ImageBase<3> * reference,
             int                       label);
} // namespace canopy
