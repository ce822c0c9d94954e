// Portable draws from std::mt19937_64: the standard library's distributions differ between
// implementations, these do not, so seeded banks, samples and splits are the same everywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace canopy
{
/** Uniform in [0, 1) with 53 random bits. */
inline double
UniformUnit(std::mt19937_64 & rng)
{
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

/** Uniform in {0, ..., n - 1} (n > 0). */
inline std::uint64_t
UniformIndex(std::mt19937_64 & rng, std::uint64_t n)
{
  return static_cast<std::uint64_t>(UniformUnit(rng) * static_cast<double>(n));
}

/** SplitMix64's mixing step: well-spread seeds for per-slice or per-worker generators, e.g.
 * std::mt19937_64(SplitMix64(seed ^ SplitMix64(slice))), so results do not depend on threads. */
inline std::uint64_t
SplitMix64(std::uint64_t x)
{
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/** Standard normal by Box-Muller from two draws (u1 in (0, 1], so the log stays finite). */
inline double
StandardNormal(std::mt19937_64 & rng)
{
  const double u1 = static_cast<double>((rng() >> 11) + 1) * 0x1.0p-53;
  const double u2 = UniformUnit(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
}
} // namespace canopy
