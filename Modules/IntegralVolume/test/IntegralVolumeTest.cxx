#include "canopy/IntegralVolume.h"
#include "canopy/IntegralVolumeView.h"
#include "canopyTesting.h"
#include "itkIntegralVolumeImageFilter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace
{
using canopy::IntegralVolumeView;
using canopy::testing::MakeRandomVolume;

template <typename TPixel>
double
BruteForceSum(const itk::Image<TPixel, 3> * image, int x0, int y0, int z0, int x1, int y1, int z1)
{
  const auto size = image->GetLargestPossibleRegion().GetSize();
  const int  nx = static_cast<int>(size[0]), ny = static_cast<int>(size[1]);
  double     sum = 0.0;
  for (int z = z0; z < z1; ++z)
    for (int y = y0; y < y1; ++y)
    {
      const TPixel * row = image->GetBufferPointer() + (static_cast<std::int64_t>(z) * ny + y) * nx;
      for (int x = x0; x < x1; ++x)
        sum += static_cast<double>(row[x]);
    }
  return sum;
}

IntegralVolumeView
ViewOf(const itk::Image<double, 3> * table)
{
  const auto size = table->GetLargestPossibleRegion().GetSize();
  return IntegralVolumeView{ table->GetBufferPointer(), static_cast<int>(size[0]) - 1, static_cast<int>(size[1]) - 1,
                             static_cast<int>(size[2]) - 1 };
}

void
ExpectRelativelyClose(double expected, double actual, double tolerance)
{
  const double error = std::abs(expected - actual) / std::max(1.0, std::abs(expected));
  EXPECT_TRUE(error <= tolerance) << "expected " << expected << " got " << actual << " (relative error " << error << ")";
}

TEST(IntegralVolume, FilterMatchesBruteForceOnRandomBoxes)
{
  auto input = MakeRandomVolume<short>(37, 29, 23, -1024, 3071, 7);
  auto filter = itk::IntegralVolumeImageFilter<itk::Image<short, 3>>::New();
  filter->SetInput(input);
  filter->SetBackend("cpu");
  filter->Update();
  const IntegralVolumeView view = ViewOf(filter->GetOutput());
  ASSERT_EQ(view.nx, 37);
  std::mt19937 rng(3);
  for (int trial = 0; trial < 500; ++trial)
  {
    int c[6];
    const int n[3] = { view.nx, view.ny, view.nz };
    for (int d = 0; d < 3; ++d)
    {
      std::uniform_int_distribution<int> dist(0, n[d]);
      int a = dist(rng), b = dist(rng);
      c[d] = std::min(a, b);
      c[d + 3] = std::max(a, b);
    }
    const double expected = BruteForceSum(input.GetPointer(), c[0], c[1], c[2], c[3], c[4], c[5]);
    EXPECT_EQ(expected, canopy::BoxSum(view, c[0], c[1], c[2], c[3], c[4], c[5])); // exact for integers
  }
}

TEST(IntegralVolume, GeometryIsPreservedAndRegionStartsOneLower)
{
  auto input = MakeRandomVolume<float>(8, 6, 5, 0, 1, 1);
  auto filter = itk::IntegralVolumeImageFilter<itk::Image<float, 3>>::New();
  filter->SetInput(input);
  filter->SetBackend("cpu");
  filter->Update();
  auto * out = filter->GetOutput();
  EXPECT_EQ(out->GetOrigin(), input->GetOrigin());
  EXPECT_EQ(out->GetSpacing(), input->GetSpacing());
  EXPECT_EQ(out->GetDirection(), input->GetDirection());
  const auto region = out->GetLargestPossibleRegion();
  EXPECT_EQ(region.GetIndex()[0], -1);
  EXPECT_EQ(region.GetSize()[0], 9u);
  EXPECT_EQ(region.GetSize()[2], 6u);
  // Physical point of voxel (2,3,4) is the same in both images.
  itk::Point<double, 3> pIn, pOut;
  input->TransformIndexToPhysicalPoint({ { 2, 3, 4 } }, pIn);
  out->TransformIndexToPhysicalPoint({ { 2, 3, 4 } }, pOut);
  EXPECT_EQ(pIn, pOut);
  // output(i,j,k) = inclusive sum; the plane at index -1 is zero.
  EXPECT_EQ(out->GetPixel({ { -1, 2, 3 } }), 0.0);
  EXPECT_NEAR(out->GetPixel({ { 7, 5, 4 } }), BruteForceSum(input.GetPointer(), 0, 0, 0, 8, 6, 5), 1e-9);
}

TEST(IntegralVolume, ClippedBoxSumTreatsOutsideAsZero)
{
  auto               input = MakeRandomVolume<unsigned char>(10, 9, 8, 0, 255, 5);
  std::vector<double> table(canopy::PaddedTableSize(10, 9, 8));
  canopy::ComputeIntegralVolumeCPU(input->GetBufferPointer(), 10, 9, 8, table.data(), 1);
  const IntegralVolumeView view{ table.data(), 10, 9, 8 };
  EXPECT_EQ(canopy::ClippedBoxSum(view, -5, -5, -5, 3, 4, 2), BruteForceSum(input.GetPointer(), 0, 0, 0, 3, 4, 2));
  EXPECT_EQ(canopy::ClippedBoxSum(view, 8, 7, 6, 40, 40, 40), BruteForceSum(input.GetPointer(), 8, 7, 6, 10, 9, 8));
  EXPECT_EQ(canopy::ClippedBoxSum(view, 20, 0, 0, 30, 9, 8), 0.0); // wholly outside
  EXPECT_EQ(canopy::ClippedBoxSum(view, 5, 5, 5, 2, 2, 2), 0.0);   // inverted
  EXPECT_EQ(canopy::ClippedBoxSum(view, -100, -100, -100, 100, 100, 100), BruteForceSum(input.GetPointer(), 0, 0, 0, 10, 9, 8));
}

TEST(IntegralVolume, MultithreadedEqualsSingleThreaded)
{
  auto                input = MakeRandomVolume<float>(61, 47, 33, -1000, 1000, 11);
  const auto          n = canopy::PaddedTableSize(61, 47, 33);
  std::vector<double> one(n), many(n);
  canopy::ComputeIntegralVolumeCPU(input->GetBufferPointer(), 61, 47, 33, one.data(), 1);
  canopy::ComputeIntegralVolumeCPU(input->GetBufferPointer(), 61, 47, 33, many.data(), 4);
  EXPECT_EQ(one, many);
}

TEST(IntegralVolume, NonFiniteVoxelsReadAsZeroAndCounted)
{
  auto input = MakeRandomVolume<float>(6, 5, 4, 0, 10, 2);
  input->SetPixel({ { 1, 1, 1 } }, std::numeric_limits<float>::quiet_NaN());
  input->SetPixel({ { 2, 3, 1 } }, std::numeric_limits<float>::infinity());
  auto filter = itk::IntegralVolumeImageFilter<itk::Image<float, 3>>::New();
  filter->SetInput(input);
  filter->SetBackend("cpu");
  filter->Update();
  EXPECT_EQ(filter->GetNumberOfNonFiniteVoxels(), 2u);
  const double total = filter->GetOutput()->GetPixel({ { 5, 4, 3 } });
  EXPECT_TRUE(std::isfinite(total));
  input->SetPixel({ { 1, 1, 1 } }, 0.0f);
  input->SetPixel({ { 2, 3, 1 } }, 0.0f);
  EXPECT_NEAR(total, BruteForceSum(input.GetPointer(), 0, 0, 0, 6, 5, 4), 1e-9);
}

TEST(IntegralVolume, EmptyImageIsAClearError)
{
  using ImageType = itk::Image<float, 3>;
  auto image = ImageType::New();
  ImageType::RegionType region;
  region.SetSize({ { 4, 0, 3 } });
  image->SetRegions(region);
  image->Allocate();
  auto filter = itk::IntegralVolumeImageFilter<ImageType>::New();
  filter->SetInput(image);
  filter->SetBackend("cpu");
  try
  {
    filter->Update();
    FAIL() << "an empty image must be rejected";
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("empty"), std::string::npos) << e.GetDescription();
  }
}

