// Host entry point for summed-volume tables: runs the CPU reference or the CUDA kernel (including
// the transfers) for host arrays. Used by itk::IntegralVolumeImageFilter and the benchmarks.
#pragma once

#include "canopy/Device.h"

namespace canopy
{
/** paddedSums holds PaddedTableSize(nx, ny, nz) doubles. Synchronous. */
template <typename TPixel>
void
ComputeIntegralVolume(const TPixel * voxels, int nx, int ny, int nz, double * paddedSums,
                      const ResolvedBackend & backend, int cpuThreads = 0);
} // namespace canopy
