// CPU PBT evaluation: Algorithm 2 (stack, dense kernel and PBTVolumeEvaluator) against Algorithm 1
// (recursive) on random models and volumes, the stack bound, non-probabilistic mode, bad input.
#include "PBTEvaluatorTestSupport.h"

#include "canopy/Errors.h"

#include <gtest/gtest.h>

namespace
{
using namespace canopy;
using namespace canopy::pbttest;

RandomPBTModelOptions
RandomOptions(std::uint64_t seed)
{
  std::mt19937          rng(static_cast<std::uint32_t>(seed));
  RandomPBTModelOptions options;
  options.seed = seed;
  options.depth = 1 + int(rng() % 10);
  options.fullTree = rng() % 3 == 0 && options.depth <= 7;
  options.learnersPerNode = 1 + int(rng() % 12);
  options.numFeatures = 50;
  options.mixStumps = true;
  options.tableScale = 0.2f + 0.6f * float(rng() % 100) / 100.0f;
  options.responseLow = -60.0f;
  options.responseHigh = 120.0f;
  options.sampleBox = { 3 + int(rng() % 20), 3 + int(rng() % 20), 3 + int(rng() % 20) };
  return options;
}

TEST(PBTEvaluatorCpu, StackMatchesRecursiveOnRandomModels)
{
  const int nx = 23, ny = 19, nz = 17;
  for (std::uint64_t seed = 1; seed <= 25; ++seed)
  {
    const PBTModel model = MakeRandomPBTModel(RandomOptions(seed));
    const auto     voxels = RandomVolume(nx, ny, nz, seed);
    for (bool probabilistic : { true, false })
    {
      const auto reference = ReferencePosteriors(model, voxels, nx, ny, nz, probabilistic);
      PBTEvaluationOptions options;
      options.probabilistic = probabilistic;
      options.cpuThreads = int(seed % 3) + 1;
      PBTVolumeEvaluator evaluator(model, ResolvedBackend{}, options);
      std::vector<float> out(voxels.size(), std::nanf(""));
      evaluator.Evaluate(voxels.data(), nx, ny, nz, out.data());
      EXPECT_EQ(evaluator.GetNumberOfSlabsUsed(), 1);
      ExpectAllClose(reference, out, 1e-5,
                     "seed " + std::to_string(seed) + " depth " + std::to_string(model.Depth()) +
                       (probabilistic ? " probabilistic" : " single descent"));
    }
  }
}

TEST(PBTEvaluatorCpu, DenseKernelOnSubBlockMatchesWholeVolume)
{
  const int      nx = 20, ny = 16, nz = 12;
  const PBTModel model = MakeRandomPBTModel(RandomOptions(77));
  const auto     voxels = RandomVolume(nx, ny, nz, 5);
  const auto     reference = ReferencePosteriors(model, voxels, nx, ny, nz);
  std::vector<double> table(static_cast<std::size_t>(PaddedTableSize(nx, ny, nz)));
  ComputeIntegralVolumeCPU(voxels.data(), nx, ny, nz, table.data(), 1);
  const auto       features = ResolveHaarBank(model.features, model.sampleBox);
  const VoxelBlock block{ 3, 2, 4, 11, 9, 5 };
  std::vector<float> out(block.NumberOfVoxels(), std::nanf(""));
  EvaluatePBTDenseCPU(model.View(), IntegralVolumeView{ table.data(), nx, ny, nz }, features.data(), block, out.data(), 2);
  std::vector<float> expected;
  for (int z = 0; z < block.sz; ++z)
    for (int y = 0; y < block.sy; ++y)
      for (int x = 0; x < block.sx; ++x)
        expected.push_back(reference[(std::size_t(block.z0 + z) * ny + block.y0 + y) * nx + block.x0 + x]);
  ExpectAllClose(expected, out, 1e-5, "sub-block");
}

TEST(PBTEvaluatorCpu, SingleDescentEvaluatesOnePathPerVoxel)
{
  // With epsilon1 = 0.5 each voxel evaluates exactly one inner node per level of a full tree.
  RandomPBTModelOptions options = RandomOptions(3);
  options.depth = 5;
  options.fullTree = true;
  options.learnersPerNode = 7;
  options.mixStumps = false;
  PBTModel   model = MakeRandomPBTModel(options);
  const int  nx = 10, ny = 9, nz = 8;
  const auto voxels = RandomVolume(nx, ny, nz, 3);
  std::vector<double> table(static_cast<std::size_t>(PaddedTableSize(nx, ny, nz)));
  ComputeIntegralVolumeCPU(voxels.data(), nx, ny, nz, table.data(), 1);
  const auto features = ResolveHaarBank(model.features, model.sampleBox);
  const IntegralVolumeView volume{ table.data(), nx, ny, nz };
  const VoxelBlock         block{ 0, 0, 0, nx, ny, nz };
  PBTView                  view = model.View();
  view.epsilon1 = 0.5f;
  EXPECT_EQ(CountPBTWeakLearnerEvaluationsCPU(view, volume, features.data(), block),
            block.NumberOfVoxels() * options.depth * options.learnersPerNode);
  // The probabilistic tree descends both children somewhere, so it evaluates more.
  EXPECT_GT(CountPBTWeakLearnerEvaluationsCPU(model.View(), volume, features.data(), block),
            block.NumberOfVoxels() * options.depth * options.learnersPerNode);
}

TEST(PBTEvaluatorCpu, PreorderNumberingKeepsThePosterior)
{
  // Renumbering nodes in preorder (as the GPU evaluator uploads them) keeps the traversal order, so
  // every voxel's arithmetic and result are unchanged.
  const int nx = 12, ny = 10, nz = 9;
  for (std::uint64_t seed : { 21u, 22u, 23u })
  {
    PBTModel   model = MakeRandomPBTModel(RandomOptions(seed));
    const auto voxels = RandomVolume(nx, ny, nz, seed);
    const auto before = ReferencePosteriors(model, voxels, nx, ny, nz);
    const auto preorder = PBTNodesInPreorder(model.nodes.data(), int(model.nodes.size()));
    ASSERT_EQ(preorder.size(), model.nodes.size());
    for (std::size_t i = 0; i < preorder.size(); ++i)
    {
      // Preorder: a left child directly follows its parent; any child has a larger index.
      if (preorder[i].left >= 0)
        EXPECT_EQ(preorder[i].left, int(i) + 1);
      if (preorder[i].right >= 0)
        EXPECT_GT(preorder[i].right, int(i));
    }
    model.nodes = preorder;
    model.Validate("preorder");
    const auto after = ReferencePosteriors(model, voxels, nx, ny, nz);
    EXPECT_EQ(before, after) << "seed " << seed;
  }
}

TEST(PBTEvaluatorCpu, DeepestAllowedChainFillsTheStack)
{
  const PBTModel model = ChainModel(kPBTMaxDepth);
  ASSERT_EQ(model.Depth(), kPBTMaxDepth);
  const int          nx = 6, ny = 5, nz = 4;
  const auto         voxels = RandomVolume(nx, ny, nz, 9);
  PBTVolumeEvaluator evaluator(model, ResolvedBackend{});
  std::vector<float> out(voxels.size(), std::nanf(""));
  evaluator.Evaluate(voxels.data(), nx, ny, nz, out.data());
  const auto reference = ReferencePosteriors(model, voxels, nx, ny, nz);
  ExpectAllClose(reference, out, 1e-6, "chain vs recursive");
  ExpectAllClose(std::vector<float>(out.size(), float(ChainPosterior(kPBTMaxDepth))), out, 1e-6, "chain closed form");
}

TEST(PBTEvaluatorCpu, TooDeepModelIsRejectedBeforeEvaluation)
{
  const PBTModel model = ChainModel(kPBTMaxDepth + 1);
  EXPECT_THROW(PBTVolumeEvaluator(model, ResolvedBackend{}), canopy::Error);
  try
  {
    PBTVolumeEvaluator evaluator(model, ResolvedBackend{});
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("deeper"), std::string::npos) << e.GetDescription();
  }
}

