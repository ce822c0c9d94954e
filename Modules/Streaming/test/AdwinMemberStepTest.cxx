// The device ADWIN step (canopy/AdwinMemberStep.h, run here as the host loop of StreamingAdwinLaunch.h
// with a team of one) against ForestMemberMonitor::ObserveBatch: members whose error rate rises and
// falls, in batches of 1, 7, 1000 and 4096 results, under four drift settings; after every batch the
// events and counters, and at the end of every tenth batch both detectors' windows bucket for bucket,
// must be equal bit for bit. The comparison itself is checked to catch one flipped bit of a sum.
#include "canopyDeviceMemberMonitor.h"
#include "canopyForestMember.h"

#include "canopy/CounterRandom.h"
#include "canopy/StreamingAdwinLaunch.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using canopy::streaming::DriftSettings;
using canopy::streaming::ForestMemberMonitor;
using canopy::streaming::MemberMonitorState;

namespace
{

bool
SameBits(double a, double b)
{
  return std::memcmp(&a, &b, sizeof a) == 0;
}

/** Where two detector states differ ("" when equal bit for bit). */
std::string
Difference(const canopy::streaming::AdwinState & a, const canopy::streaming::AdwinState & b)
{
  std::ostringstream out;
  if (a.rowCounts != b.rowCounts)
    out << "row counts; ";
  if (a.width != b.width || a.ticks != b.ticks || a.detections != b.detections)
    out << "width " << a.width << "/" << b.width << " ticks " << a.ticks << "/" << b.ticks << " detections "
        << a.detections << "/" << b.detections << "; ";
  if (!SameBits(a.total, b.total) || !SameBits(a.variance, b.variance))
    out << "sums " << a.total << "/" << b.total << " " << a.variance << "/" << b.variance << "; ";
  if (a.totals.size() != b.totals.size() || a.variances.size() != b.variances.size())
    out << "bucket lists; ";
  else
    for (std::size_t k = 0; k < a.totals.size(); ++k)
      if (!SameBits(a.totals[k], b.totals[k]) || !SameBits(a.variances[k], b.variances[k]))
      {
        out << "bucket " << k << "; ";
        break;
      }
  return out.str();
}

std::string
Difference(const MemberMonitorState & a, const MemberMonitorState & b)
{
  std::ostringstream out;
  if (a.seen != b.seen || a.correct != b.correct || a.drifts != b.drifts || a.warnings != b.warnings ||
      a.background != b.background)
    out << "counters; ";
  const std::string w = Difference(a.warning, b.warning), d = Difference(a.drift, b.drift);
  if (!w.empty())
    out << "warning: " << w;
  if (!d.empty())
    out << "drift: " << d;
  return out.str();
}

/** Member t's result i: right with a probability that changes abruptly and gradually over the stream. */
std::uint8_t
Result(int t, std::int64_t i)
{
  const std::int64_t phase = (i + 977 * t) / (3000 + 500 * t);
  const double       base = phase % 3 == 0 ? 0.1 : phase % 3 == 1 ? 0.45 : 0.25;
  const double       ramp = 0.15 * double((i + 331 * t) % 5000) / 5000.0;
  return canopy::CounterUniform(17, std::uint64_t(t), std::uint64_t(i)) >= base + ramp ? 1 : 0;
}

struct Setting
{
  const char *  name;
  DriftSettings drift;
};

std::vector<Setting>
Settings()
{
  DriftSettings twins; // the defaults: background trees, warning 0.01 >= 2 x drift 0.001 (shared window)
  DriftSettings two = twins;
  two.warningDelta = 0.0015; // two windows from the start
  DriftSettings noBackground = twins;
  noBackground.backgroundTrees = false;
  DriftSettings off = twins;
  off.driftDetection = false;
  return { { "twins", twins }, { "two-windows", two }, { "no-background", noBackground }, { "off", off } };
}

/** A team of `lanes` that runs For's indices last first: a For whose iterations depended on each other
 * (one index reading what another writes in the same For, a race on the device) would differ here. */
struct ReversedTeam
{
  int  lanes;
  int  Lanes() const { return lanes; }
  void Phase(int) const {}
  template<typename F>
  void For(int n, F f) const
  {
    for (int i = n; i-- > 0;)
      f(i);
  }
  template<typename F>
  void Single(F f) const
  {
    f();
  }
  template<typename F>
  int FirstOf(int n, F f) const // every index, last first
  {
    int first = n;
    for (int i = n; i-- > 0;)
      first = f(i) ? i : first;
    return first;
  }
  void ErrorsBefore(const std::uint8_t * correct, int n, std::int32_t * out) const
  {
    canopy::AdwinSerialTeam{}.ErrorsBefore(correct, n, out);
  }
};

/** Runs `members` monitors and the device step side by side over `total` results per member; with
 * `lanes` > 1 the step's team says it has that many lanes, so it runs the wide teams' code (the checks
 * split into shares, AdwinCheckShares.h) that the CUDA block runs; `reversed`: For's indices last first. */
void
CompareStep(const Setting & setting, int batch, int members, std::int64_t total, int lanes = 1, bool reversed = false)
{
  SCOPED_TRACE(std::string(setting.name) + ", batch " + std::to_string(batch) + ", lanes " + std::to_string(lanes) +
               (reversed ? ", reversed" : ""));
  std::vector<ForestMemberMonitor>        monitors(std::size_t(members), ForestMemberMonitor(setting.drift));
  std::vector<canopy::AdwinMemberData>    state{ std::size_t(members) };
  auto                                    scratch = std::make_unique<canopy::AdwinStepScratch[]>(std::size_t(members));
  std::vector<canopy::AdwinMemberSummary> summaries{ std::size_t(members) };
  const canopy::AdwinMonitorSettings      settings = canopy::streaming::DeviceMonitorSettings(setting.drift);
  for (auto & m : state)
    canopy::AdwinMemberReset(settings, m);
  const int                 capacity = canopy::StreamAdwinEventCapacity(batch, settings.clock);
  std::vector<std::uint8_t> correct(std::size_t(members) * std::size_t(batch)),
    events(std::size_t(members) * std::size_t(capacity));
  std::int64_t drifts = 0, warnings = 0;
  for (std::int64_t first = 0, b = 0; first < total; first += batch, ++b)
  {
    for (int t = 0; t < members; ++t)
      for (int i = 0; i < batch; ++i)
        correct[std::size_t(t) * std::size_t(batch) + std::size_t(i)] = Result(t, first + i);
    canopy::StreamAdwinArgs a;
    a.settings = settings;
    a.members = members;
    a.n = batch;
    a.correct = correct.data();
    a.state = state.data();
    a.scratch = scratch.get();
    a.events = events.data();
    a.eventCapacity = capacity;
    a.summaries = summaries.data();
    if (lanes == 1)
      canopy::host::StreamAdwinStep(a);
    else
      for (int t = 0; t < members; ++t)
        if (reversed)
          canopy::StreamAdwinMemberItem(ReversedTeam{ lanes }, a, t, a.state[t], a.scratch[t]);
        else
          canopy::StreamAdwinMemberItem(canopy::AdwinSerialTeam{ lanes }, a, t, a.state[t], a.scratch[t]);
    for (int t = 0; t < members; ++t)
    {
      std::vector<std::uint8_t> expected;
      monitors[std::size_t(t)].ObserveBatch(
        correct.data() + std::size_t(t) * std::size_t(batch),
        std::size_t(batch),
        [&] { expected.push_back(canopy::kAdwinEventStartBackground); },
        [&](bool background)
        { expected.push_back(background ? canopy::kAdwinEventPromoteBackground : canopy::kAdwinEventStartFresh); });
      const canopy::AdwinMemberSummary & s = summaries[std::size_t(t)];
      ASSERT_EQ(s.overflow, 0);
      const std::vector<std::uint8_t> got(events.begin() + std::ptrdiff_t(t) * capacity,
                                          events.begin() + std::ptrdiff_t(t) * capacity + s.events);
      ASSERT_EQ(got, expected) << "member " << t << ", batch " << b;
      const MemberMonitorState want = monitors[std::size_t(t)].State();
      ASSERT_EQ(s.seen, want.seen) << "member " << t << ", batch " << b;
      ASSERT_EQ(s.correct, want.correct) << "member " << t << ", batch " << b;
      ASSERT_EQ(s.drifts, want.drifts);
      ASSERT_EQ(s.warnings, want.warnings);
      if (b % 10 == 9 || first + batch >= total)
        ASSERT_EQ(Difference(canopy::streaming::MonitorStateFromDevice(state[std::size_t(t)], want.generation), want),
                  "")
          << "member " << t << ", batch " << b;
      drifts += s.drifts > 0 ? 1 : 0;
      warnings += s.warnings;
    }
  }
  if (setting.drift.driftDetection)
    EXPECT_GT(drifts, 0) << "the streams must make the detectors cut";
}

} // namespace

