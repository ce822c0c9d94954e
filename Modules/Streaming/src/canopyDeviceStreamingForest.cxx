#include "canopyDeviceStreamingForest.h"

#include "canopy/Errors.h"
#include "canopy/StreamingForestLaunch.h"
#include "canopyTreeParallel.h"

#if defined(CANOPY_HAVE_CUDA_RUNTIME)
#include "canopy/cuda/DeviceBuffer.h"
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace canopy::streaming
{
namespace
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
  /** Marks the work queued so far; WaitForMark() returns once it is done, while later work runs on. */
  virtual void Mark() = 0;
  virtual void WaitForMark() = 0;
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
  void   Mark() override {}
  void   WaitForMark() override {}
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
  void RouteAndVote(const HoeffdingTreeShape & s, const StreamForestArrays & f, const StreamBatchArgs & b) override
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
};

#if defined(CANOPY_HAVE_CUDA_RUNTIME)
class CudaExecutor final : public Backend
{
public:
  explicit CudaExecutor(int device)
    : m_Device(device < 0 ? CurrentDevice() : device)
    , m_Scope(m_Device)
  {
    CANOPY_CUDA_CHECK(cudaEventCreateWithFlags(&m_Mark, cudaEventDisableTiming));
  }
  ~CudaExecutor() override { cudaEventDestroy(m_Mark); }
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
  void Mark() override { CANOPY_CUDA_CHECK(cudaEventRecord(m_Mark, m_Stream.get())); }
  void WaitForMark() override { CANOPY_CUDA_CHECK(cudaEventSynchronize(m_Mark)); }
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
  void Synchronize() override { m_Stream.Synchronize(); }
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
  cudaEvent_t                      m_Mark = nullptr;
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

/** The host's copy of a physical tree's structure: enough to apply splits and resets. */
struct TreeMirror
{
  bool                      active = false;
  std::uint64_t             streamKey = 0, leavesCreated = 0;
  HoeffdingTreeNodes        nodes;
  std::vector<std::int32_t> slotNode, slotDepth; // per slot: its leaf node, its depth
};

} // namespace

bool
CudaStreamingForestCompiledIn()
{
#if defined(CANOPY_HAVE_CUDA_RUNTIME)
  return true;
#else
  return false;
#endif
}

struct DeviceStreamingForest::Impl
{
  std::unique_ptr<Backend>         executor; // first: destroyed after the buffers that free through it
  StreamingForestOptions           options;
  HoeffdingTreeOptions             treeOptions;
  StreamSchema                     shapeSchema; // for checking restored trees
  int                              members = 0, trees = 0, classes = 0, attributes = 0;
  std::vector<std::int32_t>        values, offset; // host copies of the shape's arrays
  HoeffdingTreeShape               shape;          // pointers into device memory
  StreamForestArrays               arrays;
  std::vector<ForestMemberMonitor> monitors;
  std::vector<int>                 mainOf; // member t's voting tree: 2t + mainOf[t]
  std::vector<TreeMirror>          mirror; // per physical tree
  DeviceForestTimings              timings;

  Buffer<std::int32_t>      dValues, dOffset;
  Buffer<std::int32_t>      attribute, child, missingBranch, subspace, slotDepth;
  Buffer<float>             threshold;
  Buffer<std::uint32_t>     classCounts, nominalCounts, weight, weightAtLastCheck, majorityCorrect, bayesCorrect;
  Buffer<std::uint32_t>     childCounts;
  Buffer<GaussianEstimator> gaussians;
  // Batch scratch.
  Buffer<float>           x;
  Buffer<std::int32_t>    labels, leaf, predictions, splitCount;
  Buffer<std::uint8_t>    score, correct;
  Buffer<std::uint32_t>   bagWeight, keys, order, sortedKeys, sortedOrder, splitKeys;
  Buffer<double>          votes, voteScale;
  Buffer<StreamTreeInfo>  info;
  Buffer<HoeffdingSplit>  splits;
  Buffer<StreamNodeWrite> writes;
  Buffer<StreamSlotInit>  inits;
  Buffer<std::int32_t>    initSubspaces;

