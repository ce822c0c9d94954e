// Counter-based random numbers: a draw is a pure function of (seed, stream, counter), so any thread,
// on the CPU or a GPU, computes the same value for the same instance and tree without sharing a
// generator's state. SplitMix64's finaliser mixes the key (Steele, Lea & Flood 2014).
#pragma once

#include "canopy/HostDevice.h"

#include <cstdint>

namespace canopy
{

CANOPY_HD std::uint64_t
          MixBits64(std::uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/** 64 random bits for (seed, stream, counter). */
CANOPY_HD std::uint64_t
          CounterBits(std::uint64_t seed, std::uint64_t stream, std::uint64_t counter)
{
  std::uint64_t z = MixBits64(seed + 0x9e3779b97f4a7c15ULL);
  z = MixBits64(z ^ (stream * 0xd1b54a32d192ed03ULL));
  return MixBits64(z ^ (counter + 0x9e3779b97f4a7c15ULL));
}

/** Uniform in [0, 1) with 53 random bits for (seed, stream, counter). */
CANOPY_HD double
CounterUniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t counter)
{
  return double(CounterBits(seed, stream, counter) >> 11) * 0x1.0p-53;
}

} // namespace canopy
