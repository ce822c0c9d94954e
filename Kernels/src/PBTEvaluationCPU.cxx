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

namespace canopy
{

std::vector<PBTNodeFlat>
PBTNodesInPreorder(const PBTNodeFlat * nodes, int numNodes)
{
  std::vector<int> order; // order[newIndex] = oldIndex
  std::vector<int> rank(static_cast<std::size_t>(numNodes), -1);
  std::vector<int> pending{ 0 };
  while (!pending.empty() && static_cast<int>(order.size()) < numNodes)
  {
    const int index = pending.back();
    pending.pop_back();
    rank[index] = static_cast<int>(order.size());
    order.push_back(index);
    // Right below left on the stack, so left subtrees come first, as in PbtPosteriorStack.
    for (int child : { nodes[index].right, nodes[index].left })
    {
      if (child >= 0 && child < numNodes)
      {
        pending.push_back(child);
      }
    }
  }
  std::vector<PBTNodeFlat> out;
  out.reserve(order.size());
  for (int old : order)
  {
    PBTNodeFlat node = nodes[old];
    node.left = node.left >= 0 ? rank[node.left] : -1;
    node.right = node.right >= 0 ? rank[node.right] : -1;
    out.push_back(node);
  }
  return out;
}

} // namespace canopy
