// Asks the CUDA runtime whether this binary holds code a device can run (Device.cxx).
#pragma once

#include <cuda_runtime_api.h>

namespace canopy::detail
{
/** cudaFuncGetAttributes on a kernel of this library, on `device`: cudaSuccess when an image loads,
 * cudaErrorNoKernelImageForDevice (or cudaErrorInvalidDeviceFunction) when the build has no code for
 * the device's architecture. Restores the current device and clears the error state. */
cudaError_t
ProbeKernelImage(int device);
} // namespace canopy::detail
