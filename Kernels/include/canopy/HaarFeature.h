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

/** Response of a resolved feature at voxel (x, y, z). Cuboids are clipped to the volume (voxels
 * outside count as zero), so responses near the border are defined and finite. */
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
