#include "canopyStructurePose.h"

#include "canopy/AtomicFile.h"
#include "canopy/Errors.h"
#include "canopy/JsonField.h"

#include "itk_eigen.h" // ITK's own Eigen: one Eigen in every unit that also includes ITK IO
#include ITK_EIGEN(Eigenvalues)

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

namespace canopy
{
namespace
{
double
Dot(const Vec3d & a, const Vec3d & b)
{
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

Vec3d
Cross(const Vec3d & a, const Vec3d & b)
{
  return { { a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0] } };
}

/** Quantile q in [0, 1] of `values` (nearest rank; values are reordered). */
double
Quantile(std::vector<double> & values, double q)
{
  const auto rank = static_cast<std::size_t>(std::lround(q * static_cast<double>(values.size() - 1)));
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(rank), values.end());
  return values[rank];
}

const nlohmann::json &
Field(const nlohmann::json & entry, const char * key, const std::string & where)
{
  return RequireJsonField(entry, key, where);
}

Vec3d
ReadVec3(const nlohmann::json & value, const std::string & where)
{
  if (!value.is_array() || value.size() != 3)
    CANOPY_THROW(where << " must be an array of 3 numbers");
  Vec3d out;
  for (int k = 0; k < 3; ++k)
  {
    if (!value[k].is_number() || !std::isfinite(value[k].get<double>()))
      CANOPY_THROW(where << " must be an array of 3 finite numbers");
    out[k] = value[k].get<double>();
  }
  return out;
}

double
ReadFinite(const nlohmann::json & entry, const char * key, const std::string & where)
{
  const auto & v = Field(entry, key, where);
  if (!v.is_number() || !std::isfinite(v.get<double>()))
    CANOPY_THROW(where << ": \"" << key << "\" must be a finite number");
  return v.get<double>();
}
} // namespace

std::array<Vec3d, 3>
CanonicalAxes(const std::array<Vec3d, 3> & axes)
{
  std::array<Vec3d, 3> out = axes;
  for (int a = 0; a < 2; ++a)
  {
    int closest = 0;
    for (int k = 1; k < 3; ++k)
      closest = std::abs(out[a][k]) > std::abs(out[a][closest]) ? k : closest;
    if (out[a][closest] < 0.0)
      for (double & v : out[a])
        v = -v;
  }
  out[2] = Cross(out[0], out[1]);
  return out;
}

double
AxisAngleDegrees(const Vec3d & a, const Vec3d & b)
{
  const double c = std::min(1.0, std::abs(Dot(a, b)) / std::sqrt(Dot(a, a) * Dot(b, b)));
  return std::acos(c) * 180.0 / M_PI;
}

double
OrientationErrorDegrees(const std::array<Vec3d, 3> & a, const std::array<Vec3d, 3> & b)
{
  double worst = 0.0;
  for (int k = 0; k < 3; ++k)
    worst = std::max(worst, AxisAngleDegrees(a[k], b[k]));
  return worst;
}

