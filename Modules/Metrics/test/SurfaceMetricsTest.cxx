// Surface distances on masks whose answer is known: single voxels (exact, anisotropic spacing),
// concentric spheres (|r1 - r2| within a voxel), identical masks (0), empty masks, and per-label maps.
#include "canopySurfaceMetrics.h"
#include "canopyTesting.h"

#include "canopy/Errors.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <numeric>

namespace
{
using MaskType = itk::Image<unsigned char, 3>;
const double kSpacing[3] = { 0.7, 1.1, 1.6 };

MaskType::Pointer
MakeMask(int nx, int ny, int nz)
{
  auto mask = canopy::testing::MakeVolume<unsigned char>(nx, ny, nz); // non-identity direction
  mask->SetSpacing(kSpacing);
  mask->FillBuffer(0);
  return mask;
}

// Ball of radius r mm around the physical centre of the grid.
template<typename TImage>
void
FillBall(TImage * image, double radiusMm, typename TImage::PixelType value)
{
  const auto size = image->GetLargestPossibleRegion().GetSize();
  for (unsigned z = 0; z < size[2]; ++z)
    for (unsigned y = 0; y < size[1]; ++y)
      for (unsigned x = 0; x < size[0]; ++x)
      {
        const double d[3] = { (x - (size[0] - 1) / 2.0) * kSpacing[0],
                              (y - (size[1] - 1) / 2.0) * kSpacing[1],
                              (z - (size[2] - 1) / 2.0) * kSpacing[2] };
        if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] <= radiusMm * radiusMm)
          image->SetPixel({ { x, y, z } }, value);
      }
}

TEST(SurfaceMetrics, SummaryPercentileMeanMaximum)
{
  std::vector<double> a(101);
  std::iota(a.begin(), a.end(), 0.0); // 0..100
  const auto d = canopy::SummarizeSurfaceDistances(a, { 1.0, 3.0 });
  EXPECT_DOUBLE_EQ(d.meanTestToReference, 50.0);
  EXPECT_DOUBLE_EQ(d.meanReferenceToTest, 2.0);
  EXPECT_DOUBLE_EQ(d.mean, (5050.0 + 4.0) / 103.0);
  EXPECT_DOUBLE_EQ(d.percentile95, 95.0); // max(95, 2.9)
  EXPECT_DOUBLE_EQ(d.maximum, 100.0);
  EXPECT_EQ(d.testSamples, 101);
  EXPECT_EQ(d.referenceSamples, 2);
}

TEST(SurfaceMetrics, SurfaceVoxelsOfACubeAndAtTheBorder)
{
  auto mask = MakeMask(5, 5, 5);
  for (int z = 1; z < 4; ++z)
    for (int y = 1; y < 4; ++y)
      for (int x = 1; x < 4; ++x)
        mask->SetPixel({ { x, y, z } }, 1);
  auto surface = canopy::ExtractSurfaceVoxels(mask);
  int  count = 0;
  for (int i = 0; i < 125; ++i)
    count += surface->GetBufferPointer()[i];
  EXPECT_EQ(count, 26); // all but the centre
  EXPECT_EQ(surface->GetPixel({ { 2, 2, 2 } }), 0);

  mask->FillBuffer(1); // the whole image: only the border layer is surface
  surface = canopy::ExtractSurfaceVoxels(mask);
  count = 0;
  for (int i = 0; i < 125; ++i)
    count += surface->GetBufferPointer()[i];
  EXPECT_EQ(count, 125 - 27);
}

