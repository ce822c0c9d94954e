// The streaming forest's batch steps on the GPU (StreamingForestLaunch.h): each kernel is a grid over
// the items of one step and calls the item function the host loops call (StreamingForestCPU.cxx), so
// both run the same code. Built with --fmad=false: merits, densities and Gaussian updates round as on
// the CPU. The learning keys are sorted with CUB's radix sort, which is stable.
#include "canopy/CudaCheck.h"
#include "canopy/Errors.h"
#include "canopy/StreamingForestLaunch.h"

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <type_traits>

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

struct DeviceLimits
{
  std::size_t sharedPerBlock = 0; // dynamic shared memory a block may opt in to
  int         multiprocessors = 1;
};

void
ConfigureLearnTreeBlocks(std::size_t sharedPerBlock);

/** The current device's limits, read once per device (the first batch runs outside a graph capture, and
 * the learn kernel's shared-memory opt-in is set then too). */
const DeviceLimits &
CurrentDeviceLimits()
{
  constexpr int         kDevices = 64;
  static DeviceLimits   limits[kDevices];
  static std::once_flag once[kDevices];
  int                   device = 0;
  CANOPY_CUDA_CHECK(cudaGetDevice(&device));
  if (device < 0 || device >= kDevices)
    CANOPY_THROW("streaming forest: CUDA device " << device << " is beyond the " << kDevices << " this build counts");
  std::call_once(once[device],
                 [&]
                 {
                   int shared = 0, sms = 0;
                   CANOPY_CUDA_CHECK(cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
                   CANOPY_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
                   limits[device].sharedPerBlock = std::size_t(shared);
                   limits[device].multiprocessors = std::max(1, sms);
                   ConfigureLearnTreeBlocks(std::size_t(shared));
                 });
  return limits[device];
}

// Route walks each tree down to a leaf, load after dependent load: it waits on L1/L2 (Nsight Compute,
// H100, batch 10,000: 53% of its stalls), so it wants warps in flight more than registers. Four blocks
// an SM (64 registers a thread) instead of the three its 80 registers allowed. kClasses > 0: the
// stream's class count fixed at compile time, so the leaf's votes are registers, not local memory.
template<int kClasses>
__global__ void
__launch_bounds__(kThreads, 4) RouteKernel(HoeffdingTreeShape s, StreamForestArrays f, StreamBatchArgs b)
{
  const std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (k >= std::int64_t(f.trees) * b.n)
    return;
  StreamRouteItem<kClasses>(s, f, b, int(k / b.n), int(k % b.n));
}

template<int kClasses>
__global__ void
SumVotesKernel(HoeffdingTreeShape s, StreamBatchArgs b)
{
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i < b.n)
    StreamSumVotesItem<kClasses>(s, b, int(i));
}

/** Calls launch(std::integral_constant<int, K>{}) with K = classes for the class counts the route and
 * vote kernels are compiled for (2 to 8: every bundled stream but LED's 10), K = 0 (any) otherwise. */
template<typename Launch>
void
WithClassCount(int classes, const Launch & launch)
{
  switch (classes)
  {
    case 2:
      return launch(std::integral_constant<int, 2>{});
    case 3:
      return launch(std::integral_constant<int, 3>{});
    case 4:
      return launch(std::integral_constant<int, 4>{});
    case 5:
      return launch(std::integral_constant<int, 5>{});
    case 6:
      return launch(std::integral_constant<int, 6>{});
    case 7:
      return launch(std::integral_constant<int, 7>{});
    case 8:
      return launch(std::integral_constant<int, 8>{});
    default:
      return launch(std::integral_constant<int, 0>{});
  }
}

__global__ void
LearnKernel(HoeffdingTreeShape s, StreamForestArrays f, StreamBatchArgs b, std::int64_t count)
{
  const std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (e < count)
    StreamLearnRunItem(s, f, b, count, e, int(blockIdx.y));
}

/** A count's add in a block's shared memory (LearnTreeBlocksKernel), as the shared-memory reduction
 * (`red.shared`): the counts reach the kernel as generic pointers, whose atomics would look the space up. */
struct SharedCountAdd
{
  __device__ void operator()(std::uint32_t * count, std::uint32_t w) const
  {
    asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(unsigned(__cvta_generic_to_shared(count))), "r"(w) : "memory");
  }
};

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

/** Learn of an order-free forest, one block per (tree, part of the batch): the part's pairs counted in
 * shared memory (StreamLearnCounts), then each non-zero count added to the tree's once. Where the pair
 * kernel's global atomics queue on a leaf's few counters (a leaf takes ~30 of a tree's 10,000
 * instances), these queue in shared memory, and each tree-part adds a counter to global memory once. */
constexpr int kLearnBlockThreads = 512;
constexpr int kLearnTreeBlocksFrom = 4096; // batch size

