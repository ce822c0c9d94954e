#include "canopyInitialPose.h"

#include "canopy/Errors.h"
#include "canopyShapeOutputs.h" // VoxelizeMesh

#include <algorithm>
#include <cmath>

namespace canopy
{
namespace
{
Eigen::Matrix3d
AxesAsRows(const StructurePose & pose)
{
  const auto      axes = CanonicalAxes(pose.axes);
  Eigen::Matrix3d rows;
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < 3; ++k)
      rows(a, k) = axes[a][k];
  return rows;
}

Eigen::Vector3d
AsVector(const Vec3d & v)
{
  return Eigen::Vector3d(v[0], v[1], v[2]);
}
} // namespace

StructurePose
PoseOfModel(const ShapeModel & model)
{
  const Eigen::Matrix3Xd & mean = model.Finest().mean;
  const Eigen::Vector3d low = mean.rowwise().minCoeff().array() - 2.0, high = mean.rowwise().maxCoeff().array() + 2.0;
  auto                  grid = LabelImage::New();
  LabelImage::SizeType  size;
  LabelImage::PointType origin;
  for (int k = 0; k < 3; ++k)
  {
    size[k] = static_cast<itk::SizeValueType>(std::ceil((high(k) - low(k)) / 0.5)) + 1;
    origin[k] = low(k);
  }
  grid->SetRegions(size);
  grid->SetOrigin(origin);
  grid->SetSpacing(itk::Vector<double, 3>(0.5));
  const auto labels = VoxelizeMesh(mean, model.Finest().triangles, grid, 1);
  return PoseFromLabel(labels, 1, "the shape model's mean of " + model.structure);
}

Similarity
SimilarityBetweenPoses(const StructurePose & model, const StructurePose & target, bool useAxes)
{
  Similarity pose;
  pose.rotation =
    useAxes ? Eigen::Matrix3d(AxesAsRows(target).transpose() * AxesAsRows(model)) : Eigen::Matrix3d::Identity();
  pose.scale = std::cbrt(AsVector(target.sizeMm).prod() / AsVector(model.sizeMm).prod());
  pose.translation = AsVector(target.centerMm) - pose.scale * (pose.rotation * AsVector(model.centerMm));
  return pose;
}

StructurePose
FoundPose(const std::vector<DetectedStructure> & detected,
          const std::string &                    structure,
          const std::string &                    where,
          double *                               score)
{
  const auto entry =
    std::find_if(detected.begin(), detected.end(), [&](const DetectedStructure & d) { return d.name == structure; });
  if (entry == detected.end())
    CANOPY_THROW(where << ": no structure named \"" << structure << "\" (the shape model's structure)");
  if (!entry->found)
    CANOPY_THROW(where << ": the detector did not find " << structure << " (\"found\": false, best score "
                       << entry->score << ")");
  if (score)
    *score = entry->score;
  return entry->pose;
}

void
CheckPoseInsideImage(const ShapeModel &        model,
                     const Similarity &        pose,
                     const itk::ImageBase<3> * image,
                     const std::string &       what)
{
  if (!pose.rotation.allFinite() || !pose.translation.allFinite() || !std::isfinite(pose.scale) || !(pose.scale > 0))
    CANOPY_THROW(what << ": the initial pose is degenerate (non-finite, or scale <= 0)");
  const Eigen::Vector3d c = pose.Apply(Eigen::Vector3d(model.Finest().mean.rowwise().mean()));
  itk::Point<double, 3> p;
  for (int k = 0; k < 3; ++k)
    p[k] = c(k);
  itk::ContinuousIndex<double, 3> index;
  image->TransformPhysicalPointToContinuousIndex(p, index);
  const auto & region = image->GetLargestPossibleRegion();
  for (int k = 0; k < 3; ++k)
    if (!(index[k] >= double(region.GetIndex(k)) - 0.5 &&
          index[k] <= double(region.GetIndex(k) + itk::IndexValueType(region.GetSize(k))) - 0.5))
      CANOPY_THROW(what << ": the initial pose puts " << model.structure << " at ("
                        << c.transpose().format(Eigen::IOFormat(4, Eigen::DontAlignCols, ", ", ", "))
                        << ") mm LPS, outside the input volume");
}
} // namespace canopy
