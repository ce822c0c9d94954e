// The streaming forest's grow step on the GPU (StreamingForestGrow.h): a block per tree scans its nodes
// in order, chunk by chunk, for the leaves whose split was decided this batch; a block-wide prefix sum
// of their branches gives each split its children's nodes, new slots and subspace draws, the numbers
// the host loop (StreamingForestCPU.cxx) gives them one split after another. Built with --fmad=false
// as StreamingForest.cu (the draws' arithmetic rounds as on the CPU).
#include "canopy/CudaCheck.h"
#include "canopy/StreamingForestGrow.h"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda_runtime.h>

namespace canopy::cuda
{
namespace
{
/** A node's share of the scan: its split's branches in the high word, one split in the low word. */
__device__ unsigned long long
PackSplit(int branches)
{
  return branches > 0 ? (static_cast<unsigned long long>(branches) << 32) | 1ull : 0ull;
}

__global__ void
__launch_bounds__(kStreamGrowThreads) GrowTreesKernel(HoeffdingTreeShape     s,
                                                      StreamForestArrays     f,
                                                      const StreamTreeInfo * info,
                                                      std::uint64_t          seed,
                                                      std::int32_t *         splitOfSlot,
                                                      const HoeffdingSplit * splits,
                                                      StreamTreeGrowth *     growth,
                                                      std::int32_t *         scratch,
                                                      std::int32_t *         overflow)
{
  using Scan = cub::BlockScan<unsigned long long, kStreamGrowThreads>;
  using Reduce = cub::BlockReduce<unsigned long long, kStreamGrowThreads>;
  __shared__ union
  {
    typename Scan::TempStorage   scan;
    typename Reduce::TempStorage reduce;
  } temp;
  __shared__ unsigned long long total;
  const int                     p = blockIdx.x;
  if (!info[p].active)
    return;
  const StreamTreeGrowth g = growth[p];
  int                    slot = 0, index = 0;
  // Pass 1: the tree's splits in all, to check they fit before anything changes.
  unsigned long long mine = 0;
  for (int node = threadIdx.x; node < g.nodes; node += kStreamGrowThreads)
    mine += PackSplit(StreamSplitBranchesAt(f, splitOfSlot, splits, p, node, &slot, &index));
  const unsigned long long sum = Reduce(temp.reduce).Sum(mine);
  if (threadIdx.x == 0)
    total = sum;
  __syncthreads();
  const int branches = int(total >> 32), count = int(total & 0xffffffffull);
  if (count == 0)
    return;
  if (!StreamGrowthFits(f, g, branches, count))
  {
    if (threadIdx.x == 0)
    {
      atomicExch(overflow, 1);
      atomicMax(overflow + 1, g.nodes + branches);
      atomicMax(overflow + 2, g.slots + branches - count);
    }
    return;
  }
  // Pass 2: chunks of the nodes in order; a split's numbers follow from the splits at lower nodes.
  std::int32_t *     moved = scratch + (std::int64_t(p) * kStreamGrowThreads + threadIdx.x) * 2 * s.subspaceSize;
  unsigned long long base = 0;
  for (int start = 0; start < g.nodes; start += kStreamGrowThreads)
  {
    const int          node = start + int(threadIdx.x);
    const int          b = node < g.nodes ? StreamSplitBranchesAt(f, splitOfSlot, splits, p, node, &slot, &index) : 0;
    unsigned long long before = 0, chunk = 0;
    Scan(temp.scan).ExclusiveSum(PackSplit(b), before, chunk);
    before += base;
    if (b > 0)
    {
      const int added = int(before >> 32), splitsBefore = int(before & 0xffffffffull);
      StreamApplySplitAfter(s, f, seed, g, splitOfSlot, p, node, slot, splits[index], added, splitsBefore, moved);
    }
    base += chunk;
    __syncthreads(); // the scan's storage is reused by the next chunk
  }
  if (threadIdx.x == 0)
    growth[p] = StreamGrowthAfter(g, branches, count);
}
} // namespace

void
LaunchStreamGrowTrees(const HoeffdingTreeShape & s,
                      const StreamForestArrays & f,
                      const StreamTreeInfo *     info,
                      std::uint64_t              seed,
                      std::int32_t *             splitOfSlot,
                      const HoeffdingSplit *     splits,
                      StreamTreeGrowth *         growth,
                      std::int32_t *             scratch,
                      std::int32_t *             overflow,
                      CUstream_st *              stream)
{
  if (f.trees == 0)
    return;
  GrowTreesKernel<<<unsigned(f.trees), kStreamGrowThreads, 0, stream>>>(
    s, f, info, seed, splitOfSlot, splits, growth, scratch, overflow);
  CANOPY_CUDA_CHECK_LAUNCH(GrowTreesKernel);
}

} // namespace canopy::cuda
