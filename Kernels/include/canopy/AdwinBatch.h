// ADWIN's window updates for a run of 0/1 errors at once (canopy::streaming::Adwin holds the window;
// Bifet & Gavalda 2007). The exponential histogram's shape depends only on how many values entered,
// not on the values: each row is a FIFO that, on overflow (maxBuckets + 1 buckets), merges its two
// oldest buckets into one of the next row. So a run of values can enter row by row (all of row 0's
// merges, then all of row 1's, ...) instead of value by value, and the buckets come out bit for bit
// those of one-at-a-time appends: the same pairs are merged by the same formula. The window's
// variance sum is Welford's, one term per value from the counts before it (the terms are independent;
// only their sum is in stream order). The cut scan is the one every check runs. Shared by the host
// detectors and device code: plain arrays, no allocation, no exceptions.
#pragma once

#include "canopy/HostDevice.h"

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

/** Welford's update of the window's sums for n errors appended one by one (the operations, in their
 * order, of Adwin::Append with meanBefore = Mean()); meanBeforeLast: the mean before the last one. */
CANOPY_HD void
AdwinAddErrorSums(const std::uint8_t * correct,
                  int                  n,
                  std::int64_t &       width,
                  double &             total,
                  double &             variance,
                  double &             meanBeforeLast)
{
  // In locals: the results are bytes, which may alias anything, so sums kept behind the references
  // would be stored and reloaded for every value.
  std::int64_t w = width;
  double       t = total, v = variance, mean = meanBeforeLast;
  for (int i = 0; i < n; ++i)
  {
    const double value = AdwinError(correct[i]);
    mean = w > 0 ? t / double(w) : 0.0;
    if (w > 0)
      v += double(w) * (value - mean) * (value - mean) / double(w + 1);
    ++w;
    t += value;
  }
  width = w;
  total = t;
  variance = v;
  meanBeforeLast = mean;
}

/** Row r's merge of its two oldest buckets (2^r values each), as Adwin::Compress computes it. */
CANOPY_HD AdwinBucket
AdwinMerge(const AdwinBucket & older, const AdwinBucket & newer, int r)
{
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
 * window's sums are AdwinAddErrorSums' business. */
CANOPY_HD int
AdwinInsertRun(AdwinBucket *        buckets,
               int *                counts,
               int                  rows,
               int                  maxBuckets,
               int                  stride,
               const std::uint8_t * correct,
               int                  n)
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
      out[j] = AdwinMerge(queued(2 * j), queued(2 * j + 1), r);
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
  constexpr double kMinSubWindow = 5.0;
  // Sub-window W0 grows from the oldest bucket; W1 is the rest (the newer part).
  double       n0 = 0.0, u0 = 0.0;
  double       n1 = double(width), u1 = total;
  const double dd = log(2.0 * log(double(width)) / delta); // MOA's bound, per scan
  const double v = variance / double(width);
  const double W = double(width), S = total;
  const double floor = 2.0 / 3.0 * dd * W * (1.0 - 1e-9);
  const double spread = 2.0 * v * dd * W * (1.0 - 1e-9);
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
      if (n1 < kMinSubWindow)
        return false; // every newer boundary leaves W1 smaller still
      // A cut needs |u0/n0 - u1/n1| = |u0 W - S n0| / (n0 n1) > sqrt(2 m v dd) + 2/3 dd m with
      // m > 1/n0 + 1/n1 = W/(n0 n1), so |u0 W - S n0| > sqrt(2 v dd W n0 n1) + 2/3 dd W: first the
      // linear part, then the square-root part squared; no division, no square root, and the margins
      // cover the rounding of both sides (the test only skips boundaries AdwinCutExpression rejects).
      const double deviation = fabs(u0 * W - S * n0) + 1e-12 * (fabs(u0) * W + fabs(S) * n0);
      if (deviation <= floor)
        continue;
      const double excess = deviation - floor;
      if (excess * excess <= spread * n0 * n1)
        continue;
      if (n0 >= kMinSubWindow && AdwinCutExpression(n0, n1, u0, u1, dd, v))
        return true;
    }
  }
  return false;
}

} // namespace canopy
