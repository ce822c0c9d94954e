// CUDA summed-volume table in two memory-bound passes over the padded table (IntegralVolumeView.h):
//   A. planes: one block per padded plane computes its 2D summed-area table. Warp w owns a strip of
//      rows; it first sums its strip's columns, the block turns those into per-column sums of the rows
//      above each strip (shared memory), then each warp walks its rows keeping column sums and
//      writing the x-scan (warp shuffles) of them: voxels read twice (the second time from L2), the
//      table written once.
//   B. z: one thread per (x, y) accumulates across planes, eight planes' loads in flight.
// Traffic for 512^3 int16: 0.27 GB read + 1.08 GB written (A), 2.16 GB read+written (B): 3.5 GB.
// The floor (input read once, table written once) is 1.35 GB; docs/BENCHMARKS.md has the figures.
// Rows wider than the shared-memory column sums allow (nx > 12288) take a three-pass fallback.
#include "canopy/CudaCheck.h"
#include "canopy/IntegralVolume.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace canopy::cuda
{
namespace
{

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 8;
#ifndef CANOPY_SAT_PLANE_WARPS
#  define CANOPY_SAT_PLANE_WARPS 8 // warps per plane in pass A (tuning knob, docs/BENCHMARKS.md)
#endif
constexpr std::size_t kPlaneSharedBytes = 96 * 1024; // within every sm_75+ opt-in limit

template <typename TPixel>
__global__ void
ScanRowsKernel(const TPixel * __restrict__ voxels, int nx, int ny, int nz, double * __restrict__ sums)
{
  const int          lane = threadIdx.x;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y; // y + ny*z
  if (row >= static_cast<std::int64_t>(ny) * nz)
  {
    return;
  }
  const int          y = static_cast<int>(row % ny);
  const int          z = static_cast<int>(row / ny);
  const TPixel *     in = voxels + row * nx;
  const std::int64_t rowLength = nx + 1;
  double *           out = sums + ((static_cast<std::int64_t>(z) + 1) * (ny + 1) + (y + 1)) * rowLength;
  if (lane == 0)
  {
    out[0] = 0.0;
  }
  double carry = 0.0;
  for (int base = 0; base < nx; base += kWarp)
  {
    const int x = base + lane;
    double    v = x < nx ? FiniteOrZero(in[x]) : 0.0;
#pragma unroll
    for (int offset = 1; offset < kWarp; offset <<= 1)
    {
      const double n = __shfl_up_sync(0xffffffffu, v, offset);
      if (lane >= offset)
      {
        v += n;
      }
    }
    v += carry;
    if (x < nx)
    {
      out[x + 1] = v;
    }
    carry = __shfl_sync(0xffffffffu, v, kWarp - 1);
  }
}

// Zeroes the padding the row scan does not write: plane z = 0 and row y = 0 of every plane.
__global__ void
ZeroPaddingKernel(int nx, int ny, int nz, double * __restrict__ sums)
{
  const std::int64_t rowLength = nx + 1;
  const std::int64_t planeSize = rowLength * (ny + 1);
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < planeSize)
  {
    sums[i] = 0.0; // plane z = 0
  }
  if (i < rowLength * nz)
  {
    const std::int64_t z = i / rowLength + 1;
    sums[z * planeSize + i % rowLength] = 0.0; // row y = 0 of plane z
  }
}

__global__ void
AccumulateRowsKernel(int nx, int ny, int nz, double * __restrict__ sums)
{
  const std::int64_t rowLength = nx + 1;
  const int          x = blockIdx.x * blockDim.x + threadIdx.x;
  const int          z = blockIdx.y + 1;
  if (x > nx || z > nz)
  {
    return;
  }
  double * p = sums + (static_cast<std::int64_t>(z) * (ny + 1) + 1) * rowLength + x;
  double   acc = 0.0;
#pragma unroll 8
  for (int y = 1; y <= ny; ++y, p += rowLength)
  {
    acc += *p;
    *p = acc;
  }
}

// Pass A. Block = one padded plane zp (0..nz); plane 0 and the padding row/column are zeros.
// Shared memory: one column-sum row per warp (warps * nx doubles).
template <typename TPixel>
__global__ void
PlaneSatKernel(const TPixel * __restrict__ voxels, int nx, int ny, double * __restrict__ sums)
{
  extern __shared__ double columnSums[];
  const int          lane = threadIdx.x % kWarp;
  const int          warp = threadIdx.x / kWarp;
  const int          warps = blockDim.x / kWarp;
  const std::int64_t rowLength = nx + 1;
  const std::int64_t planeSize = rowLength * (ny + 1);
  double *           plane = sums + blockIdx.x * planeSize;
  if (blockIdx.x == 0)
  {
    for (std::int64_t i = threadIdx.x; i < planeSize; i += blockDim.x)
    {
      plane[i] = 0.0;
    }
    return;
  }
  for (int i = threadIdx.x; i < rowLength; i += blockDim.x)
  {
    plane[i] = 0.0; // row y = 0
  }
  const TPixel * slice = voxels + (blockIdx.x - 1) * static_cast<std::int64_t>(nx) * ny;
  const int      y0 = static_cast<int>(static_cast<std::int64_t>(ny) * warp / warps);
  const int      y1 = static_cast<int>(static_cast<std::int64_t>(ny) * (warp + 1) / warps);
  double *       mine = columnSums + static_cast<std::int64_t>(warp) * nx;

  // 1. Column sums of this warp's strip.
  for (int x = lane; x < nx; x += kWarp)
  {
    double s = 0.0;
#pragma unroll 8
    for (int y = y0; y < y1; ++y)
    {
      s += FiniteOrZero(slice[static_cast<std::int64_t>(y) * nx + x]);
    }
    mine[x] = s;
  }
  __syncthreads();
  // 2. Exclusive scan across strips: each warp's row now holds the column sums of the rows above it.
  for (int x = threadIdx.x; x < nx; x += blockDim.x)
  {
    double above = 0.0;
    for (int w = 0; w < warps; ++w)
    {
      const double strip = columnSums[static_cast<std::int64_t>(w) * nx + x];
      columnSums[static_cast<std::int64_t>(w) * nx + x] = above;
      above += strip;
    }
  }
  __syncthreads();
  // 3. Walk the strip: add the row to the column sums, write their x-scan. Four chunks of 32 columns
  //    at a time so their loads and shuffle scans overlap.
  constexpr int kChunks = 4;
  for (int y = y0; y < y1; ++y)
  {
    const TPixel * in = slice + static_cast<std::int64_t>(y) * nx;
    double *       out = plane + (y + 1) * rowLength;
    if (lane == 0)
    {
      out[0] = 0.0;
    }
    double carry = 0.0;
    for (int base = 0; base < nx; base += kChunks * kWarp)
    {
      double v[kChunks];
#pragma unroll
      for (int k = 0; k < kChunks; ++k)
      {
        const int x = base + k * kWarp + lane;
        v[k] = x < nx ? FiniteOrZero(in[x]) : 0.0;
      }
#pragma unroll
      for (int k = 0; k < kChunks; ++k)
      {
        const int x = base + k * kWarp + lane;
        if (x < nx)
        {
          v[k] += mine[x];
          mine[x] = v[k];
        }
      }
#pragma unroll
      for (int offset = 1; offset < kWarp; offset <<= 1)
      {
#pragma unroll
        for (int k = 0; k < kChunks; ++k)
        {
          const double n = __shfl_up_sync(0xffffffffu, v[k], offset);
          v[k] += lane >= offset ? n : 0.0;
        }
      }
#pragma unroll
      for (int k = 0; k < kChunks; ++k)
      {
        const int x = base + k * kWarp + lane;
        v[k] += carry;
        if (x < nx)
        {
          out[x + 1] = v[k];
        }
        carry = __shfl_sync(0xffffffffu, v[k], kWarp - 1);
      }
    }
  }
}

// Pass B. Thread = one (x, y) position; eight planes are loaded before any is stored, so each thread
// keeps eight independent loads in flight.
__global__ void
AccumulatePlanesKernel(int nx, int ny, int nz, double * __restrict__ sums)
{
  constexpr int      kBatch = 8;
  const std::int64_t planeSize = static_cast<std::int64_t>(nx + 1) * (ny + 1);
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= planeSize)
  {
    return;
  }
  double * p = sums + planeSize + i;
  double   acc = 0.0;
  int      z = 1;
  for (; z + kBatch - 1 <= nz; z += kBatch, p += kBatch * planeSize)
  {
    double v[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k)
    {
      v[k] = p[k * planeSize];
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k)
    {
      acc += v[k];
      p[k * planeSize] = acc;
    }
  }
  for (; z <= nz; ++z, p += planeSize)
  {
    acc += *p;
    *p = acc;
  }
}

