// The device streaming forest's state (canopyDeviceStreamingForest.cxx, canopyDeviceForestState.cxx):
// the trees' arrays on the executor, their host mirrors, the members' monitors and the batch scratch.
#pragma once

#include "canopyDeviceForestBackend.h"
#if defined(CANOPY_HAVE_CUDA_RUNTIME)
#include "canopyDeviceForestCuda.h"
#endif
#include "canopyDeviceMemberMonitor.h"
#include "canopyDeviceStreamingForest.h"
#include "canopyTreeParallel.h"

#include <cstring>
#include <memory>
#include <vector>

namespace canopy::streaming
{
namespace detail
{
/** The host's copy of a physical tree's structure, for the accessors, the model's state and ADWIN's
 * resets; the device applies the splits (the grow step), so the copy is refreshed from the device when
 * read (RefreshMirror: its node count differs from the device's). And the tree's updates queued for the
 * device (FlushUpdates sends every tree's), so a reset drops only its own tree's. */
struct TreeMirror
{
  bool                         active = false;
  std::uint64_t                streamKey = 0, leavesCreated = 0;
  HoeffdingTreeNodes           nodes;
  std::vector<std::int32_t>    slotNode, slotDepth; // per slot: its leaf node, its depth
  std::vector<StreamNodeWrite> writes;              // queued: node writes,
  std::vector<StreamSlotInit>  inits;               // slot initialisations,
  std::vector<std::int32_t>    subspaces;           // and their subspaces (subspaceSize each)
  std::vector<std::int32_t>    draw;                // scratch of the subspace draws
};
} // namespace detail

struct DeviceStreamingForest::Impl
{
  std::unique_ptr<detail::Backend> executor; // first: destroyed after the buffers that free through it
  StreamingForestOptions           options;
  HoeffdingTreeOptions             treeOptions;
  StreamSchema                     shapeSchema; // for checking restored trees
  int                              members = 0, trees = 0, classes = 0, attributes = 0;
  std::vector<std::int32_t>        values, offset; // host copies of the shape's arrays
  HoeffdingTreeShape               shape;          // pointers into device memory
  StreamForestArrays               arrays;
  std::vector<ForestMemberMonitor> monitors;
  std::vector<int>                 mainOf; // member t's voting tree: 2t + mainOf[t]
  std::vector<detail::TreeMirror>  mirror; // per physical tree
  DeviceForestTimings              timings;

  detail::Buffer<std::int32_t>  dValues, dOffset;
  detail::Buffer<std::int32_t>  attribute, child, missingBranch, subspace, slotDepth;
  detail::Buffer<float>         threshold;
  detail::Buffer<std::uint32_t> classCounts, nominalCounts, weight, weightAtLastCheck, majorityCorrect, bayesCorrect;
  detail::Buffer<std::uint32_t> childCounts;
  detail::Buffer<GaussianEstimator> gaussians;
  // Batch scratch: the batch's inputs in one block (LayoutBatchBlock), the steps' arrays, the updates'
  // block (node writes, slot initialisations and their subspaces, LayoutUpdateBlock).
  detail::Buffer<std::uint8_t>     block, updateBlock;
  detail::Buffer<std::int32_t>     leaf, predictions, splitCount, splitOfSlot, growScratch, growOverflow;
  detail::Buffer<StreamTreeGrowth> growth; // per tree: the device's sizes and draw counters
  detail::Buffer<std::uint8_t>     score, correct;
  detail::Buffer<std::uint32_t>    bagWeight, keys, order, sortedKeys, sortedOrder;
  detail::Buffer<double>           votes;
  detail::Buffer<HoeffdingSplit>   splits;
  detail::BatchPlan                plan; // the batch's launches (zeroed once: compared as bytes)

