// ADWIN's known behaviour: exact window statistics, a detection soon after an abrupt change of the
// mean, a shrunk window holding the new mean, and rare false alarms on a stationary stream.
#include "canopyAdwin.h"
#include "canopyForestMember.h"

#include "canopy/AdwinCheckShares.h"
#include "canopy/CounterRandom.h"
#include "canopy/Errors.h"
#include "canopy/PortableMath.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

using canopy::streaming::Adwin;
using canopy::streaming::AdwinValues;
using canopy::streaming::DriftSettings;
using canopy::streaming::ForestMemberMonitor;

namespace
{
// ADWIN as first written (vectors of rows, a square root per boundary): the reference the faster
// Adwin must equal bit for bit.
namespace reference
{
constexpr std::int64_t kMinWindow = 10;
constexpr double       kMinSubWindow = 5.0;

class ReferenceAdwin
{
public:
  explicit ReferenceAdwin(double delta = 0.002, int maxBuckets = 5, int clock = 32);

  /** Adds a value; true when the window shrank (a change was detected). */
  bool Update(double value);

  double       Mean() const { return m_Width > 0 ? m_Total / double(m_Width) : 0.0; }
  std::int64_t Width() const { return m_Width; }
  double       Variance() const { return m_Width > 0 ? m_Variance / double(m_Width) : 0.0; }
  std::int64_t Detections() const { return m_Detections; }
  double       Delta() const { return m_Delta; }

private:
  struct Bucket
  {
    double total = 0.0;
    double variance = 0.0; // sum of squared deviations from the bucket's mean
  };

  void Compress();
  bool CheckForChange();
  bool CutExpression(double n0, double n1, double u0, double u1, double dd, double v) const;
  void DropOldestBucket();

