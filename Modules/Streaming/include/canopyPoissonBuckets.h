// The CPU forest's Poisson draw: PoissonTable's answer for every u in [0, 1), mostly from one lookup.
// The draw k(u) never decreases with u, so on each of 256 equal buckets of [0, 1) it is constant unless a
// CDF value falls inside the bucket; a bucket whose first and last representable u give the same k
// answers with that k, the few others ask the table. For lambda 6 about 1 draw in 16 asks it, where the
// table's 16 comparisons per draw were ~5% of a forest's time (perf, dev machine).
#pragma once

#include "canopy/HoeffdingMath.h"

#include <cstdint>

namespace canopy::streaming
{

class PoissonBuckets
{
public:
  PoissonBuckets(double lambda, double expNegLambda)
    : m_Table(lambda, expNegLambda)
  {
    for (int j = 0; j < kBuckets; ++j)
    {
      // Bucket j holds u in [j / 256, (j + 1) / 256); its last u is one 2^-53 step below the end (u has
      // 53 random bits, CounterUniform), and every step is exact.
      const double        first = double(j) / kBuckets, last = double(j + 1) / kBuckets - 0x1.0p-53;
      const std::uint32_t low = m_Table(first), high = m_Table(last);
      m_Draw[j] = low == high && low < kAskTable ? std::uint8_t(low) : kAskTable;
    }
  }

  /** PoissonTable(lambda, expNegLambda)(u) for u in [0, 1) on the 2^-53 grid (CounterUniform's values). */
  std::uint32_t operator()(double u) const
  {
    const std::uint8_t k = m_Draw[int(u * kBuckets)]; // exact: a power-of-two scaling, then the floor
    return k != kAskTable ? k : m_Table(u);
  }

private:
  static constexpr int          kBuckets = 256;
  static constexpr std::uint8_t kAskTable = 255;
  PoissonTable                  m_Table;
  std::uint8_t                  m_Draw[kBuckets];
};

} // namespace canopy::streaming
