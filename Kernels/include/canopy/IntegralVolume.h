// Summed-volume tables (3D integral images): CPU reference and CUDA launcher, same function.
// Output is the padded layout of IntegralVolumeView.h. Accumulation is in double, which is exact for
// integer voxels while the total stays below 2^53 (a 512^3 CT of values up to 3071 sums to ~4e11).
// Non-finite voxels (NaN, +-Inf) are read as 0 so one bad voxel cannot poison every box after it;
// callers that care count them (itk::IntegralVolumeImageFilter does and warns).
#pragma once

#include "canopy/HostDevice.h"

#include <cmath>
#include <cstdint>

struct CUstream_st;

namespace canopy
{

using StreamHandle = CUstream_st *; // a cudaStream_t, without including CUDA headers

template <typename TPixel>
CANOPY_HD double
FiniteOrZero(TPixel value)
{
  const double v = static_cast<double>(value);
#if defined(__CUDA_ARCH__)
  return isfinite(v) ? v : 0.0;
#else
  return std::isfinite(v) ? v : 0.0;
#endif
}

inline std::int64_t
PaddedTableSize(int nx, int ny, int nz)
{
  return static_cast<std::int64_t>(nx + 1) * (ny + 1) * (nz + 1);
}

/** CPU summed-volume table. `threads` <= 0 uses ITK's global default number of threads. */
template <typename TPixel>
void
ComputeIntegralVolumeCPU(const TPixel * voxels, int nx, int ny, int nz, double * paddedSums, int threads = 0);

namespace cuda
{
/** CUDA summed-volume table of device arrays; enqueued on `stream`, no synchronisation. */
template <typename TPixel>
void
LaunchIntegralVolume(const TPixel * deviceVoxels, int nx, int ny, int nz, double * devicePaddedSums,
                     StreamHandle stream);
} // namespace cuda

} // namespace canopy

// The pixel types with explicit instantiations (CPU in IntegralVolumeCPU.cxx, CUDA in IntegralVolume.cu).
#define CANOPY_FOR_EACH_SCALAR_PIXEL(MACRO)                                                                            \
  MACRO(unsigned char)                                                                                                 \
  MACRO(signed char)                                                                                                   \
  MACRO(short)                                                                                                         \
  MACRO(unsigned short)                                                                                                \
  MACRO(int)                                                                                                           \
  MACRO(unsigned int)                                                                                                  \
  MACRO(float)                                                                                                         \
  MACRO(double)
