// ADWIN's known behaviour: exact window statistics, a detection soon after an abrupt change of the
// mean, a shrunk window holding the new mean, and rare false alarms on a stationary stream.
#include "canopyAdwin.h"
#include "canopyForestMember.h"

#include "canopy/CounterRandom.h"

#include <gtest/gtest.h>

using canopy::streaming::Adwin;
using canopy::streaming::DriftSettings;
using canopy::streaming::ForestMemberMonitor;

namespace
{
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
