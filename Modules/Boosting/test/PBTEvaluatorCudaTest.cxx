// GPU PBT evaluation against the CPU (recursive reference) on random models and volumes, z-slabs
// against the whole volume, the stack bound and non-finite voxels; the grouped kernel's options
// (cuda::PBTLaunchOptions, launched directly) on whole volumes and offset blocks. Skipped without a GPU.
#include "PBTEvaluatorTestSupport.h"

#include "canopy/Errors.h"
#include "canopy/TopScores.h"
#include "canopyConfigure.h"
#include "canopyTesting.h"

#if CANOPY_USE_CUDA
#include "canopy/cuda/DeviceBuffer.h"
#endif

#include <gtest/gtest.h>

namespace
{
using namespace canopy;
using namespace canopy::pbttest;

RandomPBTModelOptions
RandomOptions(std::uint64_t seed)
{
  std::mt19937          rng(static_cast<std::uint32_t>(seed) * 31u);
  RandomPBTModelOptions options;
  options.seed = seed;
  options.depth = 1 + int(rng() % 10);
  options.fullTree = rng() % 2 == 0 && options.depth <= 8;
  options.learnersPerNode = 1 + int(rng() % 40);
  options.numFeatures = 200;
  options.mixStumps = seed % 2 == 0;
  options.tableScale = 0.2f + 0.6f * float(rng() % 100) / 100.0f;
  options.responseLow = -60.0f;
  options.responseHigh = 120.0f;
  options.sampleBox = { 3 + int(rng() % 24), 3 + int(rng() % 24), 3 + int(rng() % 24) };
  return options;
}

ResolvedBackend
Cuda()
{
  return ResolveBackend(BackendRequest::Parse("cuda"));
}

std::vector<float>
EvaluateWith(const PBTModel &             model,
             const ResolvedBackend &      backend,
             const PBTEvaluationOptions & options,
             const std::vector<float> &   voxels,
             int                          nx,
             int                          ny,
             int                          nz,
             int *                        slabs = nullptr)
{
  PBTVolumeEvaluator evaluator(model, backend, options);
  std::vector<float> out(voxels.size(), std::nanf("")); // poison: every voxel must be written
  evaluator.Evaluate(voxels.data(), nx, ny, nz, out.data());
  if (slabs)
    *slabs = evaluator.GetNumberOfSlabsUsed();
  return out;
}

TEST(PBTEvaluatorCuda, MatchesCpuOnRandomModels)
{
  CANOPY_REQUIRE_GPU();
  for (std::uint64_t seed = 1; seed <= 24; ++seed)
  {
    const int      nx = 29 + int(seed % 5), ny = 21, nz = 18 + int(seed % 3);
    const PBTModel model = MakeRandomPBTModel(RandomOptions(seed));
    const auto     voxels = RandomVolume(nx, ny, nz, seed + 100);
    for (bool probabilistic : { true, false })
    {
      const auto           reference = ReferencePosteriors(model, voxels, nx, ny, nz, probabilistic);
      PBTEvaluationOptions options;
      options.probabilistic = probabilistic;
      const std::string what = "seed " + std::to_string(seed) + " depth " + std::to_string(model.Depth()) +
                               (probabilistic ? " probabilistic" : " single descent");
      ExpectAllClose(
        reference, EvaluateWith(model, ResolvedBackend{}, options, voxels, nx, ny, nz), 1e-5, what + " cpu");
      for (int variant = 0; variant < 8; ++variant)
      {
        options.treeInSharedMemory = variant % 2 == 1;
        options.warpSynchronous = (variant / 2) % 2 == 1;
        options.precomputedCorners = variant >= 4;
        ExpectAllClose(reference,
                       EvaluateWith(model, Cuda(), options, voxels, nx, ny, nz),
                       1e-5,
                       what + " gpu variant " + std::to_string(variant));
      }
    }
  }
}

TEST(PBTEvaluatorCuda, SlabsMatchWholeVolume)
{
  CANOPY_REQUIRE_GPU();
  for (std::uint64_t seed : { 5u, 6u, 7u })
  {
    RandomPBTModelOptions modelOptions = RandomOptions(seed);
    modelOptions.sampleBox = { 9, 7, 11 + 6 * int(seed) }; // features reach far along z
    const PBTModel model = MakeRandomPBTModel(modelOptions);
    const int      nx = 37, ny = 26, nz = 45;
    const auto     voxels = RandomVolume(nx, ny, nz, seed);
    int            slabs = 0;
    const auto     whole = EvaluateWith(model, Cuda(), {}, voxels, nx, ny, nz, &slabs);
    ASSERT_EQ(slabs, 1);
    PBTVolumeEvaluator probe(model, Cuda());
    const int          margins = probe.GetMarginBelow() + probe.GetMarginAbove();
    ASSERT_GT(margins, 0);
    // Budgets for 1, 2 and 5 output planes per slab (plus margins): many slabs, clipped ones included.
    for (int planes : { 1, 2, 5 })
    {
      const std::size_t    plane = std::size_t(nx) * ny, tablePlane = std::size_t(nx + 1) * (ny + 1);
      const int            in = std::min(nz, planes + margins);
      PBTEvaluationOptions options;
      options.maxDeviceBytes = plane * 4 * in + tablePlane * 8 * (in + 1) + plane * 4 * planes;
      options.precomputedCorners = planes == 2; // corner offsets are per shape, shared by every slab
      const auto slabbed = EvaluateWith(model, Cuda(), options, voxels, nx, ny, nz, &slabs);
      EXPECT_EQ(slabs, (nz + planes - 1) / planes) << "planes per slab " << planes;
      ExpectAllClose(
        whole, slabbed, 1e-5, "seed " + std::to_string(seed) + ", " + std::to_string(planes) + " planes per slab");
    }
    ExpectAllClose(ReferencePosteriors(model, voxels, nx, ny, nz), whole, 1e-5, "whole volume vs recursive");
  }
}

TEST(PBTEvaluatorCuda, TooSmallBudgetIsAnError)
{
  CANOPY_REQUIRE_GPU();
  const PBTModel       model = MakeRandomPBTModel(RandomOptions(3));
  PBTEvaluationOptions options;
  options.maxDeviceBytes = 1000;
  PBTVolumeEvaluator evaluator(model, Cuda(), options);
  std::vector<float> voxels(40 * 40 * 40, 1.0f), out(voxels.size());
  EXPECT_THROW(evaluator.Evaluate(voxels.data(), 40, 40, 40, out.data()), canopy::Error);
}

TEST(PBTEvaluatorCuda, DeepestAllowedChainAndTooDeep)
{
  CANOPY_REQUIRE_GPU();
  const int  nx = 33, ny = 5, nz = 4;
  const auto voxels = RandomVolume(nx, ny, nz, 2);
  for (int variant = 0; variant < 8; ++variant)
  {
    PBTEvaluationOptions options;
    options.treeInSharedMemory = variant % 2 == 1;
    options.warpSynchronous = (variant / 2) % 2 == 1;
    options.precomputedCorners = variant >= 4;
    const auto out = EvaluateWith(ChainModel(kPBTMaxDepth), Cuda(), options, voxels, nx, ny, nz);
    ExpectAllClose(std::vector<float>(out.size(), float(ChainPosterior(kPBTMaxDepth))), out, 1e-6, "gpu chain");
  }
  EXPECT_THROW(PBTVolumeEvaluator(ChainModel(kPBTMaxDepth + 1), Cuda()), canopy::Error);
}

TEST(PBTEvaluatorCuda, NonFiniteVoxelsMatchCpu)
{
  CANOPY_REQUIRE_GPU();
  const int      nx = 30, ny = 22, nz = 15;
  const PBTModel model = MakeRandomPBTModel(RandomOptions(9));
  auto           voxels = RandomVolume(nx, ny, nz, 9);
  for (std::size_t i = 0; i < voxels.size(); i += 29)
    voxels[i] = (i % 2) ? std::nanf("") : -INFINITY;
  const auto cpu = EvaluateWith(model, ResolvedBackend{}, {}, voxels, nx, ny, nz);
  const auto gpu = EvaluateWith(model, Cuda(), {}, voxels, nx, ny, nz);
  ExpectAllClose(cpu, gpu, 1e-5, "NaN/Inf voxels");
}

#if CANOPY_USE_CUDA
/** Every grouped-kernel build (voxels per thread x register cap), launched directly on `block` of a
 * resident table; each must equal `reference` (posteriors of the whole volume) on the block's voxels. */
void
ExpectGroupedKernelsMatch(const PBTModel &           model,
                          bool                       probabilistic,
                          const std::vector<float> & voxels,
                          int                        nx,
                          int                        ny,
                          int                        nz,
                          const std::vector<float> & reference,
                          const VoxelBlock &         block,
                          double                     tolerance,
                          const std::string &        what)
{
  std::vector<double> table(static_cast<std::size_t>(PaddedTableSize(nx, ny, nz)));
  ComputeIntegralVolumeCPU(voxels.data(), nx, ny, nz, table.data(), 1);
  const auto                             features = ResolveHaarBank(model.features, model.sampleBox);
  const auto                             preorder = PBTNodesInPreorder(model.nodes.data(), int(model.nodes.size()));
  cuda::Stream                           stream;
  cuda::DeviceBuffer<PBTNodeFlat>        nodes(preorder.size());
  cuda::DeviceBuffer<PBTWeakLearnerFlat> learners(model.learners.size());
  cuda::DeviceBuffer<float>              tables(model.tables.size());
  cuda::DeviceBuffer<HaarFeatureVoxels>  deviceFeatures(features.size());
  cuda::DeviceBuffer<double>             deviceTable(table.size());
  cuda::DeviceBuffer<float>              out(static_cast<std::size_t>(block.NumberOfVoxels()));
  const auto                             packedLearners =
    PackPBTLearners(model.learners.data(), int(model.learners.size()), features.data(), int(features.size()));
  const auto                           packedCuboids = PackHaarCuboids(features.data(), int(features.size()));
  cuda::DeviceBuffer<PBTPackedLearner> devicePackedLearners(packedLearners.size());
  cuda::DeviceBuffer<PBTPackedCuboid>  devicePackedCuboids(packedCuboids.size());
  devicePackedLearners.CopyFromHost(packedLearners.data(), packedLearners.size(), stream.get());
  devicePackedCuboids.CopyFromHost(packedCuboids.data(), packedCuboids.size(), stream.get());
  nodes.CopyFromHost(preorder.data(), preorder.size(), stream.get());
  learners.CopyFromHost(model.learners.data(), model.learners.size(), stream.get());
  tables.CopyFromHost(model.tables.data(), model.tables.size(), stream.get());
  deviceFeatures.CopyFromHost(features.data(), features.size(), stream.get());
  deviceTable.CopyFromHost(table.data(), table.size(), stream.get());
  PBTView view = model.View();
  view.nodes = nodes.data();
  view.learners = learners.data();
  view.tables = tables.data();
  if (!probabilistic)
    view.epsilon1 = 0.5f;
  std::vector<float> expected;
  for (int z = 0; z < block.sz; ++z)
    for (int y = 0; y < block.sy; ++y)
      for (int x = 0; x < block.sx; ++x)
        expected.push_back(reference[(std::size_t(block.z0 + z) * ny + block.y0 + y) * nx + block.x0 + x]);
  for (int variant = 0; variant < 18; ++variant)
  {
    const int  perThread = 1 << (variant % 3), minBlocks = (variant / 3) % 3 == 0 ? 0 : 4 + 2 * ((variant / 3) % 3);
    const bool packed = variant >= 9;
    cuda::PBTLaunchOptions options;
    options.voxelsPerThread = perThread;
    options.compactIndexing = true;
    options.minBlocksPerMultiprocessor = minBlocks;
    options.packedLearners = packed ? devicePackedLearners.data() : nullptr;
    options.packedCuboids = packed ? devicePackedCuboids.data() : nullptr;
    std::vector<float> result(expected.size(), std::nanf(""));
    out.CopyFromHost(result.data(), result.size(), stream.get()); // poison: every voxel must be written
    cuda::LaunchPBTDense(view,
                         int(model.learners.size()),
                         IntegralVolumeView{ deviceTable.data(), nx, ny, nz },
                         deviceFeatures.data(),
                         nullptr,
                         block,
                         out.data(),
                         stream.get(),
                         options);
    out.CopyToHost(result.data(), result.size(), stream.get());
    stream.Synchronize();
    ExpectAllClose(expected,
                   result,
                   tolerance,
                   what + (packed ? " packed" : "") + " grouped " + std::to_string(perThread) + "/thread, min blocks " +
                     std::to_string(minBlocks));
  }
}

TEST(PBTEvaluatorCuda, GroupedKernelMatchesCpu)
{
  CANOPY_REQUIRE_GPU();
  for (std::uint64_t seed = 1; seed <= 24; ++seed)
  {
    const int      nx = 29 + int(seed % 5), ny = 21, nz = 18 + int(seed % 3);
    const PBTModel model = MakeRandomPBTModel(RandomOptions(seed));
    const auto     voxels = RandomVolume(nx, ny, nz, seed + 100);
    for (bool probabilistic : { true, false })
    {
      const auto        reference = ReferencePosteriors(model, voxels, nx, ny, nz, probabilistic);
      const std::string what = "seed " + std::to_string(seed) + (probabilistic ? " probabilistic" : " single descent");
      ExpectGroupedKernelsMatch(
        model, probabilistic, voxels, nx, ny, nz, reference, VoxelBlock{ 0, 0, 0, nx, ny, nz }, 1e-5, what + " whole");
      // Offsets on every axis and an odd depth: partial z-groups and clipping against a block's edge.
      ExpectGroupedKernelsMatch(model,
                                probabilistic,
                                voxels,
                                nx,
                                ny,
                                nz,
                                reference,
                                VoxelBlock{ 3, 2, 1 + int(seed % 4), nx - 5, ny - 3, 7 - int(seed % 3) },
                                1e-5,
                                what + " block");
    }
  }
}

TEST(PBTEvaluatorCuda, GroupedKernelDeepestChainAndNonFinite)
{
  CANOPY_REQUIRE_GPU();
  const int  nx = 33, ny = 5, nz = 7;
  const auto voxels = RandomVolume(nx, ny, nz, 2);
  ExpectGroupedKernelsMatch(ChainModel(kPBTMaxDepth),
                            true,
                            voxels,
                            nx,
                            ny,
                            nz,
                            std::vector<float>(voxels.size(), float(ChainPosterior(kPBTMaxDepth))),
                            VoxelBlock{ 0, 0, 0, nx, ny, nz },
                            1e-6,
                            "chain");
  const int      mx = 30, my = 22, mz = 15;
  const PBTModel model = MakeRandomPBTModel(RandomOptions(9));
  auto           nonFinite = RandomVolume(mx, my, mz, 9);
  for (std::size_t i = 0; i < nonFinite.size(); i += 29)
    nonFinite[i] = (i % 2) ? std::nanf("") : -INFINITY;
  const auto cpu = EvaluateWith(model, ResolvedBackend{}, {}, nonFinite, mx, my, mz);
  ExpectGroupedKernelsMatch(
    model, true, nonFinite, mx, my, mz, cpu, VoxelBlock{ 0, 0, 0, mx, my, mz }, 1e-5, "NaN/Inf voxels");
}

TEST(PBTEvaluatorCuda, PackedLayoutKeepsFieldsAndRejectsWideOffsets)
{
  HaarFeatureVoxels f{};
  f.numCuboids = 2;
  f.lo[1][2] = -7;
  f.hi[1][0] = 32767;
  f.weightPerVoxel[1] = 0.25f;
  const PBTWeakLearnerFlat learner{ 0, 64, -3.0f, 0.5f, 128 };
  const auto               learners = PackPBTLearners(&learner, 1, &f, 1);
  EXPECT_EQ(learners[0].numCuboids, 2);
  EXPECT_EQ(learners[0].tableOffset, 128);
  const auto cuboids = PackHaarCuboids(&f, 1);
  ASSERT_EQ(cuboids.size(), std::size_t(kMaxHaarCuboids));
  EXPECT_EQ(cuboids[1].lo[2], -7);
  EXPECT_EQ(cuboids[1].hi[0], 32767);
  EXPECT_EQ(cuboids[1].weightPerVoxel, 0.25f);
  f.hi[1][0] = 32768;
  EXPECT_THROW(PackHaarCuboids(&f, 1), canopy::Error);
  const PBTWeakLearnerFlat outside{ 1, 64, -3.0f, 0.5f, 128 };
  EXPECT_THROW(PackPBTLearners(&outside, 1, &f, 1), canopy::Error);
}

TEST(PBTEvaluatorCuda, GroupedKernelRejectsUnbuiltOptions)
{
  CANOPY_REQUIRE_GPU();
  cuda::PBTLaunchOptions options;
  options.voxelsPerThread = 3;
  const VoxelBlock block{ 0, 0, 0, 4, 4, 4 };
  EXPECT_THROW(
    cuda::LaunchPBTDense(PBTView{}, 0, IntegralVolumeView{}, nullptr, nullptr, block, nullptr, nullptr, options),
    canopy::Error);
  options.voxelsPerThread = 2;
  options.minBlocksPerMultiprocessor = 5;
  EXPECT_THROW(
    cuda::LaunchPBTDense(PBTView{}, 0, IntegralVolumeView{}, nullptr, nullptr, block, nullptr, nullptr, options),
    canopy::Error);
}
#endif

} // namespace

