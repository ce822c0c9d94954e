// The streaming forest's batch steps on the GPU (StreamingForestLaunch.h): each kernel is a grid over
// the items of one step and calls the item function the host loops call (StreamingForestCPU.cxx), so
// both run the same code. Built with --fmad=false: merits, densities and Gaussian updates round as on
// the CPU. The learning keys are sorted with CUB's radix sort, which is stable.
#include "canopy/CudaCheck.h"
#include "canopy/StreamingForestLaunch.h"

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

namespace canopy::cuda
{
namespace
{
constexpr int kThreads = 256;

unsigned
Blocks(std::int64_t items)
{
  return unsigned((items + kThreads - 1) / kThreads);
}

// Route walks each tree down to a leaf, load after dependent load: it waits on L1/L2 (Nsight Compute,
// H100, batch 10,000: 53% of its stalls), so it wants warps in flight more than registers. Four blocks
// an SM (64 registers a thread) instead of the three its 80 registers allowed.
__global__ void
__launch_bounds__(kThreads, 4) RouteKernel(HoeffdingTreeShape s, StreamForestArrays f, StreamBatchArgs b)
{
  const std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (k >= std::int64_t(f.trees) * b.n)
    return;
  StreamRouteItem(s, f, b, int(k / b.n), int(k % b.n));
}

__global__ void
SumVotesKernel(HoeffdingTreeShape s, StreamBatchArgs b)
{
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i < b.n)
    StreamSumVotesItem(s, b, int(i));
}

__global__ void
LearnKernel(HoeffdingTreeShape s, StreamForestArrays f, StreamBatchArgs b, std::int64_t count)
{
  const std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (e < count)
    StreamLearnRunItem(s, f, b, count, e, int(blockIdx.y));
}

/** A count's add for pairs learnt in any order (StreamLearnPairItem): atomic on the device. */
struct AtomicCountAdd
{
  CANOPY_HD void operator()(std::uint32_t * count, std::uint32_t w) const
  {
#if defined(__CUDA_ARCH__)
    atomicAdd(count, w);
#else
    *count += w;
#endif
  }
};

__global__ void
LearnPairsKernel(HoeffdingTreeShape s, StreamForestArrays f, StreamBatchArgs b, std::int64_t count)
{
  const std::int64_t pi = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (pi < count)
    StreamLearnPairItem(s, f, b, pi, int(blockIdx.y), AtomicCountAdd{});
}

__global__ void
SplitCheckKernel(HoeffdingTreeShape     s,
                 StreamForestArrays     f,
                 const StreamTreeInfo * info,
                 int                    gracePeriod,
                 std::int32_t *         splitCount,
                 std::uint32_t *        splitKeys,
                 HoeffdingSplit *       splits)
{
  const std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (k >= std::int64_t(f.trees) * f.slotCapacity)
    return;
  const int      p = int(k / f.slotCapacity), slot = int(k % f.slotCapacity);
  HoeffdingSplit split;
  if (StreamSplitCheckItem(s, f, info, gracePeriod, p, slot, &split))
  {
    const int at = atomicAdd(splitCount, 1);
    splitKeys[at] = std::uint32_t(k);
    splits[at] = split;
  }
}

__global__ void
ApplyUpdatesKernel(HoeffdingTreeShape      s,
                   StreamForestArrays      f,
                   const StreamNodeWrite * writes,
                   int                     writeCount,
                   const StreamSlotInit *  inits,
                   const std::int32_t *    subspaces,
                   int                     initCount)
{
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < writeCount)
    StreamWriteNodeItem(f, writes[k]);
  else if (k - writeCount < initCount)
  {
    const int i = k - writeCount;
    StreamInitSlotItem(s, f, inits[i], subspaces + std::int64_t(i) * s.subspaceSize);
  }
}
} // namespace