  // The trees' sizes and draw counters as the last batch left them (read back after each batch; a reset
  // or a restore changes them here and marks them to be sent: growthSent false).
  std::vector<StreamTreeGrowth> treeGrowth;
  bool                          growthSent = true;
  // The host's per-batch arrays, kept so that a batch allocates nothing: what is sent (staged in
  // memory the executor copies without waiting for the stream), what comes back, and the host steps'.
  detail::HostArray<std::uint8_t>        stagedBlock, stagedUpdates;
  detail::HostArray<std::int32_t>        pinnedPredictions, pinnedCount, pinnedOverflow;
  detail::HostArray<std::uint8_t>        pinnedCorrect;
  detail::HostArray<StreamTreeGrowth>    pinnedGrowth, stagedGrowth;
  std::vector<std::vector<std::uint8_t>> events; // per member: what its ADWIN asked for in the batch
  // The members' ADWIN step on the device (the default): their monitors' state in device memory, the
  // step's scratch, and what comes back per batch (a summary and the events per member). The host's
  // monitors then keep only their tree-key counters (NextTreeKey).
  bool                                  adwinOnDevice = true;
  int                                   adwinTeamThreads = kStreamAdwinBlockThreads;
  AdwinMonitorSettings                  adwinSettings{};
  detail::Buffer<AdwinMemberData>       memberData;
  detail::Buffer<AdwinStepScratch>      adwinScratch;
  detail::Buffer<std::uint8_t>          adwinEvents;
  detail::Buffer<AdwinMemberSummary>    adwinSummaries;
  detail::HostArray<std::uint8_t>       pinnedEvents;
  detail::HostArray<AdwinMemberSummary> pinnedSummaries;
  std::vector<AdwinMemberSummary>       summaries; // the last batch's, per member (vote weights, counters)
  std::unique_ptr<detail::TreeParallel> parallel;  // the members' ADWIN on host threads

  // A batch whose predictions came back but whose learning, split checks and ADWIN step may still run
  // on the device: CompleteBatch waits for them and applies their splits and events (the next batch,
  // and every accessor of the trees or the monitors, call it first).
  bool batchPending = false;

  Impl() { std::memset(static_cast<void *>(&plan), 0, sizeof(plan)); }
  ~Impl()
  {
    if (batchPending && executor) // the device may still use the buffers freed after this
      try
      {
        executor->Synchronize();
      }
      catch (...)
      {
      }
  }

  /** Completes a pending batch (canopyDeviceStreamingForest.cxx); nothing when none is. */
  void CompleteBatch();

  template<typename F>
  void ForEachHostArray(F f)
  {
    f(stagedBlock), f(stagedUpdates), f(pinnedPredictions), f(pinnedCount), f(pinnedOverflow), f(pinnedCorrect);
    f(pinnedGrowth), f(stagedGrowth), f(pinnedEvents), f(pinnedSummaries);
  }

  template<typename F>
  void ForEachBuffer(F f)
  {
    f(dValues), f(dOffset), f(attribute), f(child), f(missingBranch), f(subspace), f(slotDepth), f(threshold);
    f(classCounts), f(nominalCounts), f(weight), f(weightAtLastCheck), f(majorityCorrect), f(bayesCorrect);
    f(childCounts), f(gaussians), f(block), f(updateBlock), f(leaf), f(predictions), f(splitCount), f(score);
    f(correct), f(bagWeight), f(keys), f(order), f(sortedKeys), f(sortedOrder), f(splitOfSlot), f(votes);
    f(splits), f(growth), f(growScratch), f(growOverflow), f(memberData), f(adwinScratch), f(adwinEvents);
    f(adwinSummaries);
  }

  /** The device members' state as host monitors' states (tree-key counters from the host's). */
  std::vector<MemberMonitorState> DeviceMonitorStates() const
  {
    std::vector<AdwinMemberData> data(static_cast<std::size_t>(members));
    memberData.Download(data.data(), data.size());
    executor->Synchronize();
    std::vector<MemberMonitorState> states;
    for (int t = 0; t < members; ++t)
      states.push_back(MonitorStateFromDevice(data[std::size_t(t)], monitors[std::size_t(t)].State().generation));
    return states;
  }
  /** Device members from monitor states (checked first: nothing changes when one is refused), or fresh
   * ones (states empty). */
  void UploadMembers(const std::vector<MemberMonitorState> & states)
  {
    std::vector<AdwinMemberData> data(static_cast<std::size_t>(members));
    for (int t = 0; t < members; ++t)
      if (states.empty())
        AdwinMemberReset(adwinSettings, data[std::size_t(t)]);
      else
        DeviceMemberFromState(states[std::size_t(t)], options.Drift(), data[std::size_t(t)]);
    memberData.Upload(data.data(), data.size());
    adwinScratch.Reserve(std::size_t(members));
    summaries.assign(std::size_t(members), AdwinMemberSummary{});
    for (int t = 0; t < members; ++t)
    {
      AdwinMemberSummary & s = summaries[std::size_t(t)];
      s.seen = data[std::size_t(t)].seen;
      s.correct = data[std::size_t(t)].correct;
      s.drifts = data[std::size_t(t)].drifts;
      s.warnings = data[std::size_t(t)].warnings;
    }
    executor->Synchronize(); // the staged host vector goes away
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
      splitOfSlot.GrowBlocks(P, o, n);    // a slot's mark moves with it (the grow step may run again)
      splits.GrowBlocks(1, P * o, P * n); // and the batch's splits stay
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
    detail::TreeMirror & m = mirror[std::size_t(p)];
    m.draw.resize(std::size_t(attributes));
    HoeffdingDrawSubspace(options.seed, m.streamKey, m.leavesCreated++, attributes, shape.subspaceSize, m.draw.data());
    m.inits.push_back({ p, slot, parentSlot, branch, depth });
    m.subspaces.insert(m.subspaces.end(), m.draw.begin(), m.draw.begin() + shape.subspaceSize);
    if (std::size_t(slot) >= m.slotNode.size())
    {
      m.slotNode.resize(std::size_t(slot) + 1);
      m.slotDepth.resize(std::size_t(slot) + 1);
    }
    m.slotDepth[std::size_t(slot)] = depth;
  }

