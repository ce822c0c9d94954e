// Steerable-feature responses on the GPU: one thread per pose hypothesis, features staged through
// shared memory in tiles (blockIdx.y), so a warp reads one feature at a time and writes 32 adjacent
// responses of a feature-major matrix. The per-pose work is EvaluateSteerableFeatures
// (SteerableFeature.h), the same function the CPU reference runs; uncontracted arithmetic
// (--fmad=false, Kernels/CMakeLists.txt) keeps sampling and products rounding as on the CPU.
#include "canopy/CudaCheck.h"
#include "canopy/SteerableEvaluation.h"

#include <cuda_runtime.h>

namespace canopy::cuda
{
namespace
{

constexpr int kThreads = 128;
constexpr int kFeatureTile = 64;

__global__ void
__launch_bounds__(kThreads) SteerableKernel(SteerablePyramidView pyramid,
                                            SteerableGrid        grid,
                                            const SteerableFeature * __restrict__ features,
                                            int numFeatures,
                                            const SteerablePose * __restrict__ poses,
                                            std::int64_t   numPoses,
                                            ResponseLayout out)
{
  __shared__ SteerableFeature tile[kFeatureTile];
  const int                   tileStart = blockIdx.y * kFeatureTile;
  const int                   count = min(kFeatureTile, numFeatures - tileStart);
  for (int i = threadIdx.x; i < count; i += kThreads)
  {
    tile[i] = features[tileStart + i];
  }
  __syncthreads();
  const std::int64_t p = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
  if (p >= numPoses)
  {
    return;
  }
  const SteerablePose pose = poses[p];
  EvaluateSteerableFeatures(pyramid,
                            grid,
                            pose,
                            tile,
                            count,
                            out.values + tileStart * out.featureStride + p * out.pointStride,
                            out.featureStride);
}

} // namespace

void
LaunchSteerable(const SteerablePyramidView & pyramid,
                const SteerableGrid &        grid,
                const SteerableFeature *     features,
                int                          numFeatures,
                const SteerablePose *        poses,
                std::int64_t                 numPoses,
                ResponseLayout               out,
                StreamHandle                 stream)
{
  if (numPoses <= 0 || numFeatures <= 0)
  {
    return;
  }
  const dim3 blocks(static_cast<unsigned int>((numPoses + kThreads - 1) / kThreads),
                    static_cast<unsigned int>((numFeatures + kFeatureTile - 1) / kFeatureTile));
  SteerableKernel<<<blocks, kThreads, 0, stream>>>(pyramid, grid, features, numFeatures, poses, numPoses, out);
  CANOPY_CUDA_CHECK_LAUNCH(SteerableKernel);
}

} // namespace canopy::cuda
