#include "canopyDeviceStreamingForest.h"

#include "canopy/Errors.h"
#include "canopyDeviceForestImpl.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace canopy::streaming
{
namespace
{
using detail::HostEmulation;
#if defined(CANOPY_HAVE_CUDA_RUNTIME)
using detail::CudaExecutor;
#endif

/** The fixed part of a batch, queued from the plan alone (a CUDA graph may capture it once and relaunch
 * it: nothing else may be read here). The votes come back as soon as they are made. ADWIN needs only
 * the members' 0/1 results, so it runs while the device sorts, learns and checks splits: on its own
 * stream on the device, or on host threads over the results copied back. What ADWIN decides is applied
 * after the batch's splits, as before (and as the CPU forest does), so the forest is the same. */
void
QueueBatch(detail::Backend & e, const detail::BatchPlan & q)
{
  using Step = DeviceForestStep;
  const StreamBatchArgs & b = q.batch;
  const std::size_t       M = std::size_t(b.members), N = std::size_t(b.n);
  e.BeginStep(Step::Upload);
  e.ToDevice(q.block, q.stagedBlock, q.blockBytes);
  e.EndStep(Step::Upload);
  e.BeginStep(Step::Route);
  e.Route(q.shape, q.arrays, b);
  e.EndStep(Step::Route);
  // The members' ADWIN step on the device, on its own stream, as soon as route has written the members'
  // 0/1 results (it needs nothing of the vote sums): it runs beside the vote sums, the predictions'
  // copy, learn and split checks; only its summaries and events come back.
  if (q.adwinOnDevice)
    e.AdwinStep(q.adwin, q.summariesHost, q.eventsHost);
  e.BeginStep(Step::SumVotes);
  e.SumVotes(q.shape, b);
  e.EndStep(Step::SumVotes);
  e.BeginStep(Step::ResultsBack);
  e.ToHost(q.predictionsHost, b.predictions, N * sizeof(std::int32_t));
  e.Mark(0);
  if (!q.adwinOnDevice)
    e.ToHost(q.correctHost, b.correct, M * N);
  e.EndStep(Step::ResultsBack);
  // Or ADWIN on host threads over the results copied back.
  if (!q.adwinOnDevice)
    e.Mark(1);
  if (!StreamLearnIsOrderFree(q.shape)) // otherwise learn takes the pairs unsorted
  {
    e.BeginStep(Step::Sort);
    e.SortKeys(b, q.count, q.keyBits, q.sortScratch, q.sortScratchBytes);
    e.EndStep(Step::Sort);
  }
  e.BeginStep(Step::Learn);
  e.Learn(q.shape, q.arrays, b, q.count);
  e.EndStep(Step::Learn);
  e.BeginStep(Step::SplitChecks);
  e.SplitChecks(q.shape, q.arrays, b.info, q.gracePeriod, q.splitCount, q.splitOfSlot, q.splits);
  e.EndStep(Step::SplitChecks);
  e.BeginStep(Step::Grow);
  e.GrowTrees(q.shape, q.arrays, b.info, b.seed, q.splitOfSlot, q.splits, q.growth, q.growScratch, q.growOverflow);
  e.EndStep(Step::Grow);
  e.BeginStep(Step::SizesBack);
  e.ToHost(q.splitCountHost, q.splitCount, sizeof(std::int32_t));
  e.ToHost(q.growthHost, q.growth, std::size_t(q.arrays.trees) * sizeof(StreamTreeGrowth));
  e.ToHost(q.growOverflowHost, q.growOverflow, 3 * sizeof(std::int32_t));
  e.Mark(2); // the trees' sizes are back (the ADWIN step may still run)
  e.EndStep(Step::SizesBack);
  e.JoinAdwin();
}
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
  m.growth.Reserve(std::size_t(m.trees));
  m.growOverflow.Reserve(3); // a flag, and the most nodes and slots a tree needed
  // Per (tree, thread of its block): the sparse subspace draws' scratch.
  m.growScratch.Reserve(std::size_t(m.trees) * kStreamGrowThreads * 2 *
                        std::size_t(std::max(1, hostShape.subspaceSize)));
  m.treeGrowth.assign(std::size_t(m.trees), StreamTreeGrowth{});
  m.mirror.resize(std::size_t(m.trees));
  m.mainOf.assign(std::size_t(m.members), 0);
  for (int t = 0; t < m.members; ++t)
  {
    m.monitors.emplace_back(options.Drift());
    m.ResetTree(2 * t, m.monitors.back().NextTreeKey(t));
  }
  m.adwinSettings = DeviceMonitorSettings(options.Drift());
  m.UploadMembers({});
  m.FlushUpdates();
  m.executor->TakeCalls(); // DeviceForestTimings::apiCalls counts the batches' calls
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
  {
    m.CompleteBatch();
    return;
  }
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
  // The batch and the per-tree settings, staged in one block for one asynchronous copy: the first
  // index, the trees' settings, the members' vote scales, the labels and the instances. The labels and
  // instances first, while the device may still learn the previous batch (its upload, from this block,
  // is done: its predictions are back); then that batch is completed, and the settings follow from it.
  detail::Backend &              e = *m.executor;
  const detail::BatchBlockLayout layout = detail::LayoutBatchBlock(P, M, N, std::size_t(m.attributes));
  std::uint8_t *                 staged = m.stagedBlock.Reserve(layout.bytes);
  std::copy(batch.labels.begin(), batch.labels.end(), reinterpret_cast<std::int32_t *>(staged + layout.labels));
  std::copy(batch.values.begin(), batch.values.end(), reinterpret_cast<float *>(staged + layout.x));
  lap(m.timings.upload);
  m.CompleteBatch(); // the previous batch's splits and ADWIN changes, before this batch's settings
  double completing = 0.0;
  lap(completing); // CompleteBatch times its own parts
  *reinterpret_cast<std::uint64_t *>(staged + layout.firstIndex) = firstIndex;
  StreamTreeInfo * info = reinterpret_cast<StreamTreeInfo *>(staged + layout.info);
  double *         voteScale = reinterpret_cast<double *>(staged + layout.voteScale);
  for (int t = 0; t < m.members; ++t)
  {
    const AdwinMemberSummary & s = m.summaries[std::size_t(t)]; // ForestMemberMonitor::Accuracy's
    const double               accuracy =
      m.adwinOnDevice ? (s.seen > 0 ? double(s.correct) / double(s.seen) : 0.0) : m.monitors[std::size_t(t)].Accuracy();
    voteScale[std::size_t(t)] = m.options.weightedVote ? accuracy : 0.0;
    for (int k = 0; k < 2; ++k)
    {
      const int        p = 2 * t + k;
      StreamTreeInfo & i = info[std::size_t(p)];
      const bool       isMain = k == m.mainOf[std::size_t(t)];
      i = StreamTreeInfo{};
      i.active = m.mirror[std::size_t(p)].active ? 1 : 0;
      i.member = t;
      i.isMain = isMain ? 1 : 0;
      i.slots = m.treeGrowth[std::size_t(p)].slots;
      i.poissonStream = 2 * std::uint64_t(t) + (isMain ? 0 : 1);
    }
  }
  // Everything the batch's launches touch is allocated now: none of it may be while a batch is captured.
  m.block.Reserve(layout.bytes);
  // A forest whose learning is order-free (nominal attributes only) never sorts: no order, sorted
  // copies or sort scratch for it.
  const bool sorts = !StreamLearnIsOrderFree(m.shape);
  for (auto * b : { &m.keys, &m.bagWeight })
    b->Reserve(P * N);
  if (sorts)
    for (auto * b : { &m.order, &m.sortedKeys, &m.sortedOrder })
      b->Reserve(P * N);
  m.leaf.Reserve(P * N);
  m.score.Reserve(P * N);
  m.votes.Reserve(M * N * std::size_t(m.classes));
  m.correct.Reserve(M * N);
  m.predictions.Reserve(N);
  const int eventCapacity = StreamAdwinEventCapacity(n, m.adwinSettings.clock);
  m.adwinEvents.Reserve(M * std::size_t(eventCapacity));
  m.adwinSummaries.Reserve(M);
  int keyBits = 1;
  while ((std::uint64_t(1) << keyBits) <= std::uint64_t(P) * std::uint64_t(m.arrays.slotCapacity))
    ++keyBits;
  ++keyBits; // kStreamNoKey's low bits are all ones: above every key

  // The plan: every argument of the batch's launches (BatchPlan), assigned field by field into the
  // forest's one plan so that its padding never changes.
  detail::BatchPlan & q = m.plan;
  std::uint8_t *      block = m.block.data();
  q.shape = m.shape;
  q.arrays = m.arrays;
  StreamBatchArgs & b = q.batch;
  b.x = reinterpret_cast<const float *>(block + layout.x);
  b.labels = reinterpret_cast<const std::int32_t *>(block + layout.labels);
  b.n = n;
  b.members = m.members;
  b.firstIndex = reinterpret_cast<const std::uint64_t *>(block + layout.firstIndex);
  b.seed = m.options.seed;
  b.lambda = m.options.lambda;
  b.expNegLambda = std::exp(-m.options.lambda); // as the CPU forest
  b.info = reinterpret_cast<const StreamTreeInfo *>(block + layout.info);
  b.voteScale = reinterpret_cast<const double *>(block + layout.voteScale);
  b.leaf = m.leaf.data();
  b.score = m.score.data();
  b.bagWeight = m.bagWeight.data();
  b.votes = m.votes.data();
  b.correct = m.correct.data();
  b.predictions = m.predictions.data();
  b.keys = m.keys.data();
  b.order = sorts ? m.order.data() : nullptr;
  b.sortedKeys = sorts ? m.sortedKeys.data() : nullptr;
  b.sortedOrder = sorts ? m.sortedOrder.data() : nullptr;
  q.block = block;
  q.stagedBlock = staged;
  q.blockBytes = layout.bytes;
  q.count = std::int64_t(P * N);
  q.keyBits = std::min(keyBits, 32);
  q.adwinOnDevice = m.adwinOnDevice ? 1 : 0;
  q.sortScratchBytes = 0;
  q.sortScratch = sorts ? e.SortScratch(q.count, q.keyBits, q.sortScratchBytes) : nullptr;
  q.predictionsHost = m.pinnedPredictions.Reserve(N);
  q.correctHost = m.adwinOnDevice ? nullptr : m.pinnedCorrect.Reserve(M * N);
  StreamAdwinArgs & a = q.adwin;
  a.settings = m.adwinSettings;
  a.members = m.members;
  a.n = n;
  a.correct = m.correct.data();
  a.state = m.memberData.data();
  a.scratch = m.adwinScratch.data();
  a.events = m.adwinEvents.data();
  a.eventCapacity = eventCapacity;
  a.teamThreads = m.adwinTeamThreads;
  a.summaries = m.adwinSummaries.data();
  q.summariesHost = m.pinnedSummaries.Reserve(M);
  q.eventsHost = m.pinnedEvents.Reserve(M * std::size_t(eventCapacity));
  q.gracePeriod = m.treeOptions.gracePeriod;
  q.stepTimes = e.StepTimes() ? 1 : 0;
  q.splitCount = m.splitCount.data();
  q.splitOfSlot = m.splitOfSlot.data();
  q.splits = m.splits.data();
  q.growth = m.growth.data();
  q.growScratch = m.growScratch.data();
  q.growOverflow = m.growOverflow.data();
  q.splitCountHost = m.pinnedCount.Reserve(1);
  q.growthHost = m.pinnedGrowth.Reserve(P);
  q.growOverflowHost = m.pinnedOverflow.Reserve(3);
  lap(m.timings.upload);

  e.RunBatch(q, [&e, &q] { QueueBatch(e, q); });
  e.WaitForMark(0);
  std::copy(q.predictionsHost, q.predictionsHost + N, predictions.begin());
  lap(m.timings.votes);
  // The batch's learning, split checks and ADWIN step go on on the device while the caller takes the
  // predictions (and reads the next batch): CompleteBatch applies what they decided.
  m.batchPending = true;
}

void
DeviceStreamingForest::Finish()
{
  m_Impl->CompleteBatch();
}

void
DeviceStreamingForest::Impl::CompleteBatch()
{
  if (!batchPending)
    return;
  batchPending = false; // an error below leaves no batch to complete twice
  Impl &                    m = *this;
  detail::Backend &         e = *m.executor;
  const detail::BatchPlan & q = m.plan;
  const std::size_t         P = std::size_t(m.trees), M = std::size_t(m.members), N = std::size_t(q.batch.n);
  const int                 eventCapacity = q.adwin.eventCapacity;
  using Clock = std::chrono::steady_clock;
  auto lap = [last = Clock::now()](double & into) mutable
  {
    const auto now = Clock::now();
    into += std::chrono::duration<double>(now - last).count();
    last = now;
  };
  enum : std::uint8_t
  {
    StartBackground = kAdwinEventStartBackground,
    PromoteBackground = kAdwinEventPromoteBackground,
    StartFresh = kAdwinEventStartFresh
  };
  m.events.resize(M);
  if (!m.adwinOnDevice)
  {
    // ADWIN per member on host threads (members are independent; each writes only its own monitor and
    // event list), overlapping the device's learning of the batch.
    m.executor->WaitForMark(1);
    const std::uint8_t * correct = q.correctHost;
    m.parallel->For(m.members,
                    [&](int t)
                    {
                      auto & events = m.events[std::size_t(t)];
                      events.clear();
                      m.monitors[std::size_t(t)].ObserveBatch(
                        correct + std::size_t(t) * N,
                        N,
                        [&] { events.push_back(StartBackground); },
                        [&](bool hasBackground) { events.push_back(hasBackground ? PromoteBackground : StartFresh); });
                    });
    lap(m.timings.drift);
  }
  e.WaitForMark(2); // learn, split checks and the grow step done; the trees' sizes back
  lap(m.timings.device);
  if (m.adwinOnDevice)
  {
    m.executor->WaitForAdwin();
    const AdwinMemberSummary * summaries = m.pinnedSummaries.data();
    const std::uint8_t *       events = m.pinnedEvents.data();
    for (std::size_t t = 0; t < M; ++t)
    {
      if (summaries[t].overflow)
        CANOPY_THROW("streaming forest: member " << t << "'s device ADWIN step ran out of bucket rows or events");
      m.summaries[t] = summaries[t];
      const std::uint8_t * at = events + t * std::size_t(eventCapacity);
      m.events[t].assign(at, at + summaries[t].events);
    }
    lap(m.timings.drift);
  }
  e.Synchronize();
  if (e.StepTimes())
  {
    e.CollectSteps(m.timings); // this batch's steps, and the previous batch's updates
    m.timings.driftDevice = m.timings.stepSeconds[int(DeviceForestStep::Adwin)];
  }
  lap(m.timings.device);
  // A tree whose splits did not fit its arrays changed nothing: grow them to what it needs and run the
  // grow step again (the trees that fit have applied theirs and cleared their marks).
  if (q.growOverflowHost[0])
  {
    m.GrowToHold(std::size_t(q.growOverflowHost[1]), std::size_t(q.growOverflowHost[2]));
    e.Zero(m.growOverflow.data(), 3 * sizeof(std::int32_t));
    e.GrowTrees(m.shape,
                m.arrays,
                q.batch.info,
                q.batch.seed,
                m.splitOfSlot.data(),
                m.splits.data(),
                m.growth.data(),
                m.growScratch.data(),
                m.growOverflow.data());
    e.ToHost(q.growthHost, m.growth.data(), P * sizeof(StreamTreeGrowth));
    e.ToHost(q.growOverflowHost, m.growOverflow.data(), 3 * sizeof(std::int32_t));
    e.Synchronize();
    if (q.growOverflowHost[0])
      CANOPY_THROW("streaming forest: the device's grow step overflowed arrays grown to its needs");
    ++m.timings.growRetries;
    lap(m.timings.device);
  }
  m.treeGrowth.assign(q.growthHost, q.growthHost + P);
  m.timings.splitsApplied += *q.splitCountHost;
  // ADWIN's changes in member order, drawing tree keys in the order the CPU forest does.
  for (int t = 0; t < m.members; ++t)
  {
    int & main = m.mainOf[std::size_t(t)];
    for (const std::uint8_t event : m.events[std::size_t(t)])
    {
      if (event == StartBackground)
        m.ResetTree(2 * t + 1 - main, m.monitors[std::size_t(t)].NextTreeKey(t));
      else if (event == PromoteBackground)
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
  m.timings.apiCalls += e.TakeCalls();
  m.timings.graphCaptures = e.Captures();
  m.timings.graphNodes = e.GraphNodes();
}

} // namespace canopy::streaming