  double m_Delta;
  int    m_MaxBuckets, m_Clock;
  // m_Rows[i]: buckets of 2^i values, newest first.
  std::vector<std::vector<Bucket>> m_Rows;
  std::int64_t                     m_Width = 0, m_Ticks = 0, m_Detections = 0;
  double                           m_Total = 0.0, m_Variance = 0.0;
};

ReferenceAdwin::ReferenceAdwin(double delta, int maxBuckets, int clock)
  : m_Delta(delta)
  , m_MaxBuckets(maxBuckets)
  , m_Clock(clock)
{
}

bool
ReferenceAdwin::Update(double value)
{
  // The new value joins as a bucket of one; the window's variance sum grows as in Welford.
  if (m_Width > 0)
  {
    const double meanBefore = m_Total / double(m_Width);
    m_Variance += double(m_Width) * (value - meanBefore) * (value - meanBefore) / double(m_Width + 1);
  }
  ++m_Width;
  m_Total += value;
  if (m_Rows.empty())
    m_Rows.emplace_back();
  m_Rows[0].insert(m_Rows[0].begin(), Bucket{ value, 0.0 });
  Compress();
  ++m_Ticks;
  if (m_Ticks % m_Clock != 0 || m_Width < kMinWindow)
    return false;
  const bool changed = CheckForChange();
  m_Detections += changed ? 1 : 0;
  return changed;
}

void
ReferenceAdwin::Compress()
{
  for (std::size_t i = 0; i < m_Rows.size(); ++i)
  {
    auto & row = m_Rows[i];
    if (int(row.size()) <= m_MaxBuckets)
      break;
    // Merge the two oldest buckets of row i into the newest of row i + 1.
    const Bucket older = row.back();
    row.pop_back();
    const Bucket newer = row.back();
    row.pop_back();
    const double n = std::ldexp(1.0, int(i));
    const double d = older.total / n - newer.total / n;
    const Bucket merged{ older.total + newer.total, older.variance + newer.variance + n * n * d * d / (2.0 * n) };
    if (i + 1 == m_Rows.size())
      m_Rows.emplace_back();
    m_Rows[i + 1].insert(m_Rows[i + 1].begin(), merged);
  }
}

bool
ReferenceAdwin::CutExpression(double n0, double n1, double u0, double u1, double dd, double v) const
{
  const double m = 1.0 / (n0 - kMinSubWindow + 1.0) + 1.0 / (n1 - kMinSubWindow + 1.0);
  const double epsilon = std::sqrt(2.0 * m * v * dd) + 2.0 / 3.0 * dd * m;
  return std::fabs(u0 / n0 - u1 / n1) > epsilon;
}

void
ReferenceAdwin::DropOldestBucket()
{
  std::size_t row = m_Rows.size() - 1;
  while (m_Rows[row].empty())
    --row;
  const Bucket b = m_Rows[row].back();
  m_Rows[row].pop_back();
  const double n1 = std::ldexp(1.0, int(row));
  m_Width -= std::int64_t(n1);
  m_Total -= b.total;
  const double d = b.total / n1 - (m_Width > 0 ? m_Total / double(m_Width) : 0.0);
  m_Variance -= b.variance + n1 * double(m_Width) * d * d / (n1 + double(m_Width));
  m_Variance = m_Variance < 0.0 ? 0.0 : m_Variance;
  while (!m_Rows.empty() && m_Rows.back().empty())
    m_Rows.pop_back();
}

bool
ReferenceAdwin::CheckForChange()
{
  bool changed = false;
  bool cut = true;
  while (cut && m_Width >= kMinWindow)
  {
    cut = false;
    // Sub-window W0 grows from the oldest bucket; W1 is the rest (the newer part).
    double       n0 = 0.0, u0 = 0.0;
    double       n1 = double(m_Width), u1 = m_Total;
    const double dd = canopy::PortableLog(2.0 * canopy::PortableLog(double(m_Width)) / m_Delta); // as Adwin
    const double v = m_Variance / double(m_Width);
    for (std::size_t r = m_Rows.size(); r-- > 0 && !cut;)
    {
      const double n = std::ldexp(1.0, int(r));
      for (std::size_t k = m_Rows[r].size(); k-- > 0;)
      {
        n0 += n;
        n1 -= n;
        u0 += m_Rows[r][k].total;
        u1 -= m_Rows[r][k].total;
        if (n1 < kMinSubWindow)
          break;
        if (n0 >= kMinSubWindow && CutExpression(n0, n1, u0, u1, dd, v))
        {
          cut = true;
          break;
        }
      }
    }
    if (cut)
    {
      DropOldestBucket();
      changed = true;
    }
  }
  return changed;
}

} // namespace reference

double
Bernoulli(double p, std::uint64_t seed, std::uint64_t i)
{
  return canopy::CounterUniform(seed, 0, i) < p ? 1.0 : 0.0;
}
} // namespace

TEST(Adwin, WindowStatisticsAreExactWithoutChange)
{
  Adwin  adwin(0.002);
  double sum = 0, sumSquares = 0;
  for (int i = 0; i < 1000; ++i)
  {
    const double v = (i % 4 == 0) ? 1.0 : 0.0;
    adwin.Update(v);
    sum += v;
    sumSquares += v * v;
  }
  EXPECT_EQ(adwin.Width(), 1000);
  EXPECT_DOUBLE_EQ(adwin.Mean(), 0.25);
  EXPECT_NEAR(adwin.Variance(), sumSquares / 1000 - 0.25 * 0.25, 1e-9);
  EXPECT_EQ(adwin.Detections(), 0);
}

