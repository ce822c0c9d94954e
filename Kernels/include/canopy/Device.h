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
  bool        kernelsUsable = false; // this build holds code the device runs (DeviceSupport.h)
  std::string kernelSupport;         // which code runs ("sm_90 code"), or why none does
};

/** True when this build contains CUDA kernels (CANOPY_USE_CUDA). */
bool
CudaCompiledIn();

/** Visible CUDA devices, each with whether this build has code for it (kernelsUsable, probed with a
 * library kernel); empty in a CPU-only build, without a driver, or with no visible device.
 * Honours CUDA_VISIBLE_DEVICES (the runtime applies it). Never throws. */
std::vector<DeviceInfo>
QueryCudaDevices();

/** The devices of QueryCudaDevices() whose kernelsUsable is true. */
std::vector<DeviceInfo>
UsableCudaDevices();

/** Why no device is usable (driver missing, none visible, CPU-only build, no code for the GPU's
 * architecture), for messages. */
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
  int         deviceIndex = -1; // -1: the first device this build has code for (Auto with an index: that
                                // device where usable, else the first; set by programs, "auto" has none)

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

/** Turns a request into a concrete backend. Auto takes the first device with code in this build and
 * otherwise falls back to the CPU, printing one warning per process that says why; an explicit CUDA
 * request without a usable device (none, or no code for its architecture) throws canopy::Error. */
ResolvedBackend
ResolveBackend(const BackendRequest & request);

/** ResolveBackend's decision on a given device list (testable without a GPU): `whyNone` explains an
 * empty list; an auto fallback's reason goes to *warning (left empty otherwise). */
ResolvedBackend
ResolveBackendAmong(const BackendRequest &          request,
                    const std::vector<DeviceInfo> & devices,
                    const std::string &             whyNone,
                    std::string *                   warning);

} // namespace canopy
