// GPU-vs-CPU parity of Haar responses on random volumes and banks; skipped without a GPU.
#include "canopy/HaarResponseEngine.h"
#include "canopyHaarFeatureBank.h"
#include "canopyTesting.h"
#include "itkHaarFeatureMapImageFilter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace
{
using namespace canopy;

void
ExpectClose(const std::vector<float> & cpu, const std::vector<float> & gpu, double tolerance)
{
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i)
  {
    const double error = std::abs(double(cpu[i]) - double(gpu[i])) / std::max(1.0, std::abs(double(cpu[i])));
    ASSERT_TRUE(error <= tolerance) << "entry " << i << ": cpu " << cpu[i] << " gpu " << gpu[i];
  }
}

TEST(HaarCuda, PointsMatchCpu)
{
  CANOPY_REQUIRE_GPU();
  const int nx = 90, ny = 70, nz = 60;
  auto      image = canopy::testing::MakeRandomVolume<short>(nx, ny, nz, -1024, 3071, 21);
  RandomHaarBankOptions options;
  options.count = 500;
  options.seed = 4;
  const auto resolved = ResolveHaarBank(GenerateRandomHaarBank(options), { 21, 17, 25 });
  std::mt19937                   rng(5);
  std::vector<VoxelIndex3>       points(20000);
  for (auto & p : points)
    p = VoxelIndex3{ int(rng() % nx), int(rng() % ny), int(rng() % nz) };
  std::vector<float> cpu(resolved.size() * points.size()), gpu(cpu.size(), std::nanf(""));
  {
    HaarResponseEngine engine(ResolvedBackend{});
    engine.SetVolumeFromVoxels(image->GetBufferPointer(), nx, ny, nz);
    engine.SetFeatures(resolved.data(), int(resolved.size()));
    engine.EvaluateAtPoints(points.data(), std::int64_t(points.size()), cpu.data());
  }
  {
    // A small device budget forces several slices: slicing must not change results.
    HaarResponseEngine engine(ResolveBackend(BackendRequest::Parse("cuda")), 0, std::size_t(4) << 20);
    engine.SetVolumeFromVoxels(image->GetBufferPointer(), nx, ny, nz);
    engine.SetFeatures(resolved.data(), int(resolved.size()));
    engine.EvaluateAtPoints(points.data(), std::int64_t(points.size()), gpu.data());
  }
  ExpectClose(cpu, gpu, 1e-6);
}

TEST(HaarCuda, FeatureMapFilterMatchesCpu)
{
  CANOPY_REQUIRE_GPU();
  using ImageType = itk::Image<float, 3>;
  auto                  image = canopy::testing::MakeRandomVolume<float>(40, 33, 29, -1, 1, 2);
  RandomHaarBankOptions options;
  options.count = 24;
  const auto bank = GenerateRandomHaarBank(options);
  std::vector<float> results[2];
  const char *       backends[2] = { "cpu", "cuda" };
  for (int b = 0; b < 2; ++b)
  {
    auto filter = itk::HaarFeatureMapImageFilter<ImageType>::New();
    filter->SetInput(image);
    filter->SetFeatureBank(bank);
    filter->SetSampleBoxSize({ 10, 8, 12 });
    filter->SetBackend(backends[b]);
    filter->Update();
    const auto * out = filter->GetOutput();
    results[b].assign(out->GetBufferPointer(),
                      out->GetBufferPointer() + out->GetLargestPossibleRegion().GetNumberOfPixels() * bank.size());
  }
  ExpectClose(results[0], results[1], 1e-6);
}

} // namespace
