#include "canopyAdwin.h"

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
  // The new value joins as a bucket of one; the window's variance sum grows as in Welford.
  if (m_Width > 0)
  {
    const double meanBefore = m_Total / double(m_Width);
    m_Variance += double(m_Width) * (value - meanBefore) * (value - meanBefore) / double(m_Width + 1);
  }
  ++m_Width;
  m_Total += value;
  if (m_Counts.empty())
    AddRow();
  Row(0)[m_Counts[0]++] = Bucket{ value, 0.0 };
  Compress();
  if (++m_Ticks < m_Clock)
    return false;
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
    for (int k = 2; k < m_Counts[i]; ++k)
      row[k - 2] = row[k];
    m_Counts[i] -= 2;
    const double n = double(std::uint64_t(1) << i); // 2^i, exactly
    const double d = older.total / n - newer.total / n;
    const Bucket merged{ older.total + newer.total, older.variance + newer.variance + n * n * d * d / (2.0 * n) };
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
  bool cut = true;
  while (cut && m_Width >= kMinWindow)
  {
    cut = false;
    // Sub-window W0 grows from the oldest bucket; W1 is the rest (the newer part).
    double       n0 = 0.0, u0 = 0.0;
    double       n1 = double(m_Width), u1 = m_Total;
    const double dd = std::log(2.0 * std::log(double(m_Width)) / m_Delta); // MOA's bound, per scan
    const double v = m_Variance / double(m_Width);
    for (std::size_t r = m_Counts.size(); r-- > 0 && !cut;)
    {
      const double   n = double(std::uint64_t(1) << r);
      const Bucket * row = Row(r);
      for (int k = 0; k < m_Counts[r]; ++k) // oldest first
      {
        n0 += n;
        n1 -= n;
        u0 += row[k].total;
        u1 -= row[k].total;
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

} // namespace canopy::streaming