  // The host step's pending updates.
  std::vector<StreamNodeWrite> pendingWrites;
  std::vector<StreamSlotInit>  pendingInits;
  std::vector<std::int32_t>    pendingSubspaces;
  // Host copies of a batch's results.
  std::vector<std::uint32_t>  hostSplitKeys;
  std::vector<HoeffdingSplit> hostSplits;
  // The host's per-batch arrays, kept so that a batch allocates nothing: what is sent (staged in
  // memory the executor copies without waiting for the stream), what comes back, and the host steps'.
  HostArray<float>                       stagedX;
  HostArray<std::int32_t>                stagedLabels, pinnedPredictions, pinnedCount, stagedSubspaces;
  HostArray<StreamTreeInfo>              stagedInfo;
  HostArray<double>                      stagedVoteScale;
  HostArray<std::uint8_t>                pinnedCorrect;
  HostArray<StreamNodeWrite>             stagedWrites;
  HostArray<StreamSlotInit>              stagedInits;
  HostArray<std::uint32_t>               pinnedSplitKeys;
  HostArray<HoeffdingSplit>              pinnedSplits;
  std::vector<std::vector<std::uint8_t>> events; // per member: what its ADWIN asked for in the batch
  std::vector<int>                       byNode;
  std::unique_ptr<detail::TreeParallel>  parallel; // the members' ADWIN on host threads

  template<typename F>
  void ForEachHostArray(F f)
  {
    f(stagedX), f(stagedLabels), f(pinnedPredictions), f(pinnedCount), f(stagedSubspaces), f(stagedInfo);
    f(stagedVoteScale), f(pinnedCorrect), f(stagedWrites), f(stagedInits), f(pinnedSplitKeys), f(pinnedSplits);
  }

  template<typename F>
  void ForEachBuffer(F f)
  {
    f(dValues), f(dOffset), f(attribute), f(child), f(missingBranch), f(subspace), f(slotDepth), f(threshold);
    f(classCounts), f(nominalCounts), f(weight), f(weightAtLastCheck), f(majorityCorrect), f(bayesCorrect);
    f(childCounts), f(gaussians), f(x), f(labels), f(leaf), f(predictions), f(splitCount), f(score), f(correct);
    f(bagWeight), f(keys), f(order), f(sortedKeys), f(sortedOrder), f(splitKeys), f(votes), f(voteScale), f(info);
    f(splits), f(writes), f(inits), f(initSubspaces);
  }

  void Grow(int nodeCapacity, int slotCapacity)
  {
    const std::size_t P = std::size_t(trees);
    if (std::uint64_t(P) * std::uint64_t(slotCapacity) >= kStreamNoKey / 2)
      CANOPY_THROW("streaming forest: " << trees << " trees of " << slotCapacity
                                        << " leaves exceed the device forest's 2^31 leaf keys");
    if (nodeCapacity > arrays.nodeCapacity)
    {
      const std::size_t o = std::size_t(arrays.nodeCapacity), n = std::size_t(nodeCapacity);
      attribute.GrowBlocks(P, o, n);
      threshold.GrowBlocks(P, o, n);
      child.GrowBlocks(P, o, n);
      missingBranch.GrowBlocks(P, o, n);
      arrays.nodeCapacity = nodeCapacity;
    }
    if (slotCapacity > arrays.slotCapacity)
    {
      const std::size_t o = std::size_t(arrays.slotCapacity), n = std::size_t(slotCapacity);
      const std::size_t C = std::size_t(classes), B = std::size_t(arrays.maxBranches);
      classCounts.GrowBlocks(P, o * C, n * C);
      nominalCounts.GrowBlocks(P, o * std::size_t(shape.nominalStride), n * std::size_t(shape.nominalStride));
      gaussians.GrowBlocks(P, o * std::size_t(shape.numericStride), n * std::size_t(shape.numericStride));
      subspace.GrowBlocks(P, o * std::size_t(shape.subspaceSize), n * std::size_t(shape.subspaceSize));
      weight.GrowBlocks(P, o, n);
      weightAtLastCheck.GrowBlocks(P, o, n);
      majorityCorrect.GrowBlocks(P, o, n);
      bayesCorrect.GrowBlocks(P, o, n);
      slotDepth.GrowBlocks(P, o, n);
      childCounts.GrowBlocks(P, o * B * C, n * B * C);
      splitKeys.Reserve(P * n);
      splits.Reserve(P * n);
      arrays.slotCapacity = slotCapacity;
    }
    arrays.attribute = attribute.data();
    arrays.threshold = threshold.data();
    arrays.child = child.data();
    arrays.missingBranch = missingBranch.data();
    arrays.classCounts = classCounts.data();
    arrays.nominalCounts = nominalCounts.data();
    arrays.gaussians = gaussians.data();
    arrays.subspace = subspace.data();
    arrays.weight = weight.data();
    arrays.weightAtLastCheck = weightAtLastCheck.data();
    arrays.majorityCorrect = majorityCorrect.data();
    arrays.bayesCorrect = bayesCorrect.data();
    arrays.slotDepth = slotDepth.data();
    arrays.childCounts = childCounts.data();
  }

