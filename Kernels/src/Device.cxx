#include "canopy/Device.h"
#include "canopy/Errors.h"
#include "canopyConfigure.h"

#if CANOPY_USE_CUDA
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
    devices.push_back(info);
  }
#endif
  return devices;
}

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
  return "a CUDA device is available";
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
ResolveBackend(const BackendRequest & request)
{
  ResolvedBackend resolved;
  if (request.kind == BackendKind::CPU)
  {
    return resolved;
  }
  const std::vector<DeviceInfo> devices = QueryCudaDevices();
  if (devices.empty())
  {
    if (request.kind == BackendKind::CUDA)
    {
      CANOPY_THROW("device: '" << request.ToString() << "' was requested but " << WhyNoCudaDevice());
    }
    static std::once_flag warned;
    std::call_once(warned, [] {
      std::cerr << "canopy: warning: no usable GPU (" << WhyNoCudaDevice() << "); running on the CPU\n";
    });
    return resolved;
  }
  const int index = request.deviceIndex >= 0 ? request.deviceIndex : 0;
  if (index >= static_cast<int>(devices.size()))
  {
    CANOPY_THROW("device: 'cuda:" << index << "' does not exist; " << devices.size() << " CUDA device(s) visible");
  }
  resolved.useCuda = true;
  resolved.deviceIndex = index;
  resolved.deviceName = devices[index].name;
  return resolved;
}

} // namespace canopy
