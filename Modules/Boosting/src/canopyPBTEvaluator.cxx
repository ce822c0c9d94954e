#include "canopyPBTEvaluator.h"

#include "canopy/Errors.h"
#include "canopy/IntegralVolume.h"
#include "canopy/PBTEvaluation.h"
#include "canopy/TopScores.h"
#include "canopyConfigure.h"
#include "canopyHaarChannels.h"
#include "canopyHaarFeatureBank.h"

#if CANOPY_USE_CUDA
#  include "canopy/cuda/DeviceBuffer.h"
#endif

#include <algorithm>
#include <vector>

namespace canopy
{

static_assert(kPBTStackSize == kPBTEvaluationStack, "the kernels' stack must match the model's depth limit");

struct PBTVolumeEvaluator::Impl
{
  PBTModel                       model;
  PBTView                        hostView;
  std::vector<HaarFeatureVoxels> features;
  ResolvedBackend                backend;
  PBTEvaluationOptions           options;
  int                            marginBelow = 0;
  int                            marginAbove = 0;
  int                            slabsUsed = 0;
  int                            resolvedPlanes = -1; // channel-0 planes the features are resolved for
  int                            uploadedPlanes = -1; // ... and uploaded for (CUDA)
  int                            channelStride = 0;

  void ResolveFeatures(int planes);
#if CANOPY_USE_CUDA
  std::unique_ptr<cuda::Stream>         stream;
  cuda::DeviceBuffer<PBTNodeFlat>       nodes;
  cuda::DeviceBuffer<PBTWeakLearnerFlat> learners;
  cuda::DeviceBuffer<float>             tables;
  cuda::DeviceBuffer<HaarFeatureVoxels> deviceFeatures;
  cuda::DeviceBuffer<HaarFeatureCorners> deviceCorners; // for cornersShape's nx, ny
  // Packed learners and cuboids (fewer, wider loads: 4-25% faster on an H200); empty when a feature's
  // offsets exceed int16, then the kernel reads the flat arrays.
  cuda::DeviceBuffer<PBTPackedLearner>   packedLearners;
  cuda::DeviceBuffer<PBTPackedCuboid>    packedCuboids;
  int                                    cornersShape[2] = { -1, -1 };
  PBTView                               deviceView;

