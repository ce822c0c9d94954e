// Preparing a steerable pyramid on the device (PyramidMath.h): normalisation, the separable Gaussian,
// linear resampling and the gradient voxels, each kernel one thread per output voxel running the
// shared per-voxel function. Compiled with --fmad=false (Kernels/CMakeLists.txt): ITK's sums and
// interpolations are not contracted on the host either, so the device rounds as ITK does.
#include "canopy/CudaCheck.h"
#include "canopy/PyramidMath.h"

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

namespace canopy::cuda
{
namespace
{

constexpr int kThreads = 256;

unsigned int
BlocksFor(std::int64_t count)
{
  return static_cast<unsigned int>((count + kThreads - 1) / kThreads);
}

__global__ void
NormalizationSampleKernel(const float * __restrict__ in,
                          std::int64_t stride,
                          std::int64_t count,
                          float * __restrict__ out,
                          unsigned long long * finite)
{
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
  if (i >= count)
  {
    return;
  }
  const float v = in[i * stride];
  const bool  ok = isfinite(v);
  out[i] = ok ? v : __int_as_float(0x7fc00000);
  if (ok)
  {
    atomicAdd(finite, 1ull);
  }
}

__global__ void
NormalizeKernel(float * v, std::int64_t count, int method, double a, double b)
{
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
  if (i < count)
  {
    v[i] = method == 1 ? NormalizedWindow(v[i], a, b) : NormalizedPercentile(v[i], a, b);
  }
}

__global__ void
GaussianLineKernel(const float * __restrict__ in,
                   float * __restrict__ out,
                   int nx,
                   int ny,
                   int nz,
                   int axis,
                   const double * __restrict__ c,
                   int radius)
{
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
  const std::int64_t plane = static_cast<std::int64_t>(nx) * ny;
  if (i >= plane * nz)
  {
    return;
  }
  const int          x = static_cast<int>(i % nx), y = static_cast<int>((i / nx) % ny), z = static_cast<int>(i / plane);
  const int          pos[3] = { x, y, z };
  const int          n[3] = { nx, ny, nz };
  const std::int64_t stride[3] = { 1, nx, plane };
  const float *      line = in + (i - pos[axis] * stride[axis]);
  out[i] = GaussianLineAt(line, stride[axis], n[axis], pos[axis], c, radius);
}

__global__ void
ResampleKernel(ResampleGeometry g, const float * __restrict__ in, float * __restrict__ out)
{
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
  const std::int64_t plane = static_cast<std::int64_t>(g.outSize[0]) * g.outSize[1];
  if (i >= plane * g.outSize[2])
  {
    return;
  }
  const int x = static_cast<int>(i % g.outSize[0]), y = static_cast<int>((i / g.outSize[0]) % g.outSize[1]);
  out[i] = ResampleLinearAt(g, in, x, y, static_cast<int>(i / plane));
}

struct WorldToIndex
{
  float m[9];
};

__global__ void
SteerableVoxelsKernel(const float * __restrict__ intensity,
                      int              nx,
                      int              ny,
                      int              nz,
                      WorldToIndex     w,
                      SteerableVoxel * out)
{
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
  const std::int64_t plane = static_cast<std::int64_t>(nx) * ny;
  if (i >= plane * nz)
  {
    return;
  }
  out[i] = SteerableVoxelAt(
    intensity, nx, ny, nz, static_cast<int>(i % nx), static_cast<int>((i / nx) % ny), static_cast<int>(i / plane), w.m);
}

} // namespace

void
LaunchNormalizationSample(const float *        in,
                          std::int64_t         stride,
                          std::int64_t         count,
                          float *              out,
                          unsigned long long * finite,
                          StreamHandle         stream)
{
  if (count <= 0)
  {
    return;
  }
  NormalizationSampleKernel<<<BlocksFor(count), kThreads, 0, stream>>>(in, stride, count, out, finite);
  CANOPY_CUDA_CHECK_LAUNCH(NormalizationSampleKernel);
}

size_t
ScratchBytesForSortFloats(std::int64_t count)
{
  size_t bytes = 0;
  CANOPY_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(
    nullptr, bytes, static_cast<const float *>(nullptr), static_cast<float *>(nullptr), static_cast<int>(count)));
  return bytes;
}

void
LaunchSortFloats(const float * in,
                 float *       out,
                 std::int64_t  count,
                 void *        scratch,
                 size_t        scratchBytes,
                 StreamHandle  stream)
{
  if (count <= 0)
  {
    return;
  }
  CANOPY_CUDA_CHECK(
    cub::DeviceRadixSort::SortKeys(scratch, scratchBytes, in, out, static_cast<int>(count), 0, 32, stream));
}

void
LaunchNormalize(float * v, std::int64_t count, int method, double a, double b, StreamHandle stream)
{
  if (count <= 0)
  {
    return;
  }
  NormalizeKernel<<<BlocksFor(count), kThreads, 0, stream>>>(v, count, method, a, b);
  CANOPY_CUDA_CHECK_LAUNCH(NormalizeKernel);
}

void
LaunchGaussianLine(const float *  in,
                   float *        out,
                   int            nx,
                   int            ny,
                   int            nz,
                   int            axis,
                   const double * c,
                   int            radius,
                   StreamHandle   stream)
{
  const std::int64_t count = static_cast<std::int64_t>(nx) * ny * nz;
  if (count <= 0)
  {
    return;
  }
  GaussianLineKernel<<<BlocksFor(count), kThreads, 0, stream>>>(in, out, nx, ny, nz, axis, c, radius);
  CANOPY_CUDA_CHECK_LAUNCH(GaussianLineKernel);
}

void
LaunchResampleLinear(const ResampleGeometry & g, const float * in, float * out, StreamHandle stream)
{
  const std::int64_t count = static_cast<std::int64_t>(g.outSize[0]) * g.outSize[1] * g.outSize[2];
  if (count <= 0)
  {
    return;
  }
  ResampleKernel<<<BlocksFor(count), kThreads, 0, stream>>>(g, in, out);
  CANOPY_CUDA_CHECK_LAUNCH(ResampleKernel);
}

void
LaunchSteerableVoxels(const float *    intensity,
                      int              nx,
                      int              ny,
                      int              nz,
                      const float      worldToIndex[9],
                      SteerableVoxel * out,
                      StreamHandle     stream)
{
  const std::int64_t count = static_cast<std::int64_t>(nx) * ny * nz;
  if (count <= 0)
  {
    return;
  }
  WorldToIndex w;
  for (int k = 0; k < 9; ++k)
  {
    w.m[k] = worldToIndex[k];
  }
  SteerableVoxelsKernel<<<BlocksFor(count), kThreads, 0, stream>>>(intensity, nx, ny, nz, w, out);
  CANOPY_CUDA_CHECK_LAUNCH(SteerableVoxelsKernel);
}

} // namespace canopy::cuda
