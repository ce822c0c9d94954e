#include "canopy/CudaCheck.h"
#include "canopy/Errors.h"

#include <iomanip>
#include <sstream>

namespace canopy
{

void
ThrowCudaError(int cudaCode, const char * errorName, const char * errorString, const char * call, const char * file,
               int line)
{
  std::ostringstream message;
  message << "CUDA call failed: " << call << " returned " << errorName << " (" << cudaCode << "): " << errorString;
  throw CudaError(file, static_cast<unsigned int>(line), message.str(), cudaCode);
}

void
ThrowDeviceOutOfMemory(std::size_t bytesRequested, std::size_t bytesFree, int device, const char * what,
                       const char * file, int line)
{
  constexpr double MiB = 1024.0 * 1024.0;
  std::ostringstream message;
  message << std::fixed << std::setprecision(1) << "GPU out of memory: allocating " << what << " of "
          << bytesRequested / MiB << " MiB on cuda:" << device << " failed (" << bytesFree / MiB
          << " MiB free). Use a smaller slab/slice setting or --device cpu.";
  throw DeviceOutOfMemoryError(file, static_cast<unsigned int>(line), message.str(), 2 /* cudaErrorMemoryAllocation */);
}

} // namespace canopy
