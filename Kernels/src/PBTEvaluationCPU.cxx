#include "canopy/PBTEvaluation.h"

#include "ParallelFor.h"

namespace canopy
{

void
EvaluatePBTDenseCPU(const PBTView & tree, const IntegralVolumeView & volume, const HaarFeatureVoxels * features,
                    const VoxelBlock & block, float * out, int threads)
{
  const std::int64_t rows = static_cast<std::int64_t>(block.sy) * block.sz;
  detail::ParallelForChunks(rows, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
    {
      HaarResponseAt response{ volume, features, 0, block.y0 + static_cast<int>(r % block.sy),
                               block.z0 + static_cast<int>(r / block.sy) };
      float *        row = out + r * block.sx;
      for (int i = 0; i < block.sx; ++i)
      {
        response.x = block.x0 + i;
        row[i] = PbtPosteriorStack<kPBTEvaluationStack>(tree, response);
      }
    }
  });
}

std::int64_t
CountPBTWeakLearnerEvaluationsCPU(const PBTView & tree, const IntegralVolumeView & volume,
                                  const HaarFeatureVoxels * features, const VoxelBlock & block)
{
  std::int64_t                     count = 0;
  CountingResponse<HaarResponseAt> response{ HaarResponseAt{ volume, features, 0, 0, 0 }, &count };
  for (int z = 0; z < block.sz; ++z)
  {
    for (int y = 0; y < block.sy; ++y)
    {
      for (int x = 0; x < block.sx; ++x)
      {
        response.inner.x = block.x0 + x;
        response.inner.y = block.y0 + y;
        response.inner.z = block.z0 + z;
        PbtPosteriorStack<kPBTEvaluationStack>(tree, response);
      }
    }
  }
  return count;
}

} // namespace canopy
