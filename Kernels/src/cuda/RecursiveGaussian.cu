// Recursive Gaussian passes and the filter bank's element-wise steps on the device: one thread per
// line, the line filter of RecursiveGaussian.h. Lines along y and z are read coalesced (a warp's
// threads hold neighbouring x); lines along x are strided across the warp, each thread walking its
// own row through L1. The causal pass keeps its doubles in a scratch volume laid out as the output.
#include "canopy/CudaCheck.h"
#include "canopy/FilterBank.h"
#include "canopy/RecursiveGaussian.h"

#include <cuda_runtime.h>

namespace canopy::cuda
{
namespace
{

constexpr int kThreads = 128;

__global__ void
RecursiveGaussianPassKernel(const float *                 in,
                            float *                       out,
                            double *                      scratch,
                            VolumeLines                   lines,
                            RecursiveGaussianCoefficients c)
{
  const std::int64_t line = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (line >= lines.Count())
  {
    return;
  }
  const std::int64_t start = lines.Start(line);
  const std::int64_t stride = lines.Stride();
  RecursiveGaussianLine(in + start, out + start, scratch + start, stride, stride, lines.Length(), c);
}

__global__ void
AddSquaredDerivativeKernel(float * sum, const float * derivative, std::int64_t count, double spacing)
{
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count)
  {
    sum[i] = AddSquaredDerivative(sum[i], derivative[i], spacing);
  }
}

__global__ void
AddSecondDerivativeKernel(float * sum, const float * derivative, std::int64_t count, double spacingSquared)
{
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count)
  {
    sum[i] = AddSecondDerivative(sum[i], derivative[i], spacingSquared);
  }
}

__global__ void
SquareRootKernel(float * values, std::int64_t count)
{
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < count)
  {
    values[i] = SquareRootOf(values[i]);
  }
}

unsigned
Blocks(std::int64_t count)
{
  return static_cast<unsigned>((count + kThreads - 1) / kThreads);
}

} // namespace

void
LaunchRecursiveGaussianPass(const float *                         in,
                            float *                               out,
                            double *                              causalScratch,
                            const VolumeLines &                   lines,
                            const RecursiveGaussianCoefficients & coefficients,
                            CUstream_st *                         stream)
{
  const std::int64_t count = lines.Count();
  if (count <= 0)
  {
    return;
  }
  RecursiveGaussianPassKernel<<<Blocks(count), kThreads, 0, stream>>>(in, out, causalScratch, lines, coefficients);
  CANOPY_CUDA_CHECK_LAUNCH(RecursiveGaussianPassKernel);
}

void
LaunchAddSquaredDerivative(float *       sum,
                           const float * derivative,
                           std::int64_t  count,
                           double        spacing,
                           CUstream_st * stream)
{
  if (count > 0)
  {
    AddSquaredDerivativeKernel<<<Blocks(count), kThreads, 0, stream>>>(sum, derivative, count, spacing);
    CANOPY_CUDA_CHECK_LAUNCH(AddSquaredDerivativeKernel);
  }
}

void
LaunchAddSecondDerivative(float *       sum,
                          const float * derivative,
                          std::int64_t  count,
                          double        spacingSquared,
                          CUstream_st * stream)
{
  if (count > 0)
  {
    AddSecondDerivativeKernel<<<Blocks(count), kThreads, 0, stream>>>(sum, derivative, count, spacingSquared);
    CANOPY_CUDA_CHECK_LAUNCH(AddSecondDerivativeKernel);
  }
}

void
LaunchSquareRoot(float * values, std::int64_t count, CUstream_st * stream)
{
  if (count > 0)
  {
    SquareRootKernel<<<Blocks(count), kThreads, 0, stream>>>(values, count);
    CANOPY_CUDA_CHECK_LAUNCH(SquareRootKernel);
  }
}

} // namespace canopy::cuda
