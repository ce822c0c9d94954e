#include "canopyAdwin.h"

#include "canopy/Errors.h"

#include <algorithm>
#include <cmath>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace canopy::streaming
{
namespace
{
constexpr std::int64_t kMinWindow = 10;

/** Welford's update of the window's sums for n errors appended one by one, the operations of Append
 * with meanBefore = Mean() in their order (meanBeforeLast: the mean before the last one), with the
 * divisions out of the sums' way: every value's mean and term depend only on the width and total before
 * it, so the totals come first, then the divisions two at a time (SSE2's divpd costs a divsd), then the
 * terms are added in order. A sum chain with two scalar divisions per value was most of an append's
 * time (perf, dev machine). Real detectors only: a Binary one keeps counts. */
void
AddErrorSums(const std::uint8_t * correct,
             int                  n,
             std::int64_t &       width,
             double &             total,
             double &             variance,
             double &             meanBeforeLast)
{
  alignas(16) double before[kAdwinMaxRun], value[kAdwinMaxRun], count[kAdwinMaxRun], term[kAdwinMaxRun];
  double             t = total;
  std::int64_t       w = width;
  for (int i = 0; i < n; ++i, ++w)
  {
    value[i] = AdwinError(correct[i]);
    before[i] = t;
    count[i] = double(w);
    t += value[i];
  }
  int i = 0;
#if defined(__SSE2__)
  const __m128d zero = _mm_setzero_pd(), one = _mm_set1_pd(1.0);
  for (; i + 2 <= n; i += 2)
  {
    // An empty window's mean is 0: the division by max(count, 1) is discarded then.
    const __m128d c = _mm_load_pd(count + i), x = _mm_load_pd(value + i);
    const __m128d mean = _mm_and_pd(_mm_cmpgt_pd(c, zero), _mm_div_pd(_mm_load_pd(before + i), _mm_max_pd(c, one)));
    const __m128d d = _mm_sub_pd(x, mean);
    _mm_store_pd(term + i, _mm_div_pd(_mm_mul_pd(_mm_mul_pd(c, d), d), _mm_add_pd(c, one)));
    _mm_store_pd(before + i, mean);
  }
#endif
  for (; i < n; ++i)
  {
    const double mean = count[i] > 0.0 ? before[i] / count[i] : 0.0;
    term[i] = count[i] * (value[i] - mean) * (value[i] - mean) / (count[i] + 1.0);
    before[i] = mean;
  }
  double v = variance;
  for (int k = width > 0 ? 0 : 1; k < n; ++k) // the first value of an empty window adds no term
    v += term[k];
  if (n > 0)
    meanBeforeLast = before[n - 1];
  width = w;
  total = t;
  variance = v;
}

/** AdwinScanForCut's answer for a window of 0/1 values on the host, with fewer operations per
 * boundary. Most boundaries fail a cheap test; here that test is looser than the shared one and needs
 * neither the bound's two PortableLogs nor a rounding margin per boundary: a window of fewer than 2^26
 * values has integer sums whose products u0 W and S n0 are exact, so |u0 W - S n0| is exact; the bound's
 * dd comes from libm, lowered by 1e-6 of itself (libm and PortableLog agree to ~1e-15), so the floor and
 * spread below are at most the shared test's, and every boundary the shared test would cut at passes
 * (AdwinCutTest::Cuts derives its test from a cut: |u0 W - S n0| > sqrt(2 v dd W n0 n1) + 2/3 dd W; the
 * computed cut expression can exceed the exact one by a few ulps of the means, < 1e-8 of the bound for
 * such windows). A boundary that passes is decided by the shared AdwinCutTest, built at the first one
 * (its logarithms, which most scans never need). So the answer is AdwinScanForCut's, bit for bit
 * (Adwin.BinaryScanEqualsTheSharedScan). ddLow: BinaryBoundLow of a width at most this one's, for the same
 * delta. Returns -1 where this does not apply (then the shared scan). */
constexpr std::int64_t kExactWidth = std::int64_t(1) << 26;

/** A lower bound of AdwinCutTest's dd for windows of at least `width` values (dd grows with the width):
 * libm's logarithms lowered by 1e-6 of the result; 0 where none applies (then the shared scan). */
double
BinaryBoundLow(std::int64_t width, double delta)
{
  if (width < 10 || width >= kExactWidth || !(delta > 0.0 && delta < 1.0))
    return 0.0;
  const double ddLow = std::log(2.0 * std::log(double(width)) / delta) * (1.0 - 1e-6);
  return ddLow > 0.0 ? ddLow : 0.0;
}

int
BinaryScanForCut(const AdwinBucket * buckets,
                 const int *         counts,
                 int                 rows,
                 int                 stride,
                 std::int64_t        width,
                 double              total,
                 double              delta,
                 double              ddLow)
{
  if (width >= kExactWidth || !(ddLow > 0.0))
    return -1;
  const double W = double(width), S = total, variance = AdwinBinaryVarianceSum(width, total);
  const double v = variance / W;
  const double floorLow = 2.0 / 3.0 * ddLow * W * (1.0 - 1e-6), spreadLow = 2.0 * v * ddLow * W * (1.0 - 1e-6);
  bool         built = false;
  AdwinCutTest test;
  double       n0 = 0.0, u0 = 0.0, n1 = W;
  for (int r = rows; r-- > 0;)
  {
    const double        n = double(std::uint64_t(1) << r);
    const AdwinBucket * row = buckets + r * stride;
    for (int k = 0; k < counts[r]; ++k) // oldest first
    {
      n0 += n;
      n1 -= n;
      u0 += row[k].total;
      if (n1 < 5.0)
        return 0;
      const double deviation = std::fabs(u0 * W - S * n0), excess = deviation - floorLow;
      if ((deviation > floorLow) & (excess * excess > spreadLow * n0 * n1))
      {
        if (!built)
          test = AdwinCutTest(width, total, variance, delta), built = true;
        if (test.Cuts(n0, n1, u0, S - u0))
          return 1;
      }
    }
  }
  return 0;
}

} // namespace

Adwin::Adwin(double delta, int maxBuckets, int clock, AdwinValues values)
  : m_Delta(delta)
  , m_MaxBuckets(maxBuckets)
  , m_Clock(clock)
  , m_Binary(values == AdwinValues::Binary)
{
}

namespace
{
void
CheckBinaryValue(bool binary, double value)
{
  if (binary && value != 0.0 && value != 1.0)
    CANOPY_THROW("ADWIN: value " << value << " given to a detector of 0/1 values (AdwinValues::Binary)");
}
} // namespace

bool
Adwin::Update(double value)
{
  CheckBinaryValue(m_Binary, value);
  return Add(value, Mean());
}

bool
Adwin::UpdateRose(double value)
{
  CheckBinaryValue(m_Binary, value);
  const double before = Mean();
  return Add(value, before) && Mean() > before;
}

bool
Adwin::Check()
{
  m_Ticks = 0; // a check every clock inputs, counted from the start, as before
  if (m_Width < kMinWindow)
    return false;
  const bool changed = CheckForChange();
  m_Detections += changed ? 1 : 0;
  return changed;
}

void
Adwin::AddRow()
{
  if (m_Counts.size() == RowCounts::kMaxRows)
    CANOPY_THROW("ADWIN: more than " << RowCounts::kMaxRows << " bucket rows");
  if (m_Buckets.capacity() == 0)
    m_Buckets.reserve(kReservedRows * std::size_t(m_MaxBuckets + 1));
  m_Buckets.resize(m_Buckets.size() + std::size_t(m_MaxBuckets + 1));
  m_Counts.push_back(0);
}

void
Adwin::Compress()
{
  for (std::size_t i = 0; i < m_Counts.size(); ++i)
  {
    if (m_Counts[i] <= m_MaxBuckets)
      break;
    // Merge the two oldest buckets of row i into the newest of row i + 1.
    Bucket *     row = Row(i);
    const Bucket older = row[0], newer = row[1];
    if (m_Counts[i] == 6) // the default maxBuckets 5: four fixed moves, not a call to memmove
    {
      const Bucket b2 = row[2], b3 = row[3], b4 = row[4], b5 = row[5];
      row[0] = b2, row[1] = b3, row[2] = b4, row[3] = b5;
    }
    else
      for (int k = 2; k < m_Counts[i]; ++k)
        row[k - 2] = row[k];
    m_Counts[i] -= 2;
    const Bucket merged = AdwinMerge(older, newer, int(i), m_Binary);
    if (i + 1 == m_Counts.size())
      AddRow();
    Row(i + 1)[m_Counts[i + 1]++] = merged;
  }
}

void
Adwin::DropOldestBucket()
{
  int rows = int(m_Counts.size());
  AdwinDropOldest(m_Buckets.data(), m_Counts.data(), rows, m_MaxBuckets + 1, m_Width, m_Total, m_Variance, m_Binary);
  m_Counts.resize(std::size_t(rows));
  m_Buckets.resize(std::size_t(rows) * std::size_t(m_MaxBuckets + 1));
}

bool
Adwin::CheckForChange()
{
  bool changed = false;
  while (m_Width >= kMinWindow && ScanForCut(m_Delta))
  {
    DropOldestBucket();
    changed = true;
  }
  return changed;
}

bool
Adwin::WouldCut(double delta) const
{
  return m_Width >= kMinWindow && ScanForCut(delta);
}

bool
Adwin::ScanForCut(double delta) const
{
  if (m_Binary)
  {
    // The bound's lower end is kept while the width grows by less than an eighth (it grows with the
    // width, so it stays a lower bound; libm's two logarithms were ~2% of a forest's time per scan).
    if (delta != m_BoundDelta || m_Width < m_BoundWidth || m_Width > m_BoundWidth + m_BoundWidth / 8)
    {
      m_BoundDelta = delta;
      m_BoundWidth = m_Width;
      m_BoundLow = BinaryBoundLow(m_Width, delta);
    }
    const int cut = BinaryScanForCut(
      m_Buckets.data(), m_Counts.begin(), int(m_Counts.size()), m_MaxBuckets + 1, m_Width, m_Total, delta, m_BoundLow);
    if (cut >= 0)
      return cut != 0;
  }
  return AdwinScanForCut(
    m_Buckets.data(), m_Counts.begin(), int(m_Counts.size()), m_MaxBuckets + 1, m_Width, m_Total, VarianceSum(), delta);
}

Adwin::Run
Adwin::AppendRun(const std::uint8_t * correct, std::size_t n, double checkDelta)
{
  Run       run;
  const int stride = m_MaxBuckets + 1;
  while (run.appended < n)
  {
    // Up to the next due check (a run of at most kAdwinMaxRun values: rows are FIFOs, so cutting a
    // run into pieces merges the same pairs).
    const std::size_t piece = std::min({ n - run.appended, std::size_t(m_Clock - m_Ticks), std::size_t(kAdwinMaxRun) });
    if (m_Counts.size() + kAdwinMaxNewRows > RowCounts::kMaxRows)
      CANOPY_THROW("ADWIN: more than " << RowCounts::kMaxRows << " bucket rows");
    const std::size_t room = (m_Counts.size() + kAdwinMaxNewRows) * std::size_t(stride);
    if (m_Buckets.size() < room)
    {
      if (m_Buckets.capacity() == 0)
        m_Buckets.reserve(kReservedRows * std::size_t(stride));
      m_Buckets.resize(room);
    }
    const std::uint8_t * values = correct + run.appended;
    if (m_Binary) // the counts only: the variance sum follows from them
    {
      int errors = 0;
      for (std::size_t i = 0; i + 1 < piece; ++i)
        errors += values[i] == 0 ? 1 : 0;
      const std::int64_t before = m_Width + std::int64_t(piece) - 1; // the width before the last value
      run.meanBefore = before > 0 ? (m_Total + double(errors)) / double(before) : 0.0;
      m_Width += std::int64_t(piece);
      m_Total += double(errors + (values[piece - 1] == 0 ? 1 : 0));
    }
    else
      AddErrorSums(values, int(piece), m_Width, m_Total, m_Variance, run.meanBefore);
    m_Counts.resize(std::size_t(AdwinInsertRun(
      m_Buckets.data(), m_Counts.data(), int(m_Counts.size()), m_MaxBuckets, stride, values, int(piece), m_Binary)));
    run.appended += piece;
    m_Ticks += std::int64_t(piece);
    if (m_Ticks < m_Clock)
      continue;
    if (WouldCut(checkDelta))
    {
      run.cutDue = true;
      return run;
    }
    m_Ticks = 0;
  }
  return run;
}

Adwin
Adwin::WithDelta(double delta) const
{
  Adwin copy = *this;
  copy.m_Delta = delta;
  return copy;
}

AdwinState
Adwin::State() const
{
  AdwinState s;
  s.rowCounts.assign(m_Counts.begin(), m_Counts.end());
  for (std::size_t i = 0; i < m_Counts.size(); ++i)
    for (int k = 0; k < m_Counts[i]; ++k)
    {
      const Bucket & b = m_Buckets[i * std::size_t(m_MaxBuckets + 1) + std::size_t(k)];
      s.totals.push_back(b.total);
      s.variances.push_back(b.variance);
    }
  s.width = m_Width;
  s.ticks = m_Ticks;
  s.detections = m_Detections;
  s.total = m_Total;
  s.variance = VarianceSum();
  return s;
}

void
Adwin::Restore(const AdwinState & s)
{
  if (s.rowCounts.size() > 62)
    CANOPY_THROW("ADWIN state: " << s.rowCounts.size() << " rows (at most 62)");
  std::size_t  buckets = 0;
  std::int64_t width = 0;
  for (std::size_t i = 0; i < s.rowCounts.size(); ++i)
  {
    if (s.rowCounts[i] < 0 || s.rowCounts[i] > m_MaxBuckets)
      CANOPY_THROW("ADWIN state: row " << i << " holds " << s.rowCounts[i] << " buckets (0 to " << m_MaxBuckets << ")");
    buckets += std::size_t(s.rowCounts[i]);
    width += std::int64_t(s.rowCounts[i]) << i;
  }
  if (!s.rowCounts.empty() && s.rowCounts.back() == 0)
    CANOPY_THROW("ADWIN state: the last row is empty");
  if (s.totals.size() != buckets || s.variances.size() != buckets)
    CANOPY_THROW("ADWIN state: " << buckets << " buckets in the rows, but " << s.totals.size() << " totals and "
                                 << s.variances.size() << " variances");
  if (s.width != width)
    CANOPY_THROW("ADWIN state: width " << s.width << ", but the buckets hold " << width << " values");
  if (s.ticks < 0 || s.ticks >= m_Clock || s.detections < 0)
    CANOPY_THROW("ADWIN state: ticks " << s.ticks << " (0 to " << m_Clock - 1 << ") or detections " << s.detections
                                       << " out of range");
  auto finite = [](double v) { return std::isfinite(v); };
  if (!finite(s.total) || !finite(s.variance) || !std::all_of(s.totals.begin(), s.totals.end(), finite) ||
      !std::all_of(s.variances.begin(), s.variances.end(), finite))
    CANOPY_THROW("ADWIN state: a sum is not finite");
  if (m_Binary)
  {
    // The checks' sums are exact integers (AdwinBatch.h): so must the restored ones be.
    double      sum = 0.0;
    std::size_t next = 0;
    for (std::size_t i = 0; i < s.rowCounts.size(); ++i)
      for (int k = 0; k < s.rowCounts[i]; ++k, ++next)
      {
        const double t = s.totals[next];
        if (t < 0.0 || t > double(std::int64_t(1) << i) || t != std::floor(t))
          CANOPY_THROW("ADWIN state: bucket " << k << " of row " << i << " holds total " << t << ", not 0 to "
                                              << (std::int64_t(1) << i) << " errors");
        sum += t;
      }
    if (sum != s.total)
      CANOPY_THROW("ADWIN state: total " << s.total << ", but the buckets hold " << sum << " errors");
  }
  m_Counts = RowCounts{};
  for (const std::int32_t count : s.rowCounts)
    m_Counts.push_back(count); // at most 62 rows, checked above
  m_Buckets.assign(m_Counts.size() * std::size_t(m_MaxBuckets + 1), Bucket{});
  std::size_t next = 0;
  for (std::size_t i = 0; i < m_Counts.size(); ++i)
    for (int k = 0; k < m_Counts[i]; ++k, ++next)
      m_Buckets[i * std::size_t(m_MaxBuckets + 1) + std::size_t(k)] =
        Bucket{ s.totals[next], m_Binary ? 0.0 : s.variances[next] };
  m_Width = s.width;
  m_Ticks = s.ticks;
  m_Detections = s.detections;
  m_Total = s.total;
  m_Variance = m_Binary ? 0.0 : s.variance;
}

} // namespace canopy::streaming
