// 3D Haar features (Birkbeck et al. Sec. 3.2): a weighted combination of up to four cuboids placed
// and scaled relative to a sample point and a sample box. The response function is shared by the
// CPU reference and the CUDA kernels.
#pragma once

#include "canopy/HostDevice.h"
#include "canopy/IntegralVolumeView.h"

namespace canopy
{

constexpr int kMaxHaarCuboids = 4;

/** A cuboid in sample-box coordinates: the sample box spans [-0.5, 0.5] on each axis, centred on
 * the sample point; lo/hi are the cuboid's corners in that frame. */
struct HaarCuboid
{
  float lo[3];
  float hi[3];
  float weight;
};

/** A feature as generated and stored: independent of voxel size and sample box size. */
struct HaarFeature
{
  int        numCuboids = 0;
  HaarCuboid cuboids[kMaxHaarCuboids]{};
  /** The channel whose integral volume the cuboids sum (0: the intensity; auto-context stages read
   * probability maps as channels 1..C). Channels are stacked along z with zero gaps, so resolving a
   * feature for a volume folds its channel into the z offsets (canopyHaarChannels.h) and every kernel
   * evaluates multi-channel features unchanged. */
  int channel = 0;
};

/** A feature resolved for one sample-box size in voxels: integer voxel offsets from the sample point
 * (half-open [lo, hi)) and weights already divided by each cuboid's nominal voxel count, so the
 * response is a weighted sum of cuboid means. This is what kernels read. */
struct HaarFeatureVoxels
{
  int   numCuboids;
  int   lo[kMaxHaarCuboids][3];
  int   hi[kMaxHaarCuboids][3];
  float weightPerVoxel[kMaxHaarCuboids];
};

struct VoxelIndex3
{
  int x;
  int y;
  int z;
};

/** A resolved feature laid out for one table shape: the eight corner indices of each cuboid relative
 * to the sample point's table entry (CornerSum order) and the feature's bounding box. Kernels build it
 * once per feature and reuse it for every point. */
struct HaarFeatureCorners
{
  int   numCuboids; // -1: no unclipped form (inverted cuboid, or offsets beyond int); always clip
  int   lo[3];      // bounding box of the cuboids, offsets from the point, half-open
  int   hi[3];
  int   corner[kMaxHaarCuboids][8];
  float weightPerVoxel[kMaxHaarCuboids];
};

CANOPY_HD HaarFeatureCorners
MakeHaarFeatureCorners(const IntegralVolumeView & v, const HaarFeatureVoxels & f)
{
  HaarFeatureCorners k{};
  k.numCuboids = f.numCuboids;
  bool fits = f.numCuboids >= 0 && f.numCuboids <= kMaxHaarCuboids;
  for (int c = 0; c < kMaxHaarCuboids && c < f.numCuboids; ++c)
  {
    const int * lo = f.lo[c];
    const int * hi = f.hi[c];
    for (int d = 0; d < 3; ++d)
    {
      k.lo[d] = c == 0 || lo[d] < k.lo[d] ? lo[d] : k.lo[d];
      k.hi[d] = c == 0 || hi[d] > k.hi[d] ? hi[d] : k.hi[d];
      fits = fits && lo[d] <= hi[d];
    }
    const std::int64_t corners[8] = { PaddedIndex(v, hi[0], hi[1], hi[2]), PaddedIndex(v, lo[0], hi[1], hi[2]),
                                      PaddedIndex(v, hi[0], lo[1], hi[2]), PaddedIndex(v, hi[0], hi[1], lo[2]),
                                      PaddedIndex(v, lo[0], lo[1], hi[2]), PaddedIndex(v, lo[0], hi[1], lo[2]),
                                      PaddedIndex(v, hi[0], lo[1], lo[2]), PaddedIndex(v, lo[0], lo[1], lo[2]) };
    for (int i = 0; i < 8; ++i)
    {
      fits = fits && corners[i] >= -2147483647 && corners[i] <= 2147483647;
      k.corner[c][i] = static_cast<int>(corners[i]);
    }
    k.weightPerVoxel[c] = f.weightPerVoxel[c];
  }
  if (!fits)
  {
    k.numCuboids = -1;
  }
  return k;
}

/** True when every cuboid lies inside the volume for the point (x, y, z): clipping is then a no-op
 * and the unclipped corner form gives the same sums. */
CANOPY_HD bool
HaarCornersInside(const IntegralVolumeView & v, const HaarFeatureCorners & k, int x, int y, int z)
{
  return k.numCuboids >= 0 && x + k.lo[0] >= 0 && y + k.lo[1] >= 0 && z + k.lo[2] >= 0 && x + k.hi[0] <= v.nx &&
         y + k.hi[1] <= v.ny && z + k.hi[2] <= v.nz;
}

/** Responses at N points at once (at[n] = &sums[PaddedIndex(point n)]), all inside: one read of the
 * feature serves every point. The same arithmetic, in the same order, as HaarResponse, so both give
 * identical values wherever clipping is a no-op. */
template <int N>
CANOPY_HD void
HaarResponsesInside(const double * const (&at)[N], const HaarFeatureCorners & k, double (&response)[N])
{
  for (int n = 0; n < N; ++n)
  {
    response[n] = 0.0;
  }
#if defined(__CUDACC__)
#  pragma unroll
#endif
  for (int c = 0; c < kMaxHaarCuboids; ++c)
  {
    if (c < k.numCuboids)
    {
      const int *  i = k.corner[c];
      const int    i0 = i[0], i1 = i[1], i2 = i[2], i3 = i[3], i4 = i[4], i5 = i[5], i6 = i[6], i7 = i[7];
      const double w = static_cast<double>(k.weightPerVoxel[c]);
#if defined(__CUDACC__)
#  pragma unroll
#endif
      for (int n = 0; n < N; ++n)
      {
        response[n] += w * CornerSum(at[n], i0, i1, i2, i3, i4, i5, i6, i7);
      }
    }
  }
}

/** Response of a resolved feature at voxel (x, y, z). Cuboids are clipped to the volume (voxels
 * outside count as zero), so responses near the border are defined and finite. This is the CPU
 * reference and the GPU's form near the border; for points where HaarCornersInside holds, kernels use
 * HaarResponsesInside, which performs the same CornerSum arithmetic in the same order. */
CANOPY_HD double
HaarResponse(const IntegralVolumeView & volume, const HaarFeatureVoxels & f, int x, int y, int z)
{
  double response = 0.0;
#if defined(__CUDACC__)
#  pragma unroll
#endif
  for (int c = 0; c < kMaxHaarCuboids; ++c)
  {
    if (c < f.numCuboids)
    {
      const double sum = ClippedBoxSum(volume,
                                       x + f.lo[c][0],
                                       y + f.lo[c][1],
                                       z + f.lo[c][2],
                                       x + f.hi[c][0],
                                       y + f.hi[c][1],
                                       z + f.hi[c][2]);
      response += static_cast<double>(f.weightPerVoxel[c]) * sum;
    }
  }
  return response;
}

} // namespace canopy
