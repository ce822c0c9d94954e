// The collective operations that processes training one model together need (each holds a shard of
// the samples). Trainers (Modules/Forest) see only this interface; Modules/Distributed implements it
// over MPI (and NCCL for device buffers), so no module below Applications depends on MPI.
//
// Every reduction a trainer uses is integer (sums of counts, bitwise OR of float bit patterns where
// exactly one process contributes a non-zero word, maxima): integer addition is associative and
// commutative, so the result does not depend on how the library orders or splits the reduction, and
// every process sees the same bits. That is what makes a distributed run grow the same model, bit for
// bit, as one process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace canopy
{

class Collective
{
public:
  virtual ~Collective() = default;

  virtual int Rank() const = 0;
  virtual int Size() const = 0;

  /** Element-wise over all processes, in place; every process passes the same count. */
  virtual void SumInPlace(std::uint32_t * data, std::size_t count) = 0;
  virtual void SumInPlace(std::int64_t * data, std::size_t count) = 0;
  virtual void MaxInPlace(std::int64_t * data, std::size_t count) = 0;
  virtual void BitwiseOrInPlace(std::uint32_t * data, std::size_t count) = 0;
  /** `bytes` bytes from `root` to everyone. */
  virtual void Broadcast(void * data, std::size_t bytes, int root) = 0;
  /** Every process's text, in rank order, on `root` (empty elsewhere). */
  virtual std::vector<std::string> GatherToRoot(const std::string & text, int root) = 0;
  /** Sums `count` values in device (CUDA) memory over all processes, in place, enqueued on `stream`
   * (a cudaStream_t). Returns false, doing nothing, when this collective has no device path (NCCL):
   * the caller then sums through host memory with SumInPlace. */
  virtual bool SumDeviceInPlace(std::uint32_t * deviceData, std::size_t count, void * stream)
  {
    (void)deviceData, (void)count, (void)stream;
    return false;
  }
  /** Sums `countPerRank * Size()` values in device memory over all processes and leaves each process
   * its own part summed: rank r's at offset r * countPerRank (the other parts are then undefined).
   * Enqueued on `stream`. Half the traffic of a full sum, for work that each process does on its part.
   * Returns false, doing nothing, without a device path: the caller then sums everything. */
  virtual bool ReduceScatterDeviceInPlace(std::uint32_t * deviceData, std::size_t countPerRank, void * stream)
  {
    (void)deviceData, (void)countPerRank, (void)stream;
    return false;
  }
  /** Each process's `bytesPerRank` bytes at offset rank * bytesPerRank of a device array, copied to
   * every process, in place, enqueued on `stream`. Returns false, doing nothing, without a device path. */
  virtual bool AllGatherDeviceInPlace(void * deviceData, std::size_t bytesPerRank, void * stream)
  {
    (void)deviceData, (void)bytesPerRank, (void)stream;
    return false;
  }
  /** Whether every process passes true (a collective: all must call it). */
  virtual bool AllTrue(bool ok)
  {
    std::int64_t bad = ok ? 0 : 1;
    SumInPlace(&bad, 1);
    return bad == 0;
  }

  /** Bytes this process has contributed to reductions and broadcasts so far (for reports). */
  std::int64_t BytesReduced() const { return m_BytesReduced; }
  std::int64_t Reductions() const { return m_Reductions; }

protected:
  void Count(std::size_t bytes)
  {
    m_BytesReduced += static_cast<std::int64_t>(bytes);
    ++m_Reductions;
  }

private:
  std::int64_t m_BytesReduced = 0, m_Reductions = 0;
};

/** One process alone: every collective is the identity. */
class SingleProcessCollective final : public Collective
{
public:
  int                      Rank() const override { return 0; }
  int                      Size() const override { return 1; }
  void                     SumInPlace(std::uint32_t *, std::size_t) override {}
  void                     SumInPlace(std::int64_t *, std::size_t) override {}
  void                     MaxInPlace(std::int64_t *, std::size_t) override {}
  void                     BitwiseOrInPlace(std::uint32_t *, std::size_t) override {}
  void                     Broadcast(void *, std::size_t, int) override {}
  std::vector<std::string> GatherToRoot(const std::string & text, int) override { return { text }; }
};

} // namespace canopy
