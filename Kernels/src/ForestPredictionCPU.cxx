#include "canopy/ForestPrediction.h"

#include "ParallelFor.h"

namespace canopy
{

void
PredictForestCPU(const ForestView & forest, const ForestImagesView & images, const VoxelBlock & block,
                 const ForestOutput & out, int threads)
{
  const int          components = ForestComponents(forest, out.mode);
  const std::int64_t rows = static_cast<std::int64_t>(block.sy) * block.sz;
  auto               loadNode = [&](int i) { return forest.nodes[i]; };
  auto               loadRoot = [&](int t) { return static_cast<int>(forest.treeRoots[t]); };
  auto               loadDistribution = [&](int i) { return forest.distributions[i]; };
  detail::ParallelForChunks(rows, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
    {
      const int y = block.y0 + static_cast<int>(r % block.sy);
      const int z = block.z0 + static_cast<int>(r / block.sy);
      for (int i = 0; i < block.sx; ++i)
      {
        const std::int64_t at = (r * block.sx + i) * components;
        float *            d = out.distribution ? out.distribution + at : nullptr;
        std::int32_t *     k = out.index ? out.index + at : nullptr;
        // The CPU reference always takes the scaled path (exact for s == 1), so the GPU's
        // unscaled specialisation is checked against it.
        if (images.Planar())
        {
          ForestPredictVoxel<true, true>(forest, images, out.mode, loadNode, loadRoot, loadDistribution, block.x0 + i,
                                         y, z, d, k);
        }
        else
        {
          ForestPredictVoxel<false, true>(forest, images, out.mode, loadNode, loadRoot, loadDistribution,
                                          block.x0 + i, y, z, d, k);
        }
      }
    }
  });
}

} // namespace canopy