  /** Queues a slot initialisation with the next subspace draw of tree p. */
  void QueueSlot(int p, int slot, int parentSlot, int branch, int depth)
  {
    TreeMirror &              m = mirror[std::size_t(p)];
    std::vector<std::int32_t> order(static_cast<std::size_t>(attributes));
    HoeffdingDrawSubspace(options.seed, m.streamKey, m.leavesCreated++, attributes, shape.subspaceSize, order.data());
    pendingInits.push_back({ p, slot, parentSlot, branch, depth });
    pendingSubspaces.insert(pendingSubspaces.end(), order.begin(), order.begin() + shape.subspaceSize);
    if (std::size_t(slot) >= m.slotNode.size())
    {
      m.slotNode.resize(std::size_t(slot) + 1);
      m.slotDepth.resize(std::size_t(slot) + 1);
    }
    m.slotDepth[std::size_t(slot)] = depth;
  }

  void QueueNode(int p, int node)
  {
    const HoeffdingTreeNodes & n = mirror[std::size_t(p)].nodes;
    const std::size_t          k = std::size_t(node);
    pendingWrites.push_back({ p, node, n.attribute[k], n.child[k], n.missingBranch[k], n.threshold[k] });
  }

  /** A fresh tree (one leaf) in physical slot p, as HoeffdingTree's constructor. */
  void ResetTree(int p, std::uint64_t streamKey)
  {
    // Updates queued for the tree this replaces would race with the new ones.
    pendingWrites.erase(
      std::remove_if(pendingWrites.begin(), pendingWrites.end(), [p](const StreamNodeWrite & w) { return w.p == p; }),
      pendingWrites.end());
    std::vector<std::int32_t>   subspaces;
    std::vector<StreamSlotInit> inits;
    for (std::size_t k = 0; k < pendingInits.size(); ++k)
      if (pendingInits[k].p != p)
      {
        inits.push_back(pendingInits[k]);
        const auto from = pendingSubspaces.begin() + std::ptrdiff_t(k) * shape.subspaceSize;
        subspaces.insert(subspaces.end(), from, from + shape.subspaceSize);
      }
    pendingInits.swap(inits);
    pendingSubspaces.swap(subspaces);

    TreeMirror & m = mirror[std::size_t(p)];
    m = TreeMirror{};
    m.active = true;
    m.streamKey = streamKey;
    QueueSlot(p, 0, -1, 0, 0);
    m.slotNode[0] = 0;
    m.nodes.attribute.push_back(-1);
    m.nodes.threshold.push_back(0.0f);
    m.nodes.child.push_back(0);
    m.nodes.missingBranch.push_back(0);
    m.nodes.depth.push_back(0);
    QueueNode(p, 0);
  }

  /** Applies a split decided on the device to tree p's mirror and queues its device updates, as
   * HoeffdingTree::AttemptSplit. */
  void ApplySplit(int p, int slot, const HoeffdingSplit & split)
  {
    TreeMirror & m = mirror[std::size_t(p)];
    const int    node = m.slotNode[std::size_t(slot)];
    const int    depth = m.slotDepth[std::size_t(slot)] + 1;
    const int    firstChild = int(m.nodes.attribute.size());
    m.nodes.attribute[std::size_t(node)] = split.attribute;
    m.nodes.threshold[std::size_t(node)] = split.threshold;
    m.nodes.child[std::size_t(node)] = firstChild;
    m.nodes.missingBranch[std::size_t(node)] = split.heaviest;
    QueueNode(p, node);
    for (int b = 0; b < split.branches; ++b)
    {
      const int childSlot = b == 0 ? slot : int(m.slotNode.size());
      QueueSlot(p, childSlot, slot, b, depth);
      m.slotNode[std::size_t(childSlot)] = firstChild + b;
      m.nodes.attribute.push_back(-1);
      m.nodes.threshold.push_back(0.0f);
      m.nodes.child.push_back(childSlot);
      m.nodes.missingBranch.push_back(0);
      m.nodes.depth.push_back(depth);
      QueueNode(p, firstChild + b);
    }
  }

