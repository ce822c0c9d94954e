// The pose of an anatomical structure (issue 9 part 4): centre, orientation and size, a 9-D
// similarity in LPS millimetres. Ground truth comes from label maps (users have label maps, not pose
// annotations); detectors (canopyPoseDetector.h) report the same quantity, and poses.json carries it
// between `canopy detect`, `canopy evaluate-poses` and `canopy segment-shape --pose`.
//
// Pose of a label (PoseFromLabel):
//  - centre: the centroid of the label's voxel centres (physical LPS mm, through the image's origin,
//    spacing and direction);
//  - axes: the eigenvectors of the voxel centres' covariance, largest variance first (axis 0 is the
//    structure's long axis);
//  - sign convention (so that poses of one structure compare across subjects): axes 0 and 1 each
//    point to the positive side of the LPS axis they are closest to (the component of largest
//    magnitude is made positive; ties go to the lower of x, y, z), and axis 2 = axis 0 x axis 1, so
//    the frame is right-handed (a rotation). CanonicalAxes applies the same rule to any frame;
//  - size: per axis a, size_a = q99.9(t_a) - q0.1(t_a) + e_a, with t_a the projections of the voxel
//    centres on axis a, q the quantiles (a stray voxel does not stretch the box) and e_a one voxel's
//    width along a, sqrt(sum over image axes k of (spacing_k axis_a . direction_k)^2) (the spacing
//    for an axis along the grid), so a single voxel has the voxel's size and a solid ellipsoid of
//    semi-axes r_a, sampled at 8 or more voxels per radius, measures 2 r_a within 5%.
#pragma once

#include "itkImage.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <string>
#include <vector>

namespace canopy
{

using PoseLabelMap = itk::Image<int, 3>;
using Vec3d = std::array<double, 3>;

struct StructurePose
{
  Vec3d                centerMm{ { 0.0, 0.0, 0.0 } };                                 // LPS
  std::array<Vec3d, 3> axes{ { { { 1, 0, 0 } }, { { 0, 1, 0 } }, { { 0, 0, 1 } } } }; // unit rows, LPS
  Vec3d                sizeMm{ { 0.0, 0.0, 0.0 } };                                   // extent along each axis
};

/** The pose of the voxels equal to `label` (file comment). `where` (e.g. the file name) starts the
 * error thrown when no voxel has the label: "<where>: label 17 is absent (no voxel has this value)". */
StructurePose
PoseFromLabel(const PoseLabelMap * labels, int label, const std::string & where);

/** The frame under the sign convention of the file comment: axes 0 and 1 flipped towards the
 * positive side of their closest LPS axis, axis 2 = axis 0 x axis 1. The input rows must be
 * orthonormal (within rounding). */
std::array<Vec3d, 3>
CanonicalAxes(const std::array<Vec3d, 3> & axes);

/** Angle (degrees, [0, 90]) between axis a of two frames, ignoring its sign: acos |a . b|. */
double
AxisAngleDegrees(const Vec3d & a, const Vec3d & b);

/** Largest of the three per-axis sign-invariant angles (degrees). */
double
OrientationErrorDegrees(const std::array<Vec3d, 3> & a, const std::array<Vec3d, 3> & b);

/** One entry of poses.json. A structure not found has no pose: found = false and `pose` unused
 * (written as nulls). score: the detector's best posterior; seconds: time spent on it. lowConfidence:
 * found below its structure's threshold, as a network child whose parent was found (detect
 * --child-threshold: the child is known to exist, its best supported pose is reported). */
struct DetectedStructure
{
  std::string   name;
  bool          found = false;
  StructurePose pose;
  double        score = 0.0;
  double        seconds = 0.0;
  bool          lowConfidence = false;
};

/** Field-by-field equality (exact; for ITK's decorated outputs and tests). */
inline bool
operator==(const StructurePose & a, const StructurePose & b)
{
  return a.centerMm == b.centerMm && a.axes == b.axes && a.sizeMm == b.sizeMm;
}
inline bool
operator==(const DetectedStructure & a, const DetectedStructure & b)
{
  return a.name == b.name && a.found == b.found && a.pose == b.pose && a.score == b.score && a.seconds == b.seconds &&
         a.lowConfidence == b.lowConfidence;
}
inline bool
operator!=(const DetectedStructure & a, const DetectedStructure & b)
{
  return !(a == b);
}

/** poses.json (issue 9 part 7):
 *   {"structures": [{"name": "...", "found": true, "center_mm": [x, y, z], "axes": [[3], [3], [3]],
 *                    "size_mm": [3], "score": s, "seconds": t}, ...]}
 * centre and axes in LPS mm, axes as unit rows; "found": false entries carry null centre, axes and
 * size. A found entry below its structure's threshold (DetectedStructure::lowConfidence) also has
 * "lowConfidence": true (optional when reading; absent means false). Other fields are ignored by the
 * reader. */
nlohmann::json
PosesToJson(const std::vector<DetectedStructure> & structures);

/** Strict reader: `where` (the file name) starts every error, which names the entry and the field
 * (a missing or non-finite number, axes that are not unit and orthogonal within 1e-3, a size <= 0,
 * two entries of one name). */
std::vector<DetectedStructure>
PosesFromJson(const nlohmann::json & document, const std::string & where);

/** 3D Slicer markups JSON (.mrk.json, schema v1.0.3) of the found structures: one point list
 * ("Fiducial") with a point per centre, labelled with the structure's name, and an oriented box ("ROI",
 * roiType Box) per structure: its centre, size and "orientation" (row-major 3x3 whose columns are the
 * pose's axes), all in LPS mm. */
nlohmann::json
PosesToSlicerMarkups(const std::vector<DetectedStructure> & structures);

/** Written to a temporary name and renamed (no half-written file). */
void
WritePosesFile(const std::vector<DetectedStructure> & structures, const std::string & path);

/** Reads and checks a poses.json; canopy::Error naming the file for a missing, empty or damaged file. */
std::vector<DetectedStructure>
ReadPosesFile(const std::string & path);

} // namespace canopy
