// The streaming forest's ADWIN step on the GPU (StreamingAdwinLaunch.h): a block of kBlockWarps warps
// per member runs AdwinTeamObserveBatch, the host's function, with the block as the team (the errors'
// prefix by ballots, the checks' boundaries and the insertion's buckets split over its threads). Built with
// --fmad=false: the variance's closed form and the cut test round as on the CPU. A block per member: the
// member's state (8 KB) is copied into the block's shared memory once per batch and back after, and the
// step's scratch lives there too, so the lanes' exchanges and the checks' scans of the buckets never wait
// on global memory (in global memory the step took 198 us per batch of 1000 on the H100, ~18x the estimate).
#include "canopy/CudaCheck.h"
#include "canopy/Errors.h"
#include "canopy/StreamingAdwinLaunch.h"

#include <cuda_runtime.h>

namespace canopy::cuda
{
namespace
{
static_assert(sizeof(AdwinMemberData) % sizeof(std::uint64_t) == 0 && alignof(AdwinMemberData) >= 8,
              "the member state is copied in 8-byte words");
static_assert(sizeof(AdwinMemberData) + sizeof(AdwinStepScratch) <= 48 * 1024,
              "a block's state and scratch fit the static shared memory of every supported GPU");

/** A member's block (kStreamAdwinBlockThreads): a check's boundaries are split over its threads, and an
 * SM's four schedulers get two warps each, so while one waits on shared memory or FP64 latency the
 * other issues (one warp per SM, as before, left three schedulers idle and hid no latency). */
/** A block of kBlockThreads as AdwinMemberStep.h's team: threads split For's indices; Single runs on
 * thread 0. Both begin and end with __syncthreads, which also orders the threads' memory accesses around
 * it. */
template<int kBlockThreads>
struct BlockTeam
{
  static constexpr int kBlockWarps = kBlockThreads / 32;
  static_assert(kBlockThreads % 32 == 0 && kBlockThreads <= kAdwinSegment, "whole warps, no more than a segment");
  /** ErrorsBefore: results each thread reads at once (a warp's 32 x kErrorRounds results). */
  static constexpr int kErrorRounds = (kAdwinSegment + kBlockThreads - 1) / kBlockThreads;
  static_assert(kBlockThreads * kErrorRounds >= kAdwinSegment, "one pass of the block counts a segment's errors");

