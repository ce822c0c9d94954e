#include "canopyShapeOutputs.h"

#include "canopy/Errors.h"
#include "canopyShapeModel.h"

#include <itkImageRegionIteratorWithIndex.h>
#include <itkMesh.h>
#include <itkTriangleCell.h>
#include <itkTriangleMeshToBinaryImageFilter.h>
#include <vtkIntArray.h>
#include <vtkPointData.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace canopy
{
vtkSmartPointer<vtkPolyData>
CorrespondenceMesh(const Eigen::Matrix3Xd & points, const Eigen::Matrix3Xi & triangles)
{
  vtkSmartPointer<vtkPolyData> mesh = MakeTriangleMesh(points, triangles);
  vtkNew<vtkIntArray>          ids;
  ids->SetName(kCorrespondenceIdArray);
  ids->SetNumberOfValues(points.cols());
  for (Eigen::Index i = 0; i < points.cols(); ++i)
    ids->SetValue(i, int(i));
  mesh->GetPointData()->AddArray(ids);
  mesh->GetPointData()->SetActiveScalars(kCorrespondenceIdArray);
  return mesh;
}

LabelImage::Pointer
VoxelizeMesh(const Eigen::Matrix3Xd &  points,
             const Eigen::Matrix3Xi &  triangles,
             const itk::ImageBase<3> * reference,
             int                       label)
{
  if (reference == nullptr)
    CANOPY_THROW("voxelising a mesh: no reference grid");
  if (label == 0)
    CANOPY_THROW("voxelising a mesh: the label value must not be 0");
  if (points.cols() < 4 || triangles.cols() < 4 || !points.allFinite())
    CANOPY_THROW("voxelising a mesh: " << points.cols() << " points and " << triangles.cols()
                                       << " triangles (or non-finite points) do not make a closed surface");
  using MeshType = itk::Mesh<double, 3>;
  using CellType = MeshType::CellType;
  using TriangleType = itk::TriangleCell<CellType>;
  auto mesh = MeshType::New();
  for (Eigen::Index i = 0; i < points.cols(); ++i)
  {
    MeshType::PointType p;
    for (int k = 0; k < 3; ++k)
      p[k] = points(k, i);
    mesh->SetPoint(i, p);
  }
  for (Eigen::Index t = 0; t < triangles.cols(); ++t)
  {
    CellType::CellAutoPointer cell;
    cell.TakeOwnership(new TriangleType);
    for (int k = 0; k < 3; ++k)
    {
      const int v = triangles(k, t);
      if (v < 0 || v >= points.cols())
        CANOPY_THROW("voxelising a mesh: triangle " << t << " names vertex " << v << " of " << points.cols());
      cell->SetPointId(k, v);
    }
    mesh->SetCell(t, cell);
  }
  // ITK's scan conversion fills whole rows of the slices near where a mesh leaves the grid (a structure
  // cut by the volume, like a liver ending at the top slice): voxelise on the grid grown to hold the
  // mesh with a margin (at most kMaxGrowth voxels a side, so a wild mesh cannot ask for any memory),
  // then copy the reference region out of it.
  constexpr long                  kMargin = 2, kMaxGrowth = 64;
  const itk::ImageRegion<3>       region = reference->GetLargestPossibleRegion();
  itk::Index<3>                   low = region.GetIndex(), high = region.GetUpperIndex();
  itk::ContinuousIndex<double, 3> first, last;
  for (int k = 0; k < 3; ++k)
  {
    first[k] = std::numeric_limits<double>::max();
    last[k] = std::numeric_limits<double>::lowest();
  }
  for (Eigen::Index i = 0; i < points.cols(); ++i)
  {
    itk::Point<double, 3> p;
    for (int k = 0; k < 3; ++k)
      p[k] = points(k, i);
    const auto c = reference->TransformPhysicalPointToContinuousIndex<double, double>(p);
    for (int k = 0; k < 3; ++k)
    {
      first[k] = std::min(first[k], c[k]);
      last[k] = std::max(last[k], c[k]);
    }
  }
  for (int k = 0; k < 3; ++k)
  {
    const long lower = long(std::floor(std::max(first[k], double(low[k] - kMaxGrowth)))) - kMargin;
    const long upper = long(std::ceil(std::min(last[k], double(high[k] + kMaxGrowth)))) + kMargin;
    low[k] = std::min(low[k], lower);
    high[k] = std::max(high[k], upper);
  }
  itk::Size<3> grownSize;
  for (int k = 0; k < 3; ++k)
    grownSize[k] = itk::SizeValueType(high[k] - low[k] + 1);
  itk::Point<double, 3> grownOrigin;
  reference->TransformIndexToPhysicalPoint(low, grownOrigin);

  using FilterType = itk::TriangleMeshToBinaryImageFilter<MeshType, LabelImage>;
  auto filter = FilterType::New();
  filter->SetInput(mesh);
  filter->SetOrigin(grownOrigin);
  filter->SetSpacing(reference->GetSpacing());
  filter->SetDirection(reference->GetDirection());
  filter->SetIndex(itk::Index<3>{ { 0, 0, 0 } });
  filter->SetSize(grownSize);
  filter->SetInsideValue(label);
  filter->SetOutsideValue(0);
  filter->Update();
  const LabelImage::Pointer grown = filter->GetOutput();

  auto out = LabelImage::New();
  out->SetRegions(region);
  out->SetOrigin(reference->GetOrigin());
  out->SetSpacing(reference->GetSpacing());
  out->SetDirection(reference->GetDirection());
  out->Allocate();
  itk::ImageRegionIteratorWithIndex<LabelImage> it(out, region);
  for (; !it.IsAtEnd(); ++it)
  {
    itk::Index<3> g = it.GetIndex();
    for (int k = 0; k < 3; ++k)
      g[k] -= low[k];
    it.Set(grown->GetPixel(g));
  }
  return out;
}
} // namespace canopy
