// A kernel for the runtime to look up. It is compiled with the same CUDA_ARCHITECTURES as every
// other kernel of canopy_kernels, so its image exists for a device exactly when theirs do.
#include "KernelImageProbe.h"

namespace canopy::detail
{
namespace
{
__global__ void
KernelImageProbeKernel(int * flag)
{
  if (flag)
  {
    *flag = 1;
  }
}
} // namespace

cudaError_t
ProbeKernelImage(int device)
{
  int         previous = 0;
  cudaError_t status = cudaGetDevice(&previous);
  if (status == cudaSuccess)
  {
    status = cudaSetDevice(device);
    if (status == cudaSuccess)
    {
      cudaFuncAttributes attributes{};
      status = cudaFuncGetAttributes(&attributes, KernelImageProbeKernel);
    }
    cudaSetDevice(previous);
  }
  cudaGetLastError(); // a missing image is an answer here, not an error to leave behind
  return status;
}
} // namespace canopy::detail