TEST(Adwin, DetectsAnAbruptChangeWithinABoundedDelay)
{
  // Error rate 0.2 for 5000 values, then 0.8: over 20 seeds, each detects within 300 values of the
  // change (checks run every 32 values) and keeps a window of mostly new values.
  for (std::uint64_t seed = 1; seed <= 20; ++seed)
  {
    Adwin adwin(0.002);
    for (int i = 0; i < 5000; ++i)
      adwin.Update(Bernoulli(0.2, seed, i));
    int delay = -1;
    for (int i = 0; i < 1000 && delay < 0; ++i)
      if (adwin.Update(Bernoulli(0.8, seed, 5000 + i)))
        delay = i + 1;
    ASSERT_GT(delay, 0) << "seed " << seed << ": no detection within 1000 values";
    EXPECT_LE(delay, 300) << "seed " << seed;
    EXPECT_LT(adwin.Width(), 5000 + delay) << "seed " << seed;
    for (int i = 0; i < 2000; ++i)
      adwin.Update(Bernoulli(0.8, seed, 7000 + i));
    EXPECT_NEAR(adwin.Mean(), 0.8, 0.1) << "seed " << seed;
  }
}

TEST(Adwin, FalseAlarmsOnAStationaryStreamAreRare)
{
  // delta bounds the false positive probability of a check; with 20 streams of 20000 values at a
  // constant rate 0.3 and delta 0.002 we allow at most 2 detections in all (0 seen when written).
  std::int64_t detections = 0;
  for (std::uint64_t seed = 100; seed < 120; ++seed)
  {
    Adwin adwin(0.002);
    for (int i = 0; i < 20000; ++i)
      adwin.Update(Bernoulli(0.3, seed, i));
    detections += adwin.Detections();
    EXPECT_GT(adwin.Width(), 10000) << "seed " << seed;
  }
  EXPECT_LE(detections, 2);
}

TEST(Adwin, MemoryIsLogarithmic)
{
  Adwin adwin(0.002);
  for (int i = 0; i < 100000; ++i)
    adwin.Update(0.5);
  EXPECT_EQ(adwin.Width(), 100000);
  EXPECT_DOUBLE_EQ(adwin.Mean(), 0.5);
}

TEST(ForestMemberMonitor, ReplacesATreeOnlyWhenItsErrorRises)
{
  // A tree that gets better (errors 1 -> 0) is kept; one that gets worse (0 -> 1) is replaced, after a
  // warning that started a background tree, which replaces it.
  for (bool improving : { true, false })
  {
    ForestMemberMonitor       monitor(DriftSettings{});
    std::vector<std::uint8_t> correct(2000, improving ? 0 : 1);
    std::fill(correct.begin() + 1000, correct.end(), improving ? 1 : 0);
    int  started = 0, replaced = 0;
    bool replacedByBackground = false;
    monitor.ObserveBatch(
      correct.data(),
      correct.size(),
      [&] { ++started; },
      [&](bool background)
      {
        ++replaced;
        replacedByBackground = background;
      });
    if (improving)
    {
      EXPECT_EQ(started, 0);
      EXPECT_EQ(replaced, 0);
      EXPECT_DOUBLE_EQ(monitor.Accuracy(), 0.5);
    }
    else
    {
      EXPECT_EQ(started, 1);
      EXPECT_EQ(replaced, 1);
      EXPECT_TRUE(replacedByBackground);
      EXPECT_EQ(monitor.Drifts(), 1);
      EXPECT_LT(monitor.Accuracy(), 0.1); // counted from the replacement on
    }
  }
}

