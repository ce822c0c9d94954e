#include "canopySteerableResponseEngine.h"

#include "canopy/Errors.h"
#include "canopy/PBTBoundaryVariants.h"
#include "canopy/PBTHypotheses.h"
#include "canopy/TopScores.h"
#include "canopyConfigure.h"
#include "canopySteerableFeatureBank.h"

#include <algorithm>

#if CANOPY_USE_CUDA
#include "canopy/PyramidMath.h"
#include "canopy/cuda/DeviceBuffer.h"

#endif

namespace canopy
{

PyramidIntensityScaling
PyramidScalingOf(const IntensityNormalization & normalization)
{
  PyramidIntensityScaling scaling;
  scaling.method = normalization.method == "window" ? PyramidIntensityScaling::Method::Window
                                                    : PyramidIntensityScaling::Method::Percentile;
  scaling.lowPercentile = normalization.lowPercentile;
  scaling.highPercentile = normalization.highPercentile;
  scaling.windowLow = normalization.windowLow;
  scaling.windowHigh = normalization.windowHigh;
  return scaling;
}

struct SteerableResponseEngine::Impl
{
  SteerablePyramidView             hostView;
  SteerableGrid                    grid;
  std::vector<SteerableFeature>    features;
  BoundaryKernelVariant            boundaryKernel = kDefaultBoundaryKernel;
  std::vector<PBTSteerableLearner> packed; // host side of devicePacked (alive while it uploads)
#if CANOPY_USE_CUDA
  cuda::DeviceBuffer<PBTSteerableLearner> devicePacked; // packed boundary kernels: tree learners + features
  cuda::DeviceBuffer<SteerableVoxel>      deviceLevels[kMaxSteerableLevels];
  cuda::DeviceBuffer<SteerableFeature>    deviceFeatures;
  cuda::DeviceBuffer<SteerablePose>       deviceFrames; // boundary detection: one frame per vertex
  SteerablePyramidView                    deviceView;
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

void
SteerableResponseEngine::SetBoundaryKernel(const BoundaryKernelVariant & kernel)
{
  m_Impl->boundaryKernel = BoundaryKernelVariant::Parse(kernel.Name()); // throws for one not built
}

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

std::array<double, 2>
SteerableResponseEngine::SetImage(const SteerablePyramid::ImageType * image,
                                  const SteerablePyramidOptions &     options,
                                  const PyramidIntensityScaling &     scaling)
{
  if (!image || !image->GetBufferPointer())
    CANOPY_THROW("SteerableResponseEngine::SetImage: the image is null or has no pixel buffer");
  if (!OnCuda())
    CANOPY_THROW("SteerableResponseEngine::SetImage builds the pyramid on the device; on the CPU build a "
                 "SteerablePyramid and call SetPyramid");
  std::array<double, 2> range{ { 0.0, 0.0 } };
#if CANOPY_USE_CUDA
  const auto plans = SteerablePyramid::Plan(image, options);
  if (image->GetLargestPossibleRegion().GetIndex() != image->GetBufferedRegion().GetIndex() ||
      image->GetLargestPossibleRegion().GetSize() != image->GetBufferedRegion().GetSize())
    CANOPY_THROW("SteerableResponseEngine::SetImage: the image's buffer must hold its whole largest region");
  auto &             impl = *m_Impl;
  const auto         s = Stream();
  const std::int64_t n = static_cast<std::int64_t>(image->GetLargestPossibleRegion().GetNumberOfPixels());
  const auto         size = image->GetLargestPossibleRegion().GetSize();
  const int          nx = static_cast<int>(size[0]), ny = static_cast<int>(size[1]), nz = static_cast<int>(size[2]);

  // One upload of the image; everything else is computed where it is used.
  cuda::DeviceBuffer<float> normalised(static_cast<std::size_t>(n), "pyramid input");
  normalised.CopyFromHost(image->GetBufferPointer(), static_cast<std::size_t>(n), s);
  if (scaling.method == PyramidIntensityScaling::Method::Window)
  {
    if (!(scaling.windowLow < scaling.windowHigh))
      CANOPY_THROW("intensity window: need windowLow < windowHigh, got " << scaling.windowLow << " and "
                                                                         << scaling.windowHigh);
    range = { { scaling.windowLow, scaling.windowHigh } };
    cuda::LaunchNormalize(normalised.data(), n, 1, scaling.windowLow, scaling.windowHigh, s);
  }
  else if (scaling.method == PyramidIntensityScaling::Method::Percentile)
  {
    // The strided sample NormalizeIntensities takes, sorted on the device (non-finite values last):
    // its k-th element is what nth_element finds on the host.
    const std::int64_t                     stride = NormalizationStride(n);
    const std::int64_t                     count = (n + stride - 1) / stride;
    cuda::DeviceBuffer<float>              sample(static_cast<std::size_t>(count), "normalisation sample");
    cuda::DeviceBuffer<float>              sorted(static_cast<std::size_t>(count), "sorted normalisation sample");
    cuda::DeviceBuffer<unsigned long long> finite(1, "finite sample count");
    CANOPY_CUDA_CHECK(cudaMemsetAsync(finite.data(), 0, sizeof(unsigned long long), s));
    cuda::LaunchNormalizationSample(normalised.data(), stride, count, sample.data(), finite.data(), s);
    const std::size_t                 scratchBytes = cuda::ScratchBytesForSortFloats(count);
    cuda::DeviceBuffer<unsigned char> scratch(std::max<std::size_t>(1, scratchBytes), "normalisation sort scratch");
    cuda::LaunchSortFloats(sample.data(), sorted.data(), count, scratch.data(), scratchBytes, s);
    unsigned long long finiteCount = 0;
    finite.CopyToHost(&finiteCount, 1, s);
    Synchronize();
    if (finiteCount > 0)
    {
      float      low = 0.0f, high = 0.0f;
      const auto k = [&](double p) { return static_cast<std::size_t>(PercentileRank(p, std::int64_t(finiteCount))); };
      CANOPY_CUDA_CHECK(
        cudaMemcpyAsync(&low, sorted.data() + k(scaling.lowPercentile), sizeof(float), cudaMemcpyDeviceToHost, s));
      CANOPY_CUDA_CHECK(
        cudaMemcpyAsync(&high, sorted.data() + k(scaling.highPercentile), sizeof(float), cudaMemcpyDeviceToHost, s));
      Synchronize();
      range = { { low, high } };
    }
    const double scale = range[1] > range[0] ? 1.0 / (range[1] - range[0]) : 0.0;
    cuda::LaunchNormalize(normalised.data(), n, 0, range[0], scale, s);
  }

  m_Impl->features.clear(); // features are validated against the levels
  impl.hostView = SteerablePyramidView{};
  impl.hostView.numLevels = static_cast<int>(plans.size());
  impl.deviceView = impl.hostView;
  cuda::DeviceBuffer<float>  smoothA, smoothB, resampled;
  cuda::DeviceBuffer<double> taps;
  for (std::size_t k = 0; k < plans.size(); ++k)
  {
    const auto &  plan = plans[k];
    const float * intensity = normalised.data();
    if (!plan.sameAsInput)
    {
      const float * source = normalised.data();
      if (plan.smooth)
      {
        // DiscreteGaussianImageFilter's chain: z, then y, then x.
        if (smoothA.size() < static_cast<std::size_t>(n))
        {
          smoothA.Allocate(static_cast<std::size_t>(n), "pyramid smoothing");
          smoothB.Allocate(static_cast<std::size_t>(n), "pyramid smoothing");
        }
        float * targets[3] = { smoothA.data(), smoothB.data(), smoothA.data() };
        for (int pass = 0; pass < 3; ++pass)
        {
          const unsigned axis = 2u - static_cast<unsigned>(pass);
          const auto     c = SteerablePyramid::GaussianTaps(plan.variance[axis], image->GetSpacing()[axis], axis);
          taps.Allocate(c.size(), "Gaussian taps");
          taps.CopyFromHost(c.data(), c.size(), s);
          cuda::LaunchGaussianLine(source, targets[pass], nx, ny, nz, int(axis), taps.data(), int(c.size() / 2), s);
          Synchronize(); // the taps buffer is reallocated for the next axis
          source = targets[pass];
        }
      }
      const auto level = plan.grid->GetLargestPossibleRegion().GetNumberOfPixels();
      resampled.Allocate(level, "pyramid level intensities");
      cuda::LaunchResampleLinear(SteerablePyramid::ResampleGeometryOf(image, plan.grid), source, resampled.data(), s);
      intensity = resampled.data();
    }
    SteerableLevelView view = SteerablePyramid::LevelViewOf(plan.grid);
    const std::size_t  voxels = static_cast<std::size_t>(view.nx) * view.ny * view.nz;
    impl.deviceLevels[k].Allocate(voxels, "steerable pyramid level");
    cuda::LaunchSteerableVoxels(
      intensity, view.nx, view.ny, view.nz, view.worldToIndex, impl.deviceLevels[k].data(), s);
    Synchronize();                  // `resampled` is reused by the next level
    impl.hostView.levels[k] = view; // geometry only: no host voxels on this path
    impl.deviceView.levels[k] = view;
    impl.deviceView.levels[k].voxels = impl.deviceLevels[k].data();
  }
#endif
  return range;
}

std::vector<SteerableVoxel>
SteerableResponseEngine::DownloadLevel(int level) const
{
  if (!OnCuda() || level < 0 || level >= m_Impl->hostView.numLevels)
    CANOPY_THROW("SteerableResponseEngine::DownloadLevel: no device level " << level);
  std::vector<SteerableVoxel> out;
#if CANOPY_USE_CUDA
  const auto & view = m_Impl->hostView.levels[level];
  out.resize(static_cast<std::size_t>(view.nx) * view.ny * view.nz);
  m_Impl->deviceLevels[level].CopyToHost(out.data(), out.size(), Stream());
  Synchronize();
#endif
  return out;
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
SteerableResponseEngine::EvaluatePBTStage(const SteerablePose *       parents,
                                          std::int64_t                numParents,
                                          const SteerablePose *       variants,
                                          std::int64_t                numVariants,
                                          int                         fromVariant,
                                          const float *               parentScores,
                                          std::int64_t                keep,
                                          std::vector<std::int64_t> & indices,
                                          std::vector<float> &        joint,
                                          std::vector<float> &        scores,
                                          const float *               variantWeights)
{
  indices.clear();
  joint.clear();
  scores.clear();
  const int          numFeatures = GetNumberOfFeatures();
  const std::int64_t count = numParents * numVariants;
  if (numParents <= 0 || numVariants <= 0)
    return;
  if (count > 0x7FFFFFFF)
    CANOPY_THROW("SteerableResponseEngine::EvaluatePBTStage: " << numParents << " x " << numVariants
                                                               << " hypotheses are more than one stage call takes");
  const std::int64_t k = keep > 0 && keep < count ? keep : count;
  if (!OnCuda())
  {
    const PBTView &        tree = HostTree(numFeatures);
    PoseProductFeatureFunc func{ m_Impl->hostView, m_Impl->grid, m_Impl->features.data(), parents, variants,
                                 numVariants,      fromVariant };
    std::vector<float>     all(static_cast<std::size_t>(count)), products(static_cast<std::size_t>(count));
    EvaluatePBTAtHypothesisRangeCPU(tree, func, count, all.data(), GetCpuThreads());
    for (std::int64_t h = 0; h < count; ++h)
      products[h] =
        JointScore(parentScores[h / numVariants], all[h], variantWeights ? variantWeights[h % numVariants] : 1.0f);
    indices = TopScoresCPU(products.data(), count, k);
    for (std::int64_t h : indices)
    {
      joint.push_back(products[h]);
      scores.push_back(all[h]);
    }
    return;
  }
#if CANOPY_USE_CUDA
  const PBTView &                   tree = DeviceTree(numFeatures);
  const auto                        s = Stream();
  cuda::DeviceBuffer<SteerablePose> dParents(static_cast<std::size_t>(numParents), "stage parents");
  cuda::DeviceBuffer<SteerablePose> dVariants(static_cast<std::size_t>(numVariants), "stage variants");
  cuda::DeviceBuffer<float>         dParentScores(static_cast<std::size_t>(numParents), "stage parent scores");
  cuda::DeviceBuffer<float>         dWeights(variantWeights ? static_cast<std::size_t>(numVariants) : 1,
                                     "stage variant weights");
  cuda::DeviceBuffer<float>         dScores(static_cast<std::size_t>(count), "stage scores");
  cuda::DeviceBuffer<float>         dJoint(static_cast<std::size_t>(count), "stage joint scores");
  const std::size_t                 scratchBytes = cuda::ScratchBytesForTopScores(count);
  cuda::DeviceBuffer<unsigned char> dScratch(std::max<std::size_t>(1, scratchBytes), "stage ranking scratch");
  cuda::DeviceBuffer<std::int64_t>  dIndices(static_cast<std::size_t>(k), "stage kept indices");
  cuda::DeviceBuffer<float>         dKeptJoint(static_cast<std::size_t>(k), "stage kept joint scores");
  cuda::DeviceBuffer<float>         dKeptScores(static_cast<std::size_t>(k), "stage kept scores");
  dParents.CopyFromHost(parents, static_cast<std::size_t>(numParents), s);
  dVariants.CopyFromHost(variants, static_cast<std::size_t>(numVariants), s);
  dParentScores.CopyFromHost(parentScores, static_cast<std::size_t>(numParents), s);
  if (variantWeights)
    dWeights.CopyFromHost(variantWeights, static_cast<std::size_t>(numVariants), s);
  const PoseProductFeatureFunc func{ m_Impl->deviceView, m_Impl->grid,     m_Impl->deviceFeatures.data(),
                                     dParents.data(),    dVariants.data(), numVariants,
                                     fromVariant };
  cuda::LaunchPBTAtHypothesisRange(tree, func, count, dScores.data(), s);
  cuda::LaunchJointScores(dScores.data(),
                          dParentScores.data(),
                          variantWeights ? dWeights.data() : nullptr,
                          numVariants,
                          count,
                          dJoint.data(),
                          s);
  cuda::LaunchTopScores(dJoint.data(), count, k, dIndices.data(), dKeptJoint.data(), dScratch.data(), scratchBytes, s);
  cuda::LaunchGatherScores(dScores.data(), dIndices.data(), k, dKeptScores.data(), s);
  indices.resize(static_cast<std::size_t>(k));
  joint.resize(static_cast<std::size_t>(k));
  scores.resize(static_cast<std::size_t>(k));
  dIndices.CopyToHost(indices.data(), indices.size(), s);
  dKeptJoint.CopyToHost(joint.data(), joint.size(), s);
  dKeptScores.CopyToHost(scores.data(), scores.size(), s);
  Synchronize();
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
  BoundaryKernelVariant     kernel = impl.boundaryKernel;
  if (kernel.packed)
  {
    // The tree's learners with their features in 16-byte records, packed for this tree and bank.
    const PBTView & host = HostTree(numFeatures);
    int             numLearners = 0;
    for (int i = 0; i < host.numNodes; ++i)
      if (!IsLeaf(host.nodes[i]))
        numLearners = std::max(numLearners, host.nodes[i].firstLearner + host.nodes[i].numLearners);
    impl.packed = PackSteerableLearners(host.learners, numLearners, impl.features.data(), numFeatures);
    kernel.packed = !impl.packed.empty();
    if (kernel.packed)
    {
      if (impl.devicePacked.size() < impl.packed.size())
        impl.devicePacked.Allocate(impl.packed.size(), "packed boundary learners");
      impl.devicePacked.CopyFromHost(impl.packed.data(), impl.packed.size(), Stream());
    }
    else
      kernel.minBlocks = 0; // unpacked variants are built without register caps
  }
  RunInSlices({ numHypotheses, 1, 1, hypotheses, sizeof(BoundaryHypothesis) },
              ResponseLayout{ scores, numHypotheses, 1 },
              [&](std::int64_t, std::int64_t count, const void * inputs, ResponseLayout deviceOut)
              {
                cuda::LaunchBoundaryPBTVariant(kernel,
                                               tree,
                                               func,
                                               impl.devicePacked.data(),
                                               static_cast<const BoundaryHypothesis *>(inputs),
                                               count,
                                               deviceOut.values,
                                               Stream());
              });
#endif
}

} // namespace canopy