  /** Physical tree p's state: its mirror and its slots' statistics copied from the device. */
  HoeffdingTreeState TreeState(int p) const
  {
    const TreeMirror & m = mirror[std::size_t(p)];
    HoeffdingTreeState t;
    t.streamKey = m.streamKey;
    t.leavesCreated = m.leavesCreated;
    t.nodes = m.nodes;
    const std::size_t S = m.slotNode.size(), cap = std::size_t(arrays.slotCapacity);
    auto              download = [&](auto & into, const auto * from, std::size_t per)
    {
      into.resize(S * per);
      if (!into.empty())
        executor->ToHost(into.data(), from + std::size_t(p) * cap * per, into.size() * sizeof(into[0]));
    };
    download(t.classCounts, arrays.classCounts, std::size_t(classes));
    download(t.nominalCounts, arrays.nominalCounts, std::size_t(shape.nominalStride));
    download(t.gaussians, arrays.gaussians, std::size_t(shape.numericStride));
    download(t.subspace, arrays.subspace, std::size_t(shape.subspaceSize));
    download(t.weight, arrays.weight, 1);
    download(t.weightAtLastCheck, arrays.weightAtLastCheck, 1);
    download(t.majorityCorrect, arrays.majorityCorrect, 1);
    download(t.bayesCorrect, arrays.bayesCorrect, 1);
    download(t.slotDepth, arrays.slotDepth, 1);
    executor->Synchronize();
    return t;
  }

  /** Makes physical tree p's mirror the (validated) state's; its arrays are sent by UploadTree. */
  void MirrorTree(int p, const HoeffdingTreeState & t)
  {
    TreeMirror & m = mirror[std::size_t(p)];
    m = TreeMirror{};
    m.active = true;
    m.streamKey = t.streamKey;
    m.leavesCreated = t.leavesCreated;
    m.nodes = t.nodes;
    m.slotNode.assign(t.weight.size(), 0);
    m.slotDepth = t.slotDepth;
    for (std::size_t k = 0; k < m.nodes.attribute.size(); ++k)
      if (m.nodes.attribute[k] < 0)
        m.slotNode[std::size_t(m.nodes.child[k])] = int(k);
  }

  /** Sends tree p's nodes and slots (the arrays hold its mirror's sizes: FlushUpdates grew them). */
  void UploadTree(int p, const HoeffdingTreeState & t)
  {
    const std::size_t ncap = std::size_t(arrays.nodeCapacity), scap = std::size_t(arrays.slotCapacity);
    auto              upload = [&](auto * to, const auto & from, std::size_t capacity, std::size_t per)
    {
      if (!from.empty())
        executor->ToDevice(to + std::size_t(p) * capacity * per, from.data(), from.size() * sizeof(from[0]));
    };
    upload(arrays.attribute, t.nodes.attribute, ncap, 1);
    upload(arrays.threshold, t.nodes.threshold, ncap, 1);
    upload(arrays.child, t.nodes.child, ncap, 1);
    upload(arrays.missingBranch, t.nodes.missingBranch, ncap, 1);
    upload(arrays.classCounts, t.classCounts, scap, std::size_t(classes));
    upload(arrays.nominalCounts, t.nominalCounts, scap, std::size_t(shape.nominalStride));
    upload(arrays.gaussians, t.gaussians, scap, std::size_t(shape.numericStride));
    upload(arrays.subspace, t.subspace, scap, std::size_t(shape.subspaceSize));
    upload(arrays.weight, t.weight, scap, 1);
    upload(arrays.weightAtLastCheck, t.weightAtLastCheck, scap, 1);
    upload(arrays.majorityCorrect, t.majorityCorrect, scap, 1);
    upload(arrays.bayesCorrect, t.bayesCorrect, scap, 1);
    upload(arrays.slotDepth, t.slotDepth, scap, 1);
  }

