// A forest member's ADWIN step (ForestMemberMonitor::ObserveBatch: the warning and drift detectors on
// its 0/1 test results, and the events they raise) as plain data and a team of cooperating lanes, so a
// CUDA block runs one member's batch in parallel and the host runs the same code with a team of one.
//
// The detectors are Binary (canopyAdwin.h): the window's variance sum is the closed form of its width
// and error count, so nothing here is summed in stream order. Per run of results up to the next cut
// (AdwinTeamAppendRun), a segment of at most kAdwinSegment:
//  1. the errors before each result (a prefix; exact integers);
//  2. the old window's bucket boundaries as cumulative sums (AdwinOldBoundaries, a row per lane);
//  3. every check instant of the segment at once, speculatively (each assumes no cut before it): the
//     appended window's scan without appending. A team of one runs AdwinWouldCutAfter (AdwinBatch.h)
//     per check; a wider team splits each check's boundaries into shares (AdwinCheckShares.h), so its
//     lanes hold a check's share each instead of a whole check each;
//  4. the first check that cuts ends the run; the values up to it enter the histogram at once
//     (AdwinTeamInsertRun): the rows' shape after follows from the counts (AdwinRowMerges), and each
//     bucket of it is a difference of two cumulative sums (merges join neighbours, so its ends are old
//     boundaries or new results), exact integers: the totals the merges one at a time would give.
// Cuts themselves (Check: the drop loop) and the monitor's events are rare and run on one lane.
// Everything is bit for bit the host Adwin's and ForestMemberMonitor's (AdwinMemberStepTest).
//
// Team: Lanes() says how many lanes it has, For(n, f) calls f(i) for i in [0, n) (lanes split the
// indices), Single(f) calls f once, FirstOf(n, f) returns to every lane the smallest i in [0, n) with
// f(i) true, or n (f: no side effects; a lane stops at its first true), and
// ErrorsBefore(correct, n, out) writes out[i] = the errors (correct == 0) among correct[0..i) for
// i <= n (a block: a ballot and a population count per 32 results); all of them return when every
// lane is done and see the memory written before them. Values a Single
// computes for all lanes go through memory (the scratch), never through a lane's locals.
#pragma once

#include "canopy/AdwinBatch.h"
#include "canopy/AdwinCheckShares.h"

#include <cstdint>