TEST(PBTEvaluatorCpu, NonFiniteVoxelsCountAsZero)
{
  const int      nx = 14, ny = 12, nz = 10;
  const PBTModel model = MakeRandomPBTModel(RandomOptions(11));
  auto           voxels = RandomVolume(nx, ny, nz, 11);
  auto           zeroed = voxels;
  for (std::size_t i = 0; i < voxels.size(); i += 37)
  {
    voxels[i] = (i % 2) ? std::nanf("") : INFINITY;
    zeroed[i] = 0.0f;
  }
  PBTVolumeEvaluator evaluator(model, ResolvedBackend{});
  std::vector<float> out(voxels.size(), -1.0f);
  evaluator.Evaluate(voxels.data(), nx, ny, nz, out.data());
  ExpectAllClose(ReferencePosteriors(model, zeroed, nx, ny, nz), out, 1e-5, "NaN/Inf voxels as zero");
}

TEST(PBTEvaluatorCpu, BadInputIsAnError)
{
  const PBTModel     model = MakeRandomPBTModel(RandomOptions(2));
  PBTVolumeEvaluator evaluator(model, ResolvedBackend{});
  std::vector<float> buffer(8);
  EXPECT_THROW(evaluator.Evaluate(buffer.data(), 0, 2, 2, buffer.data()), canopy::Error);
  EXPECT_THROW(evaluator.Evaluate(nullptr, 2, 2, 2, buffer.data()), canopy::Error);
  PBTModel broken = model;
  broken.learners[0].feature = int(broken.features.size());
  EXPECT_THROW(PBTVolumeEvaluator(broken, ResolvedBackend{}), canopy::Error);
}

TEST(PBTEvaluatorCpu, MarginsCoverTheFeaturesZExtent)
{
  RandomPBTModelOptions options = RandomOptions(4);
  options.sampleBox = { 5, 5, 21 };
  const PBTModel     model = MakeRandomPBTModel(options);
  PBTVolumeEvaluator evaluator(model, ResolvedBackend{});
  int                below = 0, above = 0;
  for (const auto & f : ResolveHaarBank(model.features, model.sampleBox))
    for (int c = 0; c < f.numCuboids; ++c)
    {
      below = std::max({ below, -f.lo[c][2], -f.hi[c][2] });
      above = std::max({ above, f.lo[c][2], f.hi[c][2] });
    }
  // Only features that learners use count, so the margins are at most the bank's extent, and positive.
  EXPECT_LE(evaluator.GetMarginBelow(), below);
  EXPECT_LE(evaluator.GetMarginAbove(), above);
  EXPECT_GT(evaluator.GetMarginBelow() + evaluator.GetMarginAbove(), 0);
}

} // namespace