  /** Grows the arrays to the mirrors' sizes and sends the queued updates. */
  void FlushUpdates()
  {
    std::size_t nodes = 1, slots = 1;
    for (const TreeMirror & m : mirror)
    {
      nodes = std::max(nodes, m.nodes.attribute.size());
      slots = std::max(slots, m.slotNode.size());
    }
    int nodeCapacity = std::max(arrays.nodeCapacity, 64), slotCapacity = std::max(arrays.slotCapacity, 32);
    while (std::size_t(nodeCapacity) < nodes)
      nodeCapacity *= 2;
    while (std::size_t(slotCapacity) < slots)
      slotCapacity *= 2;
    if (nodeCapacity > arrays.nodeCapacity || slotCapacity > arrays.slotCapacity)
      Grow(nodeCapacity, slotCapacity);
    if (pendingWrites.empty() && pendingInits.empty())
      return;
    // Staged copies are asynchronous: the staging arrays are next written after the next batch's
    // Synchronize, which comes after these copies in stream order.
    writes.Upload(stagedWrites.Stage(pendingWrites), pendingWrites.size());
    inits.Upload(stagedInits.Stage(pendingInits), pendingInits.size());
    initSubspaces.Upload(stagedSubspaces.Stage(pendingSubspaces), pendingSubspaces.size());
    executor->ApplyUpdates(shape,
                           arrays,
                           writes.data(),
                           int(pendingWrites.size()),
                           inits.data(),
                           initSubspaces.data(),
                           int(pendingInits.size()));
    pendingWrites.clear();
    pendingInits.clear();
    pendingSubspaces.clear();
  }
};

DeviceStreamingForest::DeviceStreamingForest(const StreamSchema &           schema,
                                             const StreamingForestOptions & options,
                                             Executor                       executor,
                                             int                            deviceIndex)
  : m_Impl(std::make_unique<Impl>())
{
  Impl & m = *m_Impl;
  if (options.trees < 1)
    CANOPY_THROW("streaming forest: --trees " << options.trees << ": give at least 1 tree");
  if (!(options.lambda > 0.0 && options.lambda <= 30.0))
    CANOPY_THROW("streaming forest: lambda " << options.lambda << " is not in (0, 30]");
  m.options = options;
  m.shapeSchema = schema;
  m.treeOptions = options.ResolvedTreeOptions(schema.NumberOfAttributes());
  m.members = options.trees;
  m.trees = 2 * options.trees;
  m.classes = schema.NumberOfClasses();
  m.attributes = schema.NumberOfAttributes();
  if (m.classes < 2 || m.classes > kHoeffdingMaxClasses)
    CANOPY_THROW("streaming forest: the stream has " << m.classes << " classes; 2 to " << kHoeffdingMaxClasses
                                                     << " are supported");
  // The tree's own layout and checks (a HoeffdingTree of the same schema and options).
  const HoeffdingTree      reference(schema, m.treeOptions);
  const HoeffdingTreeShape hostShape = reference.Shape();
  if (hostShape.subspaceSize >= 65535) // one grid row per observed attribute in the learn kernel
    CANOPY_THROW("streaming forest: " << hostShape.subspaceSize
                                      << " attributes per leaf; the device forest takes at most 65534 (--subspace)");
  m.values.assign(hostShape.values, hostShape.values + m.attributes);
  m.offset.assign(hostShape.offset, hostShape.offset + m.attributes);
  if (executor == Executor::Cuda)
  {
#if defined(CANOPY_HAVE_CUDA_RUNTIME)
    m.executor = std::make_unique<CudaExecutor>(deviceIndex);
#else
    (void)deviceIndex;
    CANOPY_THROW("streaming forest: this build has no CUDA (CANOPY_USE_CUDA=OFF)");
#endif
  }
  else
    m.executor = std::make_unique<HostEmulation>();
  m.ForEachBuffer([&](auto & b) { b.Bind(m.executor.get()); });
  m.ForEachHostArray([&](auto & b) { b.Bind(m.executor.get()); });
  m.parallel = std::make_unique<detail::TreeParallel>(options.threads);
  m.dValues.Upload(m.values);
  m.dOffset.Upload(m.offset);
  m.shape = hostShape;
  m.shape.values = m.dValues.data();
  m.shape.offset = m.dOffset.data();
  m.arrays.trees = m.trees;
  int maxValues = 2;
  for (int v : m.values)
    maxValues = std::max(maxValues, v);
  m.arrays.maxBranches = maxValues;
  m.splitCount.Reserve(1);
  m.mirror.resize(std::size_t(m.trees));
  m.mainOf.assign(std::size_t(m.members), 0);
  for (int t = 0; t < m.members; ++t)
  {
    m.monitors.emplace_back(options.Drift());
    m.ResetTree(2 * t, m.monitors.back().NextTreeKey(t));
  }
  m.FlushUpdates();
}

DeviceStreamingForest::~DeviceStreamingForest() = default;