TEST(AdwinMemberStep, EqualsTheMonitorBitForBitAtEveryBatchSize)
{
  for (const Setting & setting : Settings())
    for (const int batch : { 1, 7, 1000, 4096 })
      CompareStep(setting, batch, batch == 1 ? 3 : 8, batch == 1 ? 12000 : 40000);
}

TEST(AdwinMemberStep, WideTeamsSplitChecksEqualTheMonitor)
{
  // The CUDA block's checks (a check's boundaries in shares over its threads) on the host: 32 lanes
  // give a batch of 1000's ~31 checks a share each, 256 lanes (the kernel's block) eight each.
  for (const Setting & setting : Settings())
    for (const int lanes : { 32, 256 })
      for (const int batch : { 7, 1000, 4096 })
        CompareStep(setting, batch, 8, 40000, lanes);
}

TEST(AdwinMemberStep, ForsIndicesInAnyOrderEqualTheMonitor)
{
  // The team's For calls may run their indices in any order (a CUDA block's threads): last first, with
  // the host's one lane and with the block's 256, the results are the same.
  for (const Setting & setting : Settings())
    for (const int lanes : { 1, 256 })
      CompareStep(setting, 1000, 8, 40000, lanes, true);
}

TEST(AdwinMemberStep, RestoredStatesContinueAsTheMonitor)
{
  // A monitor's saved state (two windows after a restore) continues on the device as on the host.
  const DriftSettings       settings;
  ForestMemberMonitor       monitor(settings);
  std::vector<std::uint8_t> correct(20000);
  for (std::size_t i = 0; i < correct.size(); ++i)
    correct[i] = Result(2, std::int64_t(i));
  monitor.ObserveBatch(
    correct.data(), 9000, [] {}, [](bool) {});
  canopy::AdwinMemberData m;
  canopy::streaming::DeviceMemberFromState(monitor.State(), settings, m);
  ForestMemberMonitor restored(settings);
  restored.Restore(monitor.State());
  auto                       scratch = std::make_unique<canopy::AdwinStepScratch>();
  canopy::AdwinMemberSummary summary{};
  std::vector<std::uint8_t>  events(64);
  canopy::StreamAdwinArgs    a;
  a.settings = canopy::streaming::DeviceMonitorSettings(settings);
  a.members = 1;
  a.n = 1000;
  a.state = &m;
  a.scratch = scratch.get();
  a.events = events.data();
  a.eventCapacity = int(events.size());
  a.summaries = &summary;
  for (std::size_t first = 9000; first + 1000 <= correct.size(); first += 1000)
  {
    a.correct = correct.data() + first;
    canopy::host::StreamAdwinStep(a);
    restored.ObserveBatch(
      correct.data() + first, 1000, [] {}, [](bool) {});
    ASSERT_EQ(Difference(canopy::streaming::MonitorStateFromDevice(m, 0), restored.State()), "") << first;
  }
}

