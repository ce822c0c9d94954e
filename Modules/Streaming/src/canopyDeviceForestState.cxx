// The device streaming forest's accessors and its state for saving and restoring a model, and where its
// members' ADWIN step runs (canopyDeviceStreamingForest.cxx runs the batches).
#include "canopyDeviceForestImpl.h"

namespace canopy::streaming
{

int
DeviceStreamingForest::NumberOfTrees() const
{
  return m_Impl->members;
}

std::int64_t
DeviceStreamingForest::DriftsDetected() const
{
  m_Impl->CompleteBatch();
  std::int64_t n = 0;
  if (m_Impl->adwinOnDevice)
    for (const auto & s : m_Impl->summaries)
      n += s.drifts;
  else
    for (const auto & m : m_Impl->monitors)
      n += m.Drifts();
  return n;
}

std::int64_t
DeviceStreamingForest::WarningsDetected() const
{
  m_Impl->CompleteBatch();
  std::int64_t n = 0;
  if (m_Impl->adwinOnDevice)
    for (const auto & s : m_Impl->summaries)
      n += s.warnings;
  else
    for (const auto & m : m_Impl->monitors)
      n += m.Warnings();
  return n;
}

std::int64_t
DeviceStreamingForest::TotalNodes() const
{
  m_Impl->CompleteBatch();
  std::int64_t n = 0; // the device's counts: no tree's nodes need to come back for them
  for (int t = 0; t < m_Impl->members; ++t)
    n += m_Impl->treeGrowth[std::size_t(2 * t + m_Impl->mainOf[std::size_t(t)])].nodes;
  return n;
}

const HoeffdingTreeNodes &
DeviceStreamingForest::TreeNodes(int t) const
{
  m_Impl->CompleteBatch();
  const int p = 2 * t + m_Impl->mainOf.at(std::size_t(t));
  m_Impl->RefreshMirror(p);
  return m_Impl->mirror.at(std::size_t(p)).nodes;
}

std::vector<std::uint32_t>
DeviceStreamingForest::TreeClassCounts(int t) const
{
  m_Impl->CompleteBatch();
  const Impl &               m = *m_Impl;
  const int                  p = 2 * t + m.mainOf.at(std::size_t(t));
  const std::size_t          slots = std::size_t(m.treeGrowth[std::size_t(p)].slots), C = std::size_t(m.classes);
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
  m_Impl->CompleteBatch();
  return m_Impl->arrays.nodeCapacity;
}

int
DeviceStreamingForest::SlotCapacity() const
{
  m_Impl->CompleteBatch();
  return m_Impl->arrays.slotCapacity;
}

void
DeviceStreamingForest::SetAdwinOnDevice(bool onDevice)
{
  Impl & m = *m_Impl;
  m.CompleteBatch();
  if (onDevice == m.adwinOnDevice)
    return;
  if (onDevice)
  {
    std::vector<MemberMonitorState> states;
    for (const auto & monitor : m.monitors)
      states.push_back(monitor.State());
    m.UploadMembers(states);
  }
  else
  {
    const std::vector<MemberMonitorState> states = m.DeviceMonitorStates();
    for (int t = 0; t < m.members; ++t)
      m.monitors[std::size_t(t)].Restore(states[std::size_t(t)]);
  }
  m.adwinOnDevice = onDevice;
}

bool
DeviceStreamingForest::AdwinOnDevice() const
{
  return m_Impl->adwinOnDevice;
}

void
DeviceStreamingForest::SetAdwinTeamThreads(int threads)
{
  if (std::find(std::begin(kStreamAdwinTeamSizes), std::end(kStreamAdwinTeamSizes), threads) ==
      std::end(kStreamAdwinTeamSizes))
    CANOPY_THROW("streaming forest: the device ADWIN step's block of " << threads << " threads; 256, 512 or 1024");
  m_Impl->adwinTeamThreads = threads;
}

int
DeviceStreamingForest::AdwinTeamThreads() const
{
  return m_Impl->adwinTeamThreads;
}

void
DeviceStreamingForest::SetStepTimes(bool on)
{
  m_Impl->CompleteBatch();
  m_Impl->executor->SetStepTimes(on);
  m_Impl->timings.stepTimes = on;
}

bool
DeviceStreamingForest::StepTimes() const
{
  return m_Impl->executor->StepTimes();
}

void
DeviceStreamingForest::SetCudaGraphs(bool on)
{
  m_Impl->CompleteBatch();
  m_Impl->executor->SetGraphs(on);
}

bool
DeviceStreamingForest::CudaGraphs() const
{
  return m_Impl->executor->Graphs();
}

const char *
DeviceForestStepName(DeviceForestStep step)
{
  switch (step)
  {
    case DeviceForestStep::Upload:
      return "upload";
    case DeviceForestStep::Route:
      return "route";
    case DeviceForestStep::SumVotes:
      return "sum_votes";
    case DeviceForestStep::ResultsBack:
      return "results_back";
    case DeviceForestStep::Adwin:
      return "adwin";
    case DeviceForestStep::Sort:
      return "sort";
    case DeviceForestStep::Learn:
      return "learn";
    case DeviceForestStep::SplitChecks:
      return "split_checks";
    case DeviceForestStep::Grow:
      return "grow";
    case DeviceForestStep::SizesBack:
      return "sizes_back";
    case DeviceForestStep::Updates:
      return "updates";
    case DeviceForestStep::Count:
      break;
  }
  return "?";
}

const DeviceForestTimings &
DeviceStreamingForest::Timings() const
{
  m_Impl->CompleteBatch();
  return m_Impl->timings;
}

StreamingForestState
DeviceStreamingForest::State() const
{
  m_Impl->CompleteBatch();
  for (int p = 0; p < m_Impl->trees; ++p)
    m_Impl->RefreshMirror(p);
  const Impl &                          m = *m_Impl;
  StreamingForestState                  s;
  const std::vector<MemberMonitorState> onDevice =
    m.adwinOnDevice ? m.DeviceMonitorStates() : std::vector<MemberMonitorState>{};
  for (int t = 0; t < m.members; ++t)
  {
    const int         main = m.mainOf[std::size_t(t)];
    ForestMemberState member;
    member.monitor = m.adwinOnDevice ? onDevice[std::size_t(t)] : m.monitors[std::size_t(t)].State();
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
  m.CompleteBatch(); // its changes are replaced, but its device work must end first
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
  std::vector<MemberMonitorState> states;
  for (const ForestMemberState & member : s.members)
    states.push_back(member.monitor);
  if (m.adwinOnDevice)
    m.UploadMembers(states); // may refuse a state the device step cannot hold (before anything else)
  m.monitors.swap(monitors);
  for (detail::TreeMirror & mirror : m.mirror) // no updates queued before the restore are sent
    mirror = detail::TreeMirror{};
  m.treeGrowth.assign(m.treeGrowth.size(), StreamTreeGrowth{}); // MirrorTree sets the restored trees'
  m.growthSent = false;
  for (int t = 0; t < m.members; ++t)
  {
    const ForestMemberState & member = s.members[std::size_t(t)];
    m.mainOf[std::size_t(t)] = 0;
    m.MirrorTree(2 * t, member.tree);
    if (member.hasBackground)
      m.MirrorTree(2 * t + 1, member.background);
    else
      m.mirror[std::size_t(2 * t + 1)] = detail::TreeMirror{};
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
