#include "canopyForestDensePrediction.h"

#include "canopy/Device.h"
#include "canopy/Errors.h"
#include "canopyConfigure.h"

#if CANOPY_USE_CUDA
#include "canopy/cuda/DeviceBuffer.h"
#endif

#include <algorithm>
#include <cstdlib>

namespace canopy
{

int
ForestZReach(const ForestModel & model)
{
  if (model.dimension == 2)
    return 0;
  if (model.usesScale)
    return 1 << 30; // scaled boxes can reach any plane
  int reach = 0;
  for (const auto & n : model.nodes)
  {
    if (ForestIsLeaf(n))
      continue;
    for (int b = 0; b < 2; ++b)
      reach = std::max(reach, std::abs(int(n.feature.offset[b][2])) + int(n.feature.size[b][2]));
  }
  return reach;
}

namespace
{
void
CheckFits(const ForestModel & model, const ForestImage & image)
{
  if (image.numChannels < model.numChannels)
  {
    CANOPY_THROW("forest prediction: the model reads " << model.numChannels << " channels, the image has "
                                                       << image.numChannels);
  }
  if (model.dimension == 2 && image.nz != 1)
  {
    CANOPY_THROW("forest prediction: a 2D model needs a 2D image, got " << image.nz << " planes");
  }
  if (model.usesScale && image.scale.empty())
  {
    CANOPY_THROW("forest prediction: the model scales its features but the image has no scale channel");
  }
}

#if CANOPY_USE_CUDA
template<typename T>
cuda::DeviceBuffer<T>
Upload(const std::vector<T> & host, cudaStream_t stream, const char * what)
{
  cuda::DeviceBuffer<T> d(std::max<std::size_t>(host.size(), 1), what);
  if (!host.empty())
    d.CopyFromHost(host.data(), host.size(), stream);
  return d;
}

int
PredictCUDA(const ForestModel &                  model,
            const ForestImage &                  image,
            const ForestDensePredictionOptions & options,
            int                                  device,
            float *                              distribution,
            std::int32_t *                       index)
{
  cuda::ScopedDevice scoped(device);
  cuda::Stream       stream;
  const auto         s = stream.get();
  auto               nodes = Upload(model.nodes, s, "forest nodes");
  auto               roots = Upload(model.treeRoots, s, "forest roots");
  auto               dists = Upload(model.distributions, s, "forest distributions");
  ForestView         forest = model.View();
  forest.nodes = nodes.data();
  forest.treeRoots = roots.data();
  forest.distributions = dists.data();

  const int          nx = image.nx, ny = image.ny, nz = image.nz, channels = model.numChannels;
  const std::int64_t plane = std::int64_t(nx) * ny, tablePlane = std::int64_t(nx + 1) * (ny + 1);
  const int          components = ForestComponents(forest, options.mode);
  const std::size_t  outBytes = options.mode == ForestOutputMode::Distribution ? sizeof(float) : sizeof(std::int32_t);
  const int          reach = std::min(ForestZReach(model), nz);
  // Bytes per slab plane: the channels' table planes, the scale plane and the output plane.
  const std::size_t perPlane = std::size_t(tablePlane) * channels * sizeof(double) +
                               (image.scale.empty() ? 0 : std::size_t(plane) * sizeof(float)) +
                               std::size_t(plane) * components * outBytes;
  std::size_t budget = options.maxDeviceBytes;
  if (budget == 0)
  {
    std::size_t freeBytes = 0, totalBytes = 0;
    CANOPY_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    budget = freeBytes / 10 * 8;
  }
  const std::int64_t fitting = std::int64_t(budget / perPlane) - 2 * reach - 2;
  if (fitting < 1)
  {
    CANOPY_THROW("forest prediction: a slab of one plane with its "
                 << reach << "-plane margins needs " << perPlane * (2 * reach + 3) << " bytes of device memory, "
                 << budget << " are available");
  }
  int planesPerSlab = int(std::min<std::int64_t>(fitting, nz));
  if (options.maxSlabPlanes > 0)
    planesPerSlab = std::min(planesPerSlab, options.maxSlabPlanes);
  // Table planes of a slab: its input planes plus one (the padded layout); at least 2 input planes
  // for a 3D image, since a 1-plane table would be read as planar (first plane assumed zero).
  const int                  inPlanesMax = std::min(nz, planesPerSlab + 2 * reach + 1);
  const std::int64_t         slabStride = tablePlane * (inPlanesMax + 1);
  cuda::DeviceBuffer<double> table(std::size_t(slabStride) * channels, "forest slab integral tables");
  cuda::DeviceBuffer<float>  scale(image.scale.empty() ? 1 : std::size_t(plane) * inPlanesMax, "forest slab scale");
  cuda::DeviceBuffer<float>  outD(
    options.mode == ForestOutputMode::Distribution ? std::size_t(plane) * planesPerSlab * components : 1,
    "forest slab distributions");
  cuda::DeviceBuffer<std::int32_t> outI(
    options.mode == ForestOutputMode::Distribution ? 1 : std::size_t(plane) * planesPerSlab * components,
    "forest slab indices");
  const std::int64_t hostStride = image.View().channelStride;
  int                slabs = 0;
  for (int z0 = 0; z0 < nz; z0 += planesPerSlab)
  {
    const int z1 = std::min(nz, z0 + planesPerSlab);
    int       s0 = std::max(0, z0 - reach), s1 = std::min(nz, z1 + reach);
    if (nz > 1 && s1 - s0 < 2)
      (s1 < nz ? s1 : s0) += s1 < nz ? 1 : -1;
    // Table planes s0..s1 of the whole-volume table: box sums are differences of the same numbers.
    for (int c = 0; c < channels; ++c)
      CANOPY_CUDA_CHECK(cudaMemcpyAsync(table.data() + c * slabStride,
                                        image.sums.data() + c * hostStride + s0 * tablePlane,
                                        sizeof(double) * tablePlane * (s1 - s0 + 1),
                                        cudaMemcpyHostToDevice,
                                        s));
    if (!image.scale.empty())
      scale.CopyFromHost(image.scale.data() + s0 * plane, std::size_t(plane) * (s1 - s0), s);
    ForestImagesView view;
    view.sums = table.data();
    view.channelStride = slabStride;
    view.nx = nx;
    view.ny = ny;
    view.nz = s1 - s0;
    view.numChannels = channels;
    view.scale = image.scale.empty() ? nullptr : scale.data();
    const VoxelBlock  block{ 0, 0, z0 - s0, nx, ny, z1 - z0 };
    const std::size_t count = std::size_t(plane) * (z1 - z0) * components;
    if (options.mode == ForestOutputMode::Distribution)
    {
      cuda::LaunchForestPrediction(forest, view, block, ForestOutput{ options.mode, outD.data(), nullptr }, s);
      outD.CopyToHost(distribution + std::size_t(z0) * plane * components, count, s);
    }
    else
    {
      cuda::LaunchForestPrediction(forest, view, block, ForestOutput{ options.mode, nullptr, outI.data() }, s);
      outI.CopyToHost(index + std::size_t(z0) * plane * components, count, s);
    }
    stream.Synchronize();
    ++slabs;
    if (options.progress)
      options.progress(double(z1) / nz);
  }
  return slabs;
}
#endif
} // namespace

ForestDensePredictionResult
PredictForestDense(const ForestModel &                  model,
                   const ForestImage &                  image,
                   const ForestDensePredictionOptions & options,
                   float *                              distribution,
                   std::int32_t *                       index)
{
  CheckFits(model, image);
  const ResolvedBackend       backend = ResolveBackend(BackendRequest::Parse(options.backend));
  ForestDensePredictionResult result;
  result.backendUsed = backend.Describe();
  if (backend.useCuda)
  {
#if CANOPY_USE_CUDA
    result.slabs = PredictCUDA(model, image, options, backend.deviceIndex, distribution, index);
    return result;
#else
    CANOPY_THROW("forest prediction: a CUDA backend was requested but this build has no CUDA support");
#endif
  }
  // CPU: a few plane chunks, for progress; every voxel's result is independent of the chunking.
  const ForestView       forest = model.View();
  const ForestImagesView view = image.View();
  const int              components = ForestComponents(forest, options.mode);
  const std::int64_t     plane = std::int64_t(image.nx) * image.ny;
  const int              step = std::max(1, image.nz / 16);
  for (int z0 = 0; z0 < image.nz; z0 += step)
  {
    const int         z1 = std::min(image.nz, z0 + step);
    const std::size_t offset = std::size_t(z0) * plane * components;
    const VoxelBlock  block{ 0, 0, z0, image.nx, image.ny, z1 - z0 };
    PredictForestCPU(
      forest,
      view,
      block,
      ForestOutput{ options.mode, distribution ? distribution + offset : nullptr, index ? index + offset : nullptr },
      options.threads);
    if (options.progress)
      options.progress(double(z1) / image.nz);
  }
  return result;
}

} // namespace canopy