  void Upload();
  void UploadFeatures();
  /** With `best` and the volume in one slab, the map stays on the device: best->indices and
   * best->posteriors receive the k winners and `probability` is not written (may be null). Returns
   * false, having done nothing, when the volume needs slabs. */
  struct BestRequest
  {
    std::int64_t                k = 0;
    std::vector<std::int64_t> * indices = nullptr;
    std::vector<float> *        posteriors = nullptr;
  };
  bool EvaluateCuda(const float * voxels, int nx, int ny, int nz, float * probability,
                    const std::function<void(double)> & progress, const BestRequest * best = nullptr);
#endif
  void EvaluateCpu(const float * voxels, int nx, int ny, int nz, float * probability,
                   const std::function<void(double)> & progress);
};

PBTVolumeEvaluator::PBTVolumeEvaluator(const PBTModel & model, const ResolvedBackend & backend,
                                       const PBTEvaluationOptions & options)
  : m_Impl(std::make_unique<Impl>())
{
  auto & impl = *m_Impl;
  model.Validate("PBTVolumeEvaluator"); // depth <= kPBTMaxDepth: the per-voxel stack cannot overflow
  if (model.featureFamily != PBTFeatureFamily::Haar)
  {
    CANOPY_THROW("PBTVolumeEvaluator: the PBT reads " << PBTFeatureFamilyName(model.featureFamily)
                                                      << " features (pose hypotheses); classifying voxels needs a Haar PBT");
  }
  impl.model = model;
  impl.backend = backend;
  impl.options = options;
  impl.hostView = impl.model.View();
  if (!options.probabilistic)
  {
    impl.hostView.epsilon1 = 0.5f; // every decision is certain: one root-to-leaf path
  }
  if (options.channels < 1 || options.channels > kMaxHaarChannels)
  {
    CANOPY_THROW("PBTVolumeEvaluator: " << options.channels << " channels; give 1 to " << kMaxHaarChannels);
  }
  for (const auto & f : impl.model.features)
  {
    if (f.channel >= options.channels)
    {
      CANOPY_THROW("PBTVolumeEvaluator: a feature of the PBT reads channel " << f.channel << " but the volumes have "
                                                                             << options.channels << " channel(s)");
    }
  }
  if (options.channels == 1)
  {
    impl.ResolveFeatures(0); // single-channel offsets do not depend on the volume
  }
  if (backend.useCuda)
  {
#if CANOPY_USE_CUDA
    cuda::ScopedDevice scoped(backend.deviceIndex);
    impl.stream = std::make_unique<cuda::Stream>();
    impl.Upload();
    if (options.channels == 1)
    {
      impl.UploadFeatures();
    }
#else
    CANOPY_THROW("PBTVolumeEvaluator: a CUDA backend was requested but this build has no CUDA support");
#endif
  }
}

PBTVolumeEvaluator::~PBTVolumeEvaluator()
{
#if CANOPY_USE_CUDA
  if (m_Impl->backend.useCuda)
  {
    cuda::ScopedDevice scoped(m_Impl->backend.deviceIndex); // free on the device that allocated
    m_Impl.reset();
  }
#endif
}

void
PBTVolumeEvaluator::Impl::ResolveFeatures(int planes)
{
  if (options.channels == 1)
  {
    features = ResolveHaarBank(model.features, model.sampleBox);
    channelStride = planes;
  }
  else
  {
    features = ResolveHaarBankOnChannels(model.features, model.sampleBox, options.channels, planes, &channelStride);
  }
  resolvedPlanes = planes;
  // A slab must include every plane a box corner of a used feature can reach from its output planes.
  marginBelow = marginAbove = 0;
  for (const auto & learner : model.learners)
  {
    const HaarFeatureVoxels & f = features[learner.feature];
    for (int c = 0; c < f.numCuboids; ++c)
    {
      marginBelow = std::max({ marginBelow, -f.lo[c][2], -f.hi[c][2] });
      marginAbove = std::max({ marginAbove, f.lo[c][2], f.hi[c][2] });
    }
  }
}

int
PBTVolumeEvaluator::GetChannelStride(int nz)
{
  if (m_Impl->options.channels == 1)
  {
    return nz;
  }
  if (m_Impl->resolvedPlanes != nz)
  {
    m_Impl->ResolveFeatures(nz);
  }
  return m_Impl->channelStride;
}

const ResolvedBackend &
PBTVolumeEvaluator::GetBackend() const
{
  return m_Impl->backend;
}

int
PBTVolumeEvaluator::GetNumberOfSlabsUsed() const
{
  return m_Impl->slabsUsed;
}

int
PBTVolumeEvaluator::GetMarginBelow() const
{
  return m_Impl->marginBelow;
}

int
PBTVolumeEvaluator::GetMarginAbove() const
{
  return m_Impl->marginAbove;
}

void
PBTVolumeEvaluator::Evaluate(const float * voxels, int nx, int ny, int nz, float * probability,
                             const std::function<void(double)> & progress)
{
  if (nx <= 0 || ny <= 0 || nz <= 0)
  {
    CANOPY_THROW("PBTVolumeEvaluator::Evaluate: volume size must be positive, got " << nx << " x " << ny << " x "
                                                                                     << nz);
  }
  if (voxels == nullptr || probability == nullptr)
  {
    CANOPY_THROW("PBTVolumeEvaluator::Evaluate: null voxel or probability buffer");
  }
  m_Impl->slabsUsed = 0;
  if (m_Impl->options.channels > 1)
  {
    if (m_Impl->resolvedPlanes != nz)
    {
      m_Impl->ResolveFeatures(nz); // channel offsets depend on the planes of a channel
    }
#if CANOPY_USE_CUDA
    // GetChannelStride may have resolved them already, without uploading.
    if (m_Impl->backend.useCuda && m_Impl->uploadedPlanes != nz)
    {
      cuda::ScopedDevice scoped(m_Impl->backend.deviceIndex);
      m_Impl->UploadFeatures();
      m_Impl->uploadedPlanes = nz;
    }
#endif
  }
#if CANOPY_USE_CUDA
  if (m_Impl->backend.useCuda)
  {
    cuda::ScopedDevice scoped(m_Impl->backend.deviceIndex);
    m_Impl->EvaluateCuda(voxels, nx, ny, nz, probability, progress);
    return;
  }
#endif
  m_Impl->EvaluateCpu(voxels, nx, ny, nz, probability, progress);
}

void
PBTVolumeEvaluator::EvaluateBest(const float * voxels, int nx, int ny, int nz, std::int64_t k,
                                 std::vector<std::int64_t> & indices, std::vector<float> & posteriors)
{
  if (nx <= 0 || ny <= 0 || nz <= 0)
  {
    CANOPY_THROW("PBTVolumeEvaluator::EvaluateBest: volume size must be positive, got " << nx << " x " << ny << " x "
                                                                                         << nz);
  }
  if (voxels == nullptr)
  {
    CANOPY_THROW("PBTVolumeEvaluator::EvaluateBest: null voxel buffer");
  }
  const std::int64_t count = static_cast<std::int64_t>(nx) * ny * nz;
#if CANOPY_USE_CUDA
  if (m_Impl->backend.useCuda && count <= 0x7FFFFFFF)
  {
    cuda::ScopedDevice      scoped(m_Impl->backend.deviceIndex);
    const Impl::BestRequest request{ k, &indices, &posteriors };
    m_Impl->slabsUsed = 0;
    if (m_Impl->EvaluateCuda(voxels, nx, ny, nz, nullptr, {}, &request))
    {
      return;
    }
  }
#endif
  std::vector<float> probability(static_cast<std::size_t>(count));
  Evaluate(voxels, nx, ny, nz, probability.data());
  indices = TopScoresCPU(probability.data(), count, k);
  posteriors.resize(indices.size());
  for (std::size_t r = 0; r < indices.size(); ++r)
  {
    posteriors[r] = probability[static_cast<std::size_t>(indices[r])];
  }
}

void
PBTVolumeEvaluator::Impl::EvaluateCpu(const float * voxels, int nx, int ny, int nz, float * probability,
                                      const std::function<void(double)> & progress)
{
  const int           stackPlanes = HaarStackPlanes(options.channels, nz, channelStride);
  std::vector<double> table(static_cast<std::size_t>(PaddedTableSize(nx, ny, stackPlanes)));
  ComputeIntegralVolumeCPU(voxels, nx, ny, stackPlanes, table.data(), options.cpuThreads);
  const IntegralVolumeView volume{ table.data(), nx, ny, stackPlanes };
  // Chunks of planes only to report progress; each chunk still has sy * planes rows to share out.
  const int          chunk = std::max(1, nz / 16);
  const std::int64_t plane = static_cast<std::int64_t>(nx) * ny;
  for (int z = 0; z < nz; z += chunk)
  {
    const VoxelBlock block{ 0, 0, z, nx, ny, std::min(chunk, nz - z) };
    EvaluatePBTDenseCPU(hostView, volume, features.data(), block, probability + z * plane, options.cpuThreads);
    if (progress)
    {
      progress(double(z + block.sz) / nz);
    }
  }
  slabsUsed = 1;
}

#if CANOPY_USE_CUDA
void
PBTVolumeEvaluator::Impl::Upload()
{
  const auto s = stream->get();
  // Preorder numbering lets a warp visit each node once (warp-synchronous traversal).
  const std::vector<PBTNodeFlat> preorder = PBTNodesInPreorder(model.nodes.data(), static_cast<int>(model.nodes.size()));
  nodes.Allocate(preorder.size(), "PBT nodes");
  nodes.CopyFromHost(preorder.data(), preorder.size(), s);
  learners.Allocate(model.learners.size(), "PBT weak learners");
  learners.CopyFromHost(model.learners.data(), model.learners.size(), s);
  tables.Allocate(model.tables.size(), "PBT weak-learner tables");
  tables.CopyFromHost(model.tables.data(), model.tables.size(), s);
  deviceView = hostView;
  deviceView.numNodes = static_cast<int>(preorder.size());
  deviceView.nodes = nodes.data();
  deviceView.learners = learners.data();
  deviceView.tables = tables.data();
  stream->Synchronize();
}

void
PBTVolumeEvaluator::Impl::UploadFeatures()
{
  const auto s = stream->get();
  cornersShape[0] = cornersShape[1] = -1; // corners follow the features
  packedLearners = cuda::DeviceBuffer<PBTPackedLearner>();
  packedCuboids = cuda::DeviceBuffer<PBTPackedCuboid>();
  deviceFeatures.Allocate(features.size(), "PBT Haar features");
  deviceFeatures.CopyFromHost(features.data(), features.size(), s);
  std::vector<PBTPackedCuboid> cuboids;
  try
  {
    cuboids = PackHaarCuboids(features.data(), static_cast<int>(features.size()));
  }
  catch (const canopy::Error &)
  {
    cuboids.clear(); // offsets beyond int16 (sample boxes over 32k voxels): stay with the flat layout
  }
  if (!cuboids.empty() && !model.learners.empty())
  {
    const std::vector<PBTPackedLearner> packed = PackPBTLearners(
      model.learners.data(), static_cast<int>(model.learners.size()), features.data(), static_cast<int>(features.size()));
    packedLearners.Allocate(packed.size(), "PBT packed learners");
    packedLearners.CopyFromHost(packed.data(), packed.size(), s);
    packedCuboids.Allocate(cuboids.size(), "PBT packed cuboids");
    packedCuboids.CopyFromHost(cuboids.data(), cuboids.size(), s);
  }
  stream->Synchronize();
}

bool
PBTVolumeEvaluator::Impl::EvaluateCuda(const float * voxels, int nx, int ny, int nz, float * probability,
                                       const std::function<void(double)> & progress, const BestRequest * best)
{
  std::size_t budget = options.maxDeviceBytes;
  if (budget == 0)
  {
    std::size_t freeBytes = 0, totalBytes = 0;
    CANOPY_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    budget = freeBytes / 5 * 4;
  }
  // Bytes of a slab of d output planes read from d + margins input planes: voxels, table, output.
  const std::int64_t plane = static_cast<std::int64_t>(nx) * ny;
  const std::int64_t tablePlane = static_cast<std::int64_t>(nx + 1) * (ny + 1);
  auto bytesFor = [&](std::int64_t outPlanes, std::int64_t inPlanes) {
    return std::uint64_t(plane * inPlanes * 4 + tablePlane * (inPlanes + 1) * 8 + plane * outPlanes * 4);
  };
  const int margins = marginBelow + marginAbove;
  const int stackPlanes = HaarStackPlanes(options.channels, nz, channelStride); // input planes (nz for one channel)
  int       planesPerSlab = nz;
  if (bytesFor(nz, stackPlanes) > budget)
  {
    if (bytesFor(1, std::min(stackPlanes, 1 + margins)) > budget)
    {
      CANOPY_THROW("PBTVolumeEvaluator: maxDeviceBytes = "
                   << budget << " cannot hold one z-plane of a " << nx << " x " << ny << " volume with its " << margins
                   << " margin planes (needs " << bytesFor(1, std::min(stackPlanes, 1 + margins)) << " bytes)");
    }
    planesPerSlab = 1;
    while (planesPerSlab < nz &&
           bytesFor(planesPerSlab + 1, std::min(stackPlanes, planesPerSlab + 1 + margins)) <= budget)
    {
      ++planesPerSlab;
    }
  }
  if (best && planesPerSlab < nz)
  {
    return false; // the caller evaluates the whole map into host memory and ranks it there
  }
  const int inPlanesMax = std::min(stackPlanes, planesPerSlab + margins);
  const auto s = stream->get();
  if (options.precomputedCorners && (cornersShape[0] != nx || cornersShape[1] != ny))
  {
    // Corner offsets depend on the table's row and plane strides only, not on nz: one set per shape.
    std::vector<HaarFeatureCorners> corners;
    corners.reserve(features.size());
    for (const auto & f : features)
    {
      corners.push_back(MakeHaarFeatureCorners(IntegralVolumeView{ nullptr, nx, ny, 1 }, f));
    }
    deviceCorners.Allocate(corners.size(), "PBT Haar feature corners");
    deviceCorners.CopyFromHost(corners.data(), corners.size(), s);
    stream->Synchronize();
    cornersShape[0] = nx;
    cornersShape[1] = ny;
  }
  cuda::DeviceBuffer<float>  deviceVoxels(static_cast<std::size_t>(plane * inPlanesMax), "PBT slab voxels");
  cuda::DeviceBuffer<double> deviceTable(static_cast<std::size_t>(tablePlane * (inPlanesMax + 1)), "PBT slab integral volume");
  cuda::DeviceBuffer<float>  deviceOut(static_cast<std::size_t>(plane * planesPerSlab), "PBT slab probabilities");
  cuda::PBTLaunchOptions launch;
  launch.placement = options.treeInSharedMemory ? cuda::PBTTreePlacement::SharedNodes : cuda::PBTTreePlacement::Global;
  launch.traversal = options.warpSynchronous ? cuda::PBTTraversal::WarpSynchronous : cuda::PBTTraversal::Independent;
  launch.packedLearners = packedLearners.data();
  launch.packedCuboids = packedCuboids.data();
  for (int z0 = 0; z0 < nz; z0 += planesPerSlab)
  {
    const int z1 = std::min(nz, z0 + planesPerSlab);
    // Input planes [s0, s1): clipping a box at the slab's ends then equals clipping at the volume's.
    const int s0 = std::max(0, z0 - marginBelow);
    const int s1 = std::min(stackPlanes, z1 + marginAbove);
    deviceVoxels.CopyFromHost(voxels + s0 * plane, static_cast<std::size_t>(plane * (s1 - s0)), s);
    cuda::LaunchIntegralVolume(deviceVoxels.data(), nx, ny, s1 - s0, deviceTable.data(), s);
    const IntegralVolumeView slabVolume{ deviceTable.data(), nx, ny, s1 - s0 };
    const VoxelBlock         block{ 0, 0, z0 - s0, nx, ny, z1 - z0 };
    cuda::LaunchPBTDense(deviceView, static_cast<int>(model.learners.size()), slabVolume, deviceFeatures.data(),
                         options.precomputedCorners ? deviceCorners.data() : nullptr, block, deviceOut.data(), s,
                         launch);
    if (best)
    {
      // One slab holds the whole map: rank it here, copy back only the winners.
      const std::int64_t                count = plane * nz;
      const std::int64_t                k = std::clamp<std::int64_t>(best->k, 0, count);
      const std::size_t                 scratchBytes = cuda::ScratchBytesForTopScores(count);
      cuda::DeviceBuffer<unsigned char> scratch(std::max<std::size_t>(1, scratchBytes), "top-k scratch");
      cuda::DeviceBuffer<std::int64_t>  indices(static_cast<std::size_t>(std::max<std::int64_t>(1, k)), "top-k indices");
      cuda::DeviceBuffer<float>         values(static_cast<std::size_t>(std::max<std::int64_t>(1, k)), "top-k posteriors");
      cuda::LaunchTopScores(deviceOut.data(), count, k, indices.data(), values.data(), scratch.data(), scratchBytes, s);
      best->indices->resize(static_cast<std::size_t>(k));
      best->posteriors->resize(static_cast<std::size_t>(k));
      indices.CopyToHost(best->indices->data(), static_cast<std::size_t>(k), s);
      values.CopyToHost(best->posteriors->data(), static_cast<std::size_t>(k), s);
    }
    else
    {
      deviceOut.CopyToHost(probability + z0 * plane, static_cast<std::size_t>(plane * (z1 - z0)), s);
    }
    stream->Synchronize();
    ++slabsUsed;
    if (progress)
    {
      progress(double(z1) / nz);
    }
  }
  return true;
}
#endif

} // namespace canopy