TEST(IntegralVolume, BadBackendNameIsAClearError)
{
  auto filter = itk::IntegralVolumeImageFilter<itk::Image<float, 3>>::New();
  filter->SetInput(MakeRandomVolume<float>(4, 4, 4, 0, 1, 1));
  filter->SetBackend("cuda:x");
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}

// The accuracy criterion: any box in a 512^3 CT-like volume within 1e-9 relative of a
// double brute-force sum.
TEST(IntegralVolume, LargeCtVolumeBoxSumsAreExact)
{
  const int           n = 512;
  auto                input = MakeRandomVolume<short>(n, n, n, -1024, 3071, 42);
  std::vector<double> table(canopy::PaddedTableSize(n, n, n));
  canopy::ComputeIntegralVolumeCPU(input->GetBufferPointer(), n, n, n, table.data());
  const IntegralVolumeView view{ table.data(), n, n, n };
  ExpectRelativelyClose(BruteForceSum(input.GetPointer(), 0, 0, 0, n, n, n), canopy::BoxSum(view, 0, 0, 0, n, n, n), 1e-9);
  std::mt19937 rng(9);
  for (int trial = 0; trial < 20; ++trial)
  {
    std::uniform_int_distribution<int> lo(0, n - 1);
    int x0 = lo(rng), y0 = lo(rng), z0 = lo(rng);
    std::uniform_int_distribution<int> ext(1, 96);
    int x1 = std::min(n, x0 + ext(rng)), y1 = std::min(n, y0 + ext(rng)), z1 = std::min(n, z0 + ext(rng));
    ExpectRelativelyClose(BruteForceSum(input.GetPointer(), x0, y0, z0, x1, y1, z1),
                          canopy::BoxSum(view, x0, y0, z0, x1, y1, z1), 1e-9);
  }
}

} // namespace
