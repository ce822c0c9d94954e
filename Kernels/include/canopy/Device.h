// Device discovery and backend choice (auto | cpu | cuda | cuda:N), used by every filter and the CLI.
// No CUDA or ITK types here: a CPU-only build compiles and answers "no devices".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace canopy
{

struct DeviceInfo
{
  int         index = -1; // CUDA ordinal as the process sees it (after CUDA_VISIBLE_DEVICES)
  std::string name;
  std::size_t totalMemoryBytes = 0;
  std::size_t freeMemoryBytes = 0;
  int         computeMajor = 0;
  int         computeMinor = 0;
  int         multiprocessors = 0;
};

/** True when this build contains CUDA kernels (CANOPY_USE_CUDA). */
bool
CudaCompiledIn();

/** Usable CUDA devices; empty in a CPU-only build, without a driver, or with no visible device.
 * Honours CUDA_VISIBLE_DEVICES (the runtime applies it). Never throws. */
std::vector<DeviceInfo>
QueryCudaDevices();

/** Why no device is usable (driver missing, none visible, CPU-only build), for messages. */
std::string
WhyNoCudaDevice();

enum class BackendKind
{
  Auto,
  CPU,
  CUDA
};

struct BackendRequest
{
  BackendKind kind = BackendKind::Auto;
  int         deviceIndex = -1; // -1: first device

  /** Parses "auto", "cpu", "cuda" or "cuda:N"; throws canopy::Error naming the bad value. */
  static BackendRequest
  Parse(const std::string & text);
  std::string
  ToString() const;
};

struct ResolvedBackend
{
  bool        useCuda = false;
  int         deviceIndex = -1;
  std::string deviceName; // empty for CPU

  std::string
  Describe() const; // "cpu" or "cuda:0 (NVIDIA H100 80GB HBM3)"
};

/** Turns a request into a concrete backend. Auto without a usable GPU falls back to the CPU and
 * prints one warning per process; an explicit CUDA request without one throws canopy::Error. */
ResolvedBackend
ResolveBackend(const BackendRequest & request);

} // namespace canopy
