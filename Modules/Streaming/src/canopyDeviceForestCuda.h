// The device forest's CUDA executor (canopyDeviceForestBackend.h's Backend on a GPU): one stream for
// the batch's steps, a second, high-priority one for the members' ADWIN step, events marking where the
// host may read what came back, and (SetStepTimes) timing events around each step.
#pragma once

#include "canopyDeviceForestBackend.h"

#include "canopy/cuda/DeviceBuffer.h"

namespace canopy::streaming::detail
{

class CudaExecutor final : public Backend
{
public:
  explicit CudaExecutor(int device)
    : m_Device(device < 0 ? CurrentDevice() : device)
    , m_Scope(m_Device)
  {
    for (cudaEvent_t & e : m_Mark)
      CANOPY_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    for (cudaEvent_t * e : { &m_ResultsReady, &m_AdwinDone, &m_AdwinJoined })
      CANOPY_CUDA_CHECK(cudaEventCreateWithFlags(e, cudaEventDisableTiming));
    for (auto & pair : m_StepEvents)
      for (cudaEvent_t & e : pair)
        CANOPY_CUDA_CHECK(cudaEventCreate(&e));
    // ADWIN's stream at the highest priority: its step is the batch's longest chain of dependent
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
    for (cudaEvent_t e : { m_ResultsReady, m_AdwinDone, m_AdwinJoined })
      cudaEventDestroy(e);
    for (auto & pair : m_StepEvents)
      for (cudaEvent_t e : pair)
        cudaEventDestroy(e);
    if (m_Graph)
      cudaGraphExecDestroy(m_Graph);
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
  void Mark(int k) override { Record(m_Mark[k], m_Stream.get(), true); }
  void WaitForMark(int k) override
  {
    ++m_Calls;
    CANOPY_CUDA_CHECK(cudaEventSynchronize(m_Mark[k]));
  }
  void ToDevice(void * dst, const void * src, std::size_t bytes) override
  {
    ++m_Calls;
    CANOPY_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, m_Stream.get()));
  }
  void ToHost(void * dst, const void * src, std::size_t bytes) override
  {
    ++m_Calls;
    CANOPY_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, m_Stream.get()));
  }
  void Zero(void * dst, std::size_t bytes) override
  {
    ++m_Calls;
    CANOPY_CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, m_Stream.get()));
  }
  void Copy2D(void *       dst,
              std::size_t  dpitch,
              const void * src,
              std::size_t  spitch,
              std::size_t  width,
              std::size_t  height) override
  {
    ++m_Calls;
    CANOPY_CUDA_CHECK(
      cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, cudaMemcpyDeviceToDevice, m_Stream.get()));
  }
  void Synchronize() override
  {
    // The ADWIN stream's work is joined into the main stream at the batch's end (JoinAdwin), so the
    // main stream's completion covers it; a step not joined (a batch cut short by an error between
    // the two) is waited for on its own stream.
    if (m_AdwinPending)
    {
      ++m_Calls;
      CANOPY_CUDA_CHECK(cudaStreamSynchronize(m_AdwinStream));
    }
    ++m_Calls;
    m_Stream.Synchronize();
  }
  void AdwinStep(const StreamAdwinArgs & a, AdwinMemberSummary * summariesHost, std::uint8_t * eventsHost) override
  {
    // The step reads the members' results (route and vote, queued before) and writes only the members'
    // state, scratch, events and summaries, which nothing on the main stream touches before JoinAdwin.
    Record(m_ResultsReady, m_Stream.get(), false);
    ++m_Calls;
    CANOPY_CUDA_CHECK(cudaStreamWaitEvent(m_AdwinStream, m_ResultsReady, 0));
    BeginStep(DeviceForestStep::Adwin);
    ++m_Calls;
    cuda::LaunchStreamAdwinStep(a, m_AdwinStream);
    m_Calls += 2;
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
    EndStep(DeviceForestStep::Adwin);
    Record(m_AdwinDone, m_AdwinStream, true);
    m_AdwinPending = true;
  }
  void JoinAdwin() override
  {
    // Work queued from here on (the updates, the next batch's results, a state's upload) follows the
    // step on the device too, not only on the host.
    if (!m_AdwinPending)
      return;
    Record(m_AdwinJoined, m_AdwinStream, false);
    ++m_Calls;
    CANOPY_CUDA_CHECK(cudaStreamWaitEvent(m_Stream.get(), m_AdwinJoined, 0));
    m_AdwinPending = false;
  }
  void WaitForAdwin() override
  {
    ++m_Calls;
    CANOPY_CUDA_CHECK(cudaEventSynchronize(m_AdwinDone));
  }
  void Route(const HoeffdingTreeShape & s, const StreamForestArrays & f, const StreamBatchArgs & b) override
  {
    ++m_Calls;
    cuda::LaunchStreamRoute(s, f, b, m_Stream.get());
  }
  void SumVotes(const HoeffdingTreeShape & s, const StreamBatchArgs & b) override
  {
    ++m_Calls;
    cuda::LaunchStreamSumVotes(s, b, m_Stream.get());
  }
  void * SortScratch(std::int64_t count, int keyBits, std::size_t & bytes) override
  {
    if (count != m_SortCount) // CUB's size query is host work: once per batch size
    {
      const std::size_t needed = cuda::StreamSortScratchBytes(count, keyBits);
      if (needed > m_SortScratch.size())
        m_SortScratch.Allocate(needed, "streaming forest sort scratch");
      m_SortCount = count;
    }
    bytes = m_SortScratch.size();
    return m_SortScratch.data();
  }
  void SortKeys(const StreamBatchArgs & b,
                std::int64_t            count,
                int                     keyBits,
                void *                  scratch,
                std::size_t             scratchBytes) override
  {
    ++m_Calls;
    cuda::LaunchStreamSortKeys(b, count, keyBits, scratch, scratchBytes, m_Stream.get());
  }
  void Learn(const HoeffdingTreeShape & s,
             const StreamForestArrays & f,
             const StreamBatchArgs &    b,
             std::int64_t               count) override
  {
    ++m_Calls;
    cuda::LaunchStreamLearn(s, f, b, count, m_Stream.get());
  }
  void SplitChecks(const HoeffdingTreeShape & s,
                   const StreamForestArrays & f,
                   const StreamTreeInfo *     info,
                   int                        gracePeriod,
                   std::int32_t *             count,
                   std::int32_t *             splitOfSlot,
                   HoeffdingSplit *           splits) override
  {
    m_Calls += 2; // the count's memset, the kernel
    cuda::LaunchStreamSplitChecks(s, f, info, gracePeriod, count, splitOfSlot, splits, m_Stream.get());
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
    ++m_Calls;
    cuda::LaunchStreamGrowTrees(s, f, info, seed, splitOfSlot, splits, growth, scratch, overflow, m_Stream.get());
  }
  void ApplyUpdates(const HoeffdingTreeShape & s,
                    const StreamForestArrays & f,
                    const StreamNodeWrite *    writes,
                    int                        writeCount,
                    const StreamSlotInit *     inits,
                    const std::int32_t *       subspaces,
                    int                        initCount) override
  {
    m_Calls += cuda::LaunchStreamApplyUpdates(s, f, writes, writeCount, inits, subspaces, initCount, m_Stream.get());
  }
  std::int64_t GraphNodes() const override { return m_GraphNodes; }
  /** The steps' times between their events (each step's pair recorded since the last call). */
  void CollectSteps(DeviceForestTimings & t) override
  {
    for (int k = 0; k < kDeviceForestSteps; ++k)
      if (m_Recorded.step[k])
        t.stepSeconds[k] += Elapsed(m_StepEvents[k][0], m_StepEvents[k][1]);
    const int upload = int(DeviceForestStep::Upload), back = int(DeviceForestStep::SizesBack);
    if (m_Recorded.spanStart && m_Recorded.spanEnd)
      t.stepSpan += Elapsed(m_StepEvents[upload][0], m_StepEvents[back][1]);
    m_Recorded = StepFlags{};
  }