TEST(Adwin, EqualsTheFirstImplementationBitForBit)
{
  // Fixed-slot rows and the cut test's early exit change no decision and no statistic: every input's
  // answer, the width, mean and variance equal the first implementation's on streams that change.
  for (double delta : { 0.01, 0.001 })
  {
    Adwin                     fast(delta);
    reference::ReferenceAdwin slow(delta);
    std::int64_t              detections = 0;
    for (std::uint64_t i = 0; i < 200000; ++i)
    {
      const double rate = (i / 20000) % 2 == 0 ? 0.2 : 0.45; // the error rate jumps every 20000
      const double value = canopy::CounterUniform(7, 0, i) < rate ? 1.0 : 0.0;
      const bool   changed = fast.Update(value);
      ASSERT_EQ(changed, slow.Update(value)) << "input " << i;
      detections += changed ? 1 : 0;
      ASSERT_EQ(fast.Width(), slow.Width()) << "input " << i;
      ASSERT_EQ(fast.Mean(), slow.Mean()) << "input " << i;
      ASSERT_EQ(fast.Variance(), slow.Variance()) << "input " << i;
    }
    EXPECT_GT(detections, 5) << "delta " << delta;
  }
  // Real values too (the cut test's division-free filter must not rule out a cut the division finds).
  Adwin                     fast(0.002);
  reference::ReferenceAdwin slow(0.002);
  std::int64_t              detections = 0;
  for (std::uint64_t i = 0; i < 100000; ++i)
  {
    const double shift = (i / 10000) % 2 == 0 ? 0.0 : 0.15;
    const double value = 0.3 * canopy::CounterUniform(9, 1, i) + shift + 1e-7 * double(i % 7);
    const bool   changed = fast.Update(value);
    ASSERT_EQ(changed, slow.Update(value)) << "real input " << i;
    detections += changed ? 1 : 0;
    ASSERT_EQ(fast.Mean(), slow.Mean()) << "real input " << i;
    ASSERT_EQ(fast.Variance(), slow.Variance()) << "real input " << i;
  }
  EXPECT_GT(detections, 5);
}

TEST(Adwin, BinaryDecidesAsTheFirstImplementation)
{
  // The closed-form variance sum of a Binary detector is Welford's up to rounding: on streams that
  // change, every input's answer, the width and the mean are the first implementation's, the
  // variance within rounding.
  for (double delta : { 0.01, 0.002, 0.001 })
  {
    Adwin                     binary(delta, 5, 32, AdwinValues::Binary);
    reference::ReferenceAdwin slow(delta);
    std::int64_t              detections = 0;
    for (std::uint64_t i = 0; i < 200000; ++i)
    {
      const double rate = (i / 15000) % 3 == 0 ? 0.2 : (i / 15000) % 3 == 1 ? 0.45 : 0.05;
      const double value = canopy::CounterUniform(17, 0, i) < rate ? 1.0 : 0.0;
      const bool   changed = binary.Update(value);
      ASSERT_EQ(changed, slow.Update(value)) << "input " << i << ", delta " << delta;
      detections += changed ? 1 : 0;
      ASSERT_EQ(binary.Width(), slow.Width()) << "input " << i;
      ASSERT_EQ(binary.Mean(), slow.Mean()) << "input " << i;
      ASSERT_NEAR(binary.Variance(), slow.Variance(), 1e-12) << "input " << i;
    }
    EXPECT_GT(detections, 5) << "delta " << delta;
  }
}

TEST(Adwin, BinaryScanEqualsTheSharedScan)
{
  // A Binary detector's host scan (a looser cheap test, the shared AdwinCutTest where it passes) answers
  // as canopy::AdwinScanForCut on the same window, for bounds from far below to far above a cut:
  // drifting streams, every 3rd input, 40 deltas from 1e-9 to 0.9.
  std::vector<double> deltas;
  for (int k = 0; k < 40; ++k)
    deltas.push_back(0.9 * std::pow(1e-9 / 0.9, k / 39.0));
  std::int64_t cuts = 0, checks = 0;
  for (std::uint64_t seed : { 3u, 4u })
  {
    Adwin adwin(0.002, 5, 32, AdwinValues::Binary);
    for (std::uint64_t i = 0; i < 30000; ++i)
    {
      const double rate = (i / 4000) % 3 == 0 ? 0.3 : (i / 4000) % 3 == 1 ? 0.36 : 0.22;
      adwin.Update(canopy::CounterUniform(seed, 1, i) < rate ? 1.0 : 0.0);
      if (i % 3 != 0)
        continue;
      const auto                       state = adwin.State();
      const int                        rows = int(state.rowCounts.size()), stride = 6;
      std::vector<canopy::AdwinBucket> buckets(std::size_t(rows * stride), canopy::AdwinBucket{ 0.0, 0.0 });
      std::size_t                      next = 0;
      for (int r = 0; r < rows; ++r)
        for (int k = 0; k < state.rowCounts[std::size_t(r)]; ++k)
          buckets[std::size_t(r * stride + k)].total = state.totals[next++];
      for (const double delta : deltas)
      {
        const bool expected = state.width >= 10 && canopy::AdwinScanForCut(buckets.data(),
                                                                           state.rowCounts.data(),
                                                                           rows,
                                                                           stride,
                                                                           state.width,
                                                                           state.total,
                                                                           state.variance,
                                                                           delta);
        ASSERT_EQ(adwin.WouldCut(delta), expected) << "seed " << seed << ", input " << i << ", delta " << delta;
        cuts += expected ? 1 : 0;
        ++checks;
      }
    }
  }
  EXPECT_GT(cuts, checks / 100); // both answers are common
  EXPECT_LT(cuts, checks - checks / 100);
}