void
LaunchStreamRoute(const HoeffdingTreeShape & s,
                  const StreamForestArrays & f,
                  const StreamBatchArgs &    b,
                  StreamHandle               stream)
{
  const std::int64_t items = std::int64_t(f.trees) * b.n;
  if (items == 0)
    return;
  RouteKernel<<<Blocks(items), kThreads, 0, stream>>>(s, f, b);
  CANOPY_CUDA_CHECK_LAUNCH(RouteKernel);
}

void
LaunchStreamSumVotes(const HoeffdingTreeShape & s, const StreamBatchArgs & b, StreamHandle stream)
{
  if (b.n == 0)
    return;
  SumVotesKernel<<<Blocks(b.n), kThreads, 0, stream>>>(s, b);
  CANOPY_CUDA_CHECK_LAUNCH(SumVotesKernel);
}

std::size_t
StreamSortScratchBytes(std::int64_t count, int keyBits)
{
  std::size_t bytes = 0;
  CANOPY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr,
                                                    bytes,
                                                    static_cast<const std::uint32_t *>(nullptr),
                                                    static_cast<std::uint32_t *>(nullptr),
                                                    static_cast<const std::uint32_t *>(nullptr),
                                                    static_cast<std::uint32_t *>(nullptr),
                                                    count,
                                                    0,
                                                    32));
  return bytes;
}

void
LaunchStreamSortKeys(const StreamBatchArgs & b,
                     std::int64_t            count,
                     int                     keyBits,
                     void *                  scratch,
                     std::size_t             scratchBytes,
                     StreamHandle            stream)
{
  if (count == 0)
    return;
  CANOPY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
    scratch, scratchBytes, b.keys, b.sortedKeys, b.order, b.sortedOrder, count, 0, keyBits, stream));
}

void
LaunchStreamLearn(const HoeffdingTreeShape & s,
                  const StreamForestArrays & f,
                  const StreamBatchArgs &    b,
                  std::int64_t               count,
                  StreamHandle               stream)
{
  if (count == 0)
    return;
  const dim3 grid(Blocks(count), unsigned(s.subspaceSize + 1));
  if (StreamLearnIsOrderFree(s))
  {
    LearnPairsKernel<<<grid, kThreads, 0, stream>>>(s, f, b, count);
    CANOPY_CUDA_CHECK_LAUNCH(LearnPairsKernel);
    return;
  }
  LearnKernel<<<grid, kThreads, 0, stream>>>(s, f, b, count);
  CANOPY_CUDA_CHECK_LAUNCH(LearnKernel);
}

void
LaunchStreamSplitChecks(const HoeffdingTreeShape & s,
                        const StreamForestArrays & f,
                        const StreamTreeInfo *     info,
                        int                        gracePeriod,
                        std::int32_t *             splitCount,
                        std::uint32_t *            splitKeys,
                        HoeffdingSplit *           splits,
                        StreamHandle               stream)
{
  CANOPY_CUDA_CHECK(cudaMemsetAsync(splitCount, 0, sizeof(std::int32_t), stream));
  const std::int64_t items = std::int64_t(f.trees) * f.slotCapacity;
  SplitCheckKernel<<<Blocks(items), kThreads, 0, stream>>>(s, f, info, gracePeriod, splitCount, splitKeys, splits);
  CANOPY_CUDA_CHECK_LAUNCH(SplitCheckKernel);
}

int
LaunchStreamApplyUpdates(const HoeffdingTreeShape & s,
                         const StreamForestArrays & f,
                         const StreamNodeWrite *    writes,
                         int                        writeCount,
                         const StreamSlotInit *     inits,
                         const std::int32_t *       subspaces,
                         int                        initCount,
                         StreamHandle               stream)
{
  if (writeCount + initCount == 0)
    return 0;
  ApplyUpdatesKernel<<<Blocks(writeCount + initCount), kThreads, 0, stream>>>(
    s, f, writes, writeCount, inits, subspaces, initCount);
  CANOPY_CUDA_CHECK_LAUNCH(ApplyUpdatesKernel);
  return 1;
}

} // namespace canopy::cuda