  void QueueNode(int p, int node)
  {
    detail::TreeMirror &       m = mirror[std::size_t(p)];
    const HoeffdingTreeNodes & n = m.nodes;
    const std::size_t          k = std::size_t(node);
    m.writes.push_back({ p, node, n.attribute[k], n.child[k], n.missingBranch[k], n.threshold[k] });
  }

  /** A fresh tree (one leaf) in physical slot p, as HoeffdingTree's constructor. */
  void ResetTree(int p, std::uint64_t streamKey)
  {
    detail::TreeMirror & m = mirror[std::size_t(p)];
    m = detail::TreeMirror{}; // drops the updates queued for the tree it replaces (they would race)
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
    SetGrowth(p, m);
  }

  /** Tree p's sizes and draw counters from its mirror, to be sent before the next batch. */
  void SetGrowth(int p, const detail::TreeMirror & m)
  {
    StreamTreeGrowth & g = treeGrowth[std::size_t(p)];
    g.nodes = std::int32_t(m.nodes.attribute.size());
    g.slots = std::int32_t(m.slotNode.size());
    g.streamKey = m.streamKey;
    g.leavesCreated = m.leavesCreated;
    growthSent = false;
  }

  /** Tree p's mirror as the device's arrays hold it, when the grow step has changed them since (the
   * node count differs: every split adds nodes). Inner nodes' depths follow from their parents'. */
  void RefreshMirror(int p)
  {
    detail::TreeMirror &     m = mirror[std::size_t(p)];
    const StreamTreeGrowth & g = treeGrowth[std::size_t(p)];
    if (!m.active || std::size_t(g.nodes) == m.nodes.attribute.size())
      return;
    const std::size_t    nodes = std::size_t(g.nodes), slots = std::size_t(g.slots);
    const std::size_t    n0 = std::size_t(p) * std::size_t(arrays.nodeCapacity);
    HoeffdingTreeNodes & t = m.nodes;
    t.attribute.resize(nodes);
    t.threshold.resize(nodes);
    t.child.resize(nodes);
    t.missingBranch.resize(nodes);
    m.slotDepth.resize(slots);
    executor->ToHost(t.attribute.data(), attribute.data() + n0, nodes * sizeof(std::int32_t));
    executor->ToHost(t.threshold.data(), threshold.data() + n0, nodes * sizeof(float));
    executor->ToHost(t.child.data(), child.data() + n0, nodes * sizeof(std::int32_t));
    executor->ToHost(t.missingBranch.data(), missingBranch.data() + n0, nodes * sizeof(std::int32_t));
    executor->ToHost(m.slotDepth.data(),
                     slotDepth.data() + std::size_t(p) * std::size_t(arrays.slotCapacity),
                     slots * sizeof(std::int32_t));
    executor->Synchronize();
    // Children are made after their parent (higher numbers), so one pass in node order sets depths.
    t.depth.assign(nodes, 0);
    m.slotNode.assign(slots, 0);
    for (std::size_t k = 0; k < nodes; ++k)
      if (t.attribute[k] < 0)
        m.slotNode[std::size_t(t.child[k])] = int(k);
      else
      {
        const int a = t.attribute[k], branches = values[std::size_t(a)] > 0 ? values[std::size_t(a)] : 2;
        for (int b = 0; b < branches; ++b)
          t.depth[std::size_t(t.child[k] + b)] = t.depth[k] + 1;
      }
    m.leavesCreated = g.leavesCreated;
  }

