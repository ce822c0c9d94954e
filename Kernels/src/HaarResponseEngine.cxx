#include "canopy/HaarResponseEngine.h"

#include "canopy/Errors.h"
#include "canopyConfigure.h"

#if CANOPY_USE_CUDA
#  include "canopy/cuda/DeviceBuffer.h"
#endif

#include <algorithm>

namespace canopy
{

struct HaarResponseEngine::Impl
{
  ResolvedBackend                backend;
  int                            cpuThreads = 0;
  std::size_t                    maxDeviceBytes = 0;
  IntegralVolumeView             hostView;
  std::vector<double>            ownedTable; // when the engine computed the table on the CPU
  std::vector<HaarFeatureVoxels> features;
#if CANOPY_USE_CUDA
  std::unique_ptr<cuda::ScopedDevice>        scopedDevice;
  std::unique_ptr<cuda::Stream>              stream;
  cuda::DeviceBuffer<double>                 deviceTable;
  cuda::DeviceBuffer<HaarFeatureVoxels>      deviceFeatures;
  cuda::DeviceBuffer<VoxelIndex3>            devicePoints;
  cuda::DeviceBuffer<float>                  deviceResponses;
  IntegralVolumeView                         deviceView;

  // Points per slice so that the points and responses fit the device budget.
  std::int64_t SlicePoints(std::int64_t numPoints) const
  {
    const std::size_t perPoint = sizeof(VoxelIndex3) + sizeof(float) * std::max<std::size_t>(features.size(), 1);
    return std::max<std::int64_t>(1, std::min<std::int64_t>(numPoints, maxDeviceBytes / perPoint));
  }
#endif
};

HaarResponseEngine::HaarResponseEngine(const ResolvedBackend & backend, int cpuThreads, std::size_t maxDeviceBytes)
  : m_Impl(std::make_unique<Impl>())
{
  m_Impl->backend = backend;
  m_Impl->cpuThreads = cpuThreads;
  m_Impl->maxDeviceBytes = maxDeviceBytes;
#if CANOPY_USE_CUDA
  if (backend.useCuda)
  {
    m_Impl->scopedDevice = std::make_unique<cuda::ScopedDevice>(backend.deviceIndex);
    m_Impl->stream = std::make_unique<cuda::Stream>();
  }
#else
  if (backend.useCuda)
  {
    CANOPY_THROW("HaarResponseEngine: a CUDA backend was requested but this build has no CUDA support");
  }
#endif
}

HaarResponseEngine::~HaarResponseEngine() = default;

const ResolvedBackend &
HaarResponseEngine::GetBackend() const
{
  return m_Impl->backend;
}

int
HaarResponseEngine::GetNumberOfFeatures() const
{
  return static_cast<int>(m_Impl->features.size());
}

void
HaarResponseEngine::SetVolume(const double * hostPaddedSums, int nx, int ny, int nz)
{
  m_Impl->ownedTable.clear();
  m_Impl->hostView = IntegralVolumeView{ hostPaddedSums, nx, ny, nz };
#if CANOPY_USE_CUDA
  if (m_Impl->backend.useCuda)
  {
    const std::int64_t n = PaddedTableSize(nx, ny, nz);
    m_Impl->deviceTable.Allocate(n, "integral volume");
    m_Impl->deviceTable.CopyFromHost(hostPaddedSums, n, m_Impl->stream->get());
    m_Impl->deviceView = IntegralVolumeView{ m_Impl->deviceTable.data(), nx, ny, nz };
    m_Impl->stream->Synchronize(); // the caller may free its host table after this returns
  }
#endif
}

template <typename TPixel>
void
HaarResponseEngine::SetVolumeFromVoxels(const TPixel * hostVoxels, int nx, int ny, int nz)
{
  const std::int64_t n = PaddedTableSize(nx, ny, nz);
#if CANOPY_USE_CUDA
  if (m_Impl->backend.useCuda)
  {
    const std::int64_t          voxels = static_cast<std::int64_t>(nx) * ny * nz;
    cuda::DeviceBuffer<TPixel> deviceVoxels(voxels, "input volume");
    deviceVoxels.CopyFromHost(hostVoxels, voxels, m_Impl->stream->get());
    m_Impl->deviceTable.Allocate(n, "integral volume");
    cuda::LaunchIntegralVolume(deviceVoxels.data(), nx, ny, nz, m_Impl->deviceTable.data(), m_Impl->stream->get());
    m_Impl->deviceView = IntegralVolumeView{ m_Impl->deviceTable.data(), nx, ny, nz };
    m_Impl->hostView = IntegralVolumeView{ nullptr, nx, ny, nz };
    m_Impl->stream->Synchronize(); // deviceVoxels is freed on return
    return;
  }
#endif
  m_Impl->ownedTable.resize(static_cast<std::size_t>(n));
  ComputeIntegralVolumeCPU(hostVoxels, nx, ny, nz, m_Impl->ownedTable.data(), m_Impl->cpuThreads);
  m_Impl->hostView = IntegralVolumeView{ m_Impl->ownedTable.data(), nx, ny, nz };
}

void
HaarResponseEngine::SetFeatures(const HaarFeatureVoxels * features, int numFeatures)
{
  m_Impl->features.assign(features, features + numFeatures);
#if CANOPY_USE_CUDA
  if (m_Impl->backend.useCuda && numFeatures > 0)
  {
    m_Impl->deviceFeatures.Allocate(numFeatures, "Haar feature bank");
    m_Impl->deviceFeatures.CopyFromHost(m_Impl->features.data(), numFeatures, m_Impl->stream->get());
  }
#endif
}

void
HaarResponseEngine::EvaluateAtPoints(const VoxelIndex3 * points, std::int64_t numPoints, float * out)
{
  const int numFeatures = GetNumberOfFeatures();
  if (numPoints <= 0 || numFeatures == 0)
  {
    return;
  }
#if CANOPY_USE_CUDA
  if (m_Impl->backend.useCuda)
  {
    auto &             impl = *m_Impl;
    const std::int64_t slice = impl.SlicePoints(numPoints);
    if (impl.devicePoints.size() < static_cast<std::size_t>(slice))
    {
      impl.devicePoints.Allocate(slice, "sample points");
      impl.deviceResponses.Allocate(static_cast<std::size_t>(slice) * numFeatures, "response matrix slice");
    }
    for (std::int64_t begin = 0; begin < numPoints; begin += slice)
    {
      const std::int64_t count = std::min(slice, numPoints - begin);
      impl.devicePoints.CopyFromHost(points + begin, count, impl.stream->get());
      cuda::LaunchHaarAtPoints(impl.deviceView,
                               impl.deviceFeatures.data(),
                               numFeatures,
                               impl.devicePoints.data(),
                               count,
                               ResponseLayout{ impl.deviceResponses.data(), count, 1 },
                               impl.stream->get());
      // Scatter the slice's rows into the caller's feature-major matrix.
      CANOPY_CUDA_CHECK(cudaMemcpy2DAsync(out + begin,
                                          numPoints * sizeof(float),
                                          impl.deviceResponses.data(),
                                          count * sizeof(float),
                                          count * sizeof(float),
                                          numFeatures,
                                          cudaMemcpyDeviceToHost,
                                          impl.stream->get()));
    }
    impl.stream->Synchronize();
    return;
  }
#endif
  EvaluateHaarAtPointsCPU(m_Impl->hostView,
                          m_Impl->features.data(),
                          numFeatures,
                          points,
                          numPoints,
                          ResponseLayout{ out, numPoints, 1 },
                          m_Impl->cpuThreads);
}

void
HaarResponseEngine::EvaluateDense(const VoxelBlock & block, ResponseLayout layout)
{
  const int numFeatures = GetNumberOfFeatures();
  if (block.NumberOfVoxels() <= 0 || numFeatures == 0)
  {
    return;
  }
#if CANOPY_USE_CUDA
  if (m_Impl->backend.useCuda)
  {
    auto &             impl = *m_Impl;
    const std::int64_t planeVoxels = static_cast<std::int64_t>(block.sx) * block.sy;
    // Whole z-planes per slice so each slice is itself a block.
    const int planesPerSlice = static_cast<int>(std::max<std::int64_t>(1, impl.SlicePoints(block.NumberOfVoxels()) / planeVoxels));
    const std::int64_t sliceVoxels = planeVoxels * planesPerSlice;
    impl.deviceResponses.Allocate(static_cast<std::size_t>(sliceVoxels) * numFeatures, "dense response slice");
    std::vector<float> host(static_cast<std::size_t>(sliceVoxels) * numFeatures);
    for (int z = 0; z < block.sz; z += planesPerSlice)
    {
      VoxelBlock part = block;
      part.z0 = block.z0 + z;
      part.sz = std::min(planesPerSlice, block.sz - z);
      const std::int64_t count = part.NumberOfVoxels();
      cuda::LaunchHaarDense(impl.deviceView,
                            impl.deviceFeatures.data(),
                            numFeatures,
                            part,
                            ResponseLayout{ impl.deviceResponses.data(), count, 1 },
                            impl.stream->get());
      impl.deviceResponses.CopyToHost(host.data(), static_cast<std::size_t>(count) * numFeatures, impl.stream->get());
      impl.stream->Synchronize();
      const std::int64_t offset = static_cast<std::int64_t>(z) * planeVoxels;
      for (int f = 0; f < numFeatures; ++f)
      {
        for (std::int64_t p = 0; p < count; ++p)
        {
          layout.values[f * layout.featureStride + (offset + p) * layout.pointStride] = host[f * count + p];
        }
      }
    }
    return;
  }
#endif
  EvaluateHaarDenseCPU(m_Impl->hostView, m_Impl->features.data(), numFeatures, block, layout, m_Impl->cpuThreads);
}

#define CANOPY_INSTANTIATE_ENGINE_VOXELS(T) \
  template void HaarResponseEngine::SetVolumeFromVoxels<T>(const T *, int, int, int);
CANOPY_FOR_EACH_SCALAR_PIXEL(CANOPY_INSTANTIATE_ENGINE_VOXELS)

} // namespace canopy
