// CPU forest prediction (ForestPredictVoxel) against an independent pointer-chasing reference, in all
// four output modes, 2D and 3D, multi-channel, with and without a scale channel.
#include "ForestPredictionSupport.h"
#include "ForestTestSupport.h"
#include "canopy/ForestPrediction.h"
#include "canopyForestRandom.h"
#include "canopyTesting.h"

#include <set>

namespace
{
using namespace canopy;

struct Case
{
  int  nx, ny, nz, channels;
  bool scaled;
};

void
CheckAgainstReference(const Case & k, std::uint64_t seed)
{
  const canopy::testing::RandomForestInput in(k.nx, k.ny, k.nz, k.channels, k.scaled, seed);
  const ForestImagesView           view = in.image.View();
  RandomForestOptions              o;
  o.numTrees = 5;
  o.depth = 9;
  o.leafProbability = 0.15;
  o.numClasses = 4;
  o.numChannels = k.channels;
  o.dimension = k.nz == 1 ? 2 : 3;
  o.usesScale = k.scaled;
  o.maxOffset = 5;
  o.seed = seed;
  const ForestModel model = MakeRandomForest(o, &view);
  const auto        reference = canopy::testing::PredictReference(model, view);
  const VoxelBlock  whole{ 0, 0, 0, k.nx, k.ny, k.nz };
  const std::size_t voxels = std::size_t(whole.NumberOfVoxels());

  for (int threads : { 1, 3 })
  {
    std::vector<float> distribution(voxels * o.numClasses, -1.0f);
    PredictForestCPU(model.View(), view, whole, ForestOutput{ ForestOutputMode::Distribution, distribution.data(), nullptr },
                     threads);
    for (std::size_t i = 0; i < distribution.size(); ++i)
      ASSERT_NEAR(distribution[i], reference.distribution[i], 1e-6) << "value " << i << ", threads " << threads;
    std::vector<std::int32_t> index(voxels * o.numTrees, -1);
    PredictForestCPU(model.View(), view, whole, ForestOutput{ ForestOutputMode::ArgMax, nullptr, index.data() }, threads);
    for (std::size_t i = 0; i < voxels; ++i)
    {
      // Ties within rounding may pick either class; the chosen one must be (near) maximal.
      const float chosen = reference.distribution[i * o.numClasses + index[i]];
      ASSERT_GE(chosen, reference.distribution[i * o.numClasses + reference.argMax[i]] - 1e-6f) << "voxel " << i;
    }
    PredictForestCPU(model.View(), view, whole, ForestOutput{ ForestOutputMode::TreeLeaf, nullptr, index.data() }, threads);
    for (std::size_t i = 0; i < voxels; ++i)
      ASSERT_EQ(index[i], reference.treeLeaf[i]) << "voxel " << i;
    PredictForestCPU(model.View(), view, whole, ForestOutput{ ForestOutputMode::ForestLeaves, nullptr, index.data() },
                     threads);
    ASSERT_EQ(index, reference.forestLeaves);
  }

  // A sub-block gives the same values as the whole image there (slab processing).
  const VoxelBlock          part{ 2, 3, k.nz > 2 ? 1 : 0, k.nx - 5, k.ny - 4, k.nz > 2 ? k.nz - 2 : 1 };
  std::vector<std::int32_t> leaves(std::size_t(part.NumberOfVoxels()) * o.numTrees);
  PredictForestCPU(model.View(), view, part, ForestOutput{ ForestOutputMode::ForestLeaves, nullptr, leaves.data() }, 2);
  for (int z = 0; z < part.sz; ++z)
    for (int y = 0; y < part.sy; ++y)
      for (int x = 0; x < part.sx; ++x)
        for (int t = 0; t < o.numTrees; ++t)
        {
          const std::size_t p = (std::size_t(z) * part.sy + y) * part.sx + x;
          const std::size_t w = (std::size_t(z + part.z0) * k.ny + y + part.y0) * k.nx + x + part.x0;
          ASSERT_EQ(leaves[p * o.numTrees + t], reference.forestLeaves[w * o.numTrees + t]);
        }

  // The forest must actually branch: leaves reached vary over the image.
  std::set<int> distinct(reference.treeLeaf.begin(), reference.treeLeaf.end());
  EXPECT_GT(distinct.size(), 8u);
}

TEST(ForestPrediction, MatchesReference3D) { CheckAgainstReference({ 21, 19, 9, 2, false }, 11); }
TEST(ForestPrediction, MatchesReference2D) { CheckAgainstReference({ 47, 33, 1, 3, false }, 12); }
TEST(ForestPrediction, MatchesReferenceScaled3D) { CheckAgainstReference({ 17, 15, 12, 1, true }, 13); }
TEST(ForestPrediction, MatchesReferenceScaled2D) { CheckAgainstReference({ 40, 30, 1, 2, true }, 14); }

} // namespace
