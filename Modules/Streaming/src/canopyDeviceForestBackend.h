// The device forest's executors and arrays (canopyDeviceStreamingForest.cxx): where the forest's
// arrays live and how a batch's steps run, on a CUDA device or as the kernels' host loops.
#pragma once

#include "canopy/Errors.h"
#include "canopy/StreamingAdwinLaunch.h"
#include "canopy/StreamingForestLaunch.h"

#if defined(CANOPY_HAVE_CUDA_RUNTIME)
#include "canopy/cuda/DeviceBuffer.h"
#endif

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
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
  virtual void Synchronize() = 0;

  /** The members' ADWIN step (StreamingAdwinLaunch.h) on the results of the work queued so far, then
   * its summaries (a.members) and events (a.members x a.eventCapacity) copied to summariesHost and
   * eventsHost (AllocateHost's memory). CUDA: on a stream of its own, so the work queued after it (sort,
   * learn, split checks) runs alongside; nothing queued after WaitForAdwin starts before it is done. */
  virtual void AdwinStep(const StreamAdwinArgs & a, AdwinMemberSummary * summariesHost, std::uint8_t * eventsHost) = 0;
  /** Returns once the last AdwinStep and its copies are done. */
  virtual void WaitForAdwin() = 0;
  /** Seconds the last AdwinStep took where it ran (CUDA: between events around the kernel, valid once
   * the work after it was waited for; the emulation: host wall time). */
  virtual double AdwinSeconds() = 0;
  virtual void RouteAndVote(const HoeffdingTreeShape & s, const StreamForestArrays & f, const StreamBatchArgs & b) = 0;
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
    const auto start = std::chrono::steady_clock::now();
    host::StreamAdwinStep(a);
    m_AdwinSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::memcpy(summariesHost, a.summaries, std::size_t(a.members) * sizeof(AdwinMemberSummary));
    std::memcpy(eventsHost, a.events, std::size_t(a.members) * std::size_t(a.eventCapacity));
  }
  void   WaitForAdwin() override {}
  double AdwinSeconds() override { return m_AdwinSeconds; }
  void   RouteAndVote(const HoeffdingTreeShape & s, const StreamForestArrays & f, const StreamBatchArgs & b) override
  {
    host::StreamRouteAndVote(s, f, b);
  }
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

private:
  double m_AdwinSeconds = 0.0;
};

