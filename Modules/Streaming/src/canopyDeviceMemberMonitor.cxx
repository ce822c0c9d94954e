#include "canopyDeviceMemberMonitor.h"

#include "canopy/Errors.h"

namespace canopy::streaming
{
namespace
{
constexpr int kMonitorClock = 32; // Adwin's default, which ForestMemberMonitor's detectors use

AdwinState
StateOf(const AdwinDetectorData & d)
{
  AdwinState s;
  for (int r = 0; r < d.rows; ++r)
  {
    s.rowCounts.push_back(d.counts[r]);
    for (int k = 0; k < d.counts[r]; ++k)
    {
      s.totals.push_back(d.buckets[r * kAdwinDeviceStride + k].total);
      s.variances.push_back(d.buckets[r * kAdwinDeviceStride + k].variance);
    }
  }
  s.width = d.width;
  s.ticks = d.ticks;
  s.detections = d.detections;
  s.total = d.total;
  s.variance = d.variance;
  return s;
}

void
DetectorFromState(const AdwinState & s, AdwinDetectorData & d)
{
  if (s.rowCounts.size() > std::size_t(kAdwinDeviceRows))
    CANOPY_THROW("ADWIN state: " << s.rowCounts.size() << " rows; the device step holds at most " << kAdwinDeviceRows);
  AdwinDetectorReset(d);
  d.overflow = 0;
  std::size_t next = 0;
  for (std::size_t r = 0; r < s.rowCounts.size(); ++r)
  {
    d.counts[r] = s.rowCounts[r];
    // Whole error counts (the monitor's Restore checked them); Binary detectors keep no bucket variances
    // (an older model's are dropped, as Adwin::Restore does).
    for (int k = 0; k < s.rowCounts[r]; ++k, ++next)
      d.buckets[r * kAdwinDeviceStride + std::size_t(k)] = AdwinBucket{ s.totals[next], 0.0 };
  }
  d.rows = int(s.rowCounts.size());
  d.width = s.width;
  d.ticks = s.ticks;
  d.detections = s.detections;
  d.total = s.total;
  d.variance = AdwinBinaryVarianceSum(d.width, d.total);
}
} // namespace

AdwinMonitorSettings
DeviceMonitorSettings(const DriftSettings & settings)
{
  AdwinMonitorSettings s{};
  s.driftDetection = settings.driftDetection ? 1 : 0;
  s.backgroundTrees = settings.backgroundTrees ? 1 : 0;
  s.clock = kMonitorClock;
  s.warningDelta = settings.warningDelta;
  s.driftDelta = settings.driftDelta;
  return s;
}

MemberMonitorState
MonitorStateFromDevice(const AdwinMemberData & m, std::uint64_t generation)
{
  MemberMonitorState s;
  s.seen = m.seen;
  s.correct = m.correct;
  s.generation = generation;
  s.drifts = m.drifts;
  s.warnings = m.warnings;
  s.background = m.background != 0;
  s.warning = StateOf(m.twins ? m.drift : m.warning);
  s.drift = StateOf(m.drift);
  return s;
}

void
DeviceMemberFromState(const MemberMonitorState & state, const DriftSettings & settings, AdwinMemberData & m)
{
  ForestMemberMonitor check(settings);
  check.Restore(state); // its checks (rows, widths, counters, finite sums, whole error counts)
  AdwinMemberReset(DeviceMonitorSettings(settings), m);
  DetectorFromState(state.warning, m.warning);
  DetectorFromState(state.drift, m.drift);
  m.seen = state.seen;
  m.correct = state.correct;
  m.drifts = state.drifts;
  m.warnings = state.warnings;
  m.background = state.background ? 1 : 0;
  m.twins = 0; // two windows, as ForestMemberMonitor::Restore
}

} // namespace canopy::streaming
