// Small helpers for the benchmark programs: medians of repeated timings, host facts, table rows, and
// the --json FILE option every benchmark takes (.gpu/run-gpu-tests --bench --out passes it).
// Benchmarks are programs, never tests: nothing here asserts a speed.
#pragma once

#include "canopyConfigure.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <stdlib.h>       // getloadavg
#include <sys/resource.h> // getrusage

namespace canopy::bench
{

inline double
Median(std::vector<double> values)
{
  if (values.empty())
  {
    return 0.0;
  }
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/** Runs `body` at least minRepeats and at most maxRepeats times (stopping early once budgetSeconds is
 * spent), after one untimed warm-up when `warmUp`; returns the median wall time in milliseconds. */
inline double
MedianHostMs(const std::function<void()> & body,
             int                           minRepeats,
             int                           maxRepeats,
             double                        budgetSeconds,
             bool                          warmUp = true)
{
  using Clock = std::chrono::steady_clock;
  if (warmUp)
  {
    body();
  }
  std::vector<double> times;
  const auto          start = Clock::now();
  for (int r = 0; r < maxRepeats; ++r)
  {
    const auto t0 = Clock::now();
    body();
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    const double spent = std::chrono::duration<double>(Clock::now() - start).count();
    if (r + 1 >= minRepeats && spent > budgetSeconds)
    {
      break;
    }
  }
  return Median(times);
}

/** CPU seconds this process has used (all threads): on a shared machine the wall time includes waiting
 * for the cores, this does not. */
inline double
ProcessCpuSeconds()
{
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/** The 1-minute load average (-1 where unknown): says how busy a shared machine was during a run. */
inline double
LoadAverage()
{
  double load[1] = { 0.0 };
  return getloadavg(load, 1) == 1 ? load[0] : -1.0;
}

inline std::string
UtcNow()
{
  const std::time_t now = std::time(nullptr);
  char              text[64];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return text;
}

inline std::string
CpuModel()
{
  std::ifstream in("/proc/cpuinfo");
  std::string   line;
  while (std::getline(in, line))
  {
    if (line.rfind("model name", 0) == 0)
    {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

inline unsigned
LogicalCores()
{
  return std::max(1u, std::thread::hardware_concurrency());
}

/** "12.3" or "-" for a missing value (<= 0). */
inline std::string
Fixed(double value, int decimals = 2)
{
  if (!(value > 0.0))
  {
    return "-";
  }
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

/** Adds the --json FILE option, the same in every benchmark. */
inline CLI::Option *
AddJsonOption(CLI::App & app, std::string & path)
{
  return app.add_option("--json", path, "also write the figures as JSON to this file");
}

/** Writes `document` to `path` (nothing when the path is empty) under a temporary name, then renames
 * it, so a failed run leaves no half-written file. Throws std::runtime_error naming the file. */
inline void
WriteJson(const std::string & path, const nlohmann::json & document)
{
  if (path.empty())
  {
    return;
  }
  const std::string temporary = path + ".part";
  {
    std::ofstream out(temporary);
    out << document.dump(2) << "\n";
    out.close();
    if (!out)
    {
      std::filesystem::remove(temporary);
      throw std::runtime_error("--json: cannot write '" + path + "'");
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error)
  {
    std::filesystem::remove(temporary);
    throw std::runtime_error("--json: cannot write '" + path + "': " + error.message());
  }
}

/** The device a benchmark's GPU runs use, from its --device option: "" for none (asked for with
 * "none", or a build without CUDA), else the option's text for BackendRequest::Parse. */
inline std::string
GpuDeviceText(const std::string & device)
{
#if CANOPY_USE_CUDA
  return device == "none" ? "" : device;
#else
  (void)device;
  return "";
#endif
}

} // namespace canopy::bench