void
DeviceStreamingForest::TestThenTrain(const InstanceBatch &       batch,
                                     std::uint64_t               firstIndex,
                                     std::vector<std::int32_t> & predictions)
{
  Impl &            m = *m_Impl;
  const int         n = int(batch.Size());
  const std::size_t P = std::size_t(m.trees), M = std::size_t(m.members), N = std::size_t(n);
  predictions.resize(N);
  if (n == 0)
    return;
  if (std::uint64_t(P) * std::uint64_t(N) >= kStreamNoKey)
    CANOPY_THROW("streaming forest: a batch of " << N << " instances for " << P
                                                 << " device trees exceeds 2^32 (tree, instance) pairs; use --batch "
                                                 << (kStreamNoKey / P) << " or less");
  if (batch.attributes != m.attributes)
    CANOPY_THROW("streaming forest: a batch of " << batch.attributes << " attributes for a forest of " << m.attributes);
  using Clock = std::chrono::steady_clock;
  auto lap = [last = Clock::now()](double & into) mutable
  {
    const auto now = Clock::now();
    into += std::chrono::duration<double>(now - last).count();
    last = now;
  };
  // The batch and the per-tree settings, staged for asynchronous copies.
  m.x.Upload(m.stagedX.Stage(batch.values), batch.values.size());
  m.labels.Upload(m.stagedLabels.Stage(batch.labels), N);
  StreamTreeInfo * info = m.stagedInfo.Reserve(P);
  double *         voteScale = m.stagedVoteScale.Reserve(M);
  for (int t = 0; t < m.members; ++t)
  {
    voteScale[std::size_t(t)] = m.options.weightedVote ? m.monitors[std::size_t(t)].Accuracy() : 0.0;
    for (int k = 0; k < 2; ++k)
    {
      const int        p = 2 * t + k;
      StreamTreeInfo & i = info[std::size_t(p)];
      const bool       isMain = k == m.mainOf[std::size_t(t)];
      i.active = m.mirror[std::size_t(p)].active ? 1 : 0;
      i.member = t;
      i.isMain = isMain ? 1 : 0;
      i.slots = int(m.mirror[std::size_t(p)].slotNode.size());
      i.poissonStream = 2 * std::uint64_t(t) + (isMain ? 0 : 1);
    }
  }
  m.info.Upload(info, P);
  m.voteScale.Upload(voteScale, M);
  for (auto * b : { &m.keys, &m.order, &m.sortedKeys, &m.sortedOrder, &m.bagWeight })
    b->Reserve(P * N);
  m.leaf.Reserve(P * N);
  m.score.Reserve(P * N);
  m.votes.Reserve(M * N * std::size_t(m.classes));
  m.correct.Reserve(M * N);
  m.predictions.Reserve(N);

  StreamBatchArgs b;
  b.x = m.x.data();
  b.labels = m.labels.data();
  b.n = n;
  b.members = m.members;
  b.firstIndex = firstIndex;
  b.seed = m.options.seed;
  b.lambda = m.options.lambda;
  b.expNegLambda = std::exp(-m.options.lambda); // as the CPU forest
  b.info = m.info.data();
  b.voteScale = m.voteScale.data();
  b.leaf = m.leaf.data();
  b.score = m.score.data();
  b.bagWeight = m.bagWeight.data();
  b.votes = m.votes.data();
  b.correct = m.correct.data();
  b.predictions = m.predictions.data();
  b.keys = m.keys.data();
  b.order = m.order.data();
  b.sortedKeys = m.sortedKeys.data();
  b.sortedOrder = m.sortedOrder.data();

  lap(m.timings.upload);
  const std::int64_t count = std::int64_t(P * N);
  int                keyBits = 1;
  while ((std::uint64_t(1) << keyBits) <= std::uint64_t(P) * std::uint64_t(m.arrays.slotCapacity))
    ++keyBits;
  ++keyBits; // kStreamNoKey's low bits are all ones: above every key
  // The votes and the members' 0/1 results come back as soon as they are made; ADWIN needs only those,
  // so it runs on the host while the device sorts, learns and checks splits. What ADWIN decides is
  // applied after the batch's splits, as before (and as the CPU forest does), so the forest is the same.
  std::uint8_t * correct = m.pinnedCorrect.Reserve(M * N);
  std::int32_t * predicted = m.pinnedPredictions.Reserve(N);
  std::int32_t * splitCountHost = m.pinnedCount.Reserve(1);
  m.executor->RouteAndVote(m.shape, m.arrays, b);
  m.predictions.Download(predicted, N);
  m.correct.Download(correct, M * N);
  m.executor->Mark();
  m.executor->SortKeys(b, count, std::min(keyBits, 32));
  m.executor->Learn(m.shape, m.arrays, b, count);
  m.executor->SplitChecks(m.shape,
                          m.arrays,
                          m.info.data(),
                          m.treeOptions.gracePeriod,
                          m.splitCount.data(),
                          m.splitKeys.data(),
                          m.splits.data());
  m.splitCount.Download(splitCountHost, 1);
  // The first kEagerSplits split records come back with the count, unconditionally (a batch of 1000 on
  // 100 trees makes a handful), so a second round trip is needed only for a batch with more.
  constexpr std::size_t kEagerSplits = 256;
  const std::size_t     eager = std::min<std::size_t>(kEagerSplits, P * std::size_t(m.arrays.slotCapacity));
  std::uint32_t *       eagerKeys = m.pinnedSplitKeys.Reserve(eager);
  HoeffdingSplit *      eagerSplits = m.pinnedSplits.Reserve(eager);
  m.splitKeys.Download(eagerKeys, eager);
  m.splits.Download(eagerSplits, eager);
  m.executor->WaitForMark();
  std::copy(predicted, predicted + N, predictions.begin());
  lap(m.timings.votes);

  // ADWIN per member on host threads (members are independent; each writes only its own monitor and
  // event list), overlapping the device's learning of the batch.
  enum : std::uint8_t
  {
    StartBackground,
    PromoteBackground,
    StartFresh
  };
  m.events.resize(M);
  m.parallel->For(m.members,
                  [&](int t)
                  {
                    auto & e = m.events[std::size_t(t)];
                    e.clear();
                    m.monitors[std::size_t(t)].ObserveBatch(
                      correct + std::size_t(t) * N,
                      N,
                      [&] { e.push_back(StartBackground); },
                      [&](bool hasBackground) { e.push_back(hasBackground ? PromoteBackground : StartFresh); });
                  });
  lap(m.timings.drift);

  m.executor->Synchronize();
  const int splitCount = *splitCountHost;
  if (std::size_t(splitCount) <= eager)
  {
    m.hostSplitKeys.assign(eagerKeys, eagerKeys + splitCount);
    m.hostSplits.assign(eagerSplits, eagerSplits + splitCount);
  }
  else
  {
    m.splitKeys.Download(m.hostSplitKeys, std::size_t(splitCount));
    m.splits.Download(m.hostSplits, std::size_t(splitCount));
    m.executor->Synchronize();
  }
  lap(m.timings.device);

  // Splits per tree in node order (the CPU's AttemptDueSplits), then ADWIN's changes.
  const std::uint32_t slotCapacity = std::uint32_t(m.arrays.slotCapacity);
  std::vector<int> &  byNode = m.byNode;
  byNode.resize(std::size_t(splitCount));
  auto nodeOf = [&](std::uint32_t key) { return m.mirror[key / slotCapacity].slotNode[key % slotCapacity]; };
  for (int k = 0; k < splitCount; ++k)
    byNode[std::size_t(k)] = k;
  std::sort(byNode.begin(),
            byNode.end(),
            [&](int l, int r)
            {
              const std::uint32_t kl = m.hostSplitKeys[std::size_t(l)], kr = m.hostSplitKeys[std::size_t(r)];
              if (kl / slotCapacity != kr / slotCapacity)
                return kl / slotCapacity < kr / slotCapacity;
              return nodeOf(kl) < nodeOf(kr);
            });
  for (int k : byNode)
  {
    const std::uint32_t key = m.hostSplitKeys[std::size_t(k)];
    m.ApplySplit(int(key / slotCapacity), int(key % slotCapacity), m.hostSplits[std::size_t(k)]);
  }
  lap(m.timings.splits);
  m.timings.splitsApplied += splitCount;
  // ADWIN's changes in member order, drawing tree keys in the order the CPU forest does.
  for (int t = 0; t < m.members; ++t)
  {
    int & main = m.mainOf[std::size_t(t)];
    for (const std::uint8_t e : m.events[std::size_t(t)])
    {
      if (e == StartBackground)
        m.ResetTree(2 * t + 1 - main, m.monitors[std::size_t(t)].NextTreeKey(t));
      else if (e == PromoteBackground)
      {
        m.mirror[std::size_t(2 * t + main)].active = false;
        main = 1 - main;
      }
      else
        m.ResetTree(2 * t + main, m.monitors[std::size_t(t)].NextTreeKey(t));
    }
  }
  lap(m.timings.splits);
  m.FlushUpdates();
  lap(m.timings.updates);
  ++m.timings.batches;
}

