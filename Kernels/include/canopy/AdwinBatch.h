// ADWIN's window updates for a run of 0/1 errors at once (canopy::streaming::Adwin holds the window;
// Bifet & Gavalda 2007). The exponential histogram's shape depends only on how many values entered,
// not on the values: each row is a FIFO that, on overflow (maxBuckets + 1 buckets), merges its two
// oldest buckets into one of the next row. So a run of values can enter row by row (all of row 0's
// merges, then all of row 1's, ...) instead of value by value, and the buckets come out bit for bit
// those of one-at-a-time appends: the same pairs are merged by the same formula. For real values the
// window's variance sum is Welford's (the host's Adwin keeps it, one term per value in stream order).
// For 0/1 values (the forest's errors) it is the closed form S (W - S) / W of the window's width W and
// error count S (AdwinBinaryVarianceSum), exact up to one rounding and free of any order. The cut scan is the one every
// check runs. Shared by the host detectors and device code: plain arrays, no allocation, no exceptions.
#pragma once

#include "canopy/HostDevice.h"
#include "canopy/PortableMath.h"

#include <cmath>
#include <cstdint>

namespace canopy
{

struct AdwinBucket
{
  double total;
  double variance; // sum of squared deviations from the bucket's mean
};

/** Values one AdwinInsertRun takes at most (its scratch lives on the stack). */
constexpr int kAdwinMaxRun = 64;
/** Room for the rows one AdwinInsertRun may add (64 values fill rows 0 to 3 of an empty window). */
constexpr int kAdwinMaxNewRows = 7;

/** The value test result `correct` stands for: 1 for an error. */
CANOPY_HD double
AdwinError(std::uint8_t correct)
{
  return correct != 0 ? 0.0 : 1.0;
}

/** The sum of squared deviations from the mean of `width` values of 0 or 1 of which `total` are 1:
 * total (width - total) / width. Exact integers up to the one division (no contraction can change it),
 * so the host and CUDA agree bit for bit, whatever order the values came in. */
CANOPY_HD double
AdwinBinaryVarianceSum(std::int64_t width, double total)
{
  return width > 0 ? total * (double(width) - total) / double(width) : 0.0;
}

/** Row r's merge of its two oldest buckets (2^r values each), as Adwin::Compress computes it; a window
 * of 0/1 values (`binary`) keeps no bucket variances (its variance sum follows from its counts). */
CANOPY_HD AdwinBucket
AdwinMerge(const AdwinBucket & older, const AdwinBucket & newer, int r, bool binary = false)
{
  if (binary)
    return AdwinBucket{ older.total + newer.total, 0.0 };
  // n = 2^r and 1/n, 1/(2n) exactly: multiplying by them rounds as dividing by n and 2n does.
  const double n = double(std::uint64_t(1) << r), inverse = 1.0 / n;
  const double d = older.total * inverse - newer.total * inverse;
  return AdwinBucket{ older.total + newer.total, older.variance + newer.variance + n * n * d * d * (0.5 * inverse) };
}

/** A row holding `count` <= maxBuckets buckets receives `incoming` more one at a time, each time it holds
 * maxBuckets + 1 merging its two oldest: how many merges that makes; `kept` is its count after. */
CANOPY_HD int
AdwinRowMerges(int count, int incoming, int maxBuckets, int & kept)
{
  if (count + incoming <= maxBuckets)
  {
    kept = count + incoming;
    return 0;
  }
  const int after = incoming - (maxBuckets + 1 - count); // values after the first overflow
  kept = maxBuckets - 1 + after % 2;
  return 1 + after / 2;
}

/** Appends n <= kAdwinMaxRun errors (correct[i] == 0) to the rows (row r at buckets + r * stride,
 * oldest first, counts[r] in use; `rows` of them) with every merge that n single appends would make;
 * returns the number of rows after (the caller gives room for rows + kAdwinMaxNewRows rows). The
 * window's sums are the caller's. `binary`: the window's values are 0/1 (AdwinMerge). */
CANOPY_HD int
AdwinInsertRun(AdwinBucket *        buckets,
               int *                counts,
               int                  rows,
               int                  maxBuckets,
               int                  stride,
               const std::uint8_t * correct,
               int                  n,
               bool                 binary)
{
  AdwinBucket  scratch[2][kAdwinMaxRun];
  AdwinBucket *in = scratch[0], *out = scratch[1];
  for (int i = 0; i < n; ++i)
    in[i] = AdwinBucket{ AdwinError(correct[i]), 0.0 };
  int incoming = n;
  for (int r = 0; incoming > 0; ++r)
  {
    if (r == rows)
      counts[rows++] = 0;
    AdwinBucket * row = buckets + r * stride;
    const int     count = counts[r];
    int           kept = 0;
    const int     merges = AdwinRowMerges(count, incoming, maxBuckets, kept);
    // The row's queue: its buckets, then the incoming ones; merges take consecutive pairs from its front.
    auto queued = [&](int k) -> const AdwinBucket & { return k < count ? row[k] : in[k - count]; };
    for (int j = 0; j < merges; ++j)
      out[j] = AdwinMerge(queued(2 * j), queued(2 * j + 1), r, binary);
    for (int k = 2 * merges; k < count + incoming; ++k) // the rest move to the row's front, in order
      row[k - 2 * merges] = queued(k);
    counts[r] = kept;
    AdwinBucket * swap = in;
    in = out;
    out = swap;
    incoming = merges;
  }
  return rows;
}

/** Drops the window's oldest bucket (the oldest of its top row) and empty top rows after it: Adwin's
 * DropOldestBucket, on plain rows; `binary`: the variance sum is AdwinBinaryVarianceSum's. */
CANOPY_HD void
AdwinDropOldest(AdwinBucket *  buckets,
                int *          counts,
                int &          rows,
                int            stride,
                std::int64_t & width,
                double &       total,
                double &       variance,
                bool           binary)
{
  int row = rows - 1;
  while (counts[row] == 0)
    --row;
  AdwinBucket *     b = buckets + row * stride;
  const AdwinBucket oldest = b[0];
  for (int k = 1; k < counts[row]; ++k)
    b[k - 1] = b[k];
  --counts[row];
  const double n1 = double(std::uint64_t(1) << row);
  width -= std::int64_t(n1);
  total -= oldest.total;
  if (binary)
    variance = AdwinBinaryVarianceSum(width, total);
  else
  {
    const double d = oldest.total / n1 - (width > 0 ? total / double(width) : 0.0);
    variance -= oldest.variance + n1 * double(width) * d * d / (n1 + double(width));
    variance = variance < 0.0 ? 0.0 : variance;
  }
  while (rows > 0 && counts[rows - 1] == 0)
    --rows;
}

/** Whether sub-windows of sizes n0, n1 with sums u0, u1 differ by more than ADWIN's epsilon. */
CANOPY_HD bool
AdwinCutExpression(double n0, double n1, double u0, double u1, double dd, double v)
{
  constexpr double kMinSubWindow = 5.0;
  const double     m = 1.0 / (n0 - kMinSubWindow + 1.0) + 1.0 / (n1 - kMinSubWindow + 1.0);
  const double     difference = fabs(u0 / n0 - u1 / n1);
  const double     linear = 2.0 / 3.0 * dd * m;
  // epsilon = sqrt(...) + linear >= linear (rounding is monotone): most boundaries fail already here,
  // without the square root; the decision is the same.
  if (!(difference > linear))
    return false;
  const double epsilon = sqrt(2.0 * m * v * dd) + linear;
  return difference > epsilon;
}

/** ADWIN's cut test for one window (width values summing to total, variance sum `variance`; width >= 1)
 * and bound parameter delta, boundary by boundary. */
struct AdwinCutTest
{
  double dd, v, W, S, floor, spread;