  /** Physical tree p's state: its mirror and its slots' statistics copied from the device. */
  HoeffdingTreeState TreeState(int p) const
  {
    const detail::TreeMirror & m = mirror[std::size_t(p)];
    HoeffdingTreeState         t;
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
    detail::TreeMirror & m = mirror[std::size_t(p)];
    m = detail::TreeMirror{};
    m.active = true;
    m.streamKey = t.streamKey;
    m.leavesCreated = t.leavesCreated;
    m.nodes = t.nodes;
    m.slotNode.assign(t.weight.size(), 0);
    m.slotDepth = t.slotDepth;
    for (std::size_t k = 0; k < m.nodes.attribute.size(); ++k)
      if (m.nodes.attribute[k] < 0)
        m.slotNode[std::size_t(m.nodes.child[k])] = int(k);
    SetGrowth(p, m);
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

  /** Grows the arrays to hold nodes and slots per tree (capacities double). */
  void GrowToHold(std::size_t nodes, std::size_t slots)
  {
    int nodeCapacity = std::max(arrays.nodeCapacity, 64), slotCapacity = std::max(arrays.slotCapacity, 32);
    while (std::size_t(nodeCapacity) < nodes)
      nodeCapacity *= 2;
    while (std::size_t(slotCapacity) < slots)
      slotCapacity *= 2;
    if (nodeCapacity > arrays.nodeCapacity || slotCapacity > arrays.slotCapacity)
      Grow(nodeCapacity, slotCapacity);
  }

  /** Grows the arrays to the trees' sizes, sends the sizes a reset or restore changed and the queued
   * updates. */
  void FlushUpdates()
  {
    std::size_t nodes = 1, slots = 1;
    for (const StreamTreeGrowth & g : treeGrowth)
    {
      nodes = std::max(nodes, std::size_t(g.nodes));
      slots = std::max(slots, std::size_t(g.slots));
    }
    GrowToHold(nodes, slots);
    if (!growthSent)
    {
      // Staged: the copy is asynchronous, and treeGrowth changes again only after the next batch's wait.
      StreamTreeGrowth * staged = stagedGrowth.Reserve(treeGrowth.size());
      std::copy(treeGrowth.begin(), treeGrowth.end(), staged);
      growth.Upload(staged, treeGrowth.size());
      growthSent = true;
    }
    std::size_t writes = 0, inits = 0;
    for (const detail::TreeMirror & m : mirror)
    {
      writes += m.writes.size();
      inits += m.inits.size();
    }
    if (writes == 0 && inits == 0)
      return;
    executor->BeginStep(DeviceForestStep::Updates);
    // One staged block, one asynchronous copy: the staging array is next written after the next
    // batch's Synchronize, which comes after this copy in stream order. Trees in turn: a tree's updates
    // keep their order (no two of them write the same node or slot, as no two trees' do).
    const std::size_t initsAt = detail::AlignBlock(writes * sizeof(StreamNodeWrite));
    const std::size_t subspacesAt = detail::AlignBlock(initsAt + inits * sizeof(StreamSlotInit));
    const std::size_t bytes = subspacesAt + inits * std::size_t(shape.subspaceSize) * sizeof(std::int32_t);
    std::uint8_t *    staged = stagedUpdates.ReserveGrowing(bytes);
    StreamNodeWrite * toWrites = reinterpret_cast<StreamNodeWrite *>(staged);
    StreamSlotInit *  toInits = reinterpret_cast<StreamSlotInit *>(staged + initsAt);
    std::int32_t *    toSubspaces = reinterpret_cast<std::int32_t *>(staged + subspacesAt);
    for (detail::TreeMirror & m : mirror)
    {
      toWrites = std::copy(m.writes.begin(), m.writes.end(), toWrites);
      toInits = std::copy(m.inits.begin(), m.inits.end(), toInits);
      toSubspaces = std::copy(m.subspaces.begin(), m.subspaces.end(), toSubspaces);
      m.writes.clear();
      m.inits.clear();
      m.subspaces.clear();
    }
    updateBlock.ReserveGrowing(bytes);
    updateBlock.Upload(staged, bytes);
    const std::uint8_t * onDevice = updateBlock.data();
    executor->ApplyUpdates(shape,
                           arrays,
                           reinterpret_cast<const StreamNodeWrite *>(onDevice),
                           int(writes),
                           reinterpret_cast<const StreamSlotInit *>(onDevice + initsAt),
                           reinterpret_cast<const std::int32_t *>(onDevice + subspacesAt),
                           int(inits));
    executor->EndStep(DeviceForestStep::Updates);
  }
};

} // namespace canopy::streaming
