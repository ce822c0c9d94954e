#include "canopyAdwin.h"

#include "canopy/Errors.h"

#include <algorithm>
#include <cmath>

namespace canopy::streaming
{
namespace
{
constexpr std::int64_t kMinWindow = 10;
constexpr double       kMinSubWindow = 5.0;
} // namespace

Adwin::Adwin(double delta, int maxBuckets, int clock)
  : m_Delta(delta)
  , m_MaxBuckets(maxBuckets)
  , m_Clock(clock)
{
}

bool
Adwin::Update(double value)
{
  return Add(value, Mean());
}

bool
Adwin::UpdateRose(double value)
{
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
    // n = 2^i and 1/n, 1/(2n) exactly: multiplying by them rounds as dividing by n and 2n does.
    const double n = double(std::uint64_t(1) << i), inverse = 1.0 / n;
    const double d = older.total * inverse - newer.total * inverse;
    const Bucket merged{ older.total + newer.total, older.variance + newer.variance + n * n * d * d * (0.5 * inverse) };
    if (i + 1 == m_Counts.size())
      AddRow();
    Row(i + 1)[m_Counts[i + 1]++] = merged;
  }
}

bool
Adwin::CutExpression(double n0, double n1, double u0, double u1, double dd, double v) const
{
  const double m = 1.0 / (n0 - kMinSubWindow + 1.0) + 1.0 / (n1 - kMinSubWindow + 1.0);
  const double difference = std::fabs(u0 / n0 - u1 / n1);
  const double linear = 2.0 / 3.0 * dd * m;
  // epsilon = sqrt(...) + linear >= linear (rounding is monotone): most boundaries fail already here,
  // without the square root; the decision is the same.
  if (!(difference > linear))
    return false;
  const double epsilon = std::sqrt(2.0 * m * v * dd) + linear;
  return difference > epsilon;
}

void
Adwin::DropOldestBucket()
{
  std::size_t row = m_Counts.size() - 1;
  while (m_Counts[row] == 0)
    --row;
  Bucket *     buckets = Row(row);
  const Bucket b = buckets[0];
  for (int k = 1; k < m_Counts[row]; ++k)
    buckets[k - 1] = buckets[k];
  --m_Counts[row];
  const double n1 = double(std::uint64_t(1) << row);
  m_Width -= std::int64_t(n1);
  m_Total -= b.total;
  const double d = b.total / n1 - (m_Width > 0 ? m_Total / double(m_Width) : 0.0);
  m_Variance -= b.variance + n1 * double(m_Width) * d * d / (n1 + double(m_Width));
  m_Variance = m_Variance < 0.0 ? 0.0 : m_Variance;
  while (!m_Counts.empty() && m_Counts.back() == 0)
  {
    m_Counts.pop_back();
    m_Buckets.resize(m_Buckets.size() - std::size_t(m_MaxBuckets + 1));
  }
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
  // Sub-window W0 grows from the oldest bucket; W1 is the rest (the newer part).
  double         n0 = 0.0, u0 = 0.0;
  double         n1 = double(m_Width), u1 = m_Total;
  const double   dd = std::log(2.0 * std::log(double(m_Width)) / delta); // MOA's bound, per scan
  const double   v = m_Variance / double(m_Width);
  const double   W = double(m_Width), S = m_Total;
  const double   floor = 2.0 / 3.0 * dd * W * (1.0 - 1e-9);
  const double   spread = 2.0 * v * dd * W * (1.0 - 1e-9);
  const Bucket * buckets = m_Buckets.data();
  for (std::size_t r = m_Counts.size(); r-- > 0;)
  {
    const double   n = double(std::uint64_t(1) << r);
    const Bucket * row = buckets + r * std::size_t(m_MaxBuckets + 1);
    for (int k = 0; k < m_Counts[r]; ++k) // oldest first
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
      // cover the rounding of both sides (the test only skips boundaries CutExpression would reject).
      const double deviation = std::fabs(u0 * W - S * n0) + 1e-12 * (std::fabs(u0) * W + std::fabs(S) * n0);
      if (deviation <= floor)
        continue;
      const double excess = deviation - floor;
      if (excess * excess <= spread * n0 * n1)
        continue;
      if (n0 >= kMinSubWindow && CutExpression(n0, n1, u0, u1, dd, v))
        return true;
    }
  }
  return false;
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
  s.variance = m_Variance;
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
  m_Counts = RowCounts{};
  for (const std::int32_t count : s.rowCounts)
    m_Counts.push_back(count); // at most 62 rows, checked above
  m_Buckets.assign(m_Counts.size() * std::size_t(m_MaxBuckets + 1), Bucket{});
  std::size_t next = 0;
  for (std::size_t i = 0; i < m_Counts.size(); ++i)
    for (int k = 0; k < m_Counts[i]; ++k, ++next)
      m_Buckets[i * std::size_t(m_MaxBuckets + 1) + std::size_t(k)] = Bucket{ s.totals[next], s.variances[next] };
  m_Width = s.width;
  m_Ticks = s.ticks;
  m_Detections = s.detections;
  m_Total = s.total;
  m_Variance = s.variance;
}

} // namespace canopy::streaming
