// Sums of GPU histograms between processes, one GPU each, through NCCL (CANOPY_USE_NCCL). The NCCL
// communicator is bootstrapped over a host Collective: rank 0 makes NCCL's unique id and broadcasts
// it (MPI, or any Collective), then every rank joins with its GPU. Integer sums (ncclUint32), so the
// result is the same whatever ring or tree NCCL picks.
#pragma once

#include "canopy/Collective.h"

#include <cstdint>
#include <memory>
#include <string>

namespace canopy
{

class NcclReduction
{
public:
  /** A collective call over `host`; `device` is this process's CUDA device. Throws canopy::Error in a
   * build without NCCL, where any rank cannot load libnccl, or naming the NCCL call that failed. */
  NcclReduction(Collective & host, int device);
  ~NcclReduction();
  NcclReduction(const NcclReduction &) = delete;
  NcclReduction & operator=(const NcclReduction &) = delete;

  /** Whether the build has NCCL's interface; Available(): whether libnccl.so.2 loads (it is loaded at
   * run time, not linked), WhyUnavailable() says why not. */
  static bool        CompiledIn();
  static bool        Available();
  static std::string WhyUnavailable();
  /** "NCCL 2.27.3 (libnccl.so.2)": the library's version where it loads (canopy devices), else
   * WhyUnavailable(). */
  static std::string Describe();

  int Rank() const;
  int Size() const;

  /** Sums `count` values in device memory over all processes, in place, enqueued on `stream` (a
   * cudaStream_t; nullptr: the default stream); the caller synchronises. */
  void SumInPlace(std::uint32_t * deviceData, std::size_t count, void * stream);
  /** Collective::ReduceScatterDeviceInPlace and AllGatherDeviceInPlace through NCCL. */
  void ReduceScatterInPlace(std::uint32_t * deviceData, std::size_t countPerRank, void * stream);
  void AllGatherInPlace(void * deviceData, std::size_t bytesPerRank, void * stream);

  std::int64_t BytesReduced() const { return m_BytesReduced; }

private:
  struct Impl;
  std::unique_ptr<Impl> m_Impl;
  std::int64_t          m_BytesReduced = 0;
};

/** A host Collective (MPI) whose device sums go through NCCL, one GPU per process: what distributed
 * GPU training passes as ForestTrainingOptions::shards. Host operations are forwarded. */
class NcclCollective final : public Collective
{
public:
  /** A collective call over `host` (see NcclReduction). */
  NcclCollective(Collective & host, int device)
    : m_Host(host)
    , m_Nccl(host, device)
  {
  }
  int  Rank() const override { return m_Host.Rank(); }
  int  Size() const override { return m_Host.Size(); }
  void SumInPlace(std::uint32_t * d, std::size_t n) override { Forward(n * 4), m_Host.SumInPlace(d, n); }
  void SumInPlace(std::int64_t * d, std::size_t n) override { Forward(n * 8), m_Host.SumInPlace(d, n); }
  void MaxInPlace(std::int64_t * d, std::size_t n) override { Forward(n * 8), m_Host.MaxInPlace(d, n); }
  void BitwiseOrInPlace(std::uint32_t * d, std::size_t n) override { Forward(n * 4), m_Host.BitwiseOrInPlace(d, n); }
  void Broadcast(void * d, std::size_t bytes, int root) override { Forward(bytes), m_Host.Broadcast(d, bytes, root); }
  std::vector<std::string> GatherToRoot(const std::string & text, int root) override
  {
    Forward(text.size());
    return m_Host.GatherToRoot(text, root);
  }
  bool SumDeviceInPlace(std::uint32_t * deviceData, std::size_t count, void * stream) override
  {
    Forward(count * sizeof(std::uint32_t));
    m_Nccl.SumInPlace(deviceData, count, stream);
    return true;
  }
  bool ReduceScatterDeviceInPlace(std::uint32_t * deviceData, std::size_t countPerRank, void * stream) override
  {
    Forward(countPerRank * Size() * sizeof(std::uint32_t)); // the values this process contributes
    m_Nccl.ReduceScatterInPlace(deviceData, countPerRank, stream);
    return true;
  }
  bool AllGatherDeviceInPlace(void * deviceData, std::size_t bytesPerRank, void * stream) override
  {
    Forward(bytesPerRank);
    m_Nccl.AllGatherInPlace(deviceData, bytesPerRank, stream);
    return true;
  }

private:
  void Forward(std::size_t bytes) { Count(bytes); }

  Collective &  m_Host;
  NcclReduction m_Nccl;
};

} // namespace canopy
