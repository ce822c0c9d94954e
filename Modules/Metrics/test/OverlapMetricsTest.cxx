// Overlap metrics on masks whose counts can be worked out by hand, on an anisotropic grid.
#include "canopyImageGrid.h"
#include "canopyIntensityPercentiles.h"
#include "canopyOverlapMetrics.h"
#include "canopyTesting.h"

#include "canopy/Errors.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace
{

using MaskType = itk::Image<unsigned char, 3>;

// 10x8x6 voxels of 0.5 x 1.5 x 2.0 mm (1.5 mm^3 each), LPS-flipped x.
MaskType::Pointer
MakeMask()
{
  auto mask = canopy::testing::MakeVolume<unsigned char>(10, 8, 6);
  const double spacing[3] = { 0.5, 1.5, 2.0 };
  mask->SetSpacing(spacing);
  return mask;
}

// Sets [lo, hi) in each axis to value.
void
FillBox(MaskType * mask, const int lo[3], const int hi[3], unsigned char value)
{
  for (int z = lo[2]; z < hi[2]; ++z)
    for (int y = lo[1]; y < hi[1]; ++y)
      for (int x = lo[0]; x < hi[0]; ++x)
        mask->SetPixel({ { x, y, z } }, value);
}

TEST(OverlapMetrics, HalfOverlappingBoxes)
{
  auto test = MakeMask(), reference = MakeMask();
  const int aLo[3] = { 0, 0, 0 }, aHi[3] = { 4, 4, 2 }; // 32 voxels
  const int bLo[3] = { 2, 0, 0 }, bHi[3] = { 6, 4, 2 }; // 32 voxels, 16 shared
  FillBox(test, aLo, aHi, 1);
  FillBox(reference, bLo, bHi, 255); // any non-zero value is inside
  const auto m = canopy::ComputeOverlap(test, reference);
  EXPECT_EQ(m.truePositives, 16);
  EXPECT_EQ(m.falsePositives, 16);
  EXPECT_EQ(m.falseNegatives, 16);
  EXPECT_DOUBLE_EQ(m.dice, 0.5);
  EXPECT_DOUBLE_EQ(m.jaccard, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.volumeTestMm3, 48.0);
  EXPECT_DOUBLE_EQ(m.volumeReferenceMm3, 48.0);
  EXPECT_DOUBLE_EQ(m.volumeDifferencePercent, 0.0);
}

TEST(OverlapMetrics, NestedBoxesAndSymmetry)
{
  auto test = MakeMask(), reference = MakeMask();
  const int inLo[3] = { 1, 1, 1 }, inHi[3] = { 3, 3, 3 };  // 8 voxels
  const int outLo[3] = { 1, 1, 1 }, outHi[3] = { 5, 4, 3 }; // 24 voxels, containing the 8
  FillBox(test, inLo, inHi, 1);
  FillBox(reference, outLo, outHi, 1);
  const auto m = canopy::ComputeOverlap(test, reference);
  EXPECT_EQ(m.truePositives, 8);
  EXPECT_EQ(m.falsePositives, 0);
  EXPECT_EQ(m.falseNegatives, 16);
  EXPECT_DOUBLE_EQ(m.dice, 16.0 / 32.0);
  EXPECT_DOUBLE_EQ(m.jaccard, 8.0 / 24.0);
  EXPECT_DOUBLE_EQ(m.volumeTestMm3, 12.0);
  EXPECT_DOUBLE_EQ(m.volumeReferenceMm3, 36.0);
  EXPECT_NEAR(m.volumeDifferencePercent, -200.0 / 3.0, 1e-12);

  const auto swapped = canopy::ComputeOverlap(reference, test);
  EXPECT_DOUBLE_EQ(swapped.dice, m.dice);
  EXPECT_EQ(swapped.falsePositives, 16);
  EXPECT_EQ(swapped.falseNegatives, 0);
  EXPECT_NEAR(swapped.volumeDifferencePercent, 200.0, 1e-12);

  const auto j = canopy::ToJson(m);
  EXPECT_DOUBLE_EQ(j.at("dice").get<double>(), 0.5);
  EXPECT_EQ(j.at("falseNegatives").get<std::int64_t>(), 16);
  EXPECT_DOUBLE_EQ(j.at("volumeReferenceMm3").get<double>(), 36.0);
}

TEST(OverlapMetrics, EmptyMasks)
{
  auto test = MakeMask(), reference = MakeMask();
  const auto both = canopy::ComputeOverlap(test, reference);
  EXPECT_DOUBLE_EQ(both.dice, 1.0);
  EXPECT_DOUBLE_EQ(both.jaccard, 1.0);
  EXPECT_DOUBLE_EQ(both.volumeDifferencePercent, 0.0);
  EXPECT_EQ(both.truePositives + both.falsePositives + both.falseNegatives, 0);

  const int lo[3] = { 0, 0, 0 }, hi[3] = { 2, 2, 2 };
  FillBox(test, lo, hi, 1);
  const auto onlyTest = canopy::ComputeOverlap(test, reference);
  EXPECT_DOUBLE_EQ(onlyTest.dice, 0.0);
  EXPECT_DOUBLE_EQ(onlyTest.jaccard, 0.0);
  EXPECT_TRUE(std::isinf(onlyTest.volumeDifferencePercent));
  EXPECT_TRUE(canopy::ToJson(onlyTest).at("volumeDifferencePercent").is_null());

  const auto onlyReference = canopy::ComputeOverlap(reference, test);
  EXPECT_DOUBLE_EQ(onlyReference.dice, 0.0);
  EXPECT_DOUBLE_EQ(onlyReference.volumeDifferencePercent, -100.0);
}

TEST(OverlapMetrics, GridMismatchIsNamed)
{
  auto reference = MakeMask();
  auto expectError = [&](MaskType * test, const std::string & word) {
    try
    {
      canopy::ComputeOverlap(test, reference);
      ADD_FAILURE() << "no error for a " << word << " mismatch";
    }
    catch (const canopy::Error & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find(word), std::string::npos) << e.GetDescription();
    }
  };
  auto size = canopy::testing::MakeVolume<unsigned char>(10, 8, 5);
  size->SetSpacing(reference->GetSpacing());
  expectError(size, "size");

  auto spacing = MakeMask();
  auto s = spacing->GetSpacing();
  s[1] += 1e-3;
  spacing->SetSpacing(s);
  expectError(spacing, "spacing");

  auto origin = MakeMask();
  auto o = origin->GetOrigin();
  o[2] += 0.5;
  origin->SetOrigin(o);
  expectError(origin, "origin");

  auto direction = MakeMask();
  auto dir = direction->GetDirection();
  dir[0][0] = 1.0; // un-flip x
  direction->SetDirection(dir);
  expectError(direction, "direction");

  // Within tolerance is the same grid.
  auto nearly = MakeMask();
  auto no = nearly->GetOrigin();
  no[0] += 1e-8;
  nearly->SetOrigin(no);
  EXPECT_NO_THROW(canopy::ComputeOverlap(nearly, reference));
  EXPECT_TRUE(canopy::DescribeGridMismatch(nearly, reference).empty());

  EXPECT_THROW(canopy::ComputeOverlap(nullptr, reference), canopy::Error);
}