  AdwinCutTest() = default; // trivial: a test may sit in CUDA shared memory (AdwinCheckPlan)
  CANOPY_HD AdwinCutTest(std::int64_t width, double total, double variance, double delta)
    // MOA's bound, per scan; PortableLog: the host's and CUDA's log could part on a boundary's edge.
    : dd(PortableLog(2.0 * PortableLog(double(width)) / delta))
    , v(variance / double(width))
    , W(double(width))
    , S(total)
    , floor(2.0 / 3.0 * dd * W * (1.0 - 1e-9))
    , spread(2.0 * v * dd * W * (1.0 - 1e-9))
  {
  }

  /** Whether the boundary with n0 values summing to u0 before it (n1, u1 after) cuts. */
  CANOPY_HD bool Cuts(double n0, double n1, double u0, double u1) const
  {
    constexpr double kMinSubWindow = 5.0;
    // A cut needs |u0/n0 - u1/n1| = |u0 W - S n0| / (n0 n1) > sqrt(2 m v dd) + 2/3 dd m with
    // m > 1/n0 + 1/n1 = W/(n0 n1), so |u0 W - S n0| > sqrt(2 v dd W n0 n1) + 2/3 dd W: first the
    // linear part, then the square-root part squared; no division, no square root, and the margins
    // cover the rounding of both sides (the test only skips boundaries AdwinCutExpression rejects).
    // Both tests at once, without a branch each: either rejects most boundaries, which one at random,
    // so a scan's branches on them were often mispredicted on the host (perf, dev machine).
    const double deviation = fabs(u0 * W - S * n0) + 1e-12 * (fabs(u0) * W + fabs(S) * n0);
    const double excess = deviation - floor;
    const bool   candidate = (deviation > floor) & (excess * excess > spread * n0 * n1);
    return candidate && n0 >= kMinSubWindow && AdwinCutExpression(n0, n1, u0, u1, dd, v);
  }
};

/** Whether some boundary between buckets parts the window (width values summing to total, variance
 * sum `variance`; width >= 1) into an older and a newer part whose means differ by more than epsilon
 * for bound parameter delta. */
CANOPY_HD bool
AdwinScanForCut(const AdwinBucket * buckets,
                const int *         counts,
                int                 rows,
                int                 stride,
                std::int64_t        width,
                double              total,
                double              variance,
                double              delta)
{
  // Sub-window W0 grows from the oldest bucket; W1 is the rest (the newer part).
  const AdwinCutTest test(width, total, variance, delta);
  double             n0 = 0.0, u0 = 0.0;
  double             n1 = double(width), u1 = total;
  for (int r = rows; r-- > 0;)
  {
    const double        n = double(std::uint64_t(1) << r);
    const AdwinBucket * row = buckets + r * stride;
    for (int k = 0; k < counts[r]; ++k) // oldest first
    {
      n0 += n;
      n1 -= n;
      u0 += row[k].total;
      u1 -= row[k].total;
      if (n1 < 5.0)
        return false; // every newer boundary leaves W1 smaller still (sub-windows of at least 5)
      if (test.Cuts(n0, n1, u0, u1))
        return true;
    }
  }
  return false;
}

/** Whether a check after `added` more results (correct[0..added); correct[i] == 0: an error) would cut,
 * from the window before them (buckets, counts, rows, width0 values summing to total0; 0/1 values)
 * without entering them: the shape then follows from counts alone (AdwinRowMerges row by row), every
 * boundary lies at an old bucket's boundary or among the new results (merges join neighbours), and a
 * bucket's total is a difference of cumulative sums, exact integers for 0/1 values, so the scan sees the
 * sums the appends would give. `variance`: the window's variance sum after them (Welford's, or for a
 * Binary window AdwinBinaryVarianceSum's).
 * So every check of a batch can be evaluated at once, each assuming no cut before it (speculation).
 * errorsBefore (optional): errorsBefore[i] = the errors among correct[0..i), for i <= added; with it the
 * check reads the new results' sums instead of counting them (the same integers). */
CANOPY_HD bool
AdwinWouldCutAfter(const AdwinBucket *  buckets,
                   const int *          counts,
                   int                  rows,
                   int                  stride,
                   int                  maxBuckets,
                   std::int64_t         width0,
                   double               total0,
                   const std::uint8_t * correct,
                   int                  added,
                   double               variance,
                   double               delta,
                   const std::int32_t * errorsBefore = nullptr)
{
  constexpr int kMaxRows = 64;
  int           after[kMaxRows];
  int           rowsAfter = 0;
  for (int r = 0, incoming = added; (r < rows || incoming > 0) && r < kMaxRows; ++r)
  {
    int kept = 0;
    incoming = AdwinRowMerges(r < rows ? counts[r] : 0, incoming, maxBuckets, kept);
    after[r] = kept;
    rowsAfter = r + 1;
  }
  double errors = 0.0;
  if (errorsBefore)
    errors = double(errorsBefore[added]);
  else
    for (int i = 0; i < added; ++i)
      errors += AdwinError(correct[i]);
  const std::int64_t width = width0 + added;
  const double       total = total0 + errors;
  if (width < 10)
    return false; // no cut on a window of fewer than 10 values
  const AdwinCutTest test(width, total, variance, delta);
  // Cursors: the old buckets (oldest first) and the new results, each with its cumulative sum.
  int          oldRow = rows - 1, oldIndex = 0;
  std::int64_t oldEnd = 0, newEnd = 0;
  double       oldSum = 0.0, newSum = 0.0;
  std::int64_t position = 0;
  for (int r = rowsAfter; r-- > 0;)
    for (int k = 0; k < after[r]; ++k) // oldest first
    {
      position += std::int64_t(1) << r;
      double u0 = 0.0;
      if (position <= width0)
      {
        while (oldEnd < position)
        {
          while (oldIndex == counts[oldRow])
            --oldRow, oldIndex = 0;
          oldEnd += std::int64_t(1) << oldRow;
          oldSum += buckets[oldRow * stride + oldIndex++].total;
        }
        u0 = oldSum; // oldEnd == position: a boundary of the old window
      }
      else if (errorsBefore)
        u0 = total0 + double(errorsBefore[position - width0]);
      else
      {
        while (width0 + newEnd < position)
          newSum += AdwinError(correct[newEnd++]);
        u0 = total0 + newSum;
      }
      const double n0 = double(position), n1 = double(width - position);
      if (n1 < 5.0)
        return false;
      if (test.Cuts(n0, n1, u0, total - u0))
        return true;
    }
  return false;
}

} // namespace canopy
