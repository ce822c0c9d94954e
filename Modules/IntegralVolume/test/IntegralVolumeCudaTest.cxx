// GPU-vs-CPU parity of the summed-volume table; skipped (never passed) without a GPU.
#include "canopy/Errors.h"
#include "canopy/IntegralVolume.h"
#include "canopy/IntegralVolumeDispatch.h"
#include "canopyTesting.h"
#include "itkIntegralVolumeImageFilter.h"

#include <gtest/gtest.h>

#include <cmath>

namespace
{
using canopy::testing::MakeRandomVolume;

template <typename TPixel>
void
ExpectGpuMatchesCpu(int nx, int ny, int nz, double low, double high, double tolerance)
{
  auto                input = MakeRandomVolume<TPixel>(nx, ny, nz, low, high, nx * 131 + nz);
  const auto          n = canopy::PaddedTableSize(nx, ny, nz);
  std::vector<double> cpu(n), gpu(n, std::nan(""));
  canopy::ComputeIntegralVolumeCPU(input->GetBufferPointer(), nx, ny, nz, cpu.data());
  canopy::ComputeIntegralVolume(input->GetBufferPointer(), nx, ny, nz, gpu.data(),
                                canopy::ResolveBackend(canopy::BackendRequest::Parse("cuda")));
  double worst = 0.0;
  for (std::int64_t i = 0; i < n; ++i)
  {
    const double error = std::abs(cpu[i] - gpu[i]) / std::max(1.0, std::abs(cpu[i]));
    ASSERT_TRUE(error <= tolerance) << "entry " << i << ": cpu " << cpu[i] << " gpu " << gpu[i];
    worst = std::max(worst, error);
  }
  ::testing::Test::RecordProperty("worst_relative_error", std::to_string(worst));
}

TEST(IntegralVolumeCuda, MatchesCpuForIntegerCt)
{
  CANOPY_REQUIRE_GPU();
  ExpectGpuMatchesCpu<short>(131, 67, 45, -1024, 3071, 0.0); // integer sums are exact in double
  ExpectGpuMatchesCpu<unsigned char>(1, 1, 1, 0, 255, 0.0);
  ExpectGpuMatchesCpu<unsigned short>(33, 1, 70, 0, 65535, 0.0);
}

TEST(IntegralVolumeCuda, MatchesCpuForFloat)
{
  CANOPY_REQUIRE_GPU();
  // Float sums differ only by summation order (x: warp scan vs running sum).
  ExpectGpuMatchesCpu<float>(97, 64, 31, -1.0, 1.0, 1e-9);
  ExpectGpuMatchesCpu<double>(40, 41, 42, 0.0, 1.0, 1e-12);
}

TEST(IntegralVolumeCuda, Large512CtMatchesCpu)
{
  CANOPY_REQUIRE_GPU();
  ExpectGpuMatchesCpu<short>(512, 512, 512, -1024, 3071, 0.0);
}

TEST(IntegralVolumeCuda, FilterOnGpuEqualsFilterOnCpu)
{
  CANOPY_REQUIRE_GPU();
  using ImageType = itk::Image<float, 3>;
  auto input = MakeRandomVolume<float>(50, 40, 30, 0, 100, 5);
  input->SetPixel({ { 3, 3, 3 } }, std::nanf(""));
  auto cpu = itk::IntegralVolumeImageFilter<ImageType>::New();
  cpu->SetInput(input);
  cpu->SetBackend("cpu");
  cpu->Update();
  auto gpu = itk::IntegralVolumeImageFilter<ImageType>::New();
  gpu->SetInput(input);
  gpu->SetBackend("cuda");
  gpu->Update();
  EXPECT_NE(std::string(gpu->GetBackendUsed()).find("cuda"), std::string::npos);
  EXPECT_EQ(gpu->GetNumberOfNonFiniteVoxels(), 1u);
  const auto   n = gpu->GetOutput()->GetLargestPossibleRegion().GetNumberOfPixels();
  const double *a = cpu->GetOutput()->GetBufferPointer(), *b = gpu->GetOutput()->GetBufferPointer();
  for (itk::SizeValueType i = 0; i < n; ++i)
    ASSERT_TRUE(std::abs(a[i] - b[i]) <= 1e-9 * std::max(1.0, std::abs(a[i]))) << i;
}

TEST(IntegralVolumeCuda, OutOfMemoryNamesTheSize)
{
  CANOPY_REQUIRE_GPU();
  // 8192^3 shorts: 1 TiB of input, more than any GPU has.
  const int n = 8192;
  short     dummy = 0;
  try
  {
    std::vector<double> none;
    canopy::ComputeIntegralVolume(&dummy, n, n, n, none.data(), canopy::ResolveBackend(canopy::BackendRequest::Parse("cuda")));
    FAIL() << "expected DeviceOutOfMemoryError";
  }
  catch (const canopy::DeviceOutOfMemoryError & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("MiB"), std::string::npos) << e.GetDescription();
  }
}

} // namespace