int
DeviceStreamingForest::NumberOfTrees() const
{
  return m_Impl->members;
}

std::int64_t
DeviceStreamingForest::DriftsDetected() const
{
  std::int64_t n = 0;
  for (const auto & m : m_Impl->monitors)
    n += m.Drifts();
  return n;
}

std::int64_t
DeviceStreamingForest::WarningsDetected() const
{
  std::int64_t n = 0;
  for (const auto & m : m_Impl->monitors)
    n += m.Warnings();
  return n;
}

std::int64_t
DeviceStreamingForest::TotalNodes() const
{
  std::int64_t n = 0;
  for (int t = 0; t < m_Impl->members; ++t)
    n += std::int64_t(TreeNodes(t).attribute.size());
  return n;
}

const HoeffdingTreeNodes &
DeviceStreamingForest::TreeNodes(int t) const
{
  return m_Impl->mirror.at(std::size_t(2 * t + m_Impl->mainOf.at(std::size_t(t)))).nodes;
}

std::vector<std::uint32_t>
DeviceStreamingForest::TreeClassCounts(int t) const
{
  const Impl &               m = *m_Impl;
  const int                  p = 2 * t + m.mainOf.at(std::size_t(t));
  const std::size_t          slots = m.mirror[std::size_t(p)].slotNode.size(), C = std::size_t(m.classes);
  std::vector<std::uint32_t> counts(slots * C);
  m.executor->ToHost(counts.data(),
                     m.classCounts.data() + std::size_t(p) * std::size_t(m.arrays.slotCapacity) * C,
                     counts.size() * sizeof(std::uint32_t));
  m.executor->Synchronize();
  return counts;
}

