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
Adwin::Compress()
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
Adwin::CutExpression(double n0, double n1, double u0, double u1, double dd, double v) const
{
  const double m = 1.0 / (n0 - kMinSubWindow + 1.0) + 1.0 / (n1 - kMinSubWindow + 1.0);
  const double epsilon = std::sqrt(2.0 * m * v * dd) + 2.0 / 3.0 * dd * m;
  return std::fabs(u0 / n0 - u1 / n1) > epsilon;
}

void
Adwin::DropOldestBucket()
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

} // namespace canopy::streaming