__global__ void
__launch_bounds__(kLearnBlockThreads)
  LearnTreeBlocksKernel(HoeffdingTreeShape s, StreamForestArrays f, StreamBatchArgs b, int partSize)
{
  extern __shared__ std::uint32_t words[];
  const int                       p = int(blockIdx.x);
  const StreamTreeInfo &          info = b.info[p];
  if (!info.active)
    return;
  StreamLearnCounts counts;
  counts.words = words;
  counts.slots = info.slots;
  counts.values = f.maxBranches;
  const std::int64_t used = std::int64_t(counts.slots) * StreamLearnCounts::PerSlot(s, counts.values);
  for (std::int64_t k = threadIdx.x; k < used; k += blockDim.x)
    words[k] = 0;
  __syncthreads();
  const HoeffdingTreeView tree = StreamTreeView(s, f, p);
  const int               first = int(blockIdx.y) * partSize, end = min(b.n, first + partSize);
  for (int i = first + int(threadIdx.x); i < end; i += blockDim.x)
  {
    const std::uint32_t key = b.keys[std::int64_t(p) * b.n + i];
    if (key != kStreamNoKey)
      StreamLearnPairIntoCounts(s, tree, counts, b, p, i, int(key % std::uint32_t(f.slotCapacity)), SharedCountAdd{});
  }
  __syncthreads();
  for (std::int64_t k = threadIdx.x; k < used; k += blockDim.x)
    if (const std::uint32_t w = words[k])
      atomicAdd(StreamLearnCountTarget(s, tree, counts, k), w);
}

void
ConfigureLearnTreeBlocks(std::size_t sharedPerBlock)
{
  CANOPY_CUDA_CHECK(
    cudaFuncSetAttribute(LearnTreeBlocksKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedPerBlock)));
}

__global__ void
SplitCheckKernel(HoeffdingTreeShape     s,
                 StreamForestArrays     f,
                 const StreamTreeInfo * info,
                 int                    gracePeriod,
                 std::int32_t *         splitCount,
                 std::int32_t *         splitOfSlot,
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
    splits[at] = split;
    splitOfSlot[k] = at + 1;
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
  WithClassCount(s.classes,
                 [&](auto classes)
                 {
                   RouteKernel<decltype(classes)::value><<<Blocks(items), kThreads, 0, stream>>>(s, f, b);
                   CANOPY_CUDA_CHECK_LAUNCH(RouteKernel);
                 });
}

void
LaunchStreamSumVotes(const HoeffdingTreeShape & s, const StreamBatchArgs & b, StreamHandle stream)
{
  if (b.n == 0)
    return;
  WithClassCount(s.classes,
                 [&](auto classes)
                 {
                   SumVotesKernel<decltype(classes)::value><<<Blocks(b.n), kThreads, 0, stream>>>(s, b);
                   CANOPY_CUDA_CHECK_LAUNCH(SumVotesKernel);
                 });
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
    // Shared memory for the most slots a tree may hold (the capacity: the launch stays the same from
    // batch to batch until the capacity doubles, so a captured batch may replay it).
    const std::size_t shared =
      std::size_t(f.slotCapacity) * std::size_t(StreamLearnCounts::PerSlot(s, f.maxBranches)) * sizeof(std::uint32_t);
    const DeviceLimits & limits = CurrentDeviceLimits();
    // Small batches take the pair kernel: a tree-part clears and adds back all its slots' counts
    // whatever the instances, which costs more than the pairs' atomics below a few thousand instances
    // (H100, RandomTree x 100 trees, learn per batch: 1000 -> 16.6 us by pairs, 26.8 by tree blocks;
    // 10,000 -> 140 and 100, docs/BENCHMARKS.md).
    if (b.n >= kLearnTreeBlocksFrom && shared <= limits.sharedPerBlock && count == std::int64_t(f.trees) * b.n)
    {
      // Parts of at least 1024 instances, enough of them for four blocks an SM (about half the trees
      // are background slots without a tree).
      const int parts =
        std::max(1, std::min((b.n + 1023) / 1024, (8 * limits.multiprocessors + f.trees - 1) / f.trees));
      const int partSize = (b.n + parts - 1) / parts;
      LearnTreeBlocksKernel<<<dim3(unsigned(f.trees), unsigned(parts)), kLearnBlockThreads, shared, stream>>>(
        s, f, b, partSize);
      CANOPY_CUDA_CHECK_LAUNCH(LearnTreeBlocksKernel);
      return;
    }
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
                        std::int32_t *             splitOfSlot,
                        HoeffdingSplit *           splits,
                        StreamHandle               stream)
{
  CANOPY_CUDA_CHECK(cudaMemsetAsync(splitCount, 0, sizeof(std::int32_t), stream));
  const std::int64_t items = std::int64_t(f.trees) * f.slotCapacity;
  SplitCheckKernel<<<Blocks(items), kThreads, 0, stream>>>(s, f, info, gracePeriod, splitCount, splitOfSlot, splits);
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
