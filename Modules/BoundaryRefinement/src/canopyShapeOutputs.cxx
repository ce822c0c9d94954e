#include "canopyShapeOutputs.h"

#include "canopy/Errors.h"
#include "canopyShapeModel.h"

#include <itkMesh.h>
#include <itkTriangleCell.h>
#include <itkTriangleMeshToBinaryImageFilter.h>
#include <vtkIntArray.h>
#include <vtkPointData.h>

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
  using FilterType = itk::TriangleMeshToBinaryImageFilter<MeshType, LabelImage>;
  auto filter = FilterType::New();
  filter->SetInput(mesh);
  filter->SetOrigin(reference->GetOrigin());
  filter->SetSpacing(reference->GetSpacing());
  filter->SetDirection(reference->GetDirection());
  filter->SetIndex(reference->GetLargestPossibleRegion().GetIndex());
  filter->SetSize(reference->GetLargestPossibleRegion().GetSize());
  filter->SetInsideValue(label);
  filter->SetOutsideValue(0);
  filter->Update();
  LabelImage::Pointer out = filter->GetOutput();
  out->DisconnectPipeline();
  return out;
}
} // namespace canopy
