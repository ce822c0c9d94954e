#include "canopy/HaarEvaluation.h"

#include "ParallelFor.h"

namespace canopy
{

void
EvaluateHaarAtPointsCPU(const IntegralVolumeView & volume, const HaarFeatureVoxels * features, int numFeatures,
                        const VoxelIndex3 * points, std::int64_t numPoints, ResponseLayout out, int threads)
{
  detail::ParallelForChunks(numPoints, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t p = begin; p < end; ++p)
    {
      const VoxelIndex3 q = points[p];
      float *           dst = out.values + p * out.pointStride;
      for (int f = 0; f < numFeatures; ++f)
      {
        dst[f * out.featureStride] = static_cast<float>(HaarResponse(volume, features[f], q.x, q.y, q.z));
      }
    }
  });
}

void
EvaluateHaarDenseCPU(const IntegralVolumeView & volume, const HaarFeatureVoxels * features, int numFeatures,
                     const VoxelBlock & block, ResponseLayout out, int threads)
{
  const std::int64_t rows = static_cast<std::int64_t>(block.sy) * block.sz;
  detail::ParallelForChunks(rows, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
    {
      const int y = block.y0 + static_cast<int>(r % block.sy);
      const int z = block.z0 + static_cast<int>(r / block.sy);
      for (int i = 0; i < block.sx; ++i)
      {
        const std::int64_t p = r * block.sx + i;
        float *            dst = out.values + p * out.pointStride;
        for (int f = 0; f < numFeatures; ++f)
        {
          dst[f * out.featureStride] = static_cast<float>(HaarResponse(volume, features[f], block.x0 + i, y, z));
        }
      }
    }
  });
}

} // namespace canopy