StructurePose
PoseFromLabel(const PoseLabelMap * labels, int label, const std::string & where)
{
  if (!labels)
    CANOPY_THROW(where << ": no label map");
  const auto   region = labels->GetLargestPossibleRegion();
  const auto   size = region.GetSize();
  const int *  voxels = labels->GetBufferPointer();
  const auto & spacing = labels->GetSpacing();
  const auto & direction = labels->GetDirection();
  const auto & origin = labels->GetOrigin();
  // index -> LPS: origin + direction * diag(spacing) * index
  double toWorld[3][3];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      toWorld[r][c] = direction[r][c] * spacing[c];

  std::vector<Vec3d> points;
  std::size_t        i = 0;
  for (std::size_t z = 0; z < size[2]; ++z)
    for (std::size_t y = 0; y < size[1]; ++y)
      for (std::size_t x = 0; x < size[0]; ++x, ++i)
        if (voxels[i] == label)
        {
          const double idx[3] = { double(x), double(y), double(z) };
          Vec3d        p;
          for (int r = 0; r < 3; ++r)
            p[r] = origin[r] + toWorld[r][0] * idx[0] + toWorld[r][1] * idx[1] + toWorld[r][2] * idx[2];
          points.push_back(p);
        }
  if (points.empty())
    CANOPY_THROW(where << ": label " << label << " is absent (no voxel has this value)");

  StructurePose pose;
  for (const auto & p : points)
    for (int k = 0; k < 3; ++k)
      pose.centerMm[k] += p[k] / static_cast<double>(points.size());
  Eigen::Matrix3d covariance = Eigen::Matrix3d::Zero();
  for (const auto & p : points)
  {
    const Eigen::Vector3d d(p[0] - pose.centerMm[0], p[1] - pose.centerMm[1], p[2] - pose.centerMm[2]);
    covariance += d * d.transpose();
  }
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> solver(covariance);
  std::array<Vec3d, 3>                           axes;
  for (int a = 0; a < 3; ++a) // eigenvalues ascending: the largest is column 2
    for (int k = 0; k < 3; ++k)
      axes[a][k] = solver.eigenvectors()(k, 2 - a);
  pose.axes = CanonicalAxes(axes);

  std::vector<double> t(points.size());
  for (int a = 0; a < 3; ++a)
  {
    for (std::size_t n = 0; n < points.size(); ++n)
      t[n] = Dot(points[n], pose.axes[a]);
    double voxelExtent = 0.0;
    for (int c = 0; c < 3; ++c)
    {
      const double along =
        pose.axes[a][0] * toWorld[0][c] + pose.axes[a][1] * toWorld[1][c] + pose.axes[a][2] * toWorld[2][c];
      voxelExtent += along * along;
    }
    voxelExtent = std::sqrt(voxelExtent);
    const double high = Quantile(t, 0.999), low = Quantile(t, 0.001);
    pose.sizeMm[a] = high - low + voxelExtent;
  }
  return pose;
}

nlohmann::json
PosesToJson(const std::vector<DetectedStructure> & structures)
{
  nlohmann::json list = nlohmann::json::array();
  for (const auto & s : structures)
  {
    nlohmann::json entry = { { "name", s.name }, { "found", s.found } };
    if (s.found)
    {
      entry["center_mm"] = s.pose.centerMm;
      entry["axes"] = s.pose.axes;
      entry["size_mm"] = s.pose.sizeMm;
    }
    else
    {
      entry["center_mm"] = nullptr;
      entry["axes"] = nullptr;
      entry["size_mm"] = nullptr;
    }
    entry["score"] = s.score;
    entry["seconds"] = s.seconds;
    if (s.lowConfidence)
      entry["lowConfidence"] = true;
    list.push_back(entry);
  }
  return { { "structures", list } };
}

