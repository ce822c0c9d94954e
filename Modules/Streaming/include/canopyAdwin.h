// ADWIN (Bifet & Gavalda 2007): an adaptive window over a stream of reals (here 0/1 errors) that
// drops its older part whenever the means of two sub-windows differ by more than a bound set by
// delta. The window is an exponential histogram: rows of at most maxBuckets buckets, row i's buckets
// summarising 2^i values each, so memory and a check cost O(maxBuckets log W). As in MOA and river,
// the cut test runs every `clock` inputs, on windows of at least 10 values, with sub-windows of at
// least 5.
#pragma once

#include "canopy/AdwinBatch.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace canopy::streaming
{

/** Everything an Adwin holds besides its settings (delta, maxBuckets, clock): for saving a model. */
struct AdwinState
{
  std::vector<std::int32_t> rowCounts;         // buckets in use per row (row i: 2^i values each)
  std::vector<double>       totals, variances; // the buckets, row by row, oldest first
  std::int64_t              width = 0, ticks = 0, detections = 0;
  double                    total = 0.0, variance = 0.0;
};

/** What an Adwin's values are. Real: any reals, the window's variance sum kept by Welford's updates
 * (MOA's and river's ADWIN). Binary: 0 or 1 only (errors), the variance sum the closed form
 * S (W - S) / W of the window's width W and sum S (AdwinBinaryVarianceSum): the same quantity, exact up
 * to one rounding instead of one per value, and with no order, so a batch's checks need no serial chain
 * of sums (the GPU step, AdwinMemberStep.h). The forest's detectors are Binary. */
enum class AdwinValues
{
  Real,
  Binary
};

class Adwin
{
public:
  explicit Adwin(double delta = 0.002, int maxBuckets = 5, int clock = 32, AdwinValues values = AdwinValues::Real);

  /** Adds a value (Binary: 0 or 1, else canopy::Error); true when the window shrank (a change was
   * detected). */
  bool Update(double value);
  /** Update(value), true only when the window's mean also went up (MOA's ADWINChangeDetector); the mean
   * before is computed once, for both the variance update and the comparison. */
  bool UpdateRose(double value);

  double       Mean() const { return m_Width > 0 ? m_Total / double(m_Width) : 0.0; }
  std::int64_t Width() const { return m_Width; }
  double       Variance() const { return m_Width > 0 ? VarianceSum() / double(m_Width) : 0.0; }
  std::int64_t Detections() const { return m_Detections; }
  double       Delta() const { return m_Delta; }

  // The steps of Update, for a caller that shares one window between detectors of different deltas
  // (ForestMemberMonitor): Update(v) is Append(v, Mean()) ? Check() : false.
  /** The value joins the window (Real: Welford's update of the variance sum from the window's mean
   * before it, `meanBefore` = Mean()); a bucket row is merged only when full. Inline: most inputs only
   * append to row 0. True when the clock says a check is due: call Check() or SkipCheck() next. */
  bool Append(double value, double meanBefore)
  {
    if (!m_Binary && m_Width > 0)
      m_Variance += double(m_Width) * (value - meanBefore) * (value - meanBefore) / double(m_Width + 1);
    ++m_Width;
    m_Total += value;
    if (m_Counts.empty())
      AddRow();
    m_Buckets[std::size_t(m_Counts[0]++)] = Bucket{ value, 0.0 };
    if (m_Counts[0] > m_MaxBuckets)
      Compress();
    return ++m_Ticks >= m_Clock;
  }
  /** The due check: restarts the clock and, on a window of at least 10 values, drops its oldest
   * buckets while a cut is found; true when it did (a change). */
  bool Check();
  /** A due check known to find no cut (WouldCut(Delta()) is false): restarts the clock only. */
  void SkipCheck() { m_Ticks = 0; }
  /** What AppendRun did: `appended` values entered; when `cutDue`, the last one's check is due and
   * would cut (call Check() next); `meanBefore`: the mean before the last one entered. */
  struct Run
  {
    std::size_t appended = 0;
    bool        cutDue = false;
    double      meanBefore = 0.0;
  };
  /** The errors of test results (correct[i] == 0: value 1) enter as Append(value, Mean()) one by one
   * does, with SkipCheck() at each due check that would not cut with bound parameter checkDelta, until
   * one would (left to the caller) or all n entered. Bit for bit the single appends' window, but a
   * run at a time: the sums first, then the buckets row by row (canopy/AdwinBatch.h). */
  Run AppendRun(const std::uint8_t * correct, std::size_t n, double checkDelta);
  /** Whether a check with bound parameter `delta` would cut the window now (nothing changes). */
  bool WouldCut(double delta) const;
  /** A copy of this detector (window, clock, counts) that checks with `delta`. */
  Adwin WithDelta(double delta) const;

  AdwinState State() const;
  /** Takes a state from State() of an Adwin with the same settings; throws canopy::Error (naming what
   * is wrong) for one that no Adwin could have held: a row over maxBuckets, bucket lists of another
   * length, a width that is not the buckets' sum, counters out of range, non-finite sums; Binary: a
   * bucket total that is not a whole number of its values, or a window total that is not their sum.
   * A Binary Adwin takes a Real one's state of 0/1 values (a model saved before the forest's detectors
   * were Binary): its variance sums are replaced by the closed form's. */
  void Restore(const AdwinState & state);

private:
  using Bucket = canopy::AdwinBucket; // total, and the sum of squared deviations from its mean

  bool     Add(double value, double meanBefore) { return Append(value, meanBefore) ? Check() : false; }
  double   VarianceSum() const { return m_Binary ? AdwinBinaryVarianceSum(m_Width, m_Total) : m_Variance; }
  bool     ScanForCut(double delta) const;
  void     Compress();
  bool     CheckForChange();
  void     DropOldestBucket();
  Bucket * Row(std::size_t i) { return m_Buckets.data() + i * std::size_t(m_MaxBuckets + 1); }
  void     AddRow();

  double m_Delta;
  int    m_MaxBuckets, m_Clock;
  bool   m_Binary;
  /** Buckets in use per row, held inside the Adwin: a forest updates many detectors on many threads,
   * and small heap blocks of different detectors would share cache lines (false sharing). */
  class RowCounts
  {
  public:
    static constexpr std::size_t kMaxRows = 62; // 2^62 values: more than any stream
    std::size_t                  size() const { return m_Size; }
    bool                         empty() const { return m_Size == 0; }
    int &                        operator[](std::size_t i) { return m_Count[i]; }
    int                          operator[](std::size_t i) const { return m_Count[i]; }
    int                          back() const { return m_Count[m_Size - 1]; }
    int *                        data() { return m_Count; }
    void                         resize(std::size_t size) { m_Size = size; }         // rows written by the caller
    void                         push_back(int count) { m_Count[m_Size++] = count; } // AddRow checks the room
    void                         pop_back() { --m_Size; }
    const int *                  begin() const { return m_Count; }
    const int *                  end() const { return m_Count + m_Size; }

  private:
    int         m_Count[kMaxRows] = {};
    std::size_t m_Size = 0;
  };

  // Row i holds up to maxBuckets + 1 buckets of 2^i values each, oldest first, in fixed slots of
  // m_Buckets (no allocation per input; room for kReservedRows rows is taken at once, so detectors'
  // rows do not end up in interleaved small blocks); m_Counts[i] of them are in use.
  static constexpr std::size_t kReservedRows = 24;
  std::vector<Bucket>          m_Buckets;
  RowCounts                    m_Counts;
  std::int64_t                 m_Width = 0, m_Ticks = 0, m_Detections = 0;
  double                       m_Total = 0.0, m_Variance = 0.0; // m_Variance: Real only
  // Binary: a lower bound of the cut bound's dd for widths from m_BoundWidth on, for m_BoundDelta (the
  // host scan's cheap test; a cache, so written by const scans: a detector is used by one thread at a time).
  mutable double       m_BoundDelta = 0.0, m_BoundLow = 0.0;
  mutable std::int64_t m_BoundWidth = 0;
};

} // namespace canopy::streaming
