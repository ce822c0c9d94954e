// Portable draws from std::mt19937_64: the standard library's distributions differ between
// implementations, these do not, so seeded banks, samples and splits are the same everywhere.
#pragma once

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
} // namespace canopy
