// The streaming forest's ADWIN step on the GPU (StreamingAdwinLaunch.h): a warp per member runs
// AdwinTeamObserveBatch, the host's function, with the warp as the team (the errors' prefix by
// ballots). Built with --fmad=false: Welford's terms, merges and the cut test round as on the CPU.
#include "canopy/CudaCheck.h"
#include "canopy/StreamingAdwinLaunch.h"

#include <cuda_runtime.h>

namespace canopy::cuda
{
namespace
{
constexpr int kWarpsPerBlock = 4;

/** A warp as AdwinMemberStep.h's team: lanes split For's indices; Single runs on lane 0. Both begin
 * and end with __syncwarp, which also orders the lanes' memory accesses around it. */
struct WarpTeam
{
  int lane;
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
    __syncwarp();
    std::int32_t carry = 0;
    for (int base = 0; base < n; base += 32)
    {
      const int      i = base + lane;
      const unsigned errors = __ballot_sync(0xffffffffu, i < n && correct[i] == 0);
      if (i < n)
        out[i] = carry + __popc(errors & ((1u << lane) - 1u));
      carry += __popc(errors);
    }
    if (lane == 0)
      out[n] = carry;
    __syncwarp();
  }
};

__global__ void __launch_bounds__(32 * kWarpsPerBlock) AdwinStepKernel(StreamAdwinArgs a)
{
  const int t = blockIdx.x * kWarpsPerBlock + int(threadIdx.x / 32);
  if (t >= a.members)
    return; // a whole warp: the members' teams never part
  StreamAdwinMemberItem(WarpTeam{ int(threadIdx.x % 32) }, a, t);
}
} // namespace

void
LaunchStreamAdwinStep(const StreamAdwinArgs & a, CUstream_st * stream)
{
  if (a.members <= 0 || a.n <= 0)
    return;
  const unsigned blocks = unsigned((a.members + kWarpsPerBlock - 1) / kWarpsPerBlock);
  AdwinStepKernel<<<blocks, 32 * kWarpsPerBlock, 0, stream>>>(a);
  CANOPY_CUDA_CHECK(cudaGetLastError());
}

} // namespace canopy::cuda