TEST(Adwin, BinaryTakesOnlyZeroOrOne)
{
  Adwin binary(0.002, 5, 32, AdwinValues::Binary);
  EXPECT_NO_THROW(binary.Update(1.0));
  EXPECT_NO_THROW(binary.Update(0.0));
  EXPECT_THROW(binary.Update(0.5), canopy::Error);
  EXPECT_THROW(binary.UpdateRose(2.0), canopy::Error);
  EXPECT_EQ(binary.Width(), 2);

  // A Real detector's state of 0/1 values (a model saved before the forest's detectors were Binary):
  // taken, with the closed form's variance; a state of other values: refused, naming what is wrong.
  Adwin real(0.002);
  for (std::uint64_t i = 0; i < 5000; ++i)
    real.Update(canopy::CounterUniform(3, 0, i) < 0.3 ? 1.0 : 0.0);
  Adwin restored(0.002, 5, 32, AdwinValues::Binary);
  restored.Restore(real.State());
  EXPECT_EQ(restored.Width(), real.Width());
  EXPECT_EQ(restored.Mean(), real.Mean());
  EXPECT_NEAR(restored.Variance(), real.Variance(), 1e-12);
  EXPECT_EQ(restored.State().variance, canopy::AdwinBinaryVarianceSum(real.Width(), real.State().total));

  Adwin reals(0.002);
  for (std::uint64_t i = 0; i < 100; ++i)
    reals.Update(0.25 + 0.5 * canopy::CounterUniform(3, 1, i));
  try
  {
    restored.Restore(reals.State());
    ADD_FAILURE() << "a state of real values must be refused";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.what()).find("errors"), std::string::npos) << e.what();
  }
}

namespace
{
/** Error bits whose rate moves between 5%, 20% and 45% at irregular places (warnings, drifts, cuts
 * where the rate fell); correct[i] == 0: an error. */
std::vector<std::uint8_t>
DriftingResults(std::size_t n, std::uint64_t seed)
{
  std::vector<std::uint8_t> correct(n);
  const double              rates[] = { 0.2, 0.45, 0.05 };
  std::size_t               phase = 0, next = 7000;
  for (std::size_t i = 0; i < n; ++i)
  {
    if (i == next)
    {
      ++phase;
      next += 2000 + std::size_t(10000 * canopy::CounterUniform(seed, 9, phase));
    }
    correct[i] = canopy::CounterUniform(seed, 3, i) < rates[phase % 3] ? 0 : 1;
  }
  return correct;
}

void
ExpectSameState(const canopy::streaming::AdwinState & a, const canopy::streaming::AdwinState & b, const char * what)
{
  EXPECT_EQ(a.rowCounts, b.rowCounts) << what;
  EXPECT_EQ(a.totals, b.totals) << what; // doubles compared exactly: bit for bit
  EXPECT_EQ(a.variances, b.variances) << what;
  EXPECT_EQ(a.width, b.width) << what;
  EXPECT_EQ(a.ticks, b.ticks) << what;
  EXPECT_EQ(a.detections, b.detections) << what;
  EXPECT_EQ(a.total, b.total) << what;
  EXPECT_EQ(a.variance, b.variance) << what;
}
} // namespace