TEST(AdwinMemberStep, TheComparisonSeesOneFlippedBit)
{
  // The test above would miss a wrong Welford term or a misplaced cut only if its comparison did.
  const DriftSettings       settings;
  ForestMemberMonitor       monitor(settings);
  std::vector<std::uint8_t> correct(5000);
  for (std::size_t i = 0; i < correct.size(); ++i)
    correct[i] = Result(1, std::int64_t(i));
  monitor.ObserveBatch(
    correct.data(), correct.size(), [] {}, [](bool) {});
  const MemberMonitorState s = monitor.State();
  ASSERT_EQ(Difference(s, s), "");
  MemberMonitorState flipped = s;
  std::uint64_t      bits = 0;
  std::memcpy(&bits, &flipped.drift.variance, sizeof bits);
  bits ^= 1;
  std::memcpy(&flipped.drift.variance, &bits, sizeof bits);
  EXPECT_NE(Difference(flipped, s), "");
  MemberMonitorState moved = s;
  moved.drift.variances.back() = std::nextafter(moved.drift.variances.back(), 1e300);
  EXPECT_NE(Difference(moved, s), "");
}

TEST(AdwinMemberStep, RefusesFractionalErrorSums)
{
  const DriftSettings       settings;
  ForestMemberMonitor       monitor(settings);
  std::vector<std::uint8_t> correct(200, 0);
  monitor.ObserveBatch(
    correct.data(), correct.size(), [] {}, [](bool) {});
  MemberMonitorState s = monitor.State();
  s.drift.totals[0] += 0.5;
  s.drift.total += 0.5;
  canopy::AdwinMemberData m;
  EXPECT_THROW(canopy::streaming::DeviceMemberFromState(s, settings, m), canopy::Error);
}
