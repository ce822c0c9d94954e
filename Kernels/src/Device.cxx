#include "canopy/Device.h"
#include "canopy/DeviceSupport.h"
#include "canopy/Errors.h"
#include "canopyConfigure.h"

#if CANOPY_USE_CUDA
#  include "cuda/KernelImageProbe.h"
#  include <cuda_runtime_api.h>
#endif

#include <iostream>
#include <mutex>
#include <sstream>

namespace canopy
{

bool
CudaCompiledIn()
{
  return CANOPY_USE_CUDA != 0;
}

std::vector<DeviceInfo>
QueryCudaDevices()
{
  std::vector<DeviceInfo> devices;
#if CANOPY_USE_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess)
  {
    cudaGetLastError(); // no driver or no device: not an error for discovery
    return devices;
  }
  for (int i = 0; i < count; ++i)
  {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess)
    {
      cudaGetLastError();
      continue;
    }
    DeviceInfo info;
    info.index = i;
    info.name = prop.name;
    info.totalMemoryBytes = prop.totalGlobalMem;
    info.computeMajor = prop.major;
    info.computeMinor = prop.minor;
    info.multiprocessors = prop.multiProcessorCount;
    int previous = 0;
    if (cudaGetDevice(&previous) == cudaSuccess && cudaSetDevice(i) == cudaSuccess)
    {
      std::size_t freeBytes = 0, totalBytes = 0;
      if (cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess)
      {
        info.freeMemoryBytes = freeBytes;
      }
      cudaSetDevice(previous);
    }
    cudaGetLastError();
    const cudaError_t   probe = detail::ProbeKernelImage(i);
    const KernelProbe   outcome = probe == cudaSuccess ? KernelProbe::Loaded
                                  : probe == cudaErrorNoKernelImageForDevice || probe == cudaErrorInvalidDeviceFunction
                                    ? KernelProbe::NoKernelImage
                                    : KernelProbe::Failed;
    const KernelSupport support =
      DecideKernelSupport(prop.major,
                          prop.minor,
                          CompiledCudaArchitectures(),
                          outcome,
                          std::string(cudaGetErrorName(probe)) + ": " + cudaGetErrorString(probe));
    info.kernelsUsable = support.usable;
    info.kernelSupport = support.description;
    devices.push_back(info);
  }
#endif
  return devices;
}

std::vector<DeviceInfo>
UsableCudaDevices()
{
  std::vector<DeviceInfo> usable;
  for (const auto & d : QueryCudaDevices())
  {
    if (d.kernelsUsable)
    {
      usable.push_back(d);
    }
  }
  return usable;
}

namespace
{
std::string
Name(const DeviceInfo & d)
{
  return "cuda:" + std::to_string(d.index) + " (" + d.name + ")";
}

/** "cuda:0 (Tesla T4): compute capability 7.5 has no code ..." for every device of the list. */
std::string
WhyUnusable(const std::vector<DeviceInfo> & devices)
{
  std::string text;
  for (const auto & d : devices)
  {
    text += (text.empty() ? "" : "; ") + Name(d) + ": " + d.kernelSupport;
  }
  return text;
}
} // namespace

std::string
WhyNoCudaDevice()
{
#if CANOPY_USE_CUDA
  int               count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess)
  {
    cudaGetLastError();
    return std::string("the CUDA runtime found no usable device (") + cudaGetErrorString(status) + ")";
  }
  if (count == 0)
  {
    return "no CUDA device is visible (check CUDA_VISIBLE_DEVICES)";
  }
  const std::vector<DeviceInfo> devices = QueryCudaDevices();
  for (const auto & d : devices)
  {
    if (d.kernelsUsable)
    {
      return "a CUDA device is available";
    }
  }
  return devices.empty() ? "no CUDA device could be queried" : WhyUnusable(devices);
#else
  return "this build of Canopy has no CUDA support (configured with CANOPY_USE_CUDA=OFF)";
#endif
}

