#include "canopy/IntegralVolume.h"

#include "ParallelFor.h"

#include <algorithm>

namespace canopy
{

template <typename TPixel>
void
ComputeIntegralVolumeCPU(const TPixel * voxels, int nx, int ny, int nz, double * paddedSums, int threads)
{
  const std::int64_t rowLength = nx + 1;
  const std::int64_t planeSize = rowLength * (ny + 1);
  // The zero plane z = 0 of the padded table.
  std::fill(paddedSums, paddedSums + planeSize, 0.0);

  // Pass 1, per slice: 2D summed-area table of slice z into padded plane z+1.
  detail::ParallelForChunks(nz, threads, [&](std::int64_t zBegin, std::int64_t zEnd) {
    for (std::int64_t z = zBegin; z < zEnd; ++z)
    {
      double * plane = paddedSums + (z + 1) * planeSize;
      std::fill(plane, plane + rowLength, 0.0); // zero row y = 0
      const TPixel * slice = voxels + z * static_cast<std::int64_t>(nx) * ny;
      for (std::int64_t y = 0; y < ny; ++y)
      {
        const TPixel * in = slice + y * nx;
        const double * above = plane + y * rowLength;
        double *       row = plane + (y + 1) * rowLength;
        row[0] = 0.0;
        double running = 0.0;
        for (std::int64_t x = 0; x < nx; ++x)
        {
          running += FiniteOrZero(in[x]);
          row[x + 1] = running + above[x + 1];
        }
      }
    }
  });

  // Pass 2: accumulate planes along z; independent across the (x, y) positions of a plane.
  detail::ParallelForChunks(planeSize, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t z = 2; z <= nz; ++z)
    {
      double *       plane = paddedSums + z * planeSize;
      const double * below = plane - planeSize;
      for (std::int64_t i = begin; i < end; ++i)
      {
        plane[i] += below[i];
      }
    }
  });
}

#define CANOPY_INSTANTIATE_SAT_CPU(T) \
  template void ComputeIntegralVolumeCPU<T>(const T *, int, int, int, double *, int);
CANOPY_FOR_EACH_SCALAR_PIXEL(CANOPY_INSTANTIATE_SAT_CPU)

} // namespace canopy