TEST(SurfaceMetrics, SingleVoxelsExactAnisotropicDistance)
{
  auto test = MakeMask(12, 10, 8), reference = MakeMask(12, 10, 8);
  test->SetPixel({ { 2, 3, 1 } }, 1);
  reference->SetPixel({ { 7, 1, 5 } }, 1);
  const double expected =
    std::sqrt(std::pow(5 * kSpacing[0], 2) + std::pow(2 * kSpacing[1], 2) + std::pow(4 * kSpacing[2], 2));
  const auto d = canopy::ComputeSurfaceDistances(test, reference);
  EXPECT_NEAR(d.mean, expected, 1e-4);
  EXPECT_NEAR(d.percentile95, expected, 1e-4);
  EXPECT_NEAR(d.maximum, expected, 1e-4);
  EXPECT_EQ(d.testSamples, 1);
  EXPECT_EQ(d.referenceSamples, 1);
}

TEST(SurfaceMetrics, ConcentricSpheresDifferByTheRadii)
{
  const double r1 = 8.0, r2 = 12.0;
  auto         inner = MakeMask(40, 28, 20), outer = MakeMask(40, 28, 20);
  FillBall(inner.GetPointer(), r1, 1);
  FillBall(outer.GetPointer(), r2, 1);
  const auto d = canopy::ComputeSurfaceDistances(inner, outer);
  // Voxelised spheres: each surface sits within about half the largest voxel side of the true sphere.
  const double tolerance = kSpacing[2];
  EXPECT_NEAR(d.meanTestToReference, r2 - r1, tolerance);
  EXPECT_NEAR(d.meanReferenceToTest, r2 - r1, tolerance);
  EXPECT_NEAR(d.mean, r2 - r1, tolerance);
  EXPECT_NEAR(d.percentile95, r2 - r1, 1.5 * tolerance);
  EXPECT_NEAR(d.maximum, r2 - r1, 1.5 * tolerance);
  EXPECT_GE(d.maximum, d.percentile95);
  EXPECT_GE(d.percentile95, d.mean);
  // Symmetric: swapping test and reference swaps the directed means only.
  const auto swapped = canopy::ComputeSurfaceDistances(outer, inner);
  EXPECT_DOUBLE_EQ(swapped.mean, d.mean);
  EXPECT_DOUBLE_EQ(swapped.meanTestToReference, d.meanReferenceToTest);
}

TEST(SurfaceMetrics, IdenticalMasksGiveZero)
{
  auto a = MakeMask(30, 24, 18);
  FillBall(a.GetPointer(), 7.0, 1);
  const auto d = canopy::ComputeSurfaceDistances(a, a);
  EXPECT_EQ(d.mean, 0.0);
  EXPECT_EQ(d.percentile95, 0.0);
  EXPECT_EQ(d.maximum, 0.0);
  EXPECT_GT(d.testSamples, 100);
}

TEST(SurfaceMetrics, EmptyMasks)
{
  auto empty = MakeMask(8, 8, 8), full = MakeMask(8, 8, 8);
  full->SetPixel({ { 4, 4, 4 } }, 1);
  const auto both = canopy::ComputeSurfaceDistances(empty, empty);
  EXPECT_EQ(both.mean, 0.0);
  EXPECT_EQ(both.maximum, 0.0);
  const auto one = canopy::ComputeSurfaceDistances(empty, full);
  EXPECT_TRUE(std::isinf(one.mean));
  EXPECT_TRUE(std::isinf(one.percentile95));
  EXPECT_EQ(one.referenceSamples, 1);
  EXPECT_TRUE(canopy::ToJson(one)["meanMm"].is_null());
}

TEST(SurfaceMetrics, GridMismatchIsAnError)
{
  auto a = MakeMask(8, 8, 8), b = MakeMask(8, 8, 9);
  try
  {
    canopy::ComputeSurfaceDistances(a, b);
    FAIL() << "no error for different grids";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("not on the same grid"), std::string::npos) << e.GetDescription();
  }
  EXPECT_THROW(canopy::ComputeSurfaceDistances(nullptr, b), canopy::Error);
}

