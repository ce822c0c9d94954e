// GPU forest training (CURFIL §5) against the CPU: the same forest, byte for byte in JSON, for 2D and
// 3D multi-class phantoms, with a scale channel, with slicing and node batching forced by tiny
// budgets and with an image cache too small to hold the images (evictions counted). Flipped pairs
// (CURFIL §5.3): mirrored features see the flipped image, and they change training deterministically.
#include "canopy/Errors.h"
#include "canopy/ForestTrainingLaunch.h"
#include "canopyForestImage.h"
#include "canopyForestTraining.h"
#include "canopyTesting.h"

#include <random>

namespace
{
using namespace canopy;

/** Four classes: background, a ball, a box and a bar, in noise; two channels of different contrast. */
struct Phantom
{
  int                nx, ny, nz;
  std::vector<float> a, b, scale;
  std::vector<int>   labels;
  ForestImage        image;

  Phantom(int nx_, int ny_, int nz_, std::uint64_t seed, bool scaled = false)
    : nx(nx_)
    , ny(ny_)
    , nz(nz_)
  {
    std::mt19937_64                       rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::normal_distribution<float>       noise(0.0f, 25.0f);
    const float cx = nx * (0.2f + 0.2f * u(rng)), cy = ny * (0.3f + 0.3f * u(rng)), cz = nz * 0.5f;
    const float r = std::min(nx, ny) * 0.2f;
    const int   bx = int(nx * (0.55f + 0.1f * u(rng))), by = int(ny * 0.2f), barY = int(ny * (0.75f + 0.1f * u(rng)));
    for (int z = 0; z < nz; ++z)
      for (int y = 0; y < ny; ++y)
        for (int x = 0; x < nx; ++x)
        {
          const float d2 = (x - cx) * (x - cx) + (y - cy) * (y - cy) + (nz > 1 ? (z - cz) * (z - cz) : 0.0f);
          int         label = 0;
          if (d2 < r * r)
            label = 1;
          else if (x >= bx && x < bx + nx / 4 && y >= by && y < by + ny / 3)
            label = 2;
          else if (y >= barY && y < barY + 3)
            label = 3;
          labels.push_back(label);
          a.push_back(float(label == 1 ? 90 : label == 2 ? 45 : label == 3 ? 70 : 0) + noise(rng));
          b.push_back(float(label == 1 ? 0 : label == 2 ? 80 : label == 3 ? 10 : 40) + noise(rng));
          // A few undefined scales make NaN responses, exercising the NaN threshold retries.
          scale.push_back(u(rng) < 0.03f ? -1.0f : 0.75f + 0.5f * u(rng));
        }
    image = ForestImage::FromChannels({ a.data(), b.data() }, nx, ny, nz, scaled ? scale.data() : nullptr, 1);
  }
};

ForestTrainingSet
SetOf(const std::vector<const Phantom *> & phantoms, int stride)
{
  ForestTrainingSet set;
  set.numClasses = 4;
  for (std::size_t i = 0; i < phantoms.size(); ++i)
  {
    const Phantom & p = *phantoms[i];
    set.images.push_back(p.image.View());
    for (int z = 0; z < p.nz; z += (p.nz == 1 ? 1 : stride))
      for (int y = 0; y < p.ny; y += stride)
        for (int x = (y / stride) % 2; x < p.nx; x += stride)
          set.samples.push_back(ForestSample{ int(i), x, y, z, p.labels[(std::size_t(z) * p.ny + y) * p.nx + x] });
  }
  return set;
}

ForestTrainingOptions
Options()
{
  ForestTrainingOptions o;
  o.numTrees = 3;
  o.maxDepth = 9;
  o.featureCandidates = 40;
  o.thresholdCandidates = 6;
  o.maxOffset = 8;
  o.maxBoxSize = 6;
  o.minSamplesToSplit = 6;
  o.seed = 11;
  return o;
}

std::string
Train(const ForestTrainingSet & set,
      ForestTrainingOptions     o,
      const char *              backend,
      ForestTrainingStats *     stats = nullptr)
{
  o.backend = BackendRequest::Parse(backend);
  return ForestModelToJsonString(TrainForest(set, o, stats));
}

void
ExpectSameForest(const ForestTrainingSet & set, const ForestTrainingOptions & o, ForestTrainingStats * out = nullptr)
{
  ForestTrainingStats stats;
  const std::string   cpu = Train(set, o, "cpu");
  const std::string   gpu = Train(set, o, "cuda", &stats);
  EXPECT_TRUE(stats.usedGpu);
  EXPECT_GT(stats.levels, 3);
  EXPECT_EQ(cpu, gpu) << "CPU and GPU forests differ";
  if (out)
    *out = stats;
}

TEST(ForestTrainingCuda, Same2DForestAsCPU)
{
  CANOPY_REQUIRE_GPU();
  const Phantom a(80, 64, 1, 1), b(80, 64, 1, 2);
  ExpectSameForest(SetOf({ &a, &b }, 2), Options());
}

TEST(ForestTrainingCuda, Same3DForestAsCPUNormalizedGainBalanced)
{
  CANOPY_REQUIRE_GPU();
  const Phantom a(36, 32, 24, 3), b(36, 32, 24, 4);
  auto          o = Options();
  o.score = ForestSplitScore::NormalizedInformationGain;
  o.balanceClasses = true;
  o.maxBoxSize = 5;
  ExpectSameForest(SetOf({ &a, &b }, 2), o);
}

TEST(ForestTrainingCuda, SameForestWithScaleChannel)
{
  CANOPY_REQUIRE_GPU();
  const Phantom a(72, 56, 1, 5, true), b(72, 56, 1, 6, true);
  ExpectSameForest(SetOf({ &a, &b }, 2), Options());
}

TEST(ForestTrainingCuda, SameForestWithSlicesBatchesAndEvictions)
{
  CANOPY_REQUIRE_GPU();
  const Phantom a(64, 48, 1, 7, true), b(64, 48, 1, 8, true), c(64, 48, 1, 9, true), d(36, 30, 12, 10);
  for (const bool threeD : { false, true })
  {
    const Phantom e(36, 30, 12, 11);
    const auto    set = threeD ? SetOf({ &d, &e }, 2) : SetOf({ &a, &b, &c }, 2);
    auto          o = Options();
    o.gpuMemoryBudget = 64 * 1024; // a few nodes per batch
    o.gpuImageCacheImages = 1;     // every slice change of image evicts
    o.gpuSliceSamples = 257;       // odd, so slices cut nodes and images anywhere
    ForestTrainingStats stats;
    ExpectSameForest(set, o, &stats);
    EXPECT_EQ(stats.cacheSlots, 1);
    EXPECT_GT(stats.nodeBatches, 2 * stats.levels) << "batches must be forced";
    EXPECT_GT(stats.slices, stats.nodeBatches) << "slices must be forced";
    EXPECT_GT(stats.imageUploads, std::int64_t(set.images.size()) * 3) << "the cache must evict";
  }
}

TEST(ForestTrainingCuda, FlippedPairsSameOnCPUAndGPU)
{
  CANOPY_REQUIRE_GPU();
  const Phantom a(64, 48, 1, 12, true), b(64, 48, 1, 13);
  auto          o = Options();
  o.flipPairs = true;
  ExpectSameForest(SetOf({ &a }, 2), o);
  o.gpuMemoryBudget = 64 * 1024;
  o.gpuImageCacheImages = 1;
  o.gpuSliceSamples = 100;
  ForestTrainingSet two = SetOf({ &a }, 2);
  const Phantom     c(64, 48, 1, 14, true);
  two = SetOf({ &a, &c }, 2);
  ExpectSameForest(two, o);
}

TEST(ForestTrainingCuda, SameForestWithAtlasManyClasses)
{
  // An atlas's hundred-odd labels (AAL: 117 with the background) take the widest best-split kernel;
  // 20 and 100 classes exercise the two wider ones beside the few-class tests above.
  CANOPY_REQUIRE_GPU();
  const Phantom a(64, 48, 1, 21), b(64, 48, 1, 22);
  for (const int classes : { 20, 100 })
  {
    auto set = SetOf({ &a, &b }, 1);
    set.numClasses = classes;
    // Every phantom class splits into classes / 4 columns of labels, so all classes occur.
    for (auto & sample : set.samples)
      sample.label += 4 * ((sample.x * (classes / 4)) / a.nx);
    auto o = Options();
    o.balanceClasses = classes == 100;
    SCOPED_TRACE(classes);
    ExpectSameForest(set, o);
  }
}

// train-forest --checkpoint on the GPU: trees 0..k-1 grown on the CPU (or the GPU) and the rest on
// the GPU give the forest the CPU grows uninterrupted (the checkpoint leaves the device out).
TEST(ForestTrainingCuda, ResumedOnTheGpuSameForestAsCPU)
{
  CANOPY_REQUIRE_GPU();
  const Phantom a(64, 48, 1, 15, true), b(64, 48, 1, 16, true); // every image scaled, or none
  const auto    set = SetOf({ &a, &b }, 2);
  auto          o = Options();
  o.numTrees = 4;
  const std::string cpu = Train(set, o, "cpu");
  for (const char * first : { "cpu", "cuda" })
  {
    auto        partial = o;
    ForestModel done;
    partial.afterTree = [&done](const ForestModel & m)
    {
      if (m.NumberOfTrees() == 2)
        done = m;
    };
    Train(set, partial, first);
    ASSERT_EQ(done.NumberOfTrees(), 2);
    auto resumed = o;
    resumed.finishedTrees = &done;
    ForestTrainingStats stats;
    EXPECT_EQ(Train(set, resumed, "cuda", &stats), cpu) << "first trees on " << first;
    EXPECT_TRUE(stats.usedGpu);
  }
}

TEST(ForestTrainingCuda, OverTheGpuLimitsAutoUsesTheCpuAndCudaThrows)
{
  CANOPY_REQUIRE_GPU();
  const Phantom a(32, 24, 1, 17);
  auto          set = SetOf({ &a }, 2);
  set.numClasses = kForestGpuMaxClasses + 1; // labels stay 0..3; the extra classes are empty
  auto                o = Options();
  ForestTrainingStats stats;
  const auto          automatic = Train(set, o, "auto", &stats);
  EXPECT_FALSE(stats.usedGpu);
  EXPECT_EQ(automatic, Train(set, o, "cpu"));
  EXPECT_THROW(Train(set, o, "cuda"), canopy::Error);
}

TEST(ForestTrainingFlip, MirroredFeatureSeesTheFlippedImage)
{
  const Phantom      p(40, 30, 1, 15);
  std::vector<float> fa(p.a.size()), fb(p.b.size());
  for (int y = 0; y < p.ny; ++y)
    for (int x = 0; x < p.nx; ++x)
    {
      fa[y * p.nx + x] = p.a[y * p.nx + (p.nx - 1 - x)];
      fb[y * p.nx + x] = p.b[y * p.nx + (p.nx - 1 - x)];
    }
  const ForestImage flipped = ForestImage::FromChannels({ fa.data(), fb.data() }, p.nx, p.ny, 1, nullptr, 1);
  std::mt19937_64   rng(4);
  int               checked = 0;
  for (int k = 0; k < 200; ++k)
  {
    ForestFeature f{};
    for (int b = 0; b < 2; ++b)
    {
      f.channel[b] = std::uint8_t(rng() % 2);
      f.offset[b][0] = std::int16_t(int(rng() % 13) - 6);
      f.offset[b][1] = std::int16_t(int(rng() % 13) - 6);
      f.size[b][0] = std::uint8_t(1 + rng() % 6); // odd and even widths
      f.size[b][1] = std::uint8_t(1 + rng() % 6);
      f.size[b][2] = 1;
    }
    const int   x = int(rng() % p.nx), y = int(rng() % p.ny);
    const float mirrored = ForestResponseAt(p.image.View(), ForestMirrorFeature(f), x, y, 0);
    const float direct = ForestResponseAt(flipped.View(), f, p.nx - 1 - x, y, 0);
    ASSERT_EQ(std::isnan(mirrored), std::isnan(direct));
    if (!std::isnan(direct))
    {
      EXPECT_NEAR(mirrored, direct, 1e-3f * (1.0f + std::fabs(direct)));
      ++checked;
    }
  }
  EXPECT_GT(checked, 150);
}

TEST(ForestTrainingFlip, FlippedPairsChangeTrainingDeterministically)
{
  const Phantom a(64, 48, 1, 16);
  const auto    set = SetOf({ &a }, 2);
  auto          o = Options();
  const auto    plain = Train(set, o, "cpu");
  o.flipPairs = true;
  const auto flippedOne = Train(set, o, "cpu");
  o.threads = 3;
  const auto flippedTwo = Train(set, o, "cpu");
  EXPECT_NE(plain, flippedOne);
  EXPECT_EQ(flippedOne, flippedTwo);
  o.maxOffset = kForestMaxOffset;
  EXPECT_THROW(TrainForest(set, o), canopy::Error);
}

TEST(ForestTrainingFlip, SplitScoreLog2IsAccurate)
{
  for (double x : { 1e-300, 1e-9, 0.001, 0.3, 0.5, 0.70710678, 0.9999999, 1.0, 3.0, 1234.5, 1e200 })
    EXPECT_NEAR(ForestLog2(x), std::log2(x), 1e-14 * (1.0 + std::fabs(std::log2(x)))) << x;
}

} // namespace
