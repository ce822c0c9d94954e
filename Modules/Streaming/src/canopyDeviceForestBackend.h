// The device forest's executors and arrays (canopyDeviceStreamingForest.cxx): where the forest's
// arrays live and how a batch's steps run, on a CUDA device (canopyDeviceForestCuda.h) or as the
// kernels' host loops (HostEmulation).
#pragma once

#include "canopy/Errors.h"
#include "canopy/StreamingAdwinLaunch.h"
#include "canopy/StreamingForestLaunch.h"
#include "canopyDeviceStreamingForest.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace canopy::streaming::detail
{

/** Where the forest's arrays live and how the batch steps run: device memory and kernels, or host
 * memory and the kernels' host loops. */
class Backend
{
public:
  virtual ~Backend() = default;
  virtual void * Allocate(std::size_t bytes) = 0;
  virtual void   Free(void * p) = 0;
  /** Host memory the executor copies from and to without staging (pinned for CUDA): such copies are
   * asynchronous and do not wait for the stream's earlier work first. */
  virtual void * AllocateHost(std::size_t bytes) = 0;
  virtual void   FreeHost(void * p) = 0;
  /** Marks the work queued so far (marks 0 and 1); WaitForMark(k) returns once the work before mark k
   * is done, while later work runs on. */
  virtual void Mark(int k) = 0;
  virtual void WaitForMark(int k) = 0;
  virtual void ToDevice(void * dst, const void * src, std::size_t bytes) = 0;
  virtual void ToHost(void * dst, const void * src, std::size_t bytes) = 0; // ordered; done after Synchronize
  virtual void Zero(void * dst, std::size_t bytes) = 0;
  /** height rows of width bytes, from src (pitch spitch) to dst (pitch dpitch). */
  virtual void Copy2D(void *       dst,
                      std::size_t  dpitch,
                      const void * src,
                      std::size_t  spitch,
                      std::size_t  width,
                      std::size_t  height) = 0;
  /** Returns once everything queued is done (the ADWIN step's stream included). */
  virtual void Synchronize() = 0;

  /** The members' ADWIN step (StreamingAdwinLaunch.h) on the results of the work queued so far, then
   * its summaries (a.members) and events (a.members x a.eventCapacity) copied to summariesHost and
   * eventsHost (AllocateHost's memory). CUDA: on a stream of its own, so the work queued after it (sort,
   * learn, split checks) runs alongside, until JoinAdwin. */
  virtual void AdwinStep(const StreamAdwinArgs & a, AdwinMemberSummary * summariesHost, std::uint8_t * eventsHost) = 0;
  /** Work queued from here on follows the last AdwinStep on the device too (the batch's end). */
  virtual void JoinAdwin() = 0;
  /** Returns once the last AdwinStep and its copies are done. */
  virtual void WaitForAdwin() = 0;
  virtual void Route(const HoeffdingTreeShape & s, const StreamForestArrays & f, const StreamBatchArgs & b) = 0;
  virtual void SumVotes(const HoeffdingTreeShape & s, const StreamBatchArgs & b) = 0;
  virtual void SortKeys(const StreamBatchArgs & b, std::int64_t count, int keyBits) = 0;
  virtual void Learn(const HoeffdingTreeShape & s,
                     const StreamForestArrays & f,
                     const StreamBatchArgs &    b,
                     std::int64_t               count) = 0;
  virtual void SplitChecks(const HoeffdingTreeShape & s,
                           const StreamForestArrays & f,
                           const StreamTreeInfo *     info,
                           int                        gracePeriod,
                           std::int32_t *             count,
                           std::uint32_t *            keys,
                           HoeffdingSplit *           splits) = 0;
  virtual void ApplyUpdates(const HoeffdingTreeShape & s,
                            const StreamForestArrays & f,
                            const StreamNodeWrite *    writes,
                            int                        writeCount,
                            const StreamSlotInit *     inits,
                            const std::int32_t *       subspaces,
                            int                        initCount) = 0;

  /** Step times (DeviceForestTimings::stepSeconds): off, BeginStep and EndStep cost a branch. */
  void SetStepTimes(bool on) { m_StepTimes = on; }
  bool StepTimes() const { return m_StepTimes; }
  void BeginStep(DeviceForestStep step)
  {
    if (m_StepTimes)
      RecordStep(step, false);
  }
  void EndStep(DeviceForestStep step)
  {
    if (m_StepTimes)
      RecordStep(step, true);
  }
  /** Adds the steps timed since the last call to t (call after Synchronize: their work is done). */
  virtual void CollectSteps(DeviceForestTimings & t) = 0;
  /** The runtime calls made since the last call (DeviceForestTimings::apiCalls). */
  std::int64_t TakeCalls() { return std::exchange(m_Calls, 0); }

protected:
  virtual void RecordStep(DeviceForestStep step, bool end) = 0;
  bool         m_StepTimes = false;
  std::int64_t m_Calls = 0;
};

class HostEmulation final : public Backend
{
public:
  void * Allocate(std::size_t bytes) override
  {
    void * p = std::calloc(bytes, 1);
    if (!p)
      CANOPY_THROW("streaming forest (host emulation): out of memory allocating " << bytes << " bytes");
    return p;
  }
  void   Free(void * p) override { std::free(p); }
  void * AllocateHost(std::size_t bytes) override { return Allocate(bytes); }
  void   FreeHost(void * p) override { std::free(p); }
  void   Mark(int) override {}
  void   WaitForMark(int) override {}
  void   ToDevice(void * dst, const void * src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void   ToHost(void * dst, const void * src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void   Zero(void * dst, std::size_t bytes) override { std::memset(dst, 0, bytes); }
  void   Copy2D(void *       dst,
                std::size_t  dpitch,
                const void * src,
                std::size_t  spitch,
                std::size_t  width,
                std::size_t  height) override
  {
    for (std::size_t r = 0; r < height; ++r)
      std::memcpy(static_cast<char *>(dst) + r * dpitch, static_cast<const char *>(src) + r * spitch, width);
  }
  void Synchronize() override {}
  void AdwinStep(const StreamAdwinArgs & a, AdwinMemberSummary * summariesHost, std::uint8_t * eventsHost) override
  {
    BeginStep(DeviceForestStep::Adwin);
    host::StreamAdwinStep(a);
    std::memcpy(summariesHost, a.summaries, std::size_t(a.members) * sizeof(AdwinMemberSummary));
    std::memcpy(eventsHost, a.events, std::size_t(a.members) * std::size_t(a.eventCapacity));
    EndStep(DeviceForestStep::Adwin);
  }
  void JoinAdwin() override {}
  void WaitForAdwin() override {}
  void Route(const HoeffdingTreeShape & s, const StreamForestArrays & f, const StreamBatchArgs & b) override
  {
    host::StreamRoute(s, f, b);
  }
  void SumVotes(const HoeffdingTreeShape & s, const StreamBatchArgs & b) override { host::StreamSumVotes(s, b); }
  void SortKeys(const StreamBatchArgs & b, std::int64_t count, int) override { host::StreamSortKeys(b, count); }
  void Learn(const HoeffdingTreeShape & s,
             const StreamForestArrays & f,
             const StreamBatchArgs &    b,
             std::int64_t               count) override
  {
    host::StreamLearn(s, f, b, count);
  }
  void SplitChecks(const HoeffdingTreeShape & s,
                   const StreamForestArrays & f,
                   const StreamTreeInfo *     info,
                   int                        gracePeriod,
                   std::int32_t *             count,
                   std::uint32_t *            keys,
                   HoeffdingSplit *           splits) override
  {
    host::StreamSplitChecks(s, f, info, gracePeriod, count, keys, splits);
  }
  void ApplyUpdates(const HoeffdingTreeShape & s,
                    const StreamForestArrays & f,
                    const StreamNodeWrite *    writes,
                    int                        writeCount,
                    const StreamSlotInit *     inits,
                    const std::int32_t *       subspaces,
                    int                        initCount) override
  {
    host::StreamApplyUpdates(s, f, writes, writeCount, inits, subspaces, initCount);
  }
  /** Host wall time of each step's loops (the emulation's, not a device's). */
  void CollectSteps(DeviceForestTimings & t) override
  {
    for (int k = 0; k < kDeviceForestSteps; ++k)
      t.stepSeconds[k] += std::exchange(m_Seconds[k], 0.0);
    t.stepSpan += std::exchange(m_Span, 0.0);
  }

private:
  using Clock = std::chrono::steady_clock;
  void RecordStep(DeviceForestStep step, bool end) override
  {
    const int k = int(step);
    const auto now = Clock::now();
    if (!end)
    {
      m_Start[k] = now;
      return;
    }
    const double seconds = std::chrono::duration<double>(now - m_Start[k]).count();
    m_Seconds[k] += seconds;
    if (step == DeviceForestStep::SplitsBack)
      m_Span += std::chrono::duration<double>(now - m_Start[int(DeviceForestStep::Upload)]).count();
  }
  Clock::time_point m_Start[kDeviceForestSteps] = {};
  double            m_Seconds[kDeviceForestSteps] = {};
  double            m_Span = 0.0;
};

/** An array in the executor's memory. */
template<typename T>
class Buffer
{
public:
  explicit Buffer(Backend * e = nullptr)
    : m_Executor(e)
  {
  }
  ~Buffer() { Release(); }
  Buffer(const Buffer &) = delete;
  Buffer & operator=(const Buffer &) = delete;

  void Bind(Backend * e) { m_Executor = e; }
  /** Holds at least count elements; the contents are lost when it grows (then zeroed). */
  void Reserve(std::size_t count)
  {
    if (count <= m_Count)
      return;
    Release();
    m_Data = static_cast<T *>(m_Executor->Allocate(count * sizeof(T)));
    m_Count = count;
    m_Executor->Zero(m_Data, count * sizeof(T));
  }
  /** Per-tree blocks of oldPer elements become blocks of newPer (trees blocks; contents kept). */
  void GrowBlocks(std::size_t trees, std::size_t oldPer, std::size_t newPer)
  {
    T * grown = static_cast<T *>(m_Executor->Allocate(trees * newPer * sizeof(T)));
    m_Executor->Zero(grown, trees * newPer * sizeof(T));
    if (m_Data && oldPer > 0)
      m_Executor->Copy2D(grown, newPer * sizeof(T), m_Data, oldPer * sizeof(T), oldPer * sizeof(T), trees);
    Release();
    m_Data = grown;
    m_Count = trees * newPer;
  }
  void Upload(const std::vector<T> & v)
  {
    Reserve(v.size());
    if (!v.empty())
      m_Executor->ToDevice(m_Data, v.data(), v.size() * sizeof(T));
  }
  void Upload(const T * v, std::size_t count)
  {
    Reserve(count);
    if (count > 0)
      m_Executor->ToDevice(m_Data, v, count * sizeof(T));
  }
  void Download(T * v, std::size_t count) const
  {
    if (count > 0)
      m_Executor->ToHost(v, m_Data, count * sizeof(T));
  }
  void Download(std::vector<T> & v, std::size_t count) const
  {
    v.resize(count);
    if (count > 0)
      m_Executor->ToHost(v.data(), m_Data, count * sizeof(T));
  }
  T * data() const { return m_Data; }

private:
  void Release()
  {
    if (m_Data)
      m_Executor->Free(m_Data);
    m_Data = nullptr;
    m_Count = 0;
  }
  Backend *   m_Executor = nullptr;
  T *         m_Data = nullptr;
  std::size_t m_Count = 0;
};

/** A host array the executor copies without staging (HostEmulation: plain memory; CUDA: pinned), kept
 * from batch to batch so that a batch allocates nothing. Growing loses the contents. */
template<typename T>
class HostArray
{
public:
  ~HostArray() { Release(); }
  void Bind(Backend * e) { m_Executor = e; }
  T *  Reserve(std::size_t count)
  {
    if (count > m_Count)
    {
      Release();
      const std::size_t grown = std::max<std::size_t>(count, 64);
      m_Data = static_cast<T *>(m_Executor->AllocateHost(grown * sizeof(T)));
      m_Count = grown;
    }
    return m_Data;
  }
  /** Copies v into the array (grown as needed) and returns it. */
  const T * Stage(const std::vector<T> & v)
  {
    T * d = Reserve(v.size());
    std::copy(v.begin(), v.end(), d);
    return d;
  }
  T * data() const { return m_Data; }

private:
  void Release()
  {
    if (m_Data)
      m_Executor->FreeHost(m_Data);
    m_Data = nullptr;
    m_Count = 0;
  }
  Backend *   m_Executor = nullptr;
  T *         m_Data = nullptr;
  std::size_t m_Count = 0;
};

} // namespace canopy::streaming::detail