namespace canopy
{

/** Rows a device detector holds: row r holds buckets of 2^r values, so 2^40 values at most. */
constexpr int kAdwinDeviceRows = 40;
/** maxBuckets + 1 of the monitors' detectors (Adwin's default maxBuckets 5). */
constexpr int kAdwinDeviceStride = 6;
/** Values one speculative segment takes at most (the scratch's size). */
constexpr int kAdwinSegment = 2048;
/** Checks one segment plans at most: a segment's due checks at the monitors' clock of 32 (a smaller
 * clock makes shorter segments). */
constexpr int kAdwinMaxPlans = kAdwinSegment / 32 + 1;
/** A speculative check's plan in the device's rows. */
using AdwinDeviceCheckPlan = AdwinCheckPlan<kAdwinDeviceRows>;
/** A detector's old bucket boundaries, for the checks' shares. */
using AdwinDeviceOldBoundaries = AdwinOldBoundaries<kAdwinDeviceRows, kAdwinDeviceStride>;

/** The events a member's step raises, in stream order (the host applies them to the trees). */
enum : std::uint8_t
{
  kAdwinEventStartBackground = 0,
  kAdwinEventPromoteBackground = 1,
  kAdwinEventStartFresh = 2
};

/** One Adwin (maxBuckets 5) as plain data: Adwin's members, rows in fixed slots. */
struct AdwinDetectorData
{
  std::int64_t width, ticks, detections;
  double       total, variance;
  std::int32_t rows, overflow; // overflow: more rows needed than kAdwinDeviceRows (an error)
  std::int32_t counts[kAdwinDeviceRows];
  AdwinBucket  buckets[kAdwinDeviceRows * kAdwinDeviceStride];
};

struct AdwinMonitorSettings
{
  int    driftDetection, backgroundTrees, clock;
  double warningDelta, driftDelta;
};

/** A ForestMemberMonitor's state besides its tree keys (the host keeps the generation). */
struct AdwinMemberData
{
  std::uint64_t     seen, correct;
  std::int64_t      drifts, warnings;
  std::int32_t      background, twins; // twins: `drift` holds both detectors' window (see ObserveBatch)
  AdwinDetectorData warning, drift;
};

/** What the host reads after each batch (a few bytes per member, not the member's state). */
struct AdwinMemberSummary
{
  std::uint64_t seen, correct;
  std::int64_t  drifts, warnings;
  std::int32_t  events, overflow; // events written; overflow: a detector ran out of rows or events
};

/** Per member scratch of one step (lanes exchange values through it); small enough to sit in a CUDA
 * block's shared memory with the member's state (StreamingAdwin.cu). */
struct AdwinStepScratch
{
  // The run AdwinTeamAppendRun made: values appended, whether its last check cuts, the mean before
  // its last value, its errors.
  std::int32_t             appended, cutDue, errors;
  double                   meanBefore;
  std::int32_t             rose[2], events;
  std::int32_t             errorsBefore[kAdwinSegment + 1];
  AdwinDeviceOldBoundaries old;                   // the window's before the segment (checks and insertion)
  AdwinDeviceCheckPlan     plans[kAdwinMaxPlans]; // per check of the segment (a wide team's)
  // The insertion's: the rows' counts after it, the buckets of the rows below each row, and per bucket
  // (newest first) the values' sum up to its newer end.
  std::int32_t after[kAdwinDeviceRows], firstAfter[kAdwinDeviceRows + 1], rowsAfter;
  double       endSum[kAdwinDeviceRows * (kAdwinDeviceStride - 1)];
};

/** Value i of the segment x.errorsBefore was made for (AdwinError of its result: 1 for an error),
 * from the errors' prefix instead of the results (the same 0.0 or 1.0; no second read of them). */
CANOPY_HD double
AdwinSegmentValue(const AdwinStepScratch & x, int i)
{
  return double(x.errorsBefore[i + 1] - x.errorsBefore[i]);
}

/** Where a member's step spends its time (the kernel's opt-in profile, StreamAdwinArgs::profile): a
 * team's Phase(k) charges the time since its previous mark to slot k. The host's team ignores it. */
enum AdwinStepPhase : int
{
  kAdwinPhaseCopyIn = 0, // the member's state into shared memory
  kAdwinPhaseErrors,     // the errors' prefix of a segment
  kAdwinPhaseOldTable,   // the old buckets' boundary table the checks and the insertion read
  kAdwinPhaseChecks,     // every check of the segment at once, and the first that cuts
  kAdwinPhaseInsert,     // the values up to the cut into the rows
  kAdwinPhaseWindow,     // the window's sums and clock
  kAdwinPhaseHandle,     // the monitor: checks that cut (scans and drops), events, counters
  kAdwinPhaseCopyOut,    // the last handling, the summary and the state back
  kAdwinPhases
};

/** The host's team: one lane. `lanes` > 1 makes it run the wide teams' split checks (for tests). */
struct AdwinSerialTeam
{
  int  lanes = 1;
  int  Lanes() const { return lanes; }
  void Phase(int) const {}
  template<typename F>
  void For(int n, F f) const
  {
    for (int i = 0; i < n; ++i)
      f(i);
  }
  template<typename F>
  void Single(F f) const
  {
    f();
  }
  template<typename F>
  int FirstOf(int n, F f) const
  {
    for (int i = 0; i < n; ++i)
      if (f(i))
        return i;
    return n;
  }
  void ErrorsBefore(const std::uint8_t * correct, int n, std::int32_t * out) const
  {
    std::int32_t e = 0;
    for (int i = 0; i < n; ++i)
    {
      out[i] = e;
      e += correct[i] == 0 ? 1 : 0;
    }
    out[n] = e;
  }
};

CANOPY_HD void
AdwinDetectorReset(AdwinDetectorData & d)
{
  d.width = d.ticks = d.detections = 0;
  d.total = d.variance = 0.0;
  d.rows = 0;
}

CANOPY_HD double
AdwinDetectorMean(const AdwinDetectorData & d)
{
  return d.width > 0 ? d.total / double(d.width) : 0.0;
}

/** Adwin::Check with bound parameter delta: restarts the clock and drops the oldest buckets while a
 * cut is found; true when it did. One lane. */
CANOPY_HD bool
AdwinDetectorCheck(AdwinDetectorData & d, double delta)
{
  constexpr std::int64_t kMinWindow = 10;
  d.ticks = 0;
  if (d.width < kMinWindow)
    return false;
  bool changed = false;
  int  rows = d.rows;
  while (d.width >= kMinWindow &&
         AdwinScanForCut(d.buckets, d.counts, rows, kAdwinDeviceStride, d.width, d.total, d.variance, delta))
  {
    AdwinDropOldest(d.buckets, d.counts, rows, kAdwinDeviceStride, d.width, d.total, d.variance, true);
    changed = true;
  }
  d.rows = rows;
  d.detections += changed ? 1 : 0;
  return changed;
}

/** d's AdwinOldBoundaries, a row per lane. */
template<typename Team>
CANOPY_HD void
AdwinTeamOldBoundaries(const Team & team, const AdwinDetectorData & d, AdwinDeviceOldBoundaries & b)
{
  const int rows = d.rows;
  team.For(rows,
           [&](int r)
           {
             double total = 0.0;
             for (int k = 0; k < d.counts[r]; ++k)
               total += d.buckets[r * kAdwinDeviceStride + k].total;
             b.rowTotal[r] = total;
           });
  team.For(rows, [&](int r) { AdwinOldBoundariesRow(d.buckets, d.counts, rows, kAdwinDeviceStride, r, b); });
}

/** AdwinInsertRun for the first n <= kAdwinSegment values of the segment x.errorsBefore was made for,
 * all buckets at once from x.old (the window before them): the shape after, then per bucket of it the
 * sum up to its newer end, then its total as the difference from the next older bucket's. */
template<typename Team>
CANOPY_HD void
AdwinTeamInsertRun(const Team & team, AdwinDetectorData & d, int n, AdwinStepScratch & x)
{
  constexpr int maxBuckets = kAdwinDeviceStride - 1;
  team.Single(
    [&]
    {
      int rows = 0, first = 0;
      for (int r = 0, incoming = n; r < d.rows || incoming > 0; ++r)
      {
        if (r == kAdwinDeviceRows)
        {
          d.overflow = 1;
          rows = -1;
          break;
        }
        int kept = 0;
        incoming = AdwinRowMerges(r < d.rows ? d.counts[r] : 0, incoming, maxBuckets, kept);
        x.after[r] = kept;
        x.firstAfter[r] = first;
        first += kept;
        rows = r + 1;
      }
      x.rowsAfter = rows;
      if (rows >= 0)
        x.firstAfter[rows] = first;
    });
  const int rows = x.rowsAfter;
  if (rows < 0)
    return;
  const int          buckets = x.firstAfter[rows];
  const std::int64_t width0 = d.width, width = width0 + n;
  const double       total0 = d.total;
  // The row of bucket g (newest first) and its newer end: the values of the rows below and of the
  // newer buckets of its row come after it.
  auto where = [&](int g, int & r, std::int64_t & end)
  {
    r = 0;
    std::int64_t below = 0;
    while (g >= x.firstAfter[r + 1])
      below += std::int64_t(x.after[r]) << r, ++r;
    end = width - below - (std::int64_t(g - x.firstAfter[r]) << r);
  };
  team.For(buckets,
           [&](int g)
           {
             int          r = 0;
             std::int64_t end = 0;
             where(g, r, end);
             x.endSum[g] = AdwinSumUpTo(x.old, width0, total0, x.errorsBefore, end, r);
           });
  team.For(buckets,
           [&](int g)
           {
             int          r = 0;
             std::int64_t end = 0;
             where(g, r, end);
             const double older = g + 1 < buckets ? x.endSum[g + 1] : 0.0; // the oldest starts at 0
             d.buckets[r * kAdwinDeviceStride + (x.after[r] - 1 - (g - x.firstAfter[r]))] =
               AdwinBucket{ x.endSum[g] - older, 0.0 };
           });
  team.For(rows, [&](int r) { d.counts[r] = x.after[r]; });
  team.Single([&] { d.rows = rows; });
}

/** Adwin::AppendRun(correct, n, checkDelta) on d: the results enter up to the first due check that
 * would cut (x.cutDue; left to the caller) or all n; x.appended, x.meanBefore, x.errors as Adwin::Run. */
template<typename Team>
CANOPY_HD void
AdwinTeamAppendRun(const Team &         team,
                   AdwinDetectorData &  d,
                   int                  clock,
                   const std::uint8_t * correct,
                   int                  n,
                   double               checkDelta,
                   AdwinStepScratch &   x)
{
  team.Single(
    [&]
    {
      x.appended = x.cutDue = x.errors = 0;
      x.meanBefore = 0.0;
    });
  for (int done = 0; done < n;)
  {
    const std::uint8_t * values = correct + done;
    const std::int64_t   width0 = d.width;
    const double         total0 = d.total;
    const int            firstCheck = int(clock - d.ticks);                 // values until the next check: 1..clock
    const int            planned = firstCheck - 1 + kAdwinMaxPlans * clock; // values of kAdwinMaxPlans checks
    int                  L = n - done < kAdwinSegment ? n - done : kAdwinSegment;
    L = L < planned ? L : planned;
    const int checks = L >= firstCheck ? 1 + (L - firstCheck) / clock : 0;
    // 1. errors before each value
    team.ErrorsBefore(values, L, x.errorsBefore);
    team.Phase(kAdwinPhaseErrors);
    // 2. the old window's boundaries (the checks' shares and the insertion read them)
    AdwinTeamOldBoundaries(team, d, x.old);
    team.Phase(kAdwinPhaseOldTable);
    // The window's variance sum after k values (Binary detectors: its closed form).
    auto varianceAfter = [&](int k) { return AdwinBinaryVarianceSum(width0 + k, total0 + double(x.errorsBefore[k])); };
    // 3. every check of the segment at once, each on the window as if no earlier one had cut, and the
    //    first that cuts; a wide team gives each check `shares` lanes (items check-major, so the first
    //    cutting item is a share of the first cutting check).
    const int lanes = team.Lanes();
    const int shares = lanes > 1 && checks > 0 && checks < lanes ? lanes / checks : 1;
    int       firstCut = checks;
    if (lanes == 1)
      firstCut = team.FirstOf(checks,
                              [&](int c)
                              {
                                const int k = firstCheck + c * clock; // values appended at this check
                                return AdwinWouldCutAfter(d.buckets,
                                                          d.counts,
                                                          d.rows,
                                                          kAdwinDeviceStride,
                                                          kAdwinDeviceStride - 1,
                                                          width0,
                                                          total0,
                                                          values,
                                                          k,
                                                          varianceAfter(k),
                                                          checkDelta,
                                                          x.errorsBefore);
                              });
    else if (checks > 0)
    {
      // each check's cut test and shape once, then its shares
      team.For(checks,
               [&](int c)
               {
                 const int k = firstCheck + c * clock;
                 AdwinPlanCheck(d.counts,
                                d.rows,
                                kAdwinDeviceStride - 1,
                                width0,
                                total0,
                                k,
                                x.errorsBefore,
                                varianceAfter(k),
                                checkDelta,
                                x.plans[c]);
               });
      firstCut =
        team.FirstOf(checks * shares,
                     [&](int item)
                     {
                       const AdwinDeviceCheckPlan & plan = x.plans[item / shares];
                       return !plan.overflow &&
                              AdwinPlannedShareCuts(plan, x.old, width0, total0, x.errorsBefore, item % shares, shares);
                     }) /
        shares;
    }
    team.Phase(kAdwinPhaseChecks);
    const bool cut = firstCut < checks;
    const int  take = cut ? firstCheck + firstCut * clock : L;
    // 4. the values up to the cut (or all) enter the histogram; the window's sums and clock follow.
    AdwinTeamInsertRun(team, d, take, x);
    team.Phase(kAdwinPhaseInsert);
    team.Single(
      [&]
      {
        const std::int64_t w = width0 + take - 1; // the width before the last value
        x.meanBefore = w > 0 ? (total0 + double(x.errorsBefore[take - 1])) / double(w) : 0.0;
        d.width = width0 + take;
        d.total = total0 + double(x.errorsBefore[take]);
        d.variance = AdwinBinaryVarianceSum(d.width, d.total);
        d.ticks = cut ? clock : (d.ticks + take) % clock;
        x.appended += take;
        x.errors += x.errorsBefore[take];
        x.cutDue = cut ? 1 : 0;
      });
    team.Phase(kAdwinPhaseWindow);
    if (cut)
      return;
    done += take;
  }
}

/** Whether the member's detectors may share one window (ForestMemberMonitor::TwinsAllowed). */
CANOPY_HD bool
AdwinTwinsAllowed(const AdwinMonitorSettings & s)
{
  return s.driftDetection && s.backgroundTrees && s.warningDelta >= 2.0 * s.driftDelta;
}

/** A member as a fresh ForestMemberMonitor. */
CANOPY_HD void
AdwinMemberReset(const AdwinMonitorSettings & s, AdwinMemberData & m)
{
  m.seen = m.correct = 0;
  m.drifts = m.warnings = 0;
  m.background = 0;
  m.twins = AdwinTwinsAllowed(s) ? 1 : 0;
  AdwinDetectorReset(m.warning);
  AdwinDetectorReset(m.drift);
  m.warning.overflow = m.drift.overflow = 0;
}

/** ForestMemberMonitor::Handle: the events go to events[x.events++] (capacity: the overflow flag). */
CANOPY_HD void
AdwinMemberHandle(const AdwinMonitorSettings & s,
                  AdwinMemberData &            m,
                  bool                         warningRose,
                  bool                         driftRose,
                  std::uint8_t *               events,
                  int                          capacity,
                  AdwinStepScratch &           x)
{
  auto raise = [&](std::uint8_t e)
  {
    if (x.events < capacity)
      events[x.events] = e;
    ++x.events;
  };
  if (warningRose && !m.background)
  {
    ++m.warnings;
    m.background = 1;
    raise(kAdwinEventStartBackground);
    AdwinDetectorReset(m.warning);
  }
  if (driftRose)
  {
    ++m.drifts;
    raise(m.background ? kAdwinEventPromoteBackground : kAdwinEventStartFresh);
    m.background = 0;
    AdwinDetectorReset(m.warning);
    AdwinDetectorReset(m.drift);
    m.twins = AdwinTwinsAllowed(s) ? 1 : 0;
    m.seen = 0;
    m.correct = 0;
  }
}

/** ForestMemberMonitor::ObserveBatch on n results (correct[i] != 0: right), its events written to
 * events (x.events of them; more than capacity is an overflow the caller reports). */
template<typename Team>
CANOPY_HD void
AdwinTeamObserveBatch(const Team &                 team,
                      const AdwinMonitorSettings & s,
                      AdwinMemberData &            m,
                      const std::uint8_t *         correct,
                      int                          n,
                      std::uint8_t *               events,
                      int                          capacity,
                      AdwinStepScratch &           x)
{
  team.Single([&] { x.events = 0; });
  for (int i = 0; i < n;)
  {
    if (!s.driftDetection)
    {
      team.Single(
        [&]
        {
          m.seen += std::uint64_t(n - i);
          for (int k = i; k < n; ++k)
            m.correct += correct[k] != 0 ? 1 : 0;
        });
      return;
    }
    if (m.twins)
    {
      team.Phase(kAdwinPhaseHandle);
      AdwinTeamAppendRun(team, m.drift, s.clock, correct + i, n - i, s.warningDelta, x);
      const int appended = x.appended;
      team.Single(
        [&]
        {
          m.seen += std::uint64_t(appended);
          m.correct += std::uint64_t(appended - x.errors);
        });
      i += appended;
      if (!x.cutDue)
        continue;
      team.Single([&] { m.warning = m.drift; }); // the window, clock and counts: WithDelta
      team.Single(
        [&]
        {
          m.twins = 0;
          const double before = x.meanBefore;
          const bool   warningRose =
            AdwinDetectorCheck(m.warning, s.warningDelta) && AdwinDetectorMean(m.warning) > before;
          const bool driftRose = AdwinDetectorCheck(m.drift, s.driftDelta) && AdwinDetectorMean(m.drift) > before;
          AdwinMemberHandle(s, m, warningRose, driftRose, events, capacity, x);
        });
      continue;
    }
    // Two windows: the drift detector up to its next cut, the warning detector through the same
    // results, handling each of its cuts (one at the drift's result first, as one at a time would).
    team.Phase(kAdwinPhaseHandle);
    AdwinTeamAppendRun(team, m.drift, s.clock, correct + i, n - i, s.driftDelta, x);
    const int    appended = x.appended, errors = x.errors;
    const bool   driftCut = x.cutDue != 0;
    const double driftMeanBefore = x.meanBefore;
    const int    end = i + appended;
    for (int w = i; s.backgroundTrees && w < end;)
    {
      team.Phase(kAdwinPhaseHandle);
      AdwinTeamAppendRun(team, m.warning, s.clock, correct + w, end - w, s.warningDelta, x);
      w += x.appended;
      if (!x.cutDue)
        break;
      team.Single(
        [&]
        {
          const bool rose =
            AdwinDetectorCheck(m.warning, s.warningDelta) && AdwinDetectorMean(m.warning) > x.meanBefore;
          AdwinMemberHandle(s, m, rose, false, events, capacity, x);
        });
    }
    team.Single(
      [&]
      {
        m.seen += std::uint64_t(appended);
        m.correct += std::uint64_t(appended - errors);
        const bool rose =
          driftCut && AdwinDetectorCheck(m.drift, s.driftDelta) && AdwinDetectorMean(m.drift) > driftMeanBefore;
        AdwinMemberHandle(s, m, false, rose, events, capacity, x);
      });
    i = end;
  }
}

} // namespace canopy