TEST(OverlapMetrics, ThresholdToMask)
{
  auto image = canopy::testing::MakeRandomVolume<float>(7, 6, 5, -1.0, 1.0, 3);
  image->SetPixel({ { 1, 2, 3 } }, 0.25f); // exactly at the threshold: inside
  image->SetPixel({ { 2, 2, 3 } }, std::nanf(""));
  const auto mask = canopy::ThresholdToMask(image, 0.25f);
  EXPECT_TRUE(canopy::DescribeGridMismatch(mask, image).empty());
  const float *         v = image->GetBufferPointer();
  const unsigned char * m = mask->GetBufferPointer();
  for (std::size_t i = 0; i < image->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    ASSERT_EQ(m[i], v[i] >= 0.25f ? 1 : 0) << "voxel " << i;
  EXPECT_EQ(mask->GetPixel({ { 1, 2, 3 } }), 1);
  EXPECT_EQ(mask->GetPixel({ { 2, 2, 3 } }), 0);
  EXPECT_THROW(canopy::ThresholdToMask(nullptr, 0.5f), canopy::Error);
}

TEST(IntensityPercentiles, RanksOfKnownValues)
{
  // Values 0..100 (101 voxels) in scrambled order plus a NaN that must be ignored.
  auto image = canopy::testing::MakeVolume<float>(102, 1, 1);
  for (int i = 0; i <= 100; ++i)
    image->SetPixel({ { (i * 37) % 101, 0, 0 } }, static_cast<float>(i));
  image->SetPixel({ { 101, 0, 0 } }, std::nanf(""));
  const auto p = canopy::ComputeIntensityPercentiles(image, 1.0, 99.0);
  EXPECT_DOUBLE_EQ(p.low, 1.0);
  EXPECT_DOUBLE_EQ(p.high, 99.0);
  EXPECT_DOUBLE_EQ(p.minimum, 0.0);
  EXPECT_DOUBLE_EQ(p.maximum, 100.0);
  EXPECT_DOUBLE_EQ(canopy::ComputeIntensityPercentiles(image, 0.0, 50.0).high, 50.0);
  EXPECT_THROW(canopy::ComputeIntensityPercentiles(image, -1.0, 99.0), canopy::Error);
  EXPECT_THROW(canopy::ComputeIntensityPercentiles(image, 1.0, 101.0), canopy::Error);
  EXPECT_THROW(canopy::ComputeIntensityPercentiles(nullptr, 1.0, 99.0), canopy::Error);
}

} // namespace
