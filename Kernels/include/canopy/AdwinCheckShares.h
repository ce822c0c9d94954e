// A speculative ADWIN check (AdwinWouldCutAfter, AdwinBatch.h) split into shares, so that many threads
// evaluate one check's boundaries at once (the CUDA block of AdwinMemberStep.h) instead of one thread
// walking them all. Whether a check cuts is an OR over its boundaries with n1 >= 5 (AdwinWouldCutAfter's
// scan stops at the first n1 < 5, oldest first, and n1 only falls from there), so the order of the
// boundaries does not matter: here they come newest first, row by row from row 0, where each row's
// newest boundary follows from the counts of the rows below it, and share s of S takes every S-th one.
// A boundary's sums are the integers AdwinWouldCutAfter reads: at an old boundary (position <= width0)
// the old buckets' sum up to it (all old buckets' sum minus those after it: exact integer-valued
// doubles), found in AdwinOldBoundaries directly (an old boundary in new row r ends an old bucket of row
// r or below: merges only join neighbours of lower rows); after it, total0 + errorsBefore[...].
#pragma once

#include "canopy/AdwinBatch.h"

#include <cstdint>

namespace canopy
{

/** The old window's bucket boundaries (rows r < kRows of at most kStride buckets), newest first. */
template<int kRows, int kStride>
struct AdwinOldBoundaries
{
  std::int64_t newestEnd[kRows];       // values after old row r's newest bucket (in the rows below it)
  std::int32_t firstEntry[kRows];      // entries of the rows below row r
  double       rowTotal[kRows];        // row r's sum
  double       after[kRows * kStride]; // per bucket, newest first: the sum of the old values after it
  double       all;                    // every old bucket's sum
  std::int32_t rows;
};

/** Row r's part of AdwinOldBoundaries once every rowTotal is set (rows are independent). */
template<int kRows, int kStride>
CANOPY_HD void
AdwinOldBoundariesRow(const AdwinBucket *                  buckets,
                      const int *                          counts,
                      int                                  rows,
                      int                                  stride,
                      int                                  r,
                      AdwinOldBoundaries<kRows, kStride> & b)
{
  std::int64_t end = 0;
  int          first = 0;
  double       after = 0.0;
  for (int below = 0; below < r; ++below)
  {
    end += std::int64_t(counts[below]) << below;
    first += counts[below];
    after += b.rowTotal[below];
  }
  b.newestEnd[r] = end;
  b.firstEntry[r] = first;
  const AdwinBucket * row = buckets + r * stride;
  for (int k = counts[r]; k-- > 0; ++first) // newest first
  {
    b.after[first] = after;
    after += row[k].total;
  }
  if (r == rows - 1)
  {
    b.all = after;
    b.rows = rows;
  }
}

/** The values' sum from the window's oldest up to `position` (counted from the oldest), a boundary of
 * the window after more results (errorsBefore: their errors' prefix): an old boundary (position <=
 * width0; one that ends an old bucket of row `hint` or below) or among the new results. Exact
 * integer-valued doubles. */
template<int kRows, int kStride>
CANOPY_HD double
AdwinSumUpTo(const AdwinOldBoundaries<kRows, kStride> & old,
             std::int64_t                               width0,
             double                                     total0,
             const std::int32_t *                       errorsBefore,
             std::int64_t                               position,
             int                                        hint)
{
  if (position > width0)
    return total0 + double(errorsBefore[position - width0]);
  const std::int64_t newer = width0 - position;
  int                o = hint < old.rows ? hint : old.rows - 1;
  while (old.newestEnd[o] > newer)
    --o;
  return old.all - old.after[old.firstEntry[o] + int((newer - old.newestEnd[o]) >> o)];
}

/** What every share of one speculative check needs besides the boundaries' sums, computed once per
 * check: its cut test (two logarithms) and the rows' shape after its values (AdwinRowMerges row by row). */
template<int kRows>
struct AdwinCheckPlan
{
  AdwinCutTest test;
  std::int64_t width; // the window's values after the check's (no cut below 10)
  double       total;
  std::int32_t added, rows;
  std::uint8_t kept[kRows]; // buckets of row r after (at most maxBuckets)
  std::int32_t overflow;    // more rows than kRows: the check cannot be planned (the caller's error)
};

/** The plan of the check after `added` more results on the window of rows counts[0..rows) (width0
 * values summing to total0), with the window's variance sum then and bound parameter delta. */
template<int kRows>
CANOPY_HD void
AdwinPlanCheck(const int *             counts,
               int                     rows,
               int                     maxBuckets,
               std::int64_t            width0,
               double                  total0,
               int                     added,
               const std::int32_t *    errorsBefore,
               double                  variance,
               double                  delta,
               AdwinCheckPlan<kRows> & plan)
{
  plan.width = width0 + added;
  plan.total = total0 + double(errorsBefore[added]);
  plan.added = added;
  plan.overflow = 0;
  plan.rows = 0;
  if (plan.width < 10)
    return; // no cut on a window of fewer than 10 values: no rows to scan
  plan.test = AdwinCutTest(plan.width, plan.total, variance, delta);
  for (int r = 0, incoming = added; r < rows || incoming > 0; ++r)
  {
    if (r == kRows)
    {
      plan.overflow = 1;
      plan.rows = 0;
      return;
    }
    int kept = 0;
    incoming = AdwinRowMerges(r < rows ? counts[r] : 0, incoming, maxBuckets, kept);
    plan.kept[r] = std::uint8_t(kept);
    plan.rows = r + 1;
  }
}

/** Whether share `share` of `shares` of a planned check cuts (AdwinShareWouldCutAfter's scan). */
template<int kRows, int kStride>
CANOPY_HD bool
AdwinPlannedShareCuts(const AdwinCheckPlan<kRows> &              plan,
                      const AdwinOldBoundaries<kRows, kStride> & old,
                      std::int64_t                               width0,
                      double                                     total0,
                      const std::int32_t *                       errorsBefore,
                      int                                        share,
                      int                                        shares)
{
  const std::int64_t width = plan.width;
  const double       total = plan.total;
  std::int64_t       end = width;  // the newest boundary of row r
  int                seen = 0;     // boundaries of the rows below row r (newest first)
  int                next = share; // the share's next boundary (its number, newest first)
  for (int r = 0; r < plan.rows; ++r)
  {
    const int          kept = plan.kept[r];
    const std::int64_t size = std::int64_t(1) << r;
    for (; next - seen < kept; next += shares)
    {
      const std::int64_t position = end - std::int64_t(next - seen) * size, n1 = width - position;
      if (n1 < 5)
        continue; // AdwinWouldCutAfter's scan ends before it
      const double u0 = AdwinSumUpTo(old, width0, total0, errorsBefore, position, r);
      if (plan.test.Cuts(double(position), double(n1), u0, total - u0))
        return true;
    }
    seen += kept;
    end -= std::int64_t(kept) * size;
  }
  return false;
}

/** AdwinWouldCutAfter(buckets, counts, rows, stride, maxBuckets, width0, total0, -, added, variance,
 * delta, errorsBefore) over the boundaries share `share` of `shares` takes: the check cuts when one of its
 * shares does. `old`: the window's AdwinOldBoundaries. (AdwinPlanCheck, then AdwinPlannedShareCuts.) */
template<int kRows, int kStride>
CANOPY_HD bool
AdwinShareWouldCutAfter(const int *                                counts,
                        int                                        rows,
                        int                                        maxBuckets,
                        const AdwinOldBoundaries<kRows, kStride> & old,
                        std::int64_t                               width0,
                        double                                     total0,
                        int                                        added,
                        double                                     variance,
                        double                                     delta,
                        const std::int32_t *                       errorsBefore,
                        int                                        share,
                        int                                        shares)
{
  AdwinCheckPlan<kRows> plan;
  AdwinPlanCheck(counts, rows, maxBuckets, width0, total0, added, errorsBefore, variance, delta, plan);
  return !plan.overflow && AdwinPlannedShareCuts(plan, old, width0, total0, errorsBefore, share, shares);
}

} // namespace canopy
