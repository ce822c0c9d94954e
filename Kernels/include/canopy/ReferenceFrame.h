// A reference frame for position features (issue 13): a structure's pose (centre, orthonormal axes,
// extents; Modules/PoseDetection's StructurePose) turned into coordinates that are -1 and +1 at the
// faces of its oriented box, so a voxel's place is told relative to the anatomy, not to the image's
// field of view. Shared by the CPU filter bank and any kernel that computes the channel (plain data,
// CANOPY_HD): a voxel's index goes to LPS millimetres through the image's origin, direction and
// spacing (ITK's TransformIndexToPhysicalPoint), then into the frame.
#pragma once

#include "canopy/HostDevice.h"

namespace canopy
{

struct ReferenceFrame
{
  double center[3] = { 0.0, 0.0, 0.0 };                                            // LPS mm
  double axes[3][3] = { { 1.0, 0.0, 0.0 }, { 0.0, 1.0, 0.0 }, { 0.0, 0.0, 1.0 } }; // unit rows, LPS
  double halfSize[3] = { 1.0, 1.0, 1.0 };                                          // mm, > 0: half the extent per axis
};

/** An image's place in the world: physical = origin + direction (spacing * index), direction row-major
 * (ITK's GetDirection()), 2D images with z = 0 and the third row and column of the identity. */
struct ImageGeometry
{
  double origin[3] = { 0.0, 0.0, 0.0 };
  double spacing[3] = { 1.0, 1.0, 1.0 };
  double direction[3][3] = { { 1.0, 0.0, 0.0 }, { 0.0, 1.0, 0.0 }, { 0.0, 0.0, 1.0 } };
};

/** The LPS point (mm) of voxel (x, y, z). */
CANOPY_HD void
VoxelToPhysical(const ImageGeometry & g, int x, int y, int z, double point[3])
{
  const double scaled[3] = { g.spacing[0] * x, g.spacing[1] * y, g.spacing[2] * z };
  for (int r = 0; r < 3; ++r)
    point[r] =
      g.origin[r] + g.direction[r][0] * scaled[0] + g.direction[r][1] * scaled[1] + g.direction[r][2] * scaled[2];
}

/** Coordinate of `point` along the frame's axis `axis`, in half extents: 0 at the centre, +-1 at the
 * oriented box's faces (beyond them outside the box). */
CANOPY_HD float
ReferenceFrameCoordinate(const ReferenceFrame & f, const double point[3], int axis)
{
  const double along = (point[0] - f.center[0]) * f.axes[axis][0] + (point[1] - f.center[1]) * f.axes[axis][1] +
                       (point[2] - f.center[2]) * f.axes[axis][2];
  return static_cast<float>(along / f.halfSize[axis]);
}

} // namespace canopy
