// The device forest's executors and arrays (canopyDeviceStreamingForest.cxx): where the forest's
// arrays live and how a batch's steps run, on a CUDA device (canopyDeviceForestCuda.h) or as the
// kernels' host loops (HostEmulation).
#pragma once

#include "canopy/Errors.h"
#include "canopy/StreamingAdwinLaunch.h"
#include "canopy/StreamingForestGrow.h"
#include "canopy/StreamingForestLaunch.h"
#include "canopyDeviceStreamingForest.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

namespace canopy::streaming::detail
{

/** Where each part of a batch's staged block lies (bytes from its start, 16-byte aligned): one copy
 * sends the batch's first index, the trees' settings (P), the members' vote scales (M), the labels
 * and the instances (N x attributes). */
struct BatchBlockLayout
{
  std::size_t firstIndex = 0, info = 0, voteScale = 0, labels = 0, x = 0, bytes = 0;
};

inline std::size_t
AlignBlock(std::size_t bytes)
{
  return (bytes + 15) & ~std::size_t(15);
}

inline BatchBlockLayout
LayoutBatchBlock(std::size_t P, std::size_t M, std::size_t N, std::size_t attributes)
{
  BatchBlockLayout l;
  l.info = AlignBlock(sizeof(std::uint64_t));
  l.voteScale = AlignBlock(l.info + P * sizeof(StreamTreeInfo));
  l.labels = AlignBlock(l.voteScale + M * sizeof(double));
  l.x = AlignBlock(l.labels + N * sizeof(std::int32_t));
  l.bytes = AlignBlock(l.x + N * attributes * sizeof(float));
  return l;
}

/** Everything the fixed part of a batch (canopyDeviceStreamingForest.cxx's QueueBatch: the upload,
 * route, vote sums, results back, ADWIN step, sort, learn, split checks, grow step, sizes back) launches
 * with. Nothing else is read when it is queued, so two batches with equal plans (byte for byte) queue
 * the same launches and a CUDA graph captured from the first can be relaunched for the second: what
 * changes from batch to batch travels in the contents of the staged block and of the buffers. Kept in
 * one place and zeroed once, so that its padding stays the same. */
struct BatchPlan
{
  HoeffdingTreeShape   shape;
  StreamForestArrays   arrays;
  StreamBatchArgs      batch;
  void *               block = nullptr;       // the batch's inputs (first index, trees' settings, vote
  const void *         stagedBlock = nullptr; // scales, labels, instances) on the device, and staged
  std::size_t          blockBytes = 0;
  std::int64_t         count = 0; // learning keys (trees x instances)
  std::int32_t         keyBits = 32;
  std::int32_t         adwinOnDevice = 1;
  void *               sortScratch = nullptr;
  std::size_t          sortScratchBytes = 0;
  std::int32_t *       predictionsHost = nullptr;
  std::uint8_t *       correctHost = nullptr; // ADWIN on host threads: the members' results
  StreamAdwinArgs      adwin;
  AdwinMemberSummary * summariesHost = nullptr;
  std::uint8_t *       eventsHost = nullptr;
  std::int32_t         gracePeriod = 0;
  std::int32_t         stepTimes = 0;
  std::int32_t *       splitCount = nullptr;
  std::int32_t *       splitOfSlot = nullptr; // per (tree, slot): its split's index + 1, or 0
  HoeffdingSplit *     splits = nullptr;
  StreamTreeGrowth *   growth = nullptr;      // per tree: its sizes and draw counters (the grow step's)
  std::int32_t *       growScratch = nullptr;
  std::int32_t *       growOverflow = nullptr; // set when a tree's splits did not fit the arrays
  std::int32_t *       splitCountHost = nullptr; // back after the grow step: the batch's splits,
  StreamTreeGrowth *   growthHost = nullptr;     // the trees' sizes and the overflow flag
  std::int32_t *       growOverflowHost = nullptr;
};
static_assert(std::is_trivially_copyable_v<BatchPlan>, "plans are compared as bytes");

/** The plan a graph was captured from: a batch whose plan differs must be captured again. */
class PlanKey
{
public:
  bool Matches(const BatchPlan & plan) const
  {
    return m_Valid && std::memcmp(m_Bytes, &plan, sizeof(BatchPlan)) == 0;
  }
  void Remember(const BatchPlan & plan)
  {
    std::memcpy(m_Bytes, &plan, sizeof(BatchPlan));
    m_Valid = true;
  }
  void Forget() { m_Valid = false; }

private:
  unsigned char m_Bytes[sizeof(BatchPlan)] = {};
  bool          m_Valid = false;
};

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
  /** Marks the work queued so far (marks 0 to 2); WaitForMark(k) returns once the work before mark k
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
  /** Scratch for sorting count keys (allocated here: never while a batch is being captured). */
  virtual void * SortScratch(std::int64_t count, int keyBits, std::size_t & bytes) = 0;
  virtual void   SortKeys(const StreamBatchArgs & b,
                          std::int64_t            count,
                          int                     keyBits,
                          void *                  scratch,
                          std::size_t             scratchBytes) = 0;
  virtual void Learn(const HoeffdingTreeShape & s,
                     const StreamForestArrays & f,
                     const StreamBatchArgs &    b,
                     std::int64_t               count) = 0;
  virtual void SplitChecks(const HoeffdingTreeShape & s,
                           const StreamForestArrays & f,
                           const StreamTreeInfo *     info,
                           int                        gracePeriod,
                           std::int32_t *             count,
                           std::int32_t *             splitOfSlot,
                           HoeffdingSplit *           splits) = 0;
  /** The grow step (StreamingForestGrow.h): the splits applied in node order per tree. */
  virtual void GrowTrees(const HoeffdingTreeShape & s,
                         const StreamForestArrays & f,
                         const StreamTreeInfo *     info,
                         std::uint64_t              seed,
                         std::int32_t *             splitOfSlot,
                         const HoeffdingSplit *     splits,
                         StreamTreeGrowth *         growth,
                         std::int32_t *             scratch,
                         std::int32_t *             overflow) = 0;
  virtual void ApplyUpdates(const HoeffdingTreeShape & s,
                            const StreamForestArrays & f,
                            const StreamNodeWrite *    writes,
                            int                        writeCount,
                            const StreamSlotInit *     inits,
                            const std::int32_t *       subspaces,
                            int                        initCount) = 0;

