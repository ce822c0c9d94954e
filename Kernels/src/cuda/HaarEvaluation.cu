// Haar feature responses on the GPU. Each thread evaluates kPointsPerThread points (kThreads apart,
// so loads and stores stay coalesced); features are staged through shared memory in tiles, already
// turned into corner offsets (HaarFeatureCorners) once per block, so each box sum is eight loads from
// precomputed offsets and one read of the feature serves all of a thread's points. A feature that lies
// inside the volume for the block's whole bounding box of points skips every per-point test; near the
// border each point takes the clipped form. All of it is the shared math of HaarFeature.h.
#include "canopy/CudaCheck.h"
#include "canopy/HaarEvaluation.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace canopy::cuda
{
namespace
{

// Tuning knobs (compile-time; defaults chosen by measurement, docs/BENCHMARKS.md).
#ifndef CANOPY_HAAR_POINTS_PER_THREAD
#  define CANOPY_HAAR_POINTS_PER_THREAD 2
#endif
#ifndef CANOPY_HAAR_MIN_BLOCKS_PER_SM
#  define CANOPY_HAAR_MIN_BLOCKS_PER_SM 2
#endif
constexpr int kThreads = 256;
constexpr int kPointsPerThread = CANOPY_HAAR_POINTS_PER_THREAD;
constexpr int kPointsPerBlock = kThreads * kPointsPerThread;
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
__global__ void __launch_bounds__(kThreads, CANOPY_HAAR_MIN_BLOCKS_PER_SM)
HaarKernel(IntegralVolumeView volume, const HaarFeatureVoxels * __restrict__ features, int numFeatures,
           TPointSource pointAt, std::int64_t numPoints, ResponseLayout out)
{
  constexpr int P = kPointsPerThread;
  __shared__ HaarFeatureVoxels  raw[kFeatureTile]; // for the clipped form
  __shared__ HaarFeatureCorners tile[kFeatureTile];
  __shared__ bool               allInside[kFeatureTile];
  __shared__ int                box[6]; // bounding box of the block's points: min x, y, z, max x, y, z

  // blockFirst is the block's first point, which always exists; a thread's own points start at first.
  const std::int64_t blockFirst = blockIdx.x * static_cast<std::int64_t>(kPointsPerBlock);
  const std::int64_t first = blockFirst + threadIdx.x;
  VoxelIndex3        q[P];
  const double *     at[P];
  bool               active[P];
  if (threadIdx.x == 0)
  {
    box[0] = box[1] = box[2] = 2147483647;
    box[3] = box[4] = box[5] = -2147483647;
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < P; ++k)
  {
    const std::int64_t p = first + k * kThreads;
    active[k] = p < numPoints;
    // Inactive lanes of the last block read the block's first point (a real one), never past the end.
    q[k] = pointAt(active[k] ? p : blockFirst);
    at[k] = volume.sums + PaddedIndex(volume, q[k].x, q[k].y, q[k].z);
    if (active[k])
    {
      atomicMin(&box[0], q[k].x);
      atomicMin(&box[1], q[k].y);
      atomicMin(&box[2], q[k].z);
      atomicMax(&box[3], q[k].x);
      atomicMax(&box[4], q[k].y);
      atomicMax(&box[5], q[k].z);
    }
  }
  for (int tileStart = 0; tileStart < numFeatures; tileStart += kFeatureTile)
  {
    const int count = min(kFeatureTile, numFeatures - tileStart);
    __syncthreads();
    for (int i = threadIdx.x; i < count; i += kThreads)
    {
      raw[i] = features[tileStart + i];
      tile[i] = MakeHaarFeatureCorners(volume, raw[i]);
      // Each bound involves one coordinate's minimum or maximum only, so the box's two corners decide.
      allInside[i] = HaarCornersInside(volume, tile[i], box[0], box[1], box[2]) &&
                     HaarCornersInside(volume, tile[i], box[3], box[4], box[5]);
    }
    __syncthreads();
    for (int f = 0; f < count; ++f)
    {
      double r[P];
      if (allInside[f])
      {
        HaarResponsesInside<P>(at, tile[f], r);
      }
      else
      {
#pragma unroll
        for (int k = 0; k < P; ++k)
        {
          if (HaarCornersInside(volume, tile[f], q[k].x, q[k].y, q[k].z))
          {
            const double * one[1] = { at[k] };
            double         r1[1];
            HaarResponsesInside<1>(one, tile[f], r1);
            r[k] = r1[0];
          }
          else
          {
            r[k] = HaarResponse(volume, raw[f], q[k].x, q[k].y, q[k].z);
          }
        }
      }
      float * dst = out.values + (tileStart + f) * out.featureStride;
#pragma unroll
      for (int k = 0; k < P; ++k)
      {
        if (active[k])
        {
          dst[(first + k * kThreads) * out.pointStride] = static_cast<float>(r[k]);
        }
      }
    }
  }
}

unsigned int
BlocksFor(std::int64_t count)
{
  return static_cast<unsigned int>((count + kPointsPerBlock - 1) / kPointsPerBlock);
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