int
DeviceStreamingForest::NodeCapacity() const
{
  return m_Impl->arrays.nodeCapacity;
}

int
DeviceStreamingForest::SlotCapacity() const
{
  return m_Impl->arrays.slotCapacity;
}

const DeviceForestTimings &
DeviceStreamingForest::Timings() const
{
  return m_Impl->timings;
}

StreamingForestState
DeviceStreamingForest::State() const
{
  const Impl &         m = *m_Impl;
  StreamingForestState s;
  for (int t = 0; t < m.members; ++t)
  {
    const int         main = m.mainOf[std::size_t(t)];
    ForestMemberState member;
    member.monitor = m.monitors[std::size_t(t)].State();
    member.tree = m.TreeState(2 * t + main);
    member.hasBackground = m.mirror[std::size_t(2 * t + 1 - main)].active;
    if (member.hasBackground)
      member.background = m.TreeState(2 * t + 1 - main);
    s.members.push_back(std::move(member));
  }
  return s;
}

void
DeviceStreamingForest::Restore(const StreamingForestState & s)
{
  Impl & m = *m_Impl;
  if (s.members.size() != std::size_t(m.members))
    CANOPY_THROW("streaming forest state: " << s.members.size() << " members for a forest of " << m.members
                                            << " trees");
  // Everything is checked before anything changes (as StreamingForest::Restore).
  std::vector<ForestMemberMonitor> monitors;
  for (const ForestMemberState & member : s.members)
  {
    monitors.emplace_back(m.options.Drift());
    monitors.back().Restore(member.monitor);
    if (member.hasBackground != member.monitor.background)
      CANOPY_THROW("streaming forest state: a member's background tree and its monitor disagree");
    ValidateHoeffdingTreeState(member.tree, m.shapeSchema, m.treeOptions, "Hoeffding tree state");
    if (member.hasBackground)
      ValidateHoeffdingTreeState(member.background, m.shapeSchema, m.treeOptions, "Hoeffding tree state");
  }
  m.monitors.swap(monitors);
  m.pendingWrites.clear();
  m.pendingInits.clear();
  m.pendingSubspaces.clear();
  for (int t = 0; t < m.members; ++t)
  {
    const ForestMemberState & member = s.members[std::size_t(t)];
    m.mainOf[std::size_t(t)] = 0;
    m.MirrorTree(2 * t, member.tree);
    if (member.hasBackground)
      m.MirrorTree(2 * t + 1, member.background);
    else
      m.mirror[std::size_t(2 * t + 1)] = TreeMirror{};
  }
  m.FlushUpdates(); // grows the arrays to the mirrors' sizes
  for (int t = 0; t < m.members; ++t)
  {
    const ForestMemberState & member = s.members[std::size_t(t)];
    m.UploadTree(2 * t, member.tree);
    if (member.hasBackground)
      m.UploadTree(2 * t + 1, member.background);
  }
  m.executor->Synchronize();
}

} // namespace canopy::streaming
