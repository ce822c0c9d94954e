// Sums of GPU histograms between processes, one GPU each, through NCCL (CANOPY_USE_NCCL). The NCCL
// communicator is bootstrapped over a host Collective: rank 0 makes NCCL's unique id and broadcasts
// it (MPI, or any Collective), then every rank joins with its GPU. Integer sums (ncclUint32), so the
// result is the same whatever ring or tree NCCL picks.
#pragma once

#include "canopy/Collective.h"

#include <cstdint>
#include <memory>

namespace canopy
{

class NcclReduction
{
public:
  /** A collective call over `host`; `device` is this process's CUDA device. Throws canopy::Error in a
   * build without NCCL, or naming the NCCL call that failed. */
  NcclReduction(Collective & host, int device);
  ~NcclReduction();
  NcclReduction(const NcclReduction &) = delete;
  NcclReduction & operator=(const NcclReduction &) = delete;

  static bool CompiledIn();

  int Rank() const;
  int Size() const;

  /** Sums `count` values in device memory over all processes, in place, enqueued on `stream` (a
   * cudaStream_t; nullptr: the default stream); the caller synchronises. */
  void SumInPlace(std::uint32_t * deviceData, std::size_t count, void * stream);

  std::int64_t BytesReduced() const { return m_BytesReduced; }

private:
  struct Impl;
  std::unique_ptr<Impl> m_Impl;
  std::int64_t          m_BytesReduced = 0;
};

} // namespace canopy