TEST(Adwin, RunsEqualSingleAppendsBitForBit)
{
  // A run of results entering at once (the sums, then the buckets row by row) gives the window of the
  // results entering one by one: the same cuts at the same results, the same buckets, counts and sums;
  // for Real and Binary detectors alike.
  struct Settings
  {
    double delta;
    int    maxBuckets, clock;
  };
  for (const AdwinValues values : { AdwinValues::Real, AdwinValues::Binary })
    for (const Settings settings :
         { Settings{ 0.01, 5, 32 }, Settings{ 0.001, 5, 32 }, Settings{ 0.002, 2, 7 }, Settings{ 0.002, 7, 100 } })
      for (const std::size_t batch : { 1, 7, 256, 4096 })
      {
        const std::vector<std::uint8_t> correct = DriftingResults(80000, 5);
        Adwin                           single(settings.delta, settings.maxBuckets, settings.clock, values);
        Adwin                           runs(settings.delta, settings.maxBuckets, settings.clock, values);
        std::vector<std::size_t>        singleCuts, runCuts;
        for (std::size_t start = 0; start < correct.size(); start += batch)
        {
          const std::size_t n = std::min(batch, correct.size() - start);
          for (std::size_t i = start; i < start + n; ++i)
            if (single.Update(correct[i] ? 0.0 : 1.0))
              singleCuts.push_back(i);
          for (std::size_t i = 0; i < n;)
          {
            const Adwin::Run run = runs.AppendRun(correct.data() + start + i, n - i, settings.delta);
            i += run.appended;
            if (run.cutDue)
            {
              ASSERT_TRUE(runs.Check()) << "a due cut must cut";
              runCuts.push_back(start + i - 1);
            }
          }
          const std::string where = "batch size " + std::to_string(batch) + ", results to " +
                                    std::to_string(start + n) + ", delta " + std::to_string(settings.delta) +
                                    (values == AdwinValues::Binary ? ", binary" : ", real");
          ExpectSameState(runs.State(), single.State(), where.c_str());
          ASSERT_FALSE(HasFailure()) << where;
        }
        EXPECT_EQ(runCuts, singleCuts) << "batch size " << batch;
        EXPECT_GT(singleCuts.size(), 3u) << "the stream must make the detector cut";
      }
}

