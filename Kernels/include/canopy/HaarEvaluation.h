// Evaluation of a Haar feature bank at a list of voxels or densely over a box: CPU reference and
// CUDA launchers computing the same HaarResponse (HaarFeature.h).
#pragma once

#include "canopy/HaarFeature.h"
#include "canopy/IntegralVolume.h"
#include "canopy/ResponseLayout.h"

#include <cstdint>

namespace canopy
{

/** A dense block of voxels [x0, x0+sx) x [y0, y0+sy) x [z0, z0+sz); points are numbered x fastest. */
struct VoxelBlock
{
  int x0, y0, z0;
  int sx, sy, sz;
  std::int64_t NumberOfVoxels() const { return static_cast<std::int64_t>(sx) * sy * sz; }
};

void
EvaluateHaarAtPointsCPU(const IntegralVolumeView & volume, const HaarFeatureVoxels * features, int numFeatures,
                        const VoxelIndex3 * points, std::int64_t numPoints, ResponseLayout out, int threads = 0);

void
EvaluateHaarDenseCPU(const IntegralVolumeView & volume, const HaarFeatureVoxels * features, int numFeatures,
                     const VoxelBlock & block, ResponseLayout out, int threads = 0);

namespace cuda
{
/** All pointers are device pointers (volume.sums too). Enqueued on `stream`, no synchronisation. */
void
LaunchHaarAtPoints(const IntegralVolumeView & volume, const HaarFeatureVoxels * features, int numFeatures,
                   const VoxelIndex3 * points, std::int64_t numPoints, ResponseLayout out, StreamHandle stream);

void
LaunchHaarDense(const IntegralVolumeView & volume, const HaarFeatureVoxels * features, int numFeatures,
                const VoxelBlock & block, ResponseLayout out, StreamHandle stream);
} // namespace cuda

} // namespace canopy
