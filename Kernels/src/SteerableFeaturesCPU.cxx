#include "canopy/SteerableEvaluation.h"

#include "ParallelFor.h"

namespace canopy
{

void
ComputeSteerableVoxelsCPU(const float *    intensity,
                          int              nx,
                          int              ny,
                          int              nz,
                          const float      worldToIndex[9],
                          SteerableVoxel * out,
                          int              threads)
{
  detail::ParallelForChunks(nz,
                            threads,
                            [&](std::int64_t zBegin, std::int64_t zEnd)
                            {
                              for (std::int64_t z = zBegin; z < zEnd; ++z)
                              {
                                SteerableVoxel * plane = out + z * static_cast<std::int64_t>(nx) * ny;
                                for (int y = 0; y < ny; ++y)
                                {
                                  for (int x = 0; x < nx; ++x)
                                  {
                                    plane[static_cast<std::int64_t>(y) * nx + x] =
                                      SteerableVoxelAt(intensity, nx, ny, nz, x, y, static_cast<int>(z), worldToIndex);
                                  }
                                }
                              }
                            });
}

void
EvaluateSteerableCPU(const SteerablePyramidView & pyramid,
                     const SteerableGrid &        grid,
                     const SteerableFeature *     features,
                     int                          numFeatures,
                     const SteerablePose *        poses,
                     std::int64_t                 numPoses,
                     ResponseLayout               out,
                     int                          threads)
{
  detail::ParallelForChunks(
    numPoses,
    threads,
    [&](std::int64_t begin, std::int64_t end)
    {
      for (std::int64_t p = begin; p < end; ++p)
      {
        EvaluateSteerableFeatures(
          pyramid, grid, poses[p], features, numFeatures, out.values + p * out.pointStride, out.featureStride);
      }
    });
}

} // namespace canopy