unsigned int
BlocksFor(std::int64_t count, int perBlock)
{
  return static_cast<unsigned int>((count + perBlock - 1) / perBlock);
}

} // namespace

template <typename TPixel>
void
LaunchIntegralVolume(const TPixel * deviceVoxels, int nx, int ny, int nz, double * devicePaddedSums,
                     StreamHandle stream)
{
  if (nx <= 0 || ny <= 0 || nz <= 0)
  {
    return;
  }
  const std::int64_t rowLength = nx + 1;
  const std::int64_t planeSize = rowLength * (ny + 1);

  // Pass A needs warps * nx doubles of shared memory: up to CANOPY_SAT_PLANE_WARPS within kPlaneSharedBytes.
  const int warps = static_cast<int>(
    std::min<std::int64_t>(CANOPY_SAT_PLANE_WARPS, kPlaneSharedBytes / (sizeof(double) * nx)));
  if (warps >= 1)
  {
    const std::size_t shared = sizeof(double) * nx * warps;
    if (shared > 48 * 1024)
    {
      CANOPY_CUDA_CHECK(cudaFuncSetAttribute(PlaneSatKernel<TPixel>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(shared)));
    }
    PlaneSatKernel<TPixel><<<static_cast<unsigned int>(nz + 1), warps * kWarp, shared, stream>>>(
      deviceVoxels, nx, ny, devicePaddedSums);
    CANOPY_CUDA_CHECK_LAUNCH(PlaneSatKernel);
  }
  else
  {
    ZeroPaddingKernel<<<BlocksFor(std::max<std::int64_t>(planeSize, rowLength * nz), 256), 256, 0, stream>>>(
      nx, ny, nz, devicePaddedSums);
    CANOPY_CUDA_CHECK_LAUNCH(ZeroPaddingKernel);

    const dim3 rowBlock(kWarp, kRowsPerBlock);
    ScanRowsKernel<TPixel><<<BlocksFor(static_cast<std::int64_t>(ny) * nz, kRowsPerBlock), rowBlock, 0, stream>>>(
      deviceVoxels, nx, ny, nz, devicePaddedSums);
    CANOPY_CUDA_CHECK_LAUNCH(ScanRowsKernel);

    const dim3 columnGrid(BlocksFor(rowLength, 128), static_cast<unsigned int>(nz));
    AccumulateRowsKernel<<<columnGrid, 128, 0, stream>>>(nx, ny, nz, devicePaddedSums);
    CANOPY_CUDA_CHECK_LAUNCH(AccumulateRowsKernel);
  }

  AccumulatePlanesKernel<<<BlocksFor(planeSize, 128), 128, 0, stream>>>(nx, ny, nz, devicePaddedSums);
  CANOPY_CUDA_CHECK_LAUNCH(AccumulatePlanesKernel);
}

#define CANOPY_INSTANTIATE_SAT_CUDA(T) \
  template void LaunchIntegralVolume<T>(const T *, int, int, int, double *, StreamHandle);
CANOPY_FOR_EACH_SCALAR_PIXEL(CANOPY_INSTANTIATE_SAT_CUDA)

} // namespace canopy::cuda
