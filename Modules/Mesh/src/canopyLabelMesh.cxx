#include "canopyLabelMesh.h"

#include "canopy/Errors.h"

#include <vtkAppendPolyData.h>
#include <vtkCellArray.h>
#include <vtkCellArrayIterator.h>
#include <vtkDiscreteFlyingEdges3D.h>
#include <vtkImageData.h>
#include <vtkIntArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkQuadricDecimation.h>
#include <vtkWindowedSincPolyDataFilter.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace canopy
{
namespace
{
using Box = std::array<long, 6>; // lo x, y, z, hi x, y, z (inclusive)

Box
LabelBox(const LabelImage * labels, int label)
{
  const auto  size = labels->GetLargestPossibleRegion().GetSize();
  Box         box = { long(size[0]), long(size[1]), long(size[2]), -1, -1, -1 };
  const int * p = labels->GetBufferPointer();
  for (long z = 0; z < long(size[2]); ++z)
    for (long y = 0; y < long(size[1]); ++y)
      for (long x = 0; x < long(size[0]); ++x, ++p)
        if (*p == label)
        {
          const long q[3] = { x, y, z };
          for (int k = 0; k < 3; ++k)
          {
            box[k] = std::min(box[k], q[k]);
            box[k + 3] = std::max(box[k + 3], q[k]);
          }
        }
  return box;
}

// The label's bounding box plus one voxel of background on every side (closes the surface at the
// image border), as a 0/1 vtkImageData whose point coordinates are ITK indices.
vtkSmartPointer<vtkImageData>
PaddedLabelImage(const LabelImage * labels, int label, const Box & box)
{
  const auto size = labels->GetLargestPossibleRegion().GetSize();
  const int  dims[3] = { int(box[3] - box[0] + 3), int(box[4] - box[1] + 3), int(box[5] - box[2] + 3) };
  auto       image = vtkSmartPointer<vtkImageData>::New();
  image->SetDimensions(dims[0], dims[1], dims[2]);
  image->SetOrigin(double(box[0] - 1), double(box[1] - 1), double(box[2] - 1));
  image->SetSpacing(1.0, 1.0, 1.0);
  image->AllocateScalars(VTK_UNSIGNED_CHAR, 1);
  auto * out = static_cast<unsigned char *>(image->GetScalarPointer());
  std::fill(out, out + std::size_t(dims[0]) * dims[1] * dims[2], 0);
  const int * in = labels->GetBufferPointer();
  for (long z = box[2]; z <= box[5]; ++z)
    for (long y = box[1]; y <= box[4]; ++y)
      for (long x = box[0]; x <= box[3]; ++x)
      {
        const std::size_t from = (std::size_t(z) * size[1] + std::size_t(y)) * size[0] + std::size_t(x);
        const std::size_t to =
          (std::size_t(z - box[2] + 1) * dims[1] + std::size_t(y - box[1] + 1)) * dims[0] + std::size_t(x - box[0] + 1);
        out[to] = in[from] == label ? 1 : 0;
      }
  return image;
}

double
SignedVolume(vtkPolyData * mesh)
{
  double volume = 0;
  auto   polys = vtk::TakeSmartPointer(mesh->GetPolys()->NewIterator());
  for (polys->GoToFirstCell(); !polys->IsDoneWithTraversal(); polys->GoToNextCell())
  {
    vtkIdType         n;
    const vtkIdType * ids;
    polys->GetCurrentCell(n, ids);
    double a[3], b[3], c[3];
    mesh->GetPoint(ids[0], a);
    for (vtkIdType k = 1; k + 1 < n; ++k)
    {
      mesh->GetPoint(ids[k], b);
      mesh->GetPoint(ids[k + 1], c);
      volume +=
        (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])) /
        6.0;
    }
  }
  return volume;
}

vtkSmartPointer<vtkPolyData>
MeshOneLabel(const LabelImage * labels, int label, const Box & box, const LabelMeshOptions & options)
{
  vtkNew<vtkDiscreteFlyingEdges3D> contour;
  contour->SetInputData(PaddedLabelImage(labels, label, box));
  contour->SetValue(0, 1.0);
  contour->ComputeNormalsOff();
  contour->ComputeGradientsOff();
  contour->ComputeScalarsOff();
  contour->Update();
  vtkSmartPointer<vtkPolyData> mesh = contour->GetOutput();

  // Index -> physical LPS through ITK itself, so origin, spacing and direction are applied exactly
  // as for the voxels.
  vtkPoints * points = mesh->GetPoints();
  for (vtkIdType i = 0; i < points->GetNumberOfPoints(); ++i)
  {
    double                          p[3];
    itk::ContinuousIndex<double, 3> index;
    itk::Point<double, 3>           physical;
    points->GetPoint(i, p);
    for (int k = 0; k < 3; ++k)
      index[k] = p[k];
    labels->TransformContinuousIndexToPhysicalPoint(index, physical);
    points->SetPoint(i, physical[0], physical[1], physical[2]);
  }
  // A mirroring direction (or the contour's own convention) can leave normals pointing inwards.
  if (SignedVolume(mesh) < 0)
    for (vtkIdType c = 0; c < mesh->GetPolys()->GetNumberOfCells(); ++c)
      mesh->GetPolys()->ReverseCellAtId(c);

  if (options.decimation > 0)
  {
    vtkNew<vtkQuadricDecimation> decimate;
    decimate->SetInputData(mesh);
    decimate->SetTargetReduction(options.decimation);
    decimate->VolumePreservationOn();
    decimate->Update();
    mesh = decimate->GetOutput();
  }
  if (options.smoothingIterations > 0)
  {
    vtkNew<vtkWindowedSincPolyDataFilter> smooth;
    smooth->SetInputData(mesh);
    smooth->SetNumberOfIterations(int(options.smoothingIterations));
    smooth->SetPassBand(options.smoothingPassBand);
    smooth->BoundarySmoothingOff();
    smooth->FeatureEdgeSmoothingOff();
    smooth->NonManifoldSmoothingOn();
    smooth->NormalizeCoordinatesOn();
    smooth->Update();
    mesh = smooth->GetOutput();
  }
  vtkNew<vtkIntArray> labelArray;
  labelArray->SetName("Label");
  labelArray->SetNumberOfTuples(mesh->GetNumberOfPoints());
  labelArray->Fill(label);
  mesh->GetPointData()->AddArray(labelArray);
  mesh->GetPointData()->SetActiveScalars("Label");
  return mesh;
}
} // namespace

