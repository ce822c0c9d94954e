// CUDA summed-volume table in three memory-bound passes over the padded table (IntegralVolumeView.h):
//   1. x: one warp per row scans the voxels with shuffles and writes the padded row;
//   2. y: one thread per (x, z) accumulates down the rows of a plane;
//   3. z: one thread per (x, y) accumulates across planes.
// Each pass reads and writes the table once, coalesced along x. Floor for 512^3 on an H100
// (~3 TB/s): about 5.5 GB of traffic, ~1.8 ms.
#include "canopy/CudaCheck.h"
#include "canopy/IntegralVolume.h"

#include <cuda_runtime.h>

namespace canopy::cuda
{
namespace
{

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 8;

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

__global__ void
AccumulatePlanesKernel(int nx, int ny, int nz, double * __restrict__ sums)
{
  const std::int64_t planeSize = static_cast<std::int64_t>(nx + 1) * (ny + 1);
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= planeSize)
  {
    return;
  }
  double * p = sums + planeSize + i;
  double   acc = 0.0;
#pragma unroll 8
  for (int z = 1; z <= nz; ++z, p += planeSize)
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

  AccumulatePlanesKernel<<<BlocksFor(planeSize, 128), 128, 0, stream>>>(nx, ny, nz, devicePaddedSums);
  CANOPY_CUDA_CHECK_LAUNCH(AccumulatePlanesKernel);
}

#define CANOPY_INSTANTIATE_SAT_CUDA(T) \
  template void LaunchIntegralVolume<T>(const T *, int, int, int, double *, StreamHandle);
CANOPY_FOR_EACH_SCALAR_PIXEL(CANOPY_INSTANTIATE_SAT_CUDA)

} // namespace canopy::cuda
