// Checking CUDA runtime calls. Kept free of ITK and CUDA headers so .cu files stay light: the throw
// happens in Errors.cxx, compiled by the host compiler.
#pragma once

#include <cstddef>

namespace canopy
{
/** Throws canopy::CudaError (or DeviceOutOfMemoryError) naming the call, the error, file and line. */
[[noreturn]] void
ThrowCudaError(int cudaCode, const char * errorName, const char * errorString, const char * call, const char * file,
               int line);

/** Throws DeviceOutOfMemoryError naming the size requested and the device's free memory. */
[[noreturn]] void
ThrowDeviceOutOfMemory(std::size_t bytesRequested, std::size_t bytesFree, int device, const char * what,
                       const char * file, int line);
} // namespace canopy

#if defined(__CUDACC__) || defined(CANOPY_HAVE_CUDA_RUNTIME)
#  include <cuda_runtime_api.h>
#  define CANOPY_CUDA_CHECK(call)                                                                                      \
    do                                                                                                                 \
    {                                                                                                                  \
      const cudaError_t canopy_cuda_status = (call);                                                                   \
      if (canopy_cuda_status != cudaSuccess)                                                                           \
      {                                                                                                                \
        ::canopy::ThrowCudaError(static_cast<int>(canopy_cuda_status),                                                 \
                                 cudaGetErrorName(canopy_cuda_status),                                                 \
                                 cudaGetErrorString(canopy_cuda_status),                                               \
                                 #call,                                                                                \
                                 __FILE__,                                                                             \
                                 __LINE__);                                                                            \
      }                                                                                                                \
    } while (false)
/** Checks the launch of the kernel just enqueued (configuration errors); does not synchronise. */
#  define CANOPY_CUDA_CHECK_LAUNCH(kernelName) CANOPY_CUDA_CHECK(cudaPeekAtLastError())
#endif
