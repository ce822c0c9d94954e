#include "canopy/IntegralVolumeDispatch.h"

#include "canopy/Errors.h"
#include "canopy/IntegralVolume.h"
#include "canopyConfigure.h"

#if CANOPY_USE_CUDA
#  include "canopy/cuda/DeviceBuffer.h"
#endif

namespace canopy
{

template <typename TPixel>
void
ComputeIntegralVolume(const TPixel * voxels, int nx, int ny, int nz, double * paddedSums,
                      const ResolvedBackend & backend, int cpuThreads)
{
  if (!backend.useCuda)
  {
    ComputeIntegralVolumeCPU(voxels, nx, ny, nz, paddedSums, cpuThreads);
    return;
  }
#if CANOPY_USE_CUDA
  cuda::ScopedDevice         device(backend.deviceIndex);
  cuda::Stream               stream;
  const std::int64_t         voxelCount = static_cast<std::int64_t>(nx) * ny * nz;
  const std::int64_t         tableCount = PaddedTableSize(nx, ny, nz);
  cuda::DeviceBuffer<TPixel> deviceVoxels(voxelCount, "input volume");
  cuda::DeviceBuffer<double> deviceTable(tableCount, "integral volume");
  deviceVoxels.CopyFromHost(voxels, voxelCount, stream.get());
  cuda::LaunchIntegralVolume(deviceVoxels.data(), nx, ny, nz, deviceTable.data(), stream.get());
  deviceTable.CopyToHost(paddedSums, tableCount, stream.get());
  stream.Synchronize();
#else
  CANOPY_THROW("ComputeIntegralVolume: CUDA requested but this build has no CUDA support");
#endif
}

#define CANOPY_INSTANTIATE_SAT_DISPATCH(T) \
  template void ComputeIntegralVolume<T>(const T *, int, int, int, double *, const ResolvedBackend &, int);
CANOPY_FOR_EACH_SCALAR_PIXEL(CANOPY_INSTANTIATE_SAT_DISPATCH)

} // namespace canopy
