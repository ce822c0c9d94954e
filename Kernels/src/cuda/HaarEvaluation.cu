// Haar feature responses on the GPU: one thread per point, features staged through shared memory in
// tiles (every thread of a block reads the same feature, so one copy serves all). Responses are
// computed by the same HaarResponse as the CPU reference.
#include "canopy/CudaCheck.h"
#include "canopy/HaarEvaluation.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace canopy::cuda
{
namespace
{

constexpr int kThreads = 256;
constexpr int kFeatureTile = 64;

struct ExplicitPoints
{
  const VoxelIndex3 * points;
  __device__ VoxelIndex3 operator()(std::int64_t p) const { return points[p]; }
};

struct BlockPoints
{
  VoxelBlock block;
  __device__ VoxelIndex3 operator()(std::int64_t p) const
  {
    const std::int64_t plane = static_cast<std::int64_t>(block.sx) * block.sy;
    const int          z = static_cast<int>(p / plane);
    const std::int64_t r = p - z * plane;
    const int          y = static_cast<int>(r / block.sx);
    const int          x = static_cast<int>(r - static_cast<std::int64_t>(y) * block.sx);
    return VoxelIndex3{ block.x0 + x, block.y0 + y, block.z0 + z };
  }
};

template <typename TPointSource>
__global__ void __launch_bounds__(kThreads)
HaarKernel(IntegralVolumeView volume, const HaarFeatureVoxels * __restrict__ features, int numFeatures,
           TPointSource pointAt, std::int64_t numPoints, ResponseLayout out)
{
  __shared__ HaarFeatureVoxels tile[kFeatureTile];
  const std::int64_t           p = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
  const bool                   active = p < numPoints;
  const VoxelIndex3            q = active ? pointAt(p) : VoxelIndex3{ 0, 0, 0 };
  for (int tileStart = 0; tileStart < numFeatures; tileStart += kFeatureTile)
  {
    const int count = min(kFeatureTile, numFeatures - tileStart);
    __syncthreads();
    for (int i = threadIdx.x; i < count; i += kThreads)
    {
      tile[i] = features[tileStart + i];
    }
    __syncthreads();
    if (active)
    {
      for (int f = 0; f < count; ++f)
      {
        const double r = HaarResponse(volume, tile[f], q.x, q.y, q.z);
        out.values[(tileStart + f) * out.featureStride + p * out.pointStride] = static_cast<float>(r);
      }
    }
  }
}

unsigned int
BlocksFor(std::int64_t count)
{
  return static_cast<unsigned int>((count + kThreads - 1) / kThreads);
}

} // namespace

void
LaunchHaarAtPoints(const IntegralVolumeView & volume, const HaarFeatureVoxels * features, int numFeatures,
                   const VoxelIndex3 * points, std::int64_t numPoints, ResponseLayout out, StreamHandle stream)
{
  if (numPoints <= 0 || numFeatures <= 0)
  {
    return;
  }
  HaarKernel<<<BlocksFor(numPoints), kThreads, 0, stream>>>(
    volume, features, numFeatures, ExplicitPoints{ points }, numPoints, out);
  CANOPY_CUDA_CHECK_LAUNCH(HaarKernel);
}

void
LaunchHaarDense(const IntegralVolumeView & volume, const HaarFeatureVoxels * features, int numFeatures,
                const VoxelBlock & block, ResponseLayout out, StreamHandle stream)
{
  const std::int64_t numPoints = block.NumberOfVoxels();
  if (numPoints <= 0 || numFeatures <= 0)
  {
    return;
  }
  HaarKernel<<<BlocksFor(numPoints), kThreads, 0, stream>>>(
    volume, features, numFeatures, BlockPoints{ block }, numPoints, out);
  CANOPY_CUDA_CHECK_LAUNCH(HaarKernel);
}

} // namespace canopy::cuda
