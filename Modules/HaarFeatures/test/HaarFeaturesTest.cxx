#include "canopy/HaarEvaluation.h"
#include "canopy/HaarResponseEngine.h"
#include "canopyHaarFeatureBank.h"
#include "canopyTesting.h"
#include "itkHaarFeatureMapImageFilter.h"

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include <cmath>

namespace
{
using namespace canopy;
using canopy::testing::MakeRandomVolume;

// Response computed straight from voxels (no integral volume): the independent reference.
double
DirectResponse(const itk::Image<float, 3> * image, const HaarFeatureVoxels & f, int x, int y, int z)
{
  const auto size = image->GetLargestPossibleRegion().GetSize();
  double     r = 0.0;
  for (int c = 0; c < f.numCuboids; ++c)
  {
    double sum = 0.0;
    for (int k = z + f.lo[c][2]; k < z + f.hi[c][2]; ++k)
      for (int j = y + f.lo[c][1]; j < y + f.hi[c][1]; ++j)
        for (int i = x + f.lo[c][0]; i < x + f.hi[c][0]; ++i)
          if (i >= 0 && j >= 0 && k >= 0 && i < int(size[0]) && j < int(size[1]) && k < int(size[2]))
            sum += image->GetPixel({ { i, j, k } });
    r += static_cast<double>(f.weightPerVoxel[c]) * sum;
  }
  return r;
}

TEST(HaarFeatureBank, RandomBankIsReproducibleAndSeedDependent)
{
  RandomHaarBankOptions options;
  options.count = 300;
  options.seed = 17;
  const auto a = GenerateRandomHaarBank(options);
  const auto b = GenerateRandomHaarBank(options);
  options.seed = 18;
  const auto c = GenerateRandomHaarBank(options);
  ASSERT_EQ(a.size(), 300u);
  bool allEqual = true, anyDifferent = false;
  for (size_t i = 0; i < a.size(); ++i)
  {
    allEqual &= std::memcmp(&a[i], &b[i], sizeof(HaarFeature)) == 0;
    anyDifferent |= std::memcmp(&a[i], &c[i], sizeof(HaarFeature)) != 0;
    ASSERT_GE(a[i].numCuboids, 1);
    ASSERT_LE(a[i].numCuboids, kMaxHaarCuboids);
    for (int k = 0; k < a[i].numCuboids; ++k)
      for (int d = 0; d < 3; ++d)
      {
        EXPECT_GE(a[i].cuboids[k].lo[d], -0.5f - 1e-6f);
        EXPECT_LE(a[i].cuboids[k].hi[d], 0.5f + 1e-6f);
      }
  }
  EXPECT_TRUE(allEqual);
  EXPECT_TRUE(anyDifferent);
}

TEST(HaarFeatureBank, ExhaustiveBankCountsEveryPlacement)
{
  ExhaustiveHaarBankOptions options;
  options.sizes = { 0.5f, 1.0f };
  options.step = 0.25f;
  options.patterns = { HaarPattern::Mean, HaarPattern::Edge };
  // size 0.5: 3 positions per axis -> 27; size 1: 1. Mean has 1 orientation, Edge 3.
  EXPECT_EQ(GenerateExhaustiveHaarBank(options).size(), (27u + 1u) * (1u + 3u));
}

TEST(HaarFeatureBank, PatternsAreZeroMeanExceptMean)
{
  // On a constant image every contrast pattern responds 0 and Mean responds the constant.
  auto image = canopy::testing::MakeVolume<float>(20, 20, 20);
  image->FillBuffer(7.0f);
  HaarResponseEngine engine(ResolvedBackend{});
  engine.SetVolumeFromVoxels(image->GetBufferPointer(), 20, 20, 20);
  std::vector<HaarFeature> bank;
  for (int p = 0; p < static_cast<int>(HaarPattern::Count); ++p)
    bank.push_back(MakeHaarFeature(static_cast<HaarPattern>(p), 1, { -0.5f, -0.5f, -0.5f }, { 0.5f, 0.5f, 0.5f }));
  const auto resolved = ResolveHaarBank(bank, { 12, 12, 12 });
  engine.SetFeatures(resolved.data(), static_cast<int>(resolved.size()));
  const VoxelIndex3  centre{ 10, 10, 10 };
  std::vector<float> out(bank.size());
  engine.EvaluateAtPoints(&centre, 1, out.data());
  EXPECT_NEAR(out[0], 7.0f, 1e-5f);
  for (size_t p = 1; p < out.size(); ++p)
    EXPECT_NEAR(out[p], 0.0f, 1e-5f) << ToString(static_cast<HaarPattern>(p));
}

TEST(HaarFeatureBank, JsonRoundTripAndRejection)
{
  RandomHaarBankOptions options;
  options.count = 20;
  for (const auto & f : GenerateRandomHaarBank(options))
  {
    nlohmann::json j;
    HaarFeatureToJson(f, j);
    const auto back = HaarFeatureFromJson(nlohmann::json::parse(j.dump()), "test");
    ASSERT_EQ(back.numCuboids, f.numCuboids);
    for (int c = 0; c < f.numCuboids; ++c)
      EXPECT_EQ(std::memcmp(&back.cuboids[c], &f.cuboids[c], sizeof(HaarCuboid)), 0);
  }
  EXPECT_THROW(HaarFeatureFromJson(nlohmann::json::parse(R"({"cuboids": []})"), "bad.json"), itk::ExceptionObject);
  EXPECT_THROW(HaarFeatureFromJson(nlohmann::json::parse(R"({"cuboids": [{"lo": [0,0], "hi": [1,1,1], "w": 1}]})"), "bad.json"),
               itk::ExceptionObject);
  EXPECT_THROW(HaarFeatureFromJson(nlohmann::json::parse(R"({"cuboids": [{"lo": [0,0,0], "hi": [-1,1,1], "w": 1}]})"), "bad.json"),
               itk::ExceptionObject);
}

TEST(HaarEvaluation, PointsMatchDirectSumsIncludingBorders)
{
  auto image = MakeRandomVolume<float>(23, 19, 17, -100, 100, 3);
  RandomHaarBankOptions options;
  options.count = 40;
  const auto resolved = ResolveHaarBank(GenerateRandomHaarBank(options), { 9, 11, 7 });
  HaarResponseEngine engine(ResolvedBackend{}, 2);
  engine.SetVolumeFromVoxels(image->GetBufferPointer(), 23, 19, 17);
  engine.SetFeatures(resolved.data(), static_cast<int>(resolved.size()));
  const std::vector<VoxelIndex3> points{ { 0, 0, 0 }, { 22, 18, 16 }, { 11, 9, 8 }, { 3, 17, 1 }, { 20, 2, 15 } };
  std::vector<float>             out(resolved.size() * points.size());
  engine.EvaluateAtPoints(points.data(), static_cast<std::int64_t>(points.size()), out.data());
  for (size_t f = 0; f < resolved.size(); ++f)
    for (size_t p = 0; p < points.size(); ++p)
    {
      const double expected = DirectResponse(image.GetPointer(), resolved[f], points[p].x, points[p].y, points[p].z);
      const double actual = out[f * points.size() + p];
      ASSERT_TRUE(std::abs(expected - actual) <= 1e-4 * std::max(1.0, std::abs(expected)))
        << "feature " << f << " point " << p << ": " << expected << " vs " << actual;
    }
}

TEST(HaarFeatureMap, FilterMatchesPointEvaluationAndKeepsGeometry)
{
  using ImageType = itk::Image<float, 3>;
  auto                  image = MakeRandomVolume<float>(14, 12, 10, 0, 50, 8);
  RandomHaarBankOptions options;
  options.count = 7;
  const auto bank = GenerateRandomHaarBank(options);
  auto       filter = itk::HaarFeatureMapImageFilter<ImageType>::New();
  filter->SetInput(image);
  filter->SetFeatureBank(bank);
  filter->SetSampleBoxSize({ 6, 6, 6 });
  filter->SetBackend("cpu");
  filter->Update();
  auto * out = filter->GetOutput();
  EXPECT_EQ(out->GetNumberOfComponentsPerPixel(), 7u);
  EXPECT_EQ(out->GetOrigin(), image->GetOrigin());
  EXPECT_EQ(out->GetSpacing(), image->GetSpacing());
  EXPECT_EQ(out->GetDirection(), image->GetDirection());
  const auto resolved = ResolveHaarBank(bank, { 6, 6, 6 });
  for (int z : { 0, 5, 9 })
    for (int y : { 0, 7, 11 })
      for (int x : { 0, 13 })
      {
        const auto v = out->GetPixel({ { x, y, z } });
        for (int f = 0; f < 7; ++f)
          EXPECT_NEAR(v[f], DirectResponse(image.GetPointer(), resolved[f], x, y, z), 1e-3);
      }
}

TEST(HaarFeatureMap, EmptyBankIsAClearError)
{
  auto filter = itk::HaarFeatureMapImageFilter<itk::Image<float, 3>>::New();
  filter->SetInput(MakeRandomVolume<float>(4, 4, 4, 0, 1, 1));
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

} // namespace
