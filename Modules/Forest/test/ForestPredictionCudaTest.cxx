// GPU forest prediction against the CPU reference: all four output modes, 2D and 3D, multi-channel,
// with and without a scale channel (NaN scales included), nodes in global and in shared memory,
// whole images and sub-blocks. Distribution within 1e-6, indices exactly.
#include "ForestTestSupport.h"
#include "canopy/ForestPrediction.h"
#include "canopyConfigure.h"
#include "canopyForestRandom.h"
#include "canopyTesting.h"

#if CANOPY_USE_CUDA
#  include "canopy/cuda/DeviceBuffer.h"
#endif

namespace
{
using namespace canopy;

#if CANOPY_USE_CUDA
template <typename T>
cuda::DeviceBuffer<T>
Upload(const std::vector<T> & host, cudaStream_t stream)
{
  cuda::DeviceBuffer<T> d(std::max<std::size_t>(host.size(), 1));
  if (!host.empty())
    d.CopyFromHost(host.data(), host.size(), stream);
  return d;
}

void
CheckParity(int nx, int ny, int nz, int channels, bool scaled, int trees, int depth, std::uint64_t seed)
{
  const canopy::testing::RandomForestInput in(nx, ny, nz, channels, scaled, seed);
  const ForestImagesView           host = in.image.View();
  RandomForestOptions              o;
  o.numTrees = trees;
  o.depth = depth;
  o.leafProbability = 0.1;
  o.numClasses = 5;
  o.numChannels = channels;
  o.dimension = nz == 1 ? 2 : 3;
  o.usesScale = scaled;
  o.maxOffset = 6;
  o.seed = seed;
  const ForestModel model = MakeRandomForest(o, &host);

  cuda::Stream stream;
  auto         nodes = Upload(model.nodes, stream.get());
  auto         roots = Upload(model.treeRoots, stream.get());
  auto         distributions = Upload(model.distributions, stream.get());
  auto         sums = Upload(in.image.sums, stream.get());
  auto         scale = Upload(in.image.scale, stream.get());
  ForestView   forest = model.View();
  forest.nodes = nodes.data();
  forest.treeRoots = roots.data();
  forest.distributions = distributions.data();
  ForestImagesView device = host;
  device.sums = sums.data();
  device.scale = scaled ? scale.data() : nullptr;

  const VoxelBlock blocks[] = { { 0, 0, 0, nx, ny, nz }, { 3, 2, nz > 2 ? 1 : 0, nx - 7, ny - 3, nz > 2 ? nz - 2 : 1 } };
  const ForestOutputMode modes[] = { ForestOutputMode::Distribution, ForestOutputMode::ArgMax,
                                     ForestOutputMode::ForestLeaves, ForestOutputMode::TreeLeaf };
  for (const auto & block : blocks)
    for (auto placement : { cuda::ForestPlacement::Global, cuda::ForestPlacement::Shared })
      for (auto shape : { cuda::ForestWarpShape::Row32x1, cuda::ForestWarpShape::Square8x4 })
      for (auto mode : modes)
      {
        const std::size_t count = std::size_t(block.NumberOfVoxels()) * ForestComponents(forest, mode);
        const bool        isFloat = mode == ForestOutputMode::Distribution;
        std::vector<float>        cpuD(isFloat ? count : 0), gpuD(isFloat ? count : 0, -7.0f);
        std::vector<std::int32_t> cpuI(isFloat ? 0 : count), gpuI(isFloat ? 0 : count, -7);
        PredictForestCPU(model.View(), host, block, ForestOutput{ mode, cpuD.data(), cpuI.data() }, 0);
        cuda::DeviceBuffer<float>        outD(std::max<std::size_t>(cpuD.size(), 1));
        cuda::DeviceBuffer<std::int32_t> outI(std::max<std::size_t>(cpuI.size(), 1));
        cuda::LaunchForestPrediction(forest, device, block,
                                     ForestOutput{ mode, isFloat ? outD.data() : nullptr, isFloat ? nullptr : outI.data() },
                                     stream.get(), cuda::ForestLaunchOptions{ placement, shape });
        if (isFloat)
          outD.CopyToHost(gpuD.data(), gpuD.size(), stream.get());
        else
          outI.CopyToHost(gpuI.data(), gpuI.size(), stream.get());
        stream.Synchronize();
        const std::string what = "mode " + std::to_string(int(mode)) + " placement " + std::to_string(int(placement)) +
                                 " shape " + std::to_string(int(shape)) + " block " + std::to_string(block.x0);
        for (std::size_t i = 0; i < cpuD.size(); ++i)
          ASSERT_TRUE(std::abs(cpuD[i] - gpuD[i]) <= 1e-6f) << what << " value " << i << ": " << cpuD[i] << " vs " << gpuD[i];
        for (std::size_t i = 0; i < cpuI.size(); ++i)
          ASSERT_EQ(cpuI[i], gpuI[i]) << what << " value " << i;
      }
  // The small forests must really have taken the shared-memory path, and a large one must not.
  EXPECT_TRUE(cuda::ForestFitsShared(forest, { cuda::ForestPlacement::Shared }));
  EXPECT_FALSE(cuda::ForestFitsShared(forest, { cuda::ForestPlacement::Global }));
}
#endif

TEST(ForestPredictionCuda, Parity3D)
{
  CANOPY_REQUIRE_GPU();
#if CANOPY_USE_CUDA
  CheckParity(45, 38, 21, 2, false, 6, 8, 21);
#endif
}

TEST(ForestPredictionCuda, Parity2D)
{
  CANOPY_REQUIRE_GPU();
#if CANOPY_USE_CUDA
  CheckParity(130, 70, 1, 3, false, 8, 7, 22);
#endif
}

TEST(ForestPredictionCuda, ParityScaled)
{
  CANOPY_REQUIRE_GPU();
#if CANOPY_USE_CUDA
  CheckParity(37, 29, 17, 1, true, 4, 7, 23);
  CheckParity(99, 64, 1, 2, true, 4, 7, 24);
#endif
}

} // namespace