private:
  static int CurrentDevice()
  {
    int d = 0;
    CANOPY_CUDA_CHECK(cudaGetDevice(&d));
    return d;
  }
  /** Records e on stream. hostVisible: the host waits for it or times with it; inside a stream capture
   * such an event becomes an event record node of the graph (cudaEventRecordExternal), so the host can
   * wait on it after each launch; the others only order streams (a capture's fork and join). */
  void Record(cudaEvent_t e, cudaStream_t stream, bool hostVisible)
  {
    ++m_Calls;
    if (hostVisible && m_Capturing)
      CANOPY_CUDA_CHECK(cudaEventRecordWithFlags(e, stream, cudaEventRecordExternal));
    else
      CANOPY_CUDA_CHECK(cudaEventRecord(e, stream));
  }
  void RecordStep(DeviceForestStep step, bool end) override
  {
    const int k = int(step);
    Record(m_StepEvents[k][end ? 1 : 0], step == DeviceForestStep::Adwin ? m_AdwinStream : m_Stream.get(), true);
    // A captured step is recorded by each launch of the graph, not now (Launch marks it).
    StepFlags & flags = m_Capturing ? m_GraphSteps : m_Recorded;
    if (end)
      flags.step[k] = true;
    if (step == DeviceForestStep::Upload && !end)
      flags.spanStart = true;
    if (step == DeviceForestStep::SizesBack && end)
      flags.spanEnd = true;
  }
  void Capture(const std::function<void()> & queue) override
  {
    // Thread-local mode: the forest's thread makes no call that would break the capture (everything a
    // batch allocates is allocated before), and other threads' CUDA calls are not restricted.
    ++m_Calls;
    CANOPY_CUDA_CHECK(cudaStreamBeginCapture(m_Stream.get(), cudaStreamCaptureModeThreadLocal));
    m_Capturing = true;
    m_GraphSteps = StepFlags{};
    cudaGraph_t graph = nullptr;
    try
    {
      queue();
    }
    catch (...)
    {
      m_Capturing = false;
      m_AdwinPending = false; // nothing of the capture was queued
      cudaStreamEndCapture(m_Stream.get(), &graph); // ends the (invalidated) capture
      if (graph)
        cudaGraphDestroy(graph);
      cudaGetLastError();
      throw;
    }
    m_Capturing = false;
    ++m_Calls;
    CANOPY_CUDA_CHECK(cudaStreamEndCapture(m_Stream.get(), &graph));
    struct Owned
    {
      cudaGraph_t g;
      ~Owned() { cudaGraphDestroy(g); }
    } owned{ graph };
    std::size_t nodes = 0;
    CANOPY_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
    m_GraphNodes = std::int64_t(nodes);
    // Instantiated afresh each capture (a few per stream): cudaGraphExecUpdate would save little and
    // reports an API error whenever the shape changed (CUB's sort choosing other kernels), which
    // compute-sanitizer counts. Node priorities: the ADWIN step's kernel keeps its stream's priority.
    if (m_Graph)
    {
      ++m_Calls;
      CANOPY_CUDA_CHECK(cudaGraphExecDestroy(m_Graph));
      m_Graph = nullptr;
    }
    ++m_Calls;
    CANOPY_CUDA_CHECK(cudaGraphInstantiateWithFlags(&m_Graph, graph, cudaGraphInstantiateFlagUseNodePriority));
  }
  void Launch(const std::function<void()> &) override
  {
    ++m_Calls;
    CANOPY_CUDA_CHECK(cudaGraphLaunch(m_Graph, m_Stream.get()));
    for (int k = 0; k < kDeviceForestSteps; ++k)
      m_Recorded.step[k] = m_Recorded.step[k] || m_GraphSteps.step[k];
    m_Recorded.spanStart = m_Recorded.spanStart || m_GraphSteps.spanStart;
    m_Recorded.spanEnd = m_Recorded.spanEnd || m_GraphSteps.spanEnd;
  }
  double Elapsed(cudaEvent_t from, cudaEvent_t to)
  {
    float ms = 0.0f;
    ++m_Calls;
    CANOPY_CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
    return 1e-3 * double(ms);
  }

  int                              m_Device;
  cuda::ScopedDevice               m_Scope; // the forest's calls all come from its owner's thread
  cuda::Stream                     m_Stream;
  cuda::DeviceBuffer<std::uint8_t> m_SortScratch;
  std::int64_t                     m_SortCount = -1; // the keys m_SortScratch was last sized for
  cudaEvent_t                      m_Mark[3] = { nullptr, nullptr, nullptr };
  cudaEvent_t                      m_ResultsReady = nullptr, m_AdwinDone = nullptr, m_AdwinJoined = nullptr;
  cudaStream_t                     m_AdwinStream = nullptr; // the ADWIN step's (AdwinStep)
  bool                             m_AdwinPending = false;  // an AdwinStep not yet joined
  bool                             m_Capturing = false;     // a batch being captured into a graph
  cudaEvent_t                      m_StepEvents[kDeviceForestSteps][2] = {};
  /** Which steps' events were recorded: since the last CollectSteps, and by each launch of the graph. */
  struct StepFlags
  {
    bool step[kDeviceForestSteps] = {};
    bool spanStart = false, spanEnd = false;
  };
  StepFlags       m_Recorded, m_GraphSteps;
  cudaGraphExec_t m_Graph = nullptr; // the captured batch (Capture)
  std::int64_t    m_GraphNodes = 0;
};

} // namespace canopy::streaming::detail
