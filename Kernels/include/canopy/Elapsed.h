// Wall-clock seconds since a start, for the timings that reports and benchmarks carry (the steady
// clock, so never negative): one definition for every module, the filters' step times included.
#pragma once

#include <chrono>

namespace canopy
{

inline double
SecondsSince(std::chrono::steady_clock::time_point start)
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace canopy
