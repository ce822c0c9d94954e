// Order-independent sums of doubles, for trainers whose processes each hold a shard of the samples
// (the PBT's boosting weights): the same terms, added in any order, split over any number of
// processes and summed with integer reductions, give the same bits.
//
// Each term is cut to a fixed grid of 2^-kGridBits (finer parts are truncated toward zero, the same
// way on every process) and added exactly into 32-bit digits held in int64 limbs. Integer addition
// is associative, so the exact sum does not depend on the order; Value() rounds it the same way
// everywhere. Terms of magnitude >= 2^kMaxBits, infinities and NaNs are counted apart and make the
// value +-inf or NaN as IEEE addition would.
//
// Host code. Cost: one frexp and three limb additions per term (a few ns).
#pragma once

#include "canopy/Collective.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace canopy
{

class ExactSum
{
public:
  static constexpr int kGridBits = 256; // terms are multiples of 2^-256 (finer parts truncated)
  static constexpr int kMaxBits = 256;  // |term| < 2^256, else it counts as an infinity
  static constexpr int kLimbs = (kGridBits + kMaxBits) / 32 + 3; // digits, plus headroom for carries
  static constexpr int kWords = kLimbs + 3;                      // limbs, +inf, -inf and NaN counts

  void Add(double x)
  {
    if (x == 0.0)
      return;
    if (!std::isfinite(x) || std::fabs(x) >= kTooLarge)
    {
      ++m_Words[x > 0.0 ? kPositiveInfinity : x < 0.0 ? kNegativeInfinity : kNotANumber];
      return;
    }
    int           exponent = 0;
    const double  fraction = std::frexp(std::fabs(x), &exponent);                  // |x| = fraction * 2^exponent
    std::uint64_t mantissa = static_cast<std::uint64_t>(std::ldexp(fraction, 53)); // exact
    int           shift = exponent - 53 + kGridBits; // the grid position of the mantissa's last bit
    if (shift < 0)
    {
      if (shift <= -64)
        return;
      mantissa >>= -shift;
      shift = 0;
    }
    const int               limb = shift / 32;
    const unsigned __int128 bits = static_cast<unsigned __int128>(mantissa) << (shift % 32);
    const std::int64_t      sign = x < 0.0 ? -1 : 1;
    m_Words[limb] += sign * static_cast<std::int64_t>(static_cast<std::uint64_t>(bits) & 0xffffffffu);
    m_Words[limb + 1] += sign * static_cast<std::int64_t>(static_cast<std::uint64_t>(bits >> 32) & 0xffffffffu);
    m_Words[limb + 2] += sign * static_cast<std::int64_t>(static_cast<std::uint64_t>(bits >> 64));
    if (++m_Adds == kAddsBetweenCarries)
      Carry();
  }

  /** Adds another partial sum (e.g. a thread's). */
  void Merge(const ExactSum & other)
  {
    ExactSum copy = other;
    copy.Carry();
    Carry();
    for (int k = 0; k < kWords; ++k)
      m_Words[k] += copy.m_Words[k];
    Carry();
  }

  /** The sum, rounded the same way whatever the order of the terms. */
  double Value() const
  {
    if (m_Words[kNotANumber] > 0 || (m_Words[kPositiveInfinity] > 0 && m_Words[kNegativeInfinity] > 0))
      return std::numeric_limits<double>::quiet_NaN();
    if (m_Words[kPositiveInfinity] > 0)
      return std::numeric_limits<double>::infinity();
    if (m_Words[kNegativeInfinity] > 0)
      return -std::numeric_limits<double>::infinity();
    ExactSum magnitude = *this;
    magnitude.Carry(); // canonical: digits in [0, 2^32) below a signed top limb
    const bool negative = magnitude.m_Words[kLimbs - 1] < 0;
    if (negative)
    {
      for (int k = 0; k < kLimbs; ++k)
        magnitude.m_Words[k] = -magnitude.m_Words[k];
      magnitude.Carry();
    }
    double value = 0.0;
    for (int k = kLimbs - 1; k >= 0; --k)
      value += std::ldexp(static_cast<double>(magnitude.m_Words[k]), 32 * k - kGridBits);
    return negative ? -value : value;
  }

  /** Sums `count` partial sums over all processes (one integer reduction): afterwards every process
   * holds the global sums. A collective call. */
  static void SumOverProcesses(Collective & processes, ExactSum * sums, std::size_t count)
  {
    if (processes.Size() == 1)
      return;
    std::vector<std::int64_t> words(count * kWords);
    for (std::size_t i = 0; i < count; ++i)
    {
      sums[i].Carry(); // digits < 2^32: sums over up to 2^31 processes cannot overflow
      std::copy(sums[i].m_Words.begin(), sums[i].m_Words.end(), words.begin() + i * kWords);
    }
    processes.SumInPlace(words.data(), words.size());
    for (std::size_t i = 0; i < count; ++i)
    {
      std::copy(words.begin() + i * kWords, words.begin() + (i + 1) * kWords, sums[i].m_Words.begin());
      sums[i].Carry();
    }
  }

private:
  static constexpr int    kPositiveInfinity = kLimbs, kNegativeInfinity = kLimbs + 1, kNotANumber = kLimbs + 2;
  static constexpr int    kAddsBetweenCarries = 1 << 30;    // each add moves a limb by < 2^32
  static constexpr double kTooLarge = 1.157920892373162e77; // 2^256
  static_assert(kMaxBits == 256, "kTooLarge is 2^kMaxBits");

  void Carry()
  {
    for (int k = 0; k + 1 < kLimbs; ++k)
    {
      const std::int64_t carry = m_Words[k] >> 32; // floor division by 2^32
      m_Words[k] -= carry * (std::int64_t(1) << 32);
      m_Words[k + 1] += carry;
    }
    m_Adds = 0;
  }

  std::array<std::int64_t, kWords> m_Words{};
  std::int64_t                     m_Adds = 0;
};

/** Weights in [0, 1] (a normalised distribution) as integers of 2^-62: their sums over any subset,
 * in any order and over any processes, are exact int64 sums (< 2^63 while the weights sum to <= 1). */
constexpr double kFixedWeightScale = 4611686018427387904.0; // 2^62

inline std::int64_t
FixedWeight(double weight)
{
  const double clamped = weight > 0.0 ? (weight < 1.0 ? weight : 1.0) : 0.0; // NaN -> 0
  return static_cast<std::int64_t>(clamped * kFixedWeightScale);             // exact scaling, truncation
}

inline double
FromFixedWeight(std::int64_t fixed)
{
  return static_cast<double>(fixed) / kFixedWeightScale;
}

} // namespace canopy