  int            thread;
  std::int32_t * warpErrors; // kBlockWarps counters in shared memory (ErrorsBefore's carries)
  // The opt-in profile (StreamAdwinArgs::profile): thread 0's clock at the last mark and the block's
  // counters in shared memory; null when not profiling (then Phase costs a test of a register). Every
  // phase ends with a barrier, so thread 0's clock measures the block's.
  long long *          last = nullptr;
  unsigned long long * counters = nullptr;
  __device__ int       Lanes() const { return kBlockThreads; }
  __device__ void      Phase(int k) const
  {
    if (counters && thread == 0)
    {
      const long long now = clock64();
      counters[k] += (unsigned long long)(now - *last);
      counters[kAdwinPhases + k] += 1;
      *last = now;
    }
  }
  template<typename F>
  __device__ void For(int n, F f) const
  {
    __syncthreads();
    for (int i = thread; i < n; i += kBlockThreads)
      f(i);
    __syncthreads();
  }
  template<typename F>
  __device__ void Single(F f) const
  {
    __syncthreads();
    if (thread == 0)
      f();
    __syncthreads();
  }
  /** The smallest i < n with f(i), or n: each thread stops at its first (its indices rise), then a
   * minimum over each warp and over the warps (their minima through warpErrors, which every other step
   * writes only after a barrier). */
  template<typename F>
  __device__ int FirstOf(int n, F f) const
  {
    __syncthreads();
    unsigned first = unsigned(n);
    for (int i = thread; i < n; i += kBlockThreads)
      if (f(i))
      {
        first = unsigned(i);
        break;
      }
    for (int offset = 16; offset > 0; offset /= 2) // shuffles: __reduce_min_sync needs sm_80, labs have sm_75
    {
      const unsigned other = __shfl_down_sync(0xffffffffu, first, offset);
      first = other < first ? other : first;
    }
    if (thread % 32 == 0)
      warpErrors[thread / 32] = std::int32_t(first);
    __syncthreads();
    int result = n;
    for (int w = 0; w < kBlockWarps; ++w)
      result = warpErrors[w] < result ? warpErrors[w] : result;
    return result;
  }
  /** n <= kAdwinSegment: warp w counts results [w, w + 1) x 32 x kErrorRounds (read at once, so it
   * waits for global memory once), a ballot and a population count per 32, then adds the errors of the
   * warps before it (their counts through shared memory). */
  __device__ void ErrorsBefore(const std::uint8_t * correct, int n, std::int32_t * out) const
  {
    const int warp = thread / 32, lane = thread % 32, base = warp * 32 * kErrorRounds;
    __syncthreads();
    bool error[kErrorRounds];
#pragma unroll
    for (int k = 0; k < kErrorRounds; ++k)
    {
      const int i = base + 32 * k + lane;
      error[k] = i < n ? correct[i] == 0 : false;
    }
    std::int32_t before[kErrorRounds], carry = 0;
#pragma unroll
    for (int k = 0; k < kErrorRounds; ++k)
    {
      const unsigned errors = __ballot_sync(0xffffffffu, error[k]);
      before[k] = carry + __popc(errors & ((1u << lane) - 1u));
      carry += __popc(errors);
    }
    if (lane == 0)
      warpErrors[warp] = carry;
    __syncthreads();
    std::int32_t earlier = 0, all = 0;
    for (int w = 0; w < kBlockWarps; ++w)
    {
      earlier += w < warp ? warpErrors[w] : 0;
      all += warpErrors[w];
    }
#pragma unroll
    for (int k = 0; k < kErrorRounds; ++k)
    {
      const int i = base + 32 * k + lane;
      if (i < n)
        out[i] = earlier + before[k];
    }
    if (thread == 0)
      out[n] = all;
    __syncthreads();
  }
};

/** A block copies `words` 8-byte words (loads issued ahead of the stores). */
template<int kBlockThreads>
__device__ void
CopyWords(std::uint64_t * __restrict__ to, const std::uint64_t * __restrict__ from, int words, int thread)
{
#pragma unroll 4
  for (int i = thread; i < words; i += kBlockThreads)
    to[i] = from[i];
}

template<int kBlockThreads>
__global__ void
__launch_bounds__(kBlockThreads) AdwinStepKernel(StreamAdwinArgs a)
{
  constexpr int                 kBlockWarps = BlockTeam<kBlockThreads>::kBlockWarps;
  __shared__ AdwinMemberData    member;
  __shared__ AdwinStepScratch   scratch;
  __shared__ long long          profileClock;
  __shared__ unsigned long long profileCounters[2 * kAdwinPhases];
  __shared__ std::int32_t  warpErrors[kBlockWarps];
  const int                t = int(blockIdx.x), thread = int(threadIdx.x);
  constexpr int            kWords = int(sizeof(AdwinMemberData) / sizeof(std::uint64_t));
  BlockTeam<kBlockThreads> team{ thread, warpErrors };
  if (a.profile)
  {
    for (int k = thread; k < 2 * kAdwinPhases; k += kBlockThreads)
      profileCounters[k] = 0;
    if (thread == 0)
      profileClock = clock64();
    team.last = &profileClock;
    team.counters = profileCounters;
    __syncthreads();
  }
  CopyWords<kBlockThreads>(
    reinterpret_cast<std::uint64_t *>(&member), reinterpret_cast<const std::uint64_t *>(a.state + t), kWords, thread);
  __syncthreads();
  team.Phase(kAdwinPhaseCopyIn);
  StreamAdwinMemberItem(team, a, t, member, scratch);
  __syncthreads();
  CopyWords<kBlockThreads>(
    reinterpret_cast<std::uint64_t *>(a.state + t), reinterpret_cast<const std::uint64_t *>(&member), kWords, thread);
  if (a.profile)
  {
    __syncthreads();
    team.Phase(kAdwinPhaseCopyOut);
    __syncthreads();
    for (int k = thread; k < 2 * kAdwinPhases; k += kBlockThreads)
      atomicAdd(a.profile + k, profileCounters[k]);
  }
}
} // namespace

void
LaunchStreamAdwinStep(const StreamAdwinArgs & a, CUstream_st * stream)
{
  if (a.members <= 0 || a.n <= 0)
    return;
  switch (a.teamThreads)
  {
    case 256:
      AdwinStepKernel<256><<<unsigned(a.members), 256, 0, stream>>>(a);
      break;
    case 512:
      AdwinStepKernel<512><<<unsigned(a.members), 512, 0, stream>>>(a);
      break;
    case 1024:
      AdwinStepKernel<1024><<<unsigned(a.members), 1024, 0, stream>>>(a);
      break;
    default:
      CANOPY_THROW("ADWIN step: a block of " << a.teamThreads << " threads; 256, 512 or 1024");
  }
  CANOPY_CUDA_CHECK(cudaGetLastError());
}

} // namespace canopy::cuda