namespace
{
// EvaluateBest on the device (map ranked where it was made, only the winners copied back) against the
// CPU's map ranked by TopScoresCPU: the same indices in the same order (ties: lower index first; NaN
// last), posteriors within 1e-5 (the dense parity tolerance above); and through slabs (host ranking).
TEST(PBTEvaluatorCuda, EvaluateBestMatchesCpuTopScores)
{
  CANOPY_REQUIRE_GPU();
  for (std::uint64_t seed : { 11u, 12u, 13u })
  {
    RandomPBTModelOptions options = RandomOptions(seed);
    options.depth = 2; // few leaves: many voxels share a posterior, so ties are exercised
    options.learnersPerNode = 1;
    options.mixStumps = true;
    const PBTModel model = MakeRandomPBTModel(options);
    const int      nx = 31, ny = 22, nz = 17;
    const auto     voxels = RandomVolume(nx, ny, nz, seed);
    const auto     cpuMap = EvaluateWith(model, ResolveBackend(BackendRequest::Parse("cpu")), {}, voxels, nx, ny, nz);
    const auto     gpuMap = EvaluateWith(model, Cuda(), {}, voxels, nx, ny, nz);
    ExpectAllClose(cpuMap, gpuMap, 1e-5, "dense map");
    for (std::int64_t k : { std::int64_t(1), std::int64_t(100), std::int64_t(nx) * ny * nz })
    {
      for (bool slabs : { false, true })
      {
        PBTEvaluationOptions evaluation;
        if (slabs)
        {
          PBTVolumeEvaluator probe(model, Cuda());
          const std::size_t  plane = std::size_t(nx) * ny, tablePlane = std::size_t(nx + 1) * (ny + 1);
          const int          in = std::min(nz, 2 + probe.GetMarginBelow() + probe.GetMarginAbove());
          evaluation.maxDeviceBytes = plane * 4 * in + tablePlane * 8 * (in + 1) + plane * 4 * 2;
        }
        // The expected order is that of the GPU map made with the same options (slabs sum their own
        // integral volumes, so a posterior may differ in the last bit and swap two near-equal voxels).
        const auto map = EvaluateWith(model, Cuda(), evaluation, voxels, nx, ny, nz);
        const auto expected = TopScoresCPU(map.data(), std::int64_t(map.size()), k);
        PBTVolumeEvaluator        evaluator(model, Cuda(), evaluation);
        std::vector<std::int64_t> indices;
        std::vector<float>        posteriors;
        evaluator.EvaluateBest(voxels.data(), nx, ny, nz, k, indices, posteriors);
        EXPECT_EQ(evaluator.GetNumberOfSlabsUsed() > 1, slabs);
        ASSERT_EQ(indices, expected) << "seed " << seed << " k " << k << (slabs ? " slabs" : " one slab");
        for (std::size_t r = 0; r < indices.size(); ++r)
          ASSERT_EQ(posteriors[r], map[indices[r]]) << "rank " << r;
        // And the CPU backend's EvaluateBest ranks its own map the same way.
        PBTVolumeEvaluator        cpu(model, ResolveBackend(BackendRequest::Parse("cpu")));
        std::vector<std::int64_t> cpuIndices;
        std::vector<float>        cpuPosteriors;
        cpu.EvaluateBest(voxels.data(), nx, ny, nz, k, cpuIndices, cpuPosteriors);
        EXPECT_EQ(cpuIndices, TopScoresCPU(cpuMap.data(), std::int64_t(cpuMap.size()), k));
      }
    }
  }
}
} // namespace
