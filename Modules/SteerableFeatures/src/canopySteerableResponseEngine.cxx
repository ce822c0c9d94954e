#include "canopySteerableResponseEngine.h"

#include "canopy/Errors.h"
#include "canopy/PBTHypotheses.h"
#include "canopyConfigure.h"
#include "canopySteerableFeatureBank.h"

#if CANOPY_USE_CUDA
#include "canopy/cuda/DeviceBuffer.h"
#endif

namespace canopy
{

struct SteerableResponseEngine::Impl
{
  SteerablePyramidView          hostView;
  SteerableGrid                 grid;
  std::vector<SteerableFeature> features;
#if CANOPY_USE_CUDA
  cuda::DeviceBuffer<SteerableVoxel>   deviceLevels[kMaxSteerableLevels];
  cuda::DeviceBuffer<SteerableFeature> deviceFeatures;
  cuda::DeviceBuffer<SteerablePose>    deviceFrames; // boundary detection: one frame per vertex
  SteerablePyramidView                 deviceView;
#endif
};

SteerableResponseEngine::SteerableResponseEngine(const ResolvedBackend & backend,
                                                 int                     cpuThreads,
                                                 std::size_t             maxDeviceBytes)
  : ResponseEngine("SteerableResponseEngine", backend, cpuThreads, maxDeviceBytes)
  , m_Impl(std::make_unique<Impl>())
{
}

SteerableResponseEngine::~SteerableResponseEngine() = default;

int
SteerableResponseEngine::GetNumberOfFeatures() const
{
  return static_cast<int>(m_Impl->features.size());
}

const SteerableGrid &
SteerableResponseEngine::GetGrid() const
{
  return m_Impl->grid;
}

void
SteerableResponseEngine::SetPyramid(const SteerablePyramid & pyramid)
{
  if (pyramid.GetNumberOfLevels() < 1)
    CANOPY_THROW("SteerableResponseEngine: the pyramid has no levels");
  m_Impl->hostView = pyramid.GetView();
  m_Impl->features.clear(); // features are validated against the levels
#if CANOPY_USE_CUDA
  if (OnCuda())
  {
    auto & impl = *m_Impl;
    impl.deviceView = impl.hostView;
    for (int k = 0; k < impl.hostView.numLevels; ++k)
    {
      const auto & voxels = pyramid.GetLevelVoxels(k);
      impl.deviceLevels[k].Allocate(voxels.size(), "steerable pyramid level");
      impl.deviceLevels[k].CopyFromHost(voxels.data(), voxels.size(), Stream());
      impl.deviceView.levels[k].voxels = impl.deviceLevels[k].data();
    }
    Synchronize();
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
  if (OnCuda() && !features.empty())
  {
    m_Impl->deviceFeatures.Allocate(features.size(), "steerable feature bank");
    m_Impl->deviceFeatures.CopyFromHost(features.data(), features.size(), Stream());
    Synchronize();
  }
#endif
}

void
SteerableResponseEngine::Evaluate(const SteerablePose * poses, std::int64_t numPoses, ResponseLayout out)
{
  const int numFeatures = GetNumberOfFeatures();
  if (numPoses <= 0 || numFeatures == 0)
    return;
  if (!OnCuda())
  {
    EvaluateSteerableCPU(
      m_Impl->hostView, m_Impl->grid, m_Impl->features.data(), numFeatures, poses, numPoses, out, GetCpuThreads());
    return;
  }
#if CANOPY_USE_CUDA
  RunInSlices({ numPoses, 1, numFeatures, poses, sizeof(SteerablePose) },
              out,
              [&](std::int64_t, std::int64_t count, const void * inputs, ResponseLayout deviceOut)
              {
                cuda::LaunchSteerable(m_Impl->deviceView,
                                      m_Impl->grid,
                                      m_Impl->deviceFeatures.data(),
                                      numFeatures,
                                      static_cast<const SteerablePose *>(inputs),
                                      count,
                                      deviceOut,
                                      Stream());
              });
#endif
}

void
SteerableResponseEngine::EvaluatePBT(const SteerablePose * poses, std::int64_t numPoses, float * scores)
{
  const int numFeatures = GetNumberOfFeatures();
  if (!OnCuda())
  {
    const PBTView & tree = HostTree(numFeatures);
    if (numPoses > 0)
      EvaluatePBTAtHypothesesCPU(tree,
                                 SteerableFeatureFunc{ m_Impl->hostView, m_Impl->grid, m_Impl->features.data() },
                                 poses,
                                 numPoses,
                                 scores,
                                 GetCpuThreads());
    return;
  }
#if CANOPY_USE_CUDA
  const PBTView &            tree = DeviceTree(numFeatures);
  const SteerableFeatureFunc func{ m_Impl->deviceView, m_Impl->grid, m_Impl->deviceFeatures.data() };
  RunInSlices({ numPoses, 1, 1, poses, sizeof(SteerablePose) },
              ResponseLayout{ scores, numPoses, 1 },
              [&](std::int64_t, std::int64_t count, const void * inputs, ResponseLayout deviceOut)
              {
                cuda::LaunchPBTAtHypotheses(
                  tree, func, static_cast<const SteerablePose *>(inputs), count, deviceOut.values, Stream());
              });
#endif
}

void
SteerableResponseEngine::EvaluateBoundaryPBT(const SteerablePose *      frames,
                                             std::int64_t               numFrames,
                                             const BoundaryHypothesis * hypotheses,
                                             std::int64_t               numHypotheses,
                                             float *                    scores)
{
  for (std::int64_t h = 0; h < numHypotheses; ++h)
    if (hypotheses[h].vertex < 0 || hypotheses[h].vertex >= numFrames)
      CANOPY_THROW("SteerableResponseEngine: boundary hypothesis " << h << " names vertex " << hypotheses[h].vertex
                                                                   << " of " << numFrames);
  const int numFeatures = GetNumberOfFeatures();
  if (!OnCuda())
  {
    const PBTView & tree = HostTree(numFeatures);
    if (numHypotheses > 0)
      EvaluatePBTAtHypothesesCPU(tree,
                                 BoundaryFeatureFunc{ m_Impl->hostView, m_Impl->grid, m_Impl->features.data(), frames },
                                 hypotheses,
                                 numHypotheses,
                                 scores,
                                 GetCpuThreads());
    return;
  }
#if CANOPY_USE_CUDA
  const PBTView & tree = DeviceTree(numFeatures);
  if (numHypotheses <= 0)
    return;
  auto & impl = *m_Impl;
  if (impl.deviceFrames.size() < static_cast<std::size_t>(numFrames))
    impl.deviceFrames.Allocate(static_cast<std::size_t>(numFrames), "boundary vertex frames");
  impl.deviceFrames.CopyFromHost(frames, static_cast<std::size_t>(numFrames), Stream());
  const BoundaryFeatureFunc func{ impl.deviceView, impl.grid, impl.deviceFeatures.data(), impl.deviceFrames.data() };
  RunInSlices({ numHypotheses, 1, 1, hypotheses, sizeof(BoundaryHypothesis) },
              ResponseLayout{ scores, numHypotheses, 1 },
              [&](std::int64_t, std::int64_t count, const void * inputs, ResponseLayout deviceOut)
              {
                cuda::LaunchPBTAtHypotheses(
                  tree, func, static_cast<const BoundaryHypothesis *>(inputs), count, deviceOut.values, Stream());
              });
#endif
}

} // namespace canopy