BackendRequest
BackendRequest::Parse(const std::string & text)
{
  BackendRequest request;
  if (text == "auto")
  {
    request.kind = BackendKind::Auto;
  }
  else if (text == "cpu")
  {
    request.kind = BackendKind::CPU;
  }
  else if (text == "cuda" || text == "gpu")
  {
    request.kind = BackendKind::CUDA;
  }
  else if (text.rfind("cuda:", 0) == 0)
  {
    request.kind = BackendKind::CUDA;
    const std::string ordinal = text.substr(5);
    std::size_t       used = 0;
    int               value = -1;
    try
    {
      value = std::stoi(ordinal, &used);
    }
    catch (const std::exception &)
    {
      used = 0;
    }
    if (ordinal.empty() || used != ordinal.size() || value < 0)
    {
      CANOPY_THROW("device: '" << text << "' is not a valid device; expected auto, cpu, cuda or cuda:N with N >= 0");
    }
    request.deviceIndex = value;
  }
  else
  {
    CANOPY_THROW("device: '" << text << "' is not a valid device; expected auto, cpu, cuda or cuda:N");
  }
  return request;
}

std::string
BackendRequest::ToString() const
{
  switch (kind)
  {
    case BackendKind::Auto:
      return "auto";
    case BackendKind::CPU:
      return "cpu";
    case BackendKind::CUDA:
      return deviceIndex >= 0 ? "cuda:" + std::to_string(deviceIndex) : "cuda";
  }
  return "auto";
}

std::string
ResolvedBackend::Describe() const
{
  if (!useCuda)
  {
    return "cpu";
  }
  return "cuda:" + std::to_string(deviceIndex) + " (" + deviceName + ")";
}

ResolvedBackend
ResolveBackendAmong(const BackendRequest &          request,
                    const std::vector<DeviceInfo> & devices,
                    const std::string &             whyNone,
                    std::string *                   warning)
{
  ResolvedBackend resolved;
  if (warning)
  {
    warning->clear();
  }
  if (request.kind == BackendKind::CPU)
  {
    return resolved;
  }
  const DeviceInfo * chosen = nullptr;
  if (request.kind == BackendKind::CUDA && request.deviceIndex >= 0)
  {
    if (devices.empty())
    {
      CANOPY_THROW("device: '" << request.ToString() << "' was requested but " << whyNone);
    }
    for (const auto & d : devices)
    {
      chosen = d.index == request.deviceIndex ? &d : chosen;
    }
    if (!chosen)
    {
      CANOPY_THROW("device: '" << request.ToString() << "' does not exist; " << devices.size()
                               << " CUDA device(s) visible");
    }
    if (!chosen->kernelsUsable)
    {
      CANOPY_THROW("device: '" << request.ToString() << "' was requested but " << Name(*chosen) << ": "
                               << chosen->kernelSupport);
    }
  }
  else
  {
    // auto (or cuda without an index): the device it names where that one is usable (a process of a
    // distributed run on its own GPU), else the first with code
    for (const auto & d : devices)
    {
      chosen = request.deviceIndex >= 0 && d.index == request.deviceIndex && d.kernelsUsable ? &d : chosen;
    }
    for (const auto & d : devices)
    {
      chosen = !chosen && d.kernelsUsable ? &d : chosen;
    }
  }
  if (!chosen)
  {
    const std::string why = devices.empty() ? whyNone : WhyUnusable(devices);
    if (request.kind == BackendKind::CUDA)
    {
      CANOPY_THROW("device: '" << request.ToString() << "' was requested but " << why);
    }
    if (warning)
    {
      *warning = "no usable GPU (" + why + "); running on the CPU";
    }
    return resolved;
  }
  resolved.useCuda = true;
  resolved.deviceIndex = chosen->index;
  resolved.deviceName = chosen->name;
  return resolved;
}

ResolvedBackend
ResolveBackend(const BackendRequest & request)
{
  if (request.kind == BackendKind::CPU)
  {
    return ResolvedBackend{};
  }
  const std::vector<DeviceInfo> devices = QueryCudaDevices();
  std::string                   warning;
  const ResolvedBackend         resolved =
    ResolveBackendAmong(request, devices, devices.empty() ? WhyNoCudaDevice() : "", &warning);
  if (!warning.empty())
  {
    static std::once_flag warned;
    std::call_once(warned, [&] { std::cerr << "canopy: warning: " << warning << '\n'; });
  }
  return resolved;
}

} // namespace canopy
