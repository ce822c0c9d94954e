// Plain-data view of a 3D summed-volume table and the box sum shared by CPU and CUDA code.
//
// Layout ("padded"): a volume of nx*ny*nz voxels has a table of (nx+1)*(ny+1)*(nz+1) doubles,
//   sums[(z*(ny+1) + y)*(nx+1) + x] = sum of voxels [0,x) x [0,y) x [0,z),
// so the first plane of every axis is zero and a box sum is eight loads with no branch.
// itk::IntegralVolumeImageFilter produces exactly this buffer (its output region starts at index -1).
#pragma once

#include "canopy/HostDevice.h"

#include <cstdint>

namespace canopy
{

struct IntegralVolumeView
{
  const double * sums = nullptr; // (nx+1)*(ny+1)*(nz+1) entries, padded layout above
  int            nx = 0;         // voxel counts of the source volume
  int            ny = 0;
  int            nz = 0;
};

CANOPY_HD std::int64_t
PaddedIndex(const IntegralVolumeView & v, int x, int y, int z)
{
  return (static_cast<std::int64_t>(z) * (v.ny + 1) + y) * (v.nx + 1) + x;
}

CANOPY_HD int
ClampInt(int value, int low, int high)
{
  return value < low ? low : (value > high ? high : value);
}

/** Sum of voxels in the half-open box [x0,x1) x [y0,y1) x [z0,z1).
 * Corners must already lie in [0,n] on each axis (see ClippedBoxSum for arbitrary boxes). */
/** The eight-corner combination of a box sum from the table entries' indices (relative to `s`), in
 * the order (x,y,z) = 111, 011, 101, 110, 001, 010, 100, 000 of the box's high/low corners. BoxSum and
 * kernels that precompute corner offsets (HaarFeature.h) share it, so their sums agree bit for bit. */
template <typename TIndex>
CANOPY_HD double
CornerSum(const double * s, TIndex i111, TIndex i011, TIndex i101, TIndex i110, TIndex i001, TIndex i010,
          TIndex i100, TIndex i000)
{
  return s[i111] - s[i011] - s[i101] - s[i110] + s[i001] + s[i010] + s[i100] - s[i000];
}

CANOPY_HD double
BoxSum(const IntegralVolumeView & v, int x0, int y0, int z0, int x1, int y1, int z1)
{
  return CornerSum(v.sums, PaddedIndex(v, x1, y1, z1), PaddedIndex(v, x0, y1, z1), PaddedIndex(v, x1, y0, z1),
                   PaddedIndex(v, x1, y1, z0), PaddedIndex(v, x0, y0, z1), PaddedIndex(v, x0, y1, z0),
                   PaddedIndex(v, x1, y0, z0), PaddedIndex(v, x0, y0, z0));
}

/** Box sum of an arbitrary half-open box: the box is clipped to the volume, so voxels outside the
 * image count as zero (a box wholly outside sums to 0; an empty or inverted box sums to 0). */
CANOPY_HD double
ClippedBoxSum(const IntegralVolumeView & v, int x0, int y0, int z0, int x1, int y1, int z1)
{
  x0 = ClampInt(x0, 0, v.nx);
  x1 = ClampInt(x1, x0, v.nx);
  y0 = ClampInt(y0, 0, v.ny);
  y1 = ClampInt(y1, y0, v.ny);
  z0 = ClampInt(z0, 0, v.nz);
  z1 = ClampInt(z1, z0, v.nz);
  return BoxSum(v, x0, y0, z0, x1, y1, z1);
}

} // namespace canopy