TEST(Adwin, ChecksOfARunAtOnceEqualTheAppendedWindowsChecks)
{
  // The speculative check: whether a check k results into a run would cut, computed from the window
  // before the run and the results (shape from counts, totals from cumulative sums), equals WouldCut on
  // the window with the k results appended (no cut between), at every k, over a drifting stream.
  struct Settings
  {
    double delta;
    int    maxBuckets, clock;
  };
  for (const Settings settings : { Settings{ 0.01, 5, 32 }, Settings{ 0.002, 2, 7 }, Settings{ 0.001, 1, 32 } })
  {
    const std::vector<std::uint8_t> correct = DriftingResults(60000, 17);
    const int                       stride = settings.maxBuckets + 1;
    Adwin                           stream(settings.delta, settings.maxBuckets, settings.clock);
    std::size_t                     runs = 0, cuts = 0;
    for (std::size_t i = 0; i < correct.size(); ++i)
    {
      if (i % 1500 == 700)
      {
        ++runs;
        const canopy::streaming::AdwinState before = stream.State();
        std::vector<canopy::AdwinBucket>    buckets(before.rowCounts.size() * std::size_t(stride));
        for (std::size_t r = 0, next = 0; r < before.rowCounts.size(); ++r)
          for (int k = 0; k < before.rowCounts[r]; ++k, ++next)
            buckets[r * std::size_t(stride) + std::size_t(k)] = { before.totals[next], before.variances[next] };
        // The old boundaries the wide teams' split checks read (AdwinCheckShares.h).
        auto      old = std::make_unique<canopy::AdwinOldBoundaries<64, 6>>();
        const int rows = int(before.rowCounts.size());
        for (int r = 0; r < rows; ++r)
        {
          old->rowTotal[r] = 0.0;
          for (int k = 0; k < before.rowCounts[std::size_t(r)]; ++k)
            old->rowTotal[r] += buckets[std::size_t(r * stride + k)].total;
        }
        for (int r = 0; r < rows; ++r)
          canopy::AdwinOldBoundariesRow(buckets.data(), before.rowCounts.data(), rows, stride, r, *old);
        Adwin                     appended = stream;
        std::vector<std::int32_t> errorsBefore(1, 0); // the prefix the device step passes
        for (std::size_t k = 1; k <= 400 && i + k <= correct.size(); ++k)
        {
          errorsBefore.push_back(errorsBefore.back() + (correct[i + k - 1] ? 0 : 1));
          if (appended.Append(correct[i + k - 1] ? 0.0 : 1.0, appended.Mean()))
            appended.SkipCheck();
          const bool expected = appended.WouldCut(settings.delta);
          const bool speculative = canopy::AdwinWouldCutAfter(buckets.data(),
                                                              before.rowCounts.data(),
                                                              int(before.rowCounts.size()),
                                                              stride,
                                                              settings.maxBuckets,
                                                              before.width,
                                                              before.total,
                                                              correct.data() + i,
                                                              int(k),
                                                              appended.State().variance,
                                                              settings.delta);
          ASSERT_EQ(speculative, expected)
            << "run at " << i << ", " << k << " results in, maxBuckets " << settings.maxBuckets;
          const bool fromPrefix = canopy::AdwinWouldCutAfter(buckets.data(),
                                                             before.rowCounts.data(),
                                                             int(before.rowCounts.size()),
                                                             stride,
                                                             settings.maxBuckets,
                                                             before.width,
                                                             before.total,
                                                             correct.data() + i,
                                                             int(k),
                                                             appended.State().variance,
                                                             settings.delta,
                                                             errorsBefore.data());
          ASSERT_EQ(fromPrefix, expected) << "with the errors' prefix: run at " << i << ", " << k << " results in";
          for (const int shares : { 1, 3, 8, 128 })
          {
            bool anyShare = false;
            for (int share = 0; share < shares; ++share)
              anyShare = anyShare || canopy::AdwinShareWouldCutAfter(before.rowCounts.data(),
                                                                     rows,
                                                                     settings.maxBuckets,
                                                                     *old,
                                                                     before.width,
                                                                     before.total,
                                                                     int(k),
                                                                     appended.State().variance,
                                                                     settings.delta,
                                                                     errorsBefore.data(),
                                                                     share,
                                                                     shares);
            ASSERT_EQ(anyShare, expected) << "in " << shares << " shares: run at " << i << ", " << k << " results in";
          }
          cuts += expected ? 1 : 0;
        }
      }
      stream.Update(correct[i] ? 0.0 : 1.0);
    }
    EXPECT_GT(cuts, 100u) << "the runs must hold checks that cut";
    EXPECT_EQ(runs, 40u);
  }
}

