// Dense decision-forest prediction over a block of voxels: CPU reference (ITK threader) and CUDA
// launcher computing the same ForestPredictVoxel (ForestFlat.h). Plain data only: no ITK or CUDA types.
#pragma once

#include "canopy/ForestFlat.h"
#include "canopy/HaarEvaluation.h" // VoxelBlock
#include "canopy/IntegralVolume.h" // StreamHandle

#include <cstdint>

namespace canopy
{

/** Where predictions go. Voxel p of the block (x fastest) writes ForestComponents(forest, mode) values
 * at p * components: into `distribution` (float) for Distribution, into `index` (int32) otherwise. */
struct ForestOutput
{
  ForestOutputMode mode = ForestOutputMode::ArgMax;
  float *          distribution = nullptr;
  std::int32_t *   index = nullptr;
};

/** CPU prediction of the voxels of `block` (image coordinates). threads <= 0: ITK's default. The forest
 * must be valid (ForestModel::Validate) with at most kForestMaxTrees trees, its channels within the
 * image's; the block inside the image. */
void
PredictForestCPU(const ForestView & forest, const ForestImagesView & images, const VoxelBlock & block,
                 const ForestOutput & out, int threads = 0);

namespace cuda
{
enum class ForestPlacement : int
{
  Auto = 0,   // nodes in shared memory when the whole forest fits (half the per-block opt-in), else global
  Global = 1, // nodes through the read-only data cache
  Shared = 2  // as Auto (a forest that does not fit stays global)
};

/** Which voxels a warp takes: neighbours in a row (coalesced box corners while the warp's threads
 * agree) or in a square (threads agree deeper into the trees). */
enum class ForestWarpShape : int
{
  Row32x1 = 0,   // blocks of 32 x 4 voxels, a warp per row
  Square8x4 = 1  // blocks of 16 x 8 voxels, a warp per 8 x 4 square
};

struct ForestLaunchOptions
{
  ForestPlacement placement = ForestPlacement::Auto;
  ForestWarpShape warpShape = ForestWarpShape::Row32x1;
};

/** Device pointers throughout (forest arrays, images.sums, images.scale, outputs). One thread per voxel,
 * every tree in one launch; outputs as PredictForestCPU's. Enqueued on `stream`, no synchronisation. */
void
LaunchForestPrediction(const ForestView & forest, const ForestImagesView & images, const VoxelBlock & block,
                       const ForestOutput & out, StreamHandle stream, const ForestLaunchOptions & options = {});

/** True when LaunchForestPrediction with `options` would keep the nodes in shared memory. */
bool
ForestFitsShared(const ForestView & forest, const ForestLaunchOptions & options = {});
} // namespace cuda

} // namespace canopy
