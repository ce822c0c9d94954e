// The streaming forest's ADWIN step on the GPU (StreamingAdwinLaunch.h): a warp per member runs
// AdwinTeamObserveBatch, the host's function, with the warp as the team (the errors' prefix by
// ballots). Built with --fmad=false: Welford's terms, merges and the cut test round as on the CPU.
// A block per member: the member's state (8 KB) is copied into the block's shared memory once per
// batch and back after, and the step's scratch lives there too, so the lanes' exchanges, the one
// serial chain (the variance's running sum) and the checks' scans of the buckets never wait on global
// memory (in global memory the step took 198 us per batch of 1000 on the H100, ~18x the estimate).
#include "canopy/CudaCheck.h"
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

/** A warp as AdwinMemberStep.h's team: lanes split For's indices; Single runs on lane 0. Both begin
 * and end with __syncwarp, which also orders the lanes' memory accesses around it. */
struct WarpTeam
{
  int lane;
  // The opt-in profile (StreamAdwinArgs::profile): lane 0's clock at the last mark and the block's
  // counters in shared memory; null when not profiling (then Phase costs a test of a register).
  long long *          last = nullptr;
  unsigned long long * counters = nullptr;
  __device__ void      Phase(int k) const
  {
    if (counters && lane == 0)
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
    __syncwarp();
    for (int i = lane; i < n; i += 32)
      f(i);
    __syncwarp();
  }
  template<typename F>
  __device__ void Single(F f) const
  {
    __syncwarp();
    if (lane == 0)
      f();
    __syncwarp();
  }
  __device__ void ErrorsBefore(const std::uint8_t * correct, int n, std::int32_t * out) const
  {
    // The results sit in global memory: 8 rounds of 32 are read at once, then counted, so the warp
    // waits for memory once per 256 results instead of once per 32.
    constexpr int kRounds = 8;
    __syncwarp();
    std::int32_t carry = 0;
    for (int base = 0; base < n; base += 32 * kRounds)
    {
      bool error[kRounds];
#pragma unroll
      for (int k = 0; k < kRounds; ++k)
      {
        const int i = base + 32 * k + lane;
        error[k] = i < n ? correct[i] == 0 : false;
      }
#pragma unroll
      for (int k = 0; k < kRounds; ++k)
      {
        const int      i = base + 32 * k + lane;
        const unsigned errors = __ballot_sync(0xffffffffu, error[k]);
        if (i < n)
          out[i] = carry + __popc(errors & ((1u << lane) - 1u));
        carry += __popc(errors);
      }
    }
    if (lane == 0)
      out[n] = carry;
    __syncwarp();
  }
};

/** A warp copies `words` 8-byte words (loads issued ahead of the stores). */
__device__ void
CopyWords(std::uint64_t * __restrict__ to, const std::uint64_t * __restrict__ from, int words, int lane)
{
#pragma unroll 8
  for (int i = lane; i < words; i += 32)
    to[i] = from[i];
}

__global__ void __launch_bounds__(32) AdwinStepKernel(StreamAdwinArgs a)
{
  __shared__ AdwinMemberData    member;
  __shared__ AdwinStepScratch   scratch;
  __shared__ long long          profileClock;
  __shared__ unsigned long long profileCounters[2 * kAdwinPhases];
  const int                     t = int(blockIdx.x), lane = int(threadIdx.x);
  constexpr int                 kWords = int(sizeof(AdwinMemberData) / sizeof(std::uint64_t));
  WarpTeam                      team{ lane };
  if (a.profile)
  {
    for (int k = lane; k < 2 * kAdwinPhases; k += 32)
      profileCounters[k] = 0;
    if (lane == 0)
      profileClock = clock64();
    team.last = &profileClock;
    team.counters = profileCounters;
    __syncwarp();
  }
  CopyWords(
    reinterpret_cast<std::uint64_t *>(&member), reinterpret_cast<const std::uint64_t *>(a.state + t), kWords, lane);
  __syncwarp();
  team.Phase(kAdwinPhaseCopyIn);
  StreamAdwinMemberItem(team, a, t, member, scratch);
  __syncwarp();
  CopyWords(
    reinterpret_cast<std::uint64_t *>(a.state + t), reinterpret_cast<const std::uint64_t *>(&member), kWords, lane);
  if (a.profile)
  {
    __syncwarp();
    team.Phase(kAdwinPhaseCopyOut);
    __syncwarp();
    for (int k = lane; k < 2 * kAdwinPhases; k += 32)
      atomicAdd(a.profile + k, profileCounters[k]);
  }
}
} // namespace

void
LaunchStreamAdwinStep(const StreamAdwinArgs & a, CUstream_st * stream)
{
  if (a.members <= 0 || a.n <= 0)
    return;
  AdwinStepKernel<<<unsigned(a.members), 32, 0, stream>>>(a);
  CANOPY_CUDA_CHECK(cudaGetLastError());
}

} // namespace canopy::cuda
