#include "canopy/HaarResponseEngine.h"

#include "canopy/Errors.h"
#include "canopy/PBTHypotheses.h"
#include "canopyConfigure.h"

#if CANOPY_USE_CUDA
#include "canopy/cuda/DeviceBuffer.h"
#endif

#include <algorithm>

namespace canopy
{

struct HaarResponseEngine::Impl
{
  IntegralVolumeView             hostView;
  std::vector<double>            ownedTable; // when the engine computed the table on the CPU
  std::vector<HaarFeatureVoxels> features;
#if CANOPY_USE_CUDA
  cuda::DeviceBuffer<double>            deviceTable;
  cuda::DeviceBuffer<HaarFeatureVoxels> deviceFeatures;
  IntegralVolumeView                    deviceView;
#endif
};

HaarResponseEngine::HaarResponseEngine(const ResolvedBackend & backend, int cpuThreads, std::size_t maxDeviceBytes)
  : ResponseEngine("HaarResponseEngine", backend, cpuThreads, maxDeviceBytes)
  , m_Impl(std::make_unique<Impl>())
{
}

HaarResponseEngine::~HaarResponseEngine() = default;

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
  if (OnCuda())
  {
    const std::int64_t n = PaddedTableSize(nx, ny, nz);
    m_Impl->deviceTable.Allocate(n, "integral volume");
    m_Impl->deviceTable.CopyFromHost(hostPaddedSums, n, Stream());
    m_Impl->deviceView = IntegralVolumeView{ m_Impl->deviceTable.data(), nx, ny, nz };
    Synchronize(); // the caller may free its host table after this returns
  }
#endif
}

template<typename TPixel>
void
HaarResponseEngine::SetVolumeFromVoxels(const TPixel * hostVoxels, int nx, int ny, int nz)
{
  const std::int64_t n = PaddedTableSize(nx, ny, nz);
#if CANOPY_USE_CUDA
  if (OnCuda())
  {
    const std::int64_t         voxels = static_cast<std::int64_t>(nx) * ny * nz;
    cuda::DeviceBuffer<TPixel> deviceVoxels(voxels, "input volume");
    deviceVoxels.CopyFromHost(hostVoxels, voxels, Stream());
    m_Impl->deviceTable.Allocate(n, "integral volume");
    cuda::LaunchIntegralVolume(deviceVoxels.data(), nx, ny, nz, m_Impl->deviceTable.data(), Stream());
    m_Impl->deviceView = IntegralVolumeView{ m_Impl->deviceTable.data(), nx, ny, nz };
    m_Impl->hostView = IntegralVolumeView{ nullptr, nx, ny, nz };
    Synchronize(); // deviceVoxels is freed on return
    return;
  }
#endif
  m_Impl->ownedTable.resize(static_cast<std::size_t>(n));
  ComputeIntegralVolumeCPU(hostVoxels, nx, ny, nz, m_Impl->ownedTable.data(), GetCpuThreads());
  m_Impl->hostView = IntegralVolumeView{ m_Impl->ownedTable.data(), nx, ny, nz };
}

void
HaarResponseEngine::SetFeatures(const HaarFeatureVoxels * features, int numFeatures)
{
  m_Impl->features.assign(features, features + numFeatures);
#if CANOPY_USE_CUDA
  if (OnCuda() && numFeatures > 0)
  {
    m_Impl->deviceFeatures.Allocate(numFeatures, "Haar feature bank");
    m_Impl->deviceFeatures.CopyFromHost(m_Impl->features.data(), numFeatures, Stream());
    Synchronize();
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
  const ResponseLayout layout{ out, numPoints, 1 };
  if (!OnCuda())
  {
    EvaluateHaarAtPointsCPU(
      m_Impl->hostView, m_Impl->features.data(), numFeatures, points, numPoints, layout, GetCpuThreads());
    return;
  }
#if CANOPY_USE_CUDA
  RunInSlices({ numPoints, 1, numFeatures, points, sizeof(VoxelIndex3) },
              layout,
              [&](std::int64_t, std::int64_t count, const void * inputs, ResponseLayout deviceOut)
              {
                cuda::LaunchHaarAtPoints(m_Impl->deviceView,
                                         m_Impl->deviceFeatures.data(),
                                         numFeatures,
                                         static_cast<const VoxelIndex3 *>(inputs),
                                         count,
                                         deviceOut,
                                         Stream());
              });
#endif
}

void
HaarResponseEngine::EvaluateDense(const VoxelBlock & block, ResponseLayout layout)
{
  const int numFeatures = GetNumberOfFeatures();
  if (block.NumberOfVoxels() <= 0 || numFeatures == 0)
  {
    return;
  }
  if (!OnCuda())
  {
    EvaluateHaarDenseCPU(m_Impl->hostView, m_Impl->features.data(), numFeatures, block, layout, GetCpuThreads());
    return;
  }
#if CANOPY_USE_CUDA
  // Units of whole z-planes, so each slice is itself a block.
  const std::int64_t planeVoxels = static_cast<std::int64_t>(block.sx) * block.sy;
  RunInSlices({ block.sz, planeVoxels, numFeatures, nullptr, 0 },
              layout,
              [&](std::int64_t firstPlane, std::int64_t planes, const void *, ResponseLayout deviceOut)
              {
                VoxelBlock part = block;
                part.z0 = block.z0 + static_cast<int>(firstPlane);
                part.sz = static_cast<int>(planes);
                cuda::LaunchHaarDense(
                  m_Impl->deviceView, m_Impl->deviceFeatures.data(), numFeatures, part, deviceOut, Stream());
              });
#endif
}

void
HaarResponseEngine::EvaluatePBT(const VoxelIndex3 * points, std::int64_t numPoints, float * scores)
{
  const int numFeatures = GetNumberOfFeatures();
  if (!OnCuda())
  {
    const PBTView & tree = HostTree(numFeatures);
    if (numPoints > 0)
    {
      EvaluatePBTAtHypothesesCPU(
        tree, HaarFeatureFunc{ m_Impl->hostView, m_Impl->features.data() }, points, numPoints, scores, GetCpuThreads());
    }
    return;
  }
#if CANOPY_USE_CUDA
  const PBTView &       tree = DeviceTree(numFeatures);
  const HaarFeatureFunc func{ m_Impl->deviceView, m_Impl->deviceFeatures.data() };
  RunInSlices({ numPoints, 1, 1, points, sizeof(VoxelIndex3) },
              ResponseLayout{ scores, numPoints, 1 },
              [&](std::int64_t, std::int64_t count, const void * inputs, ResponseLayout deviceOut)
              {
                cuda::LaunchPBTAtHypotheses(
                  tree, func, static_cast<const VoxelIndex3 *>(inputs), count, deviceOut.values, Stream());
              });
#endif
}

#define CANOPY_INSTANTIATE_ENGINE_VOXELS(T)                                                                            \
  template void HaarResponseEngine::SetVolumeFromVoxels<T>(const T *, int, int, int);
CANOPY_FOR_EACH_SCALAR_PIXEL(CANOPY_INSTANTIATE_ENGINE_VOXELS)

} // namespace canopy