  /** Runs the fixed part of a batch: `queue` queues it from `plan` alone. With graphs on, a batch
   * whose plan equals the captured one relaunches that capture (CUDA: one graph launch instead of every
   * call in `queue`). A plan is captured the second batch in a row it is seen: the first runs call by
   * call, so a one-off plan (a smaller last batch) costs no capture, and every kernel has run once
   * (its module loaded, CUB's first-call work done) before it is captured. The emulation has no graphs:
   * it runs `queue` each batch and counts the captures a CUDA executor would make. */
  void RunBatch(const BatchPlan & plan, const std::function<void()> & queue)
  {
    if (m_Graphs && m_Captured.Matches(plan))
    {
      Launch(queue);
      return;
    }
    if (m_Graphs && m_Seen.Matches(plan))
    {
      m_Captured.Forget(); // until the capture succeeds
      Capture(queue);
      m_Captured.Remember(plan);
      ++m_Captures;
      Launch(queue);
      return;
    }
    m_Seen.Remember(plan);
    queue();
  }
  void SetGraphs(bool on)
  {
    m_Graphs = on;
    m_Captured.Forget();
    m_Seen.Forget();
  }
  bool         Graphs() const { return m_Graphs; }
  std::int64_t Captures() const { return m_Captures; }
  /** CUDA: the last captured graph's nodes (the stream operations one launch replaces); 0 otherwise. */
  virtual std::int64_t GraphNodes() const { return 0; }

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
  /** Captures what `queue` queues (CUDA: into a graph, ready to launch); the emulation: nothing. */
  virtual void Capture(const std::function<void()> & queue) = 0;
  /** Runs the last capture (the emulation: `queue` itself). */
  virtual void Launch(const std::function<void()> & queue) = 0;
  bool         m_StepTimes = false;
  bool         m_Graphs = false;
  std::int64_t m_Calls = 0, m_Captures = 0;
  PlanKey      m_Captured, m_Seen; // the plan the graph holds; the last batch's run call by call
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
  void * SortScratch(std::int64_t, int, std::size_t & bytes) override
  {
    bytes = 0;
    return nullptr;
  }
  void SortKeys(const StreamBatchArgs & b, std::int64_t count, int, void *, std::size_t) override
  {
    host::StreamSortKeys(b, count);
  }
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
                   std::int32_t *             splitOfSlot,
                   HoeffdingSplit *           splits) override
  {
    host::StreamSplitChecks(s, f, info, gracePeriod, count, splitOfSlot, splits);
  }
  void GrowTrees(const HoeffdingTreeShape & s,
                 const StreamForestArrays & f,
                 const StreamTreeInfo *     info,
                 std::uint64_t              seed,
                 std::int32_t *             splitOfSlot,
                 const HoeffdingSplit *     splits,
                 StreamTreeGrowth *         growth,
                 std::int32_t *             scratch,
                 std::int32_t *             overflow) override
  {
    host::StreamGrowTrees(s, f, info, seed, splitOfSlot, splits, growth, scratch, overflow);
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
  void Capture(const std::function<void()> &) override {}
  void Launch(const std::function<void()> & queue) override { queue(); }
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
    if (step == DeviceForestStep::SizesBack)
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
  /** Reserve, growing to at least twice the capacity: for arrays whose size changes from batch to
   * batch (the updates), so that a run reallocates a few times, not at every new largest batch (a
   * device allocation or free waits for the device). */
  void ReserveGrowing(std::size_t count)
  {
    if (count > m_Count)
      Reserve(std::max(count, 2 * m_Count));
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
  /** Reserve, growing to at least twice the capacity (see Buffer::ReserveGrowing; a pinned host
   * allocation costs more still). */
  T * ReserveGrowing(std::size_t count) { return Reserve(count > m_Count ? std::max(count, 2 * m_Count) : count); }
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
