#include "canopySteerableResponseEngine.h"

#include "canopy/Errors.h"
#include "canopyConfigure.h"
#include "canopySteerableFeatureBank.h"

#if CANOPY_USE_CUDA
#include "canopy/cuda/DeviceBuffer.h"
#endif

#include <algorithm>

namespace canopy
{

struct SteerableResponseEngine::Impl
{
  ResolvedBackend               backend;
  int                           cpuThreads = 0;
  std::size_t                   maxDeviceBytes = 0;
  SteerablePyramidView          hostView;
  SteerableGrid                 grid;
  std::vector<SteerableFeature> features;
#if CANOPY_USE_CUDA
  std::unique_ptr<cuda::ScopedDevice>  scopedDevice;
  std::unique_ptr<cuda::Stream>        stream;
  cuda::DeviceBuffer<SteerableVoxel>   deviceLevels[kMaxSteerableLevels];
  cuda::DeviceBuffer<SteerableFeature> deviceFeatures;
  cuda::DeviceBuffer<SteerablePose>    devicePoses;
  cuda::DeviceBuffer<float>            deviceResponses;
  SteerablePyramidView                 deviceView;
  std::vector<float>                   hostSlice;

  // Poses per slice so that poses and their responses fit the device budget.
  std::int64_t SlicePoses(std::int64_t numPoses) const
  {
    const std::size_t perPose = sizeof(SteerablePose) + sizeof(float) * std::max<std::size_t>(features.size(), 1);
    return std::max<std::int64_t>(1, std::min<std::int64_t>(numPoses, maxDeviceBytes / perPose));
  }
#endif
};

SteerableResponseEngine::SteerableResponseEngine(const ResolvedBackend & backend,
                                                 int                     cpuThreads,
                                                 std::size_t             maxDeviceBytes)
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
    CANOPY_THROW("SteerableResponseEngine: a CUDA backend was requested but this build has no CUDA support");
#endif
}

SteerableResponseEngine::~SteerableResponseEngine() = default;

const ResolvedBackend &
SteerableResponseEngine::GetBackend() const
{
  return m_Impl->backend;
}

int
SteerableResponseEngine::GetNumberOfFeatures() const
{
  return static_cast<int>(m_Impl->features.size());
}

void
SteerableResponseEngine::SetPyramid(const SteerablePyramid & pyramid)
{
  if (pyramid.GetNumberOfLevels() < 1)
    CANOPY_THROW("SteerableResponseEngine: the pyramid has no levels");
  m_Impl->hostView = pyramid.GetView();
  m_Impl->features.clear(); // features are validated against the levels
#if CANOPY_USE_CUDA
  if (m_Impl->backend.useCuda)
  {
    auto & impl = *m_Impl;
    impl.deviceView = impl.hostView;
    for (int k = 0; k < impl.hostView.numLevels; ++k)
    {
      const auto & voxels = pyramid.GetLevelVoxels(k);
      impl.deviceLevels[k].Allocate(voxels.size(), "steerable pyramid level");
      impl.deviceLevels[k].CopyFromHost(voxels.data(), voxels.size(), impl.stream->get());
      impl.deviceView.levels[k].voxels = impl.deviceLevels[k].data();
    }
    impl.stream->Synchronize();
  }
#endif
}

void
SteerableResponseEngine::SetFeatures(const SteerableGrid & grid, const std::vector<SteerableFeature> & features)
{
  if (m_Impl->hostView.numLevels < 1)
    CANOPY_THROW("SteerableResponseEngine: set the pyramid before the features");
  ValidateSteerableFeatures(grid, m_Impl->hostView.numLevels, features);
  m_Impl->grid = grid;
  m_Impl->features = features;
#if CANOPY_USE_CUDA
  if (m_Impl->backend.useCuda && !features.empty())
  {
    m_Impl->deviceFeatures.Allocate(features.size(), "steerable feature bank");
    m_Impl->deviceFeatures.CopyFromHost(features.data(), features.size(), m_Impl->stream->get());
    m_Impl->stream->Synchronize();
  }
#endif
}

void
SteerableResponseEngine::Evaluate(const SteerablePose * poses, std::int64_t numPoses, ResponseLayout out)
{
  const int numFeatures = GetNumberOfFeatures();
  if (numPoses <= 0 || numFeatures == 0)
    return;
#if CANOPY_USE_CUDA
  if (m_Impl->backend.useCuda)
  {
    auto &             impl = *m_Impl;
    const std::int64_t slice = impl.SlicePoses(numPoses);
    if (impl.devicePoses.size() < static_cast<std::size_t>(slice) ||
        impl.deviceResponses.size() < static_cast<std::size_t>(slice) * numFeatures)
    {
      impl.devicePoses.Allocate(slice, "pose hypotheses");
      impl.deviceResponses.Allocate(static_cast<std::size_t>(slice) * numFeatures, "steerable response slice");
    }
    const bool featureMajor = out.pointStride == 1 && out.featureStride == numPoses;
    for (std::int64_t begin = 0; begin < numPoses; begin += slice)
    {
      const std::int64_t count = std::min(slice, numPoses - begin);
      impl.devicePoses.CopyFromHost(poses + begin, count, impl.stream->get());
      cuda::LaunchSteerable(impl.deviceView,
                            impl.grid,
                            impl.deviceFeatures.data(),
                            numFeatures,
                            impl.devicePoses.data(),
                            count,
                            ResponseLayout{ impl.deviceResponses.data(), count, 1 },
                            impl.stream->get());
      if (featureMajor) // the slice's columns go straight into the caller's matrix
      {
        CANOPY_CUDA_CHECK(cudaMemcpy2DAsync(out.values + begin,
                                            numPoses * sizeof(float),
                                            impl.deviceResponses.data(),
                                            count * sizeof(float),
                                            count * sizeof(float),
                                            numFeatures,
                                            cudaMemcpyDeviceToHost,
                                            impl.stream->get()));
        continue;
      }
      impl.hostSlice.resize(static_cast<std::size_t>(count) * numFeatures);
      impl.deviceResponses.CopyToHost(impl.hostSlice.data(), impl.hostSlice.size(), impl.stream->get());
      impl.stream->Synchronize();
      for (int f = 0; f < numFeatures; ++f)
        for (std::int64_t p = 0; p < count; ++p)
          out.values[f * out.featureStride + (begin + p) * out.pointStride] = impl.hostSlice[f * count + p];
    }
    impl.stream->Synchronize();
    return;
  }
#endif
  EvaluateSteerableCPU(
    m_Impl->hostView, m_Impl->grid, m_Impl->features.data(), numFeatures, poses, numPoses, out, m_Impl->cpuThreads);
}

} // namespace canopy