std::vector<DetectedStructure>
PosesFromJson(const nlohmann::json & document, const std::string & where)
{
  const auto & list = RequireJsonField(document, "structures", where);
  if (!list.is_array())
    CANOPY_THROW(where << ": \"structures\" must be an array");
  std::vector<DetectedStructure> out;
  std::set<std::string>          names;
  for (std::size_t n = 0; n < list.size(); ++n)
  {
    const std::string at = where + ": structures[" + std::to_string(n) + "]";
    const auto &      entry = list[n];
    DetectedStructure s;
    const auto &      name = Field(entry, "name", at);
    if (!name.is_string() || name.get<std::string>().empty())
      CANOPY_THROW(at << ": \"name\" must be a non-empty string");
    s.name = name.get<std::string>();
    const std::string self = at + " (" + s.name + ")";
    if (!names.insert(s.name).second)
      CANOPY_THROW(self << ": a second entry of this name");
    const auto & found = Field(entry, "found", self);
    if (!found.is_boolean())
      CANOPY_THROW(self << ": \"found\" must be true or false");
    s.found = found.get<bool>();
    s.score = ReadFinite(entry, "score", self);
    s.seconds = ReadFinite(entry, "seconds", self);
    if (s.seconds < 0.0)
      CANOPY_THROW(self << ": \"seconds\" must be >= 0");
    if (entry.contains("lowConfidence"))
    {
      const auto & low = entry["lowConfidence"];
      if (!low.is_boolean() || (low.get<bool>() && !s.found))
        CANOPY_THROW(self << ": \"lowConfidence\" must be true or false, and true only for a found structure");
      s.lowConfidence = low.get<bool>();
    }
    if (!s.found)
    {
      out.push_back(s);
      continue;
    }
    s.pose.centerMm = ReadVec3(Field(entry, "center_mm", self), self + ": \"center_mm\"");
    const auto & axes = Field(entry, "axes", self);
    if (!axes.is_array() || axes.size() != 3)
      CANOPY_THROW(self << ": \"axes\" must be 3 rows of 3 numbers");
    for (int a = 0; a < 3; ++a)
      s.pose.axes[a] = ReadVec3(axes[a], self + ": \"axes\"[" + std::to_string(a) + "]");
    for (int a = 0; a < 3; ++a)
      for (int b = a; b < 3; ++b)
        if (std::abs(Dot(s.pose.axes[a], s.pose.axes[b]) - (a == b ? 1.0 : 0.0)) > 1e-3)
          CANOPY_THROW(self << ": \"axes\" rows must be unit vectors at right angles (rows " << a << " and " << b
                            << ")");
    s.pose.sizeMm = ReadVec3(Field(entry, "size_mm", self), self + ": \"size_mm\"");
    for (double v : s.pose.sizeMm)
      if (!(v > 0.0))
        CANOPY_THROW(self << ": \"size_mm\" entries must be > 0");
    out.push_back(s);
  }
  return out;
}

nlohmann::json
PosesToSlicerMarkups(const std::vector<DetectedStructure> & structures)
{
  nlohmann::json points = nlohmann::json::array(), markups = nlohmann::json::array();
  for (const auto & s : structures)
  {
    if (!s.found)
      continue;
    std::vector<double> orientation(9);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        orientation[3 * r + c] = s.pose.axes[c][r];
    points.push_back(
      { { "id", std::to_string(points.size() + 1) },
        { "label", s.name },
        { "description", "score " + std::to_string(s.score) + (s.lowConfidence ? " (low confidence)" : "") },
        { "position", s.pose.centerMm },
        { "positionStatus", "defined" } });
    markups.push_back({ { "type", "ROI" },
                        { "name", s.name },
                        { "coordinateSystem", "LPS" },
                        { "coordinateUnits", "mm" },
                        { "roiType", "Box" },
                        { "center", s.pose.centerMm },
                        { "orientation", orientation },
                        { "size", s.pose.sizeMm },
                        { "insideOut", false },
                        { "controlPoints", nlohmann::json::array() } });
  }
  nlohmann::json centres = { { "type", "Fiducial" },
                             { "name", "centres" },
                             { "coordinateSystem", "LPS" },
                             { "coordinateUnits", "mm" },
                             { "controlPoints", points } };
  markups.insert(markups.begin(), centres);
  return { { "@schema",
             "https://raw.githubusercontent.com/slicer/slicer/master/Modules/Loadable/Markups/Resources/Schema/"
             "markups-schema-v1.0.3.json#" },
           { "markups", markups } };
}

void
WritePosesFile(const std::vector<DetectedStructure> & structures, const std::string & path)
{
  const std::string text = PosesToJson(structures).dump(2);
  WriteFileAtomically(path, [&text](std::ostream & out) { out << text << '\n'; });
}

std::vector<DetectedStructure>
ReadPosesFile(const std::string & path)
{
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    CANOPY_THROW(path << ": no such file");
  const std::string text = ReadModelFileText(path);
  if (text.empty())
    CANOPY_THROW(path << ": the poses file is empty");
  nlohmann::json doc;
  try
  {
    doc = ParseJsonWithDepthLimit(text, path);
  }
  catch (const nlohmann::json::exception & e)
  {
    CANOPY_THROW(path << ": the poses file is truncated or not valid JSON (" << e.what() << ")");
  }
  return PosesFromJson(doc, path);
}

} // namespace canopy