vtkSmartPointer<vtkPolyData>
LabelToMesh(const LabelImage * labels, const LabelMeshOptions & options)
{
  if (!labels || !labels->GetBufferPointer())
    CANOPY_THROW("LabelToMesh: the label map is null or has no pixel buffer");
  if (!(options.smoothingPassBand > 0 && options.smoothingPassBand <= 2))
    CANOPY_THROW("LabelToMesh: smoothing pass band must be in (0, 2], got " << options.smoothingPassBand);
  if (!(options.decimation >= 0 && options.decimation < 1))
    CANOPY_THROW("LabelToMesh: decimation must be a fraction in [0, 1), got " << options.decimation);
  const std::vector<int> wanted = options.label != 0 ? std::vector<int>{ options.label } : FindLabels(labels);
  if (wanted.empty())
    CANOPY_THROW("LabelToMesh: the label map has no non-zero voxel");

  vtkNew<vtkAppendPolyData> append;
  for (int label : wanted)
  {
    const Box box = LabelBox(labels, label);
    if (box[3] < 0)
      CANOPY_THROW("LabelToMesh: no voxel has label " << label);
    append->AddInputData(MeshOneLabel(labels, label, box, options));
  }
  append->Update();
  vtkSmartPointer<vtkPolyData> mesh = append->GetOutput();
  mesh->GetPointData()->SetActiveScalars("Label");
  return mesh;
}

vtkSmartPointer<vtkPolyData>
LabelToMesh(const itk::Image<unsigned char, 3> * mask, const LabelMeshOptions & options)
{
  if (!mask || !mask->GetBufferPointer())
    CANOPY_THROW("LabelToMesh: the mask is null or has no pixel buffer");
  if (options.label != 0 && options.label != 1)
    CANOPY_THROW("LabelToMesh: a binary mask has label 1 only, asked for " << options.label);
  auto labels = LabelImage::New();
  labels->CopyInformation(mask);
  labels->SetRegions(mask->GetLargestPossibleRegion());
  labels->Allocate();
  const auto            n = mask->GetLargestPossibleRegion().GetNumberOfPixels();
  const unsigned char * in = mask->GetBufferPointer();
  for (itk::SizeValueType i = 0; i < n; ++i)
    labels->GetBufferPointer()[i] = in[i] != 0 ? 1 : 0;
  return LabelToMesh(labels, options);
}

MeshMeasures
ComputeMeshMeasures(vtkPolyData * mesh)
{
  if (!mesh)
    CANOPY_THROW("ComputeMeshMeasures: the mesh is null");
  MeshMeasures m;
  m.points = mesh->GetNumberOfPoints();
  m.volumeMm3 = std::abs(SignedVolume(mesh));
  auto polys = vtk::TakeSmartPointer(mesh->GetPolys()->NewIterator());
  for (polys->GoToFirstCell(); !polys->IsDoneWithTraversal(); polys->GoToNextCell())
  {
    vtkIdType         n;
    const vtkIdType * ids;
    polys->GetCurrentCell(n, ids);
    double a[3], b[3], c[3];
    mesh->GetPoint(ids[0], a);
    for (vtkIdType k = 1; k + 1 < n; ++k, ++m.triangles)
    {
      mesh->GetPoint(ids[k], b);
      mesh->GetPoint(ids[k + 1], c);
      const double u[3] = { b[0] - a[0], b[1] - a[1], b[2] - a[2] }, v[3] = { c[0] - a[0], c[1] - a[1], c[2] - a[2] };
      const double x = u[1] * v[2] - u[2] * v[1], y = u[2] * v[0] - u[0] * v[2], z = u[0] * v[1] - u[1] * v[0];
      m.areaMm2 += 0.5 * std::sqrt(x * x + y * y + z * z);
    }
  }
  return m;
}

} // namespace canopy