namespace
{
/** A monitor fed batches of `batch` results against two first-implementation detectors fed every
 * result as the monitor's first version did: the same warnings and drifts in the same batches, the
 * same windows and accuracy after every batch. The monitor's detectors are Binary (the variance sum's
 * closed form), the reference's Welford's: their variances agree up to rounding, and the decisions
 * made from them (events, widths) exactly. */
void
ExpectMonitorEqualsTwoDetectors(const DriftSettings & settings, std::size_t batch)
{
  ForestMemberMonitor             monitor(settings);
  reference::ReferenceAdwin       warning(settings.warningDelta), drift(settings.driftDelta);
  bool                            background = false;
  std::uint64_t                   seenSince = 0, correctSince = 0;
  std::vector<std::int64_t>       expected, seen; // batch index * 4 + event (1 warning, 2 and 3 drift)
  const std::vector<std::uint8_t> correct = DriftingResults(120000, 11);
  const std::string               what = "batch size " + std::to_string(batch) + ", background trees " +
                           std::to_string(settings.backgroundTrees) + ", warning delta " +
                           std::to_string(settings.warningDelta);
  for (std::size_t start = 0; start < correct.size(); start += batch)
  {
    const std::size_t  n = std::min(batch, correct.size() - start);
    const std::int64_t batchIndex = std::int64_t(start / batch);
    for (std::size_t i = start; i < start + n; ++i)
    {
      ++seenSince;
      correctSince += correct[i];
      const double error = correct[i] ? 0.0 : 1.0;
      const double warningBefore = warning.Mean(), driftBefore = drift.Mean();
      const bool   warningRose = settings.backgroundTrees && warning.Update(error) && warning.Mean() > warningBefore;
      const bool   driftRose = drift.Update(error) && drift.Mean() > driftBefore;
      if (warningRose && !background)
      {
        expected.push_back(batchIndex * 4 + 1);
        background = true;
        warning = reference::ReferenceAdwin(settings.warningDelta);
      }
      if (driftRose)
      {
        expected.push_back(batchIndex * 4 + (background ? 3 : 2));
        background = false;
        warning = reference::ReferenceAdwin(settings.warningDelta);
        drift = reference::ReferenceAdwin(settings.driftDelta);
        seenSince = correctSince = 0;
      }
    }
    monitor.ObserveBatch(
      correct.data() + start,
      n,
      [&] { seen.push_back(batchIndex * 4 + 1); },
      [&](bool hasBackground) { seen.push_back(batchIndex * 4 + (hasBackground ? 3 : 2)); });
    const auto state = monitor.State();
    ASSERT_EQ(seen, expected) << what << ", results to " << start + n;
    ASSERT_EQ(state.seen, seenSince) << what;
    ASSERT_EQ(state.correct, correctSince) << what;
    ASSERT_EQ(state.drift.width, drift.Width()) << what << ", results to " << start + n;
    if (drift.Width() > 0)
    {
      ASSERT_EQ(state.drift.total / double(state.drift.width), drift.Mean()) << what;
      ASSERT_NEAR(state.drift.variance / double(state.drift.width), drift.Variance(), 1e-12) << what;
    }
    if (!settings.backgroundTrees)
      continue;
    ASSERT_EQ(state.warning.width, warning.Width()) << what << ", results to " << start + n;
    if (warning.Width() > 0)
    {
      ASSERT_EQ(state.warning.total / double(state.warning.width), warning.Mean()) << what;
      ASSERT_NEAR(state.warning.variance / double(state.warning.width), warning.Variance(), 1e-12) << what;
    }
  }
  EXPECT_GT(monitor.Drifts(), 2) << what;
  if (settings.backgroundTrees)
    EXPECT_GT(monitor.Warnings(), 2) << what;
}
} // namespace

TEST(ForestMemberMonitor, SharedWindowDecidesAsTwoDetectors)
{
  // While neither detector has cut, the monitor keeps one window for both (one update, one scan with the
  // warning's bound); results enter a run at a time up to the next cut. Batches of one result, a few,
  // the forests' 1000 and more, so cuts fall inside batches, at their ends, and several in one.
  for (const std::size_t batch : { 1, 7, 256, 1000, 4096 })
    ExpectMonitorEqualsTwoDetectors(DriftSettings{}, batch);
}

TEST(ForestMemberMonitor, TwoWindowsDecideAsTwoDetectors)
{
  // Without the shared window (deltas too close for it, or no background trees: no warning detector).
  DriftSettings close;
  close.warningDelta = 0.0015;
  DriftSettings noBackground;
  noBackground.backgroundTrees = false;
  for (const DriftSettings & settings : { close, noBackground })
    for (const std::size_t batch : { 1, 7, 256, 4096 })
      ExpectMonitorEqualsTwoDetectors(settings, batch);
}