#if defined(CANOPY_HAVE_CUDA_RUNTIME)
class CudaExecutor final : public Backend
{
public:
  explicit CudaExecutor(int device)
    : m_Device(device < 0 ? CurrentDevice() : device)
    , m_Scope(m_Device)
  {
    for (cudaEvent_t & e : m_Mark)
      CANOPY_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    for (cudaEvent_t * e : { &m_ResultsReady, &m_AdwinDone })
      CANOPY_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
    CANOPY_CUDA_CHECK(cudaEventCreate(&m_AdwinStart));
    CANOPY_CUDA_CHECK(cudaEventCreate(&m_AdwinStop));
    // ADWIN's stream at the highest priority: its warps are the batch's longest chain of dependent
    // steps, so its blocks should be placed before the learn step's fill the device.
    int least = 0, greatest = 0;
    CANOPY_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CANOPY_CUDA_CHECK(cudaStreamCreateWithPriority(&m_AdwinStream, cudaStreamNonBlocking, greatest));
  }
  ~CudaExecutor() override
  {
    if (m_AdwinStream)
    {
      cudaStreamSynchronize(m_AdwinStream);
      cudaStreamDestroy(m_AdwinStream);
    }
    for (cudaEvent_t e : m_Mark)
      cudaEventDestroy(e);
    for (cudaEvent_t e : { m_ResultsReady, m_AdwinDone, m_AdwinStart, m_AdwinStop })
      cudaEventDestroy(e);
  }
  CudaExecutor(const CudaExecutor &) = delete;
  CudaExecutor & operator=(const CudaExecutor &) = delete;
  void *         Allocate(std::size_t bytes) override
  {
    void *            p = nullptr;
    const cudaError_t status = cudaMalloc(&p, bytes);
    if (status == cudaErrorMemoryAllocation)
    {
      cudaGetLastError();
      std::size_t freeBytes = 0, totalBytes = 0;
      cudaMemGetInfo(&freeBytes, &totalBytes);
      ThrowDeviceOutOfMemory(bytes, freeBytes, m_Device, "streaming forest", __FILE__, __LINE__);
    }
    CANOPY_CUDA_CHECK(status);
    return p;
  }
  void   Free(void * p) override { cudaFree(p); }
  void * AllocateHost(std::size_t bytes) override
  {
    void * p = nullptr;
    CANOPY_CUDA_CHECK(cudaMallocHost(&p, bytes));
    std::memset(p, 0, bytes);
    return p;
  }
  void FreeHost(void * p) override { cudaFreeHost(p); }
  void Mark(int k) override { CANOPY_CUDA_CHECK(cudaEventRecord(m_Mark[k], m_Stream.get())); }
  void WaitForMark(int k) override { CANOPY_CUDA_CHECK(cudaEventSynchronize(m_Mark[k])); }
  void ToDevice(void * dst, const void * src, std::size_t bytes) override
  {
    CANOPY_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, m_Stream.get()));
  }
  void ToHost(void * dst, const void * src, std::size_t bytes) override
  {
    CANOPY_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, m_Stream.get()));
  }
  void Zero(void * dst, std::size_t bytes) override
  {
    CANOPY_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, m_Stream.get()));
  }
  void Copy2D(void *       dst,
              std::size_t  dpitch,
              const void * src,
              std::size_t  spitch,
              std::size_t  width,
              std::size_t  height) override
  {
    CANOPY_CUDA_CHECK(
      cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, cudaMemcpyDeviceToDevice, m_Stream.get()));
  }
  void Synchronize() override
  {
    CANOPY_CUDA_CHECK(cudaStreamSynchronize(m_AdwinStream));
    m_Stream.Synchronize();
  }
  void AdwinStep(const StreamAdwinArgs & a, AdwinMemberSummary * summariesHost, std::uint8_t * eventsHost) override
  {
    // The step reads the members' results (route and vote, queued before) and writes only the members'
    // state, scratch, events and summaries, which nothing on the main stream touches until WaitForAdwin.
    CANOPY_CUDA_CHECK(cudaEventRecord(m_ResultsReady, m_Stream.get()));
    CANOPY_CUDA_CHECK(cudaStreamWaitEvent(m_AdwinStream, m_ResultsReady, 0));
    CANOPY_CUDA_CHECK(cudaEventRecord(m_AdwinStart, m_AdwinStream));
    cuda::LaunchStreamAdwinStep(a, m_AdwinStream);
    CANOPY_CUDA_CHECK(cudaEventRecord(m_AdwinStop, m_AdwinStream));
    CANOPY_CUDA_CHECK(cudaMemcpyAsync(summariesHost,
                                      a.summaries,
                                      std::size_t(a.members) * sizeof(AdwinMemberSummary),
                                      cudaMemcpyDeviceToHost,
                                      m_AdwinStream));
    CANOPY_CUDA_CHECK(cudaMemcpyAsync(eventsHost,
                                      a.events,
                                      std::size_t(a.members) * std::size_t(a.eventCapacity),
                                      cudaMemcpyDeviceToHost,
                                      m_AdwinStream));
    CANOPY_CUDA_CHECK(cudaEventRecord(m_AdwinDone, m_AdwinStream));
  }
  void WaitForAdwin() override
  {
    CANOPY_CUDA_CHECK(cudaEventSynchronize(m_AdwinDone));
    // Work queued from here on (the next batch's results, a state's upload) follows the step on the
    // device too, not only on the host.
    CANOPY_CUDA_CHECK(cudaStreamWaitEvent(m_Stream.get(), m_AdwinDone, 0));
  }
  double AdwinSeconds() override
  {
    CANOPY_CUDA_CHECK(cudaEventSynchronize(m_AdwinStop));
    float ms = 0.0f;
    CANOPY_CUDA_CHECK(cudaEventElapsedTime(&ms, m_AdwinStart, m_AdwinStop));
    return 1e-3 * double(ms);
  }
  void RouteAndVote(const HoeffdingTreeShape & s, const StreamForestArrays & f, const StreamBatchArgs & b) override
  {
    cuda::LaunchStreamRouteAndVote(s, f, b, m_Stream.get());
  }
  void SortKeys(const StreamBatchArgs & b, std::int64_t count, int keyBits) override
  {
    const std::size_t bytes = cuda::StreamSortScratchBytes(count, keyBits);
    if (bytes > m_SortScratch.size())
      m_SortScratch.Allocate(bytes, "streaming forest sort scratch");
    cuda::LaunchStreamSortKeys(b, count, keyBits, m_SortScratch.data(), m_SortScratch.size(), m_Stream.get());
  }
  void Learn(const HoeffdingTreeShape & s,
             const StreamForestArrays & f,
             const StreamBatchArgs &    b,
             std::int64_t               count) override
  {
    cuda::LaunchStreamLearn(s, f, b, count, m_Stream.get());
  }
  void SplitChecks(const HoeffdingTreeShape & s,
                   const StreamForestArrays & f,
                   const StreamTreeInfo *     info,
                   int                        gracePeriod,
                   std::int32_t *             count,
                   std::uint32_t *            keys,
                   HoeffdingSplit *           splits) override
  {
    cuda::LaunchStreamSplitChecks(s, f, info, gracePeriod, count, keys, splits, m_Stream.get());
  }
  void ApplyUpdates(const HoeffdingTreeShape & s,
                    const StreamForestArrays & f,
                    const StreamNodeWrite *    writes,
                    int                        writeCount,
                    const StreamSlotInit *     inits,
                    const std::int32_t *       subspaces,
                    int                        initCount) override
  {
    cuda::LaunchStreamApplyUpdates(s, f, writes, writeCount, inits, subspaces, initCount, m_Stream.get());
  }

private:
  static int CurrentDevice()
  {
    int d = 0;
    CANOPY_CUDA_CHECK(cudaGetDevice(&d));
    return d;
  }
  int                              m_Device;
  cuda::ScopedDevice               m_Scope; // the forest's calls all come from its owner's thread
  cuda::Stream                     m_Stream;
  cuda::DeviceBuffer<std::uint8_t> m_SortScratch;
  cudaEvent_t                      m_Mark[2] = { nullptr, nullptr };
  cudaEvent_t                      m_AdwinStart = nullptr, m_AdwinStop = nullptr;
  cudaEvent_t                      m_ResultsReady = nullptr, m_AdwinDone = nullptr;
  cudaStream_t                     m_AdwinStream = nullptr; // the ADWIN step's (AdwinStep)
};
#endif

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