TEST(SurfaceMetrics, PerLabelMetrics)
{
  auto test = canopy::testing::MakeVolume<int>(30, 24, 18), reference = canopy::testing::MakeVolume<int>(30, 24, 18);
  test->SetSpacing(kSpacing);
  reference->SetSpacing(kSpacing);
  test->FillBuffer(0);
  reference->FillBuffer(0);
  // Label 1: the same box in both; label 2: a box shifted by one voxel along z; label 3: test only.
  for (int z = 2; z < 8; ++z)
    for (int y = 2; y < 8; ++y)
      for (int x = 2; x < 8; ++x)
      {
        test->SetPixel({ { x, y, z } }, 1);
        reference->SetPixel({ { x, y, z } }, 1);
        test->SetPixel({ { x + 12, y + 10, z + 1 } }, 2);
        reference->SetPixel({ { x + 12, y + 10, z } }, 2);
      }
  test->SetPixel({ { 25, 2, 2 } }, 3);
  EXPECT_EQ(canopy::FindLabels(test), (std::vector<int>{ 1, 2, 3 }));
  EXPECT_EQ(canopy::FindLabels(reference), (std::vector<int>{ 1, 2 }));

  const auto all = canopy::ComputeLabelMetrics(test, reference);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].label, 1);
  EXPECT_DOUBLE_EQ(all[0].overlap.dice, 1.0);
  EXPECT_EQ(all[0].surface.maximum, 0.0);
  EXPECT_EQ(all[1].label, 2);
  EXPECT_NEAR(all[1].overlap.dice, 5.0 / 6.0, 1e-12);
  EXPECT_NEAR(all[1].surface.maximum, kSpacing[2], 1e-5); // the shifted faces are one z step apart
  EXPECT_GT(all[1].surface.mean, 0.0);
  EXPECT_LT(all[1].surface.mean, kSpacing[2]);
  EXPECT_TRUE(std::isinf(all[2].surface.mean));
  EXPECT_EQ(canopy::ToJson(all[2])["label"], 3);

  // Each label is measured on its own bounding box: the same as on the whole grid, also for a
  // label touching the image border.
  for (int x = 0; x < 4; ++x)
  {
    test->SetPixel({ { x, 20, 10 } }, 4);
    reference->SetPixel({ { x + 1, 20, 10 } }, 4);
  }
  for (const auto & m : canopy::ComputeLabelMetrics(test, reference, { 1, 2, 3, 4, 9 }))
  {
    const auto t = canopy::LabelToMask(test, m.label), r = canopy::LabelToMask(reference, m.label);
    const auto whole = canopy::ComputeSurfaceDistances(t, r);
    EXPECT_EQ(m.overlap.truePositives, canopy::ComputeOverlap(t, r).truePositives) << m.label;
    EXPECT_EQ(m.overlap.dice, canopy::ComputeOverlap(t, r).dice) << m.label;
    EXPECT_EQ(m.surface.testSamples, whole.testSamples) << m.label;
    EXPECT_EQ(m.surface.referenceSamples, whole.referenceSamples) << m.label;
    EXPECT_EQ(m.surface.mean, whole.mean) << m.label;
    EXPECT_EQ(m.surface.maximum, whole.maximum) << m.label;
  }

  const auto chosen = canopy::ComputeLabelMetrics(test, reference, { 2 });
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_DOUBLE_EQ(chosen[0].surface.mean, all[1].surface.mean);
}

TEST(SurfaceMetrics, RoundToLabelsRejectsProbabilities)
{
  auto image = canopy::testing::MakeVolume<float>(4, 4, 4);
  image->FillBuffer(2.0f);
  EXPECT_EQ(canopy::RoundToLabels(image, "--test")->GetPixel({ { 1, 1, 1 } }), 2);
  image->SetPixel({ { 1, 2, 3 } }, 0.4f);
  try
  {
    canopy::RoundToLabels(image, "--test x.nii");
    FAIL() << "no error for a probability map";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("--test x.nii"), std::string::npos) << e.GetDescription();
  }
}

} // namespace
