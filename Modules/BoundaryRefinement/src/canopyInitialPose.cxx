#include "canopyInitialPose.h"

#include "canopy/Errors.h"
#include "canopy/JsonField.h"
#include "canopyShapeOutputs.h"

#include "itk_eigen.h"
#include ITK_EIGEN(Eigenvalues)
#include <itkImageRegionConstIteratorWithIndex.h>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace canopy
{
namespace
{
/** Axes 0 and 1 towards the positive side of their closest LPS axis, axis 2 = axis 0 x axis 1. */
Eigen::Matrix3d
CanonicalRows(Eigen::Matrix3d axes)
{
  for (int a = 0; a < 2; ++a)
  {
    Eigen::Index largest = 0;
    axes.row(a).cwiseAbs().maxCoeff(&largest); // ties: the first (lowest of x, y, z)
    if (axes(a, largest) < 0)
      axes.row(a) *= -1.0;
  }
  axes.row(2) = axes.row(0).cross(axes.row(1));
  return axes;
}

double
Quantile(std::vector<double> & values, double q)
{
  const auto k = static_cast<std::size_t>(std::llround(q * double(values.size() - 1)));
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(k), values.end());
  return values[k];
}

Eigen::Vector3d
ReadVector(const nlohmann::json & j, const std::string & where)
{
  if (!j.is_array() || j.size() != 3)
    CANOPY_THROW(where << " must be an array of 3 numbers");
  Eigen::Vector3d v;
  for (int k = 0; k < 3; ++k)
  {
    if (!j[std::size_t(k)].is_number() || !std::isfinite(j[std::size_t(k)].get<double>()))
      CANOPY_THROW(where << " must be an array of 3 finite numbers");
    v(k) = j[std::size_t(k)].get<double>();
  }
  return v;
}
} // namespace

OrientedBox
BoxOfLabel(const LabelImage * labels, int label, const std::string & where)
{
  std::vector<Eigen::Vector3d> points;
  for (itk::ImageRegionConstIteratorWithIndex<LabelImage> it(labels, labels->GetLargestPossibleRegion()); !it.IsAtEnd();
       ++it)
    if (it.Get() == label)
    {
      LabelImage::PointType p;
      labels->TransformIndexToPhysicalPoint(it.GetIndex(), p);
      points.emplace_back(p[0], p[1], p[2]);
    }
  if (points.empty())
    CANOPY_THROW(where << ": label " << label << " is absent (no voxel has this value)");
  OrientedBox box;
  for (const auto & p : points)
    box.centerMm += p;
  box.centerMm /= double(points.size());
  Eigen::Matrix3d covariance = Eigen::Matrix3d::Zero();
  for (const auto & p : points)
    covariance += (p - box.centerMm) * (p - box.centerMm).transpose();
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eigen(covariance / double(points.size()));
  Eigen::Matrix3d                                      rows;
  for (int a = 0; a < 3; ++a)
    rows.row(a) = eigen.eigenvectors().col(2 - a).transpose(); // largest variance first
  box.axes = CanonicalRows(rows);
  const auto &        direction = labels->GetDirection();
  const auto &        spacing = labels->GetSpacing();
  std::vector<double> t(points.size());
  for (int a = 0; a < 3; ++a)
  {
    for (std::size_t i = 0; i < points.size(); ++i)
      t[i] = box.axes.row(a).dot(points[i] - box.centerMm);
    double voxel = 0;
    for (int k = 0; k < 3; ++k)
      voxel += std::abs(box.axes(a, 0) * direction(0, k) + box.axes(a, 1) * direction(1, k) +
                        box.axes(a, 2) * direction(2, k)) *
               spacing[k];
    const double high = Quantile(t, 0.999), low = Quantile(t, 0.001);
    box.sizeMm(a) = high - low + voxel;
  }
  return box;
}

OrientedBox
BoxOfModel(const ShapeModel & model)
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
  return BoxOfLabel(labels, 1, "the shape model's mean of " + model.structure);
}

Similarity
PoseFromBoxes(const OrientedBox & model, const OrientedBox & target, bool useAxes)
{
  Similarity pose;
  pose.rotation = useAxes ? Eigen::Matrix3d(target.axes.transpose() * model.axes) : Eigen::Matrix3d::Identity();
  pose.scale = std::cbrt(target.sizeMm.prod() / model.sizeMm.prod());
  pose.translation = target.centerMm - pose.scale * (pose.rotation * model.centerMm);
  return pose;
}

OrientedBox
ReadDetectedBox(const std::string & path, const std::string & structure, double * score)
{
  std::ifstream in(path, std::ios::binary);
  if (!in)
    CANOPY_THROW(path << ": cannot open the poses file");
  nlohmann::json doc;
  try
  {
    doc = ParseJsonWithDepthLimit(in, path);
  }
  catch (const nlohmann::json::exception & e)
  {
    CANOPY_THROW(path << ": the poses file is not valid JSON (" << e.what() << ")");
  }
  if (!doc.is_object() || !doc.contains("structures") || !doc["structures"].is_array())
    CANOPY_THROW(path << ": not a poses file (no \"structures\" array)");
  for (std::size_t s = 0; s < doc["structures"].size(); ++s)
  {
    const auto &      entry = doc["structures"][s];
    const std::string here = path + ": structures[" + std::to_string(s) + "]";
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string())
      CANOPY_THROW(here << ": needs a \"name\" string");
    if (entry["name"].get<std::string>() != structure)
      continue;
    const auto & found = RequireJsonField(entry, "found", here);
    if (!found.is_boolean())
      CANOPY_THROW(here << ": \"found\" must be true or false");
    if (!found.get<bool>())
      CANOPY_THROW(here << ": the detector did not find " << structure << " (\"found\": false)");
    OrientedBox box;
    box.centerMm = ReadVector(RequireJsonField(entry, "center_mm", here), here + ": \"center_mm\"");
    box.sizeMm = ReadVector(RequireJsonField(entry, "size_mm", here), here + ": \"size_mm\"");
    if (!(box.sizeMm.minCoeff() > 0))
      CANOPY_THROW(here << ": \"size_mm\" entries must be > 0");
    const auto & axes = RequireJsonField(entry, "axes", here);
    if (!axes.is_array() || axes.size() != 3)
      CANOPY_THROW(here << ": \"axes\" must be 3 rows of 3 numbers");
    for (int a = 0; a < 3; ++a)
      box.axes.row(a) = ReadVector(axes[std::size_t(a)], here + ": \"axes\" row " + std::to_string(a)).transpose();
    if ((box.axes * box.axes.transpose() - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() > 1e-3)
      CANOPY_THROW(here << ": \"axes\" must be orthonormal rows");
    box.axes = CanonicalRows(box.axes);
    if (score && entry.contains("score") && entry["score"].is_number())
      *score = entry["score"].get<double>();
    return box;
  }
  CANOPY_THROW(path << ": no structure named \"" << structure << "\" (the shape model's structure)");
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
