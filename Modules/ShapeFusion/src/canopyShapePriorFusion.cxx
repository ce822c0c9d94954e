#include "canopyShapePriorFusion.h"

#include "canopy/Errors.h"
#include "canopyShapeModel.h"   // MakeTriangleMesh
#include "canopyShapeOutputs.h" // VoxelizeMesh

#include <vtkGenericCell.h>
#include <vtkNew.h>
#include <vtkStaticCellLocator.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace canopy
{
void
CheckShapeFusionParameters(const ShapeFusionParameters & p)
{
  if (!(p.widthMm > 0) || !std::isfinite(p.widthMm))
    CANOPY_THROW("shape fusion: the shape prior's width must be a finite number of mm > 0, not " << p.widthMm);
  if (!(p.voxelWeight >= 0) || !std::isfinite(p.voxelWeight))
    CANOPY_THROW("shape fusion: the voxel weight must be finite and >= 0, not " << p.voxelWeight);
  if (!(p.bandMm >= 0) || !std::isfinite(p.bandMm))
    CANOPY_THROW("shape fusion: the band must be a finite number of mm >= 0, not " << p.bandMm);
  if (!(std::abs(p.offsetMm) <= p.bandMm))
    CANOPY_THROW("shape fusion: the shape prior's offset must be a finite number of mm within +-the band ("
                 << p.bandMm << " mm), not " << p.offsetMm);
  if (!(p.lambda >= 0) || !std::isfinite(p.lambda))
    CANOPY_THROW("shape fusion: the graph cut's lambda must be finite and >= 0, not " << p.lambda);
  if (!(p.probabilityFloor > 0 && p.probabilityFloor < 0.5))
    CANOPY_THROW("shape fusion: the probability floor must lie in (0, 0.5), not " << p.probabilityFloor);
}

std::vector<float>
SignedDistanceToMesh(const Eigen::Matrix3Xd & points,
                     const Eigen::Matrix3Xi & triangles,
                     const LabelImage *       inside,
                     double                   clampMm,
                     bool                     exactInside)
{
  if (inside == nullptr)
    CANOPY_THROW("signed distance to a mesh: no label map of its inside");
  if (!(clampMm >= 0) || !std::isfinite(clampMm))
    CANOPY_THROW("signed distance to a mesh: the clamp must be a finite number of mm >= 0, not " << clampMm);
  if (points.cols() < 4 || triangles.cols() < 4 || !points.allFinite())
    CANOPY_THROW("signed distance to a mesh: " << points.cols() << " points and " << triangles.cols()
                                               << " triangles (or non-finite points) do not make a closed surface");
  const auto         region = inside->GetBufferedRegion();
  const auto         size = region.GetSize();
  const int *        in = inside->GetBufferPointer();
  const float        clamp = float(clampMm);
  const std::size_t  n = region.GetNumberOfPixels();
  std::vector<float> distance(n);
  for (std::size_t i = 0; i < n; ++i)
    distance[i] = in[i] != 0 ? -clamp : clamp;

  // Only the voxels in the mesh's bounding box grown by the clamp can be closer than the clamp.
  const Eigen::Vector3d low = points.rowwise().minCoeff().array() - clampMm;
  const Eigen::Vector3d high = points.rowwise().maxCoeff().array() + clampMm;
  itk::Index<3>         first, last;
  for (int k = 0; k < 3; ++k)
  {
    first[k] = std::numeric_limits<itk::IndexValueType>::max();
    last[k] = std::numeric_limits<itk::IndexValueType>::min();
  }
  for (int corner = 0; corner < 8; ++corner)
  {
    itk::Point<double, 3> p;
    for (int k = 0; k < 3; ++k)
      p[k] = (corner >> k) & 1 ? high(k) : low(k);
    const auto c = inside->TransformPhysicalPointToContinuousIndex<double>(p);
    for (int k = 0; k < 3; ++k)
    {
      first[k] = std::min<itk::IndexValueType>(first[k], itk::IndexValueType(std::floor(c[k])));
      last[k] = std::max<itk::IndexValueType>(last[k], itk::IndexValueType(std::ceil(c[k])));
    }
  }
  for (int k = 0; k < 3; ++k)
  {
    first[k] = std::max(first[k], region.GetIndex()[k]);
    last[k] = std::min(last[k], region.GetUpperIndex()[k]);
    if (first[k] > last[k])
      return distance; // the mesh lies off the grid: every voxel is farther than the clamp
  }

  vtkSmartPointer<vtkPolyData> mesh = MakeTriangleMesh(points, triangles);
  vtkNew<vtkStaticCellLocator> locator;
  locator->SetDataSet(mesh);
  locator->BuildLocator();
  vtkNew<vtkGenericCell> cell;
  constexpr double       kOnSurface = 1e-3; // mm: a voxel centre on the surface keeps its label's sign
  itk::Index<3>          index;
  for (index[2] = first[2]; index[2] <= last[2]; ++index[2])
    for (index[1] = first[1]; index[1] <= last[1]; ++index[1])
      for (index[0] = first[0]; index[0] <= last[0]; ++index[0])
      {
        itk::Point<double, 3> p;
        inside->TransformIndexToPhysicalPoint(index, p);
        double    closest[3], squared = 0;
        vtkIdType cellId;
        int       subId;
        locator->FindClosestPoint(p.GetDataPointer(), closest, cell, cellId, subId, squared);
        const std::size_t i = std::size_t(index[0] - region.GetIndex()[0]) +
                              size[0] * (std::size_t(index[1] - region.GetIndex()[1]) +
                                         size[1] * std::size_t(index[2] - region.GetIndex()[2]));
        const double d = std::max(std::sqrt(squared), kOnSurface);
        distance[i] = in[i] != 0 ? -float(exactInside ? d : std::min(d, clampMm)) : float(std::min(d, clampMm));
      }
  return distance;
}

std::vector<float>
FuseShapePrior(const float *                 voxelProbability,
               const float *                 signedDistanceMm,
               std::size_t                   n,
               const ShapeFusionParameters & parameters)
{
  CheckShapeFusionParameters(parameters);
  const double       floor = parameters.probabilityFloor;
  std::vector<float> fused(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    const double d = signedDistanceMm[i];
    const double p = voxelProbability[i];
    if (!std::isfinite(p) || !std::isfinite(d))
      CANOPY_THROW("shape fusion: voxel " << i << " has a non-finite "
                                          << (std::isfinite(p) ? "distance" : "probability") << " ("
                                          << (std::isfinite(p) ? d : p) << ")");
    if (std::abs(d) > parameters.bandMm)
    {
      fused[i] = d < 0 ? 1.0f : 0.0f;
      continue;
    }
    const double q = std::clamp(p, floor, 1.0 - floor);
    const double logit =
      parameters.voxelWeight * std::log(q / (1.0 - q)) - (d - parameters.offsetMm) / parameters.widthMm;
    fused[i] = float(1.0 / (1.0 + std::exp(-logit)));
  }
  return fused;
}

ShapeFusionStatistics
FuseShapeAndProbabilities(const float *                 voxelProbability,
                          const float *                 signedDistanceMm,
                          const int                     size[3],
                          const double                  spacing[3],
                          const ShapeFusionParameters & parameters,
                          std::uint8_t *                labels)
{
  CheckShapeFusionParameters(parameters);
  const std::size_t     n = std::size_t(size[0]) * std::size_t(size[1]) * std::size_t(size[2]);
  ShapeFusionStatistics statistics;
  for (std::size_t i = 0; i < n; ++i)
  {
    statistics.bandVoxels += std::abs(signedDistanceMm[i]) <= parameters.bandMm;
    statistics.meshVoxels += signedDistanceMm[i] < 0;
  }
  const std::vector<float> fused = FuseShapePrior(voxelProbability, signedDistanceMm, n, parameters);
  GridGraphCutParameters   cut;
  cut.lambda = parameters.lambda;
  cut.neighborhood = parameters.neighborhood;
  statistics.graphCut = RegularizeProbabilities(fused.data(), size, spacing, cut, labels);
  for (std::size_t i = 0; i < n; ++i)
  {
    const bool mesh = signedDistanceMm[i] < 0;
    statistics.fusedVoxels += labels[i] != 0;
    statistics.addedVoxels += labels[i] != 0 && !mesh;
    statistics.removedVoxels += labels[i] == 0 && mesh;
  }
  return statistics;
}

LabelImage::Pointer
FuseMeshWithProbabilities(const Eigen::Matrix3Xd &      points,
                          const Eigen::Matrix3Xi &      triangles,
                          const itk::Image<float, 3> *  probability,
                          int                           label,
                          const ShapeFusionParameters & parameters,
                          ShapeFusionStatistics *       statistics)
{
  CheckShapeFusionParameters(parameters);
  if (probability == nullptr)
    CANOPY_THROW("shape fusion: no probability map");
  LabelImage::Pointer      result = VoxelizeMesh(points, triangles, probability, label); // checks mesh and label
  const std::vector<float> distance = SignedDistanceToMesh(points, triangles, result, parameters.bandMm + 1.0);
  const auto               region = probability->GetLargestPossibleRegion();
  if (probability->GetBufferedRegion() != region)
    CANOPY_THROW("shape fusion: the probability map is not wholly in memory");
  int    size[3];
  double spacing[3];
  for (int k = 0; k < 3; ++k)
  {
    size[k] = int(region.GetSize()[k]);
    spacing[k] = probability->GetSpacing()[k];
  }
  std::vector<std::uint8_t>   labels(region.GetNumberOfPixels());
  const ShapeFusionStatistics s = FuseShapeAndProbabilities(
    probability->GetBufferPointer(), distance.data(), size, spacing, parameters, labels.data());
  int * out = result->GetBufferPointer();
  for (std::size_t i = 0; i < labels.size(); ++i)
    out[i] = labels[i] ? label : 0;
  if (statistics)
    *statistics = s;
  return result;
}
} // namespace canopy
