// Steerable-feature responses of pose hypotheses (SteerableFeature.h): the CPU reference and the CUDA
// launcher compute the same EvaluateSteerableFeatures; plus the per-level voxels (intensity and
// world gradient) they sample.
#pragma once

#include "canopy/IntegralVolume.h" // StreamHandle
#include "canopy/ResponseLayout.h"
#include "canopy/SteerableFeature.h"

#include <cstdint>

namespace canopy
{

/** Intensity and world gradient of every voxel (SteerableVoxelAt), x fastest. */
void
ComputeSteerableVoxelsCPU(const float *    intensity,
                          int              nx,
                          int              ny,
                          int              nz,
                          const float      worldToIndex[9],
                          SteerableVoxel * out,
                          int              threads = 0);

/** Response of feature f for pose p at out.values[f*featureStride + p*pointStride]; poses are split
 * among `threads` workers (<= 0: ITK's default); each response is computed by one thread, so results
 * do not depend on the thread count. */
void
EvaluateSteerableCPU(const SteerablePyramidView & pyramid,
                     const SteerableGrid &        grid,
                     const SteerableFeature *     features,
                     int                          numFeatures,
                     const SteerablePose *        poses,
                     std::int64_t                 numPoses,
                     ResponseLayout               out,
                     int                          threads = 0);

namespace cuda
{
/** Same on the device: every pointer (level voxels, features, poses, out.values) is a device pointer.
 * Enqueued on `stream`, no synchronisation. */
void
LaunchSteerable(const SteerablePyramidView & pyramid,
                const SteerableGrid &        grid,
                const SteerableFeature *     features,
                int                          numFeatures,
                const SteerablePose *        poses,
                std::int64_t                 numPoses,
                ResponseLayout               out,
                StreamHandle                 stream);
} // namespace cuda

} // namespace canopy
