// Which GPUs the CUDA code of this build runs on: the architectures it was compiled for
// (CANOPY_CUDA_ARCHITECTURES in canopyConfigure.h) against CUDA's compatibility rules, then the
// runtime's own answer (Device.cxx probes a library kernel). Pure functions: testable without a GPU.
#pragma once

#include <string>
#include <vector>

namespace canopy
{

/** One entry of a CMake CUDA_ARCHITECTURES list. */
struct CudaArchitecture
{
  int  computeCapability = 0;        // 10 * major + minor: 75, 86, 120
  bool realCode = false;             // SASS (sm_XY): runs on major X with minor >= Y
  bool ptx = false;                  // PTX (compute_XY): the driver JIT-compiles it for capability >= XY
  bool architectureSpecific = false; // "90a": runs only on exactly that capability
};

struct CudaArchitectureList
{
  std::vector<CudaArchitecture> entries;
  std::vector<std::string>      unreadable; // "all", "native", ...: only the runtime probe can tell
  std::string                   text;       // as configured, e.g. "75-real;90-real;120-virtual"
};

/** Parses CMake's syntax: "75-real;90;120-virtual" ("90" means real code and PTX). Never throws;
 * entries it cannot read go to `unreadable`. */
CudaArchitectureList
ParseCudaArchitectures(const std::string & cmakeList);

/** The list this binary was compiled for; no entries in a CPU-only build. */
const CudaArchitectureList &
CompiledCudaArchitectures();

/** "sm_75 sm_80 ... sm_120 + PTX compute_120", or "none". */
std::string
DescribeCudaArchitectures(const CudaArchitectureList & list);

enum class KernelImageKind
{
  Native,     // real code for this GPU's major version at or below its minor
  JitFromPtx, // no real code, but PTX the driver can compile (slower first launch)
  None,       // nothing this GPU can run
  Unknown     // nothing matched, but the list has entries only the runtime can judge
};

struct KernelImageChoice
{
  KernelImageKind kind = KernelImageKind::None;
  int             computeCapability = 0; // of the code chosen (Native, JitFromPtx)
};

/** Which code of `compiled` a GPU of compute capability major.minor runs (CUDA's rules: real code
 * sm_XY runs on X.z for z >= Y; PTX compute_XY on any capability >= XY; "a" variants only on XY). */
KernelImageChoice
ChooseKernelImage(int major, int minor, const CudaArchitectureList & compiled);

/** What the runtime said when asked for a library kernel on the device (cudaFuncGetAttributes). */
enum class KernelProbe
{
  NotRun,        // no CUDA runtime (tests): decide from the list alone
  Loaded,        // the kernel has an image for this device
  NoKernelImage, // cudaErrorNoKernelImageForDevice / cudaErrorInvalidDeviceFunction
  Failed         // any other error (e.g. PTX newer than the driver): see probeError
};

struct KernelSupport
{
  bool        usable = false;
  std::string description; // "sm_90 code", or why not, naming the capability and the compiled list
};

/** The verdict for one GPU: the probe wins when it ran; the list explains it. */
KernelSupport
DecideKernelSupport(int                          major,
                    int                          minor,
                    const CudaArchitectureList & compiled,
                    KernelProbe                  probe,
                    const std::string &          probeError = {});

} // namespace canopy
