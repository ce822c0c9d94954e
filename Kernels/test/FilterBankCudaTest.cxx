// The filter bank on the GPU against the CPU reference (canopy/FilterBank.h): random 2D and 3D
// volumes, anisotropic spacing, odd sizes and a 4-voxel axis, each filter at two sigmas, plus
// intensity, position and reference-frame position channels. The kernel is compiled without contracted multiply-adds,
// so the values are expected equal; the tolerance (1e-6 of the channel's largest value) is what the test holds, and a
// NaN fails. Skipped without a GPU.
#include "FilterBankTestSupport.h"
#include "canopyTesting.h"

#include <gtest/gtest.h>

#include <iostream>

namespace
{
using namespace canopy;
using namespace canopy::testing;
using Kind = FilterBankChannelSpec::Kind;

TEST(FilterBankCuda, GpuMatchesCpuOnRandomVolumes)
{
  CANOPY_REQUIRE_GPU();
  constexpr double tolerance = 1e-6;
  const auto       gpu = ResolveBackend(BackendRequest::Parse("cuda"));
  std::uint64_t    seed = 21;
  ReferenceFrame   frame; // a reference pose tilted about z, for the pose-frame position channels
  frame.center[0] = 3.0, frame.center[1] = -2.0, frame.halfSize[0] = 5.0, frame.halfSize[2] = 2.5;
  frame.axes[0][0] = frame.axes[1][1] = 0.6, frame.axes[0][1] = 0.8, frame.axes[1][0] = -0.8;
  for (auto grid : FilterBankTestGrids())
  {
    grid.origin[0] = -4.0, grid.origin[2] = 1.5;
    grid.reference = &frame;
    const auto volume = RandomFilterBankVolume(grid, seed++);
    auto       specs = FilteredSpecs();
    specs.push_back({ Kind::Intensity, 0, 0 });
    specs.push_back({ Kind::Position, 0, 1 });
    specs.push_back({ Kind::ReferencePosition, 0, 0 });
    specs.push_back({ Kind::ReferencePosition, 0, 2 });
    const auto cpu = FilterBankChannels(volume, grid, specs, ResolvedBackend{}, 0);
    const auto device = FilterBankChannels(volume, grid, specs, gpu, 0);
    for (std::size_t k = 0; k < specs.size(); ++k)
    {
      const double error = RelativeMaxError(device[k], cpu[k]);
      std::size_t  equal = 0;
      for (std::size_t i = 0; i < cpu[k].size(); ++i)
        equal += device[k][i] == cpu[k][i];
      EXPECT_TRUE(error <= tolerance) << SpecName(specs[k]) << " on " << grid.nx << "x" << grid.ny << "x" << grid.nz
                                      << ": relative error " << error;
      std::cout << SpecName(specs[k]) << " on " << grid.nx << "x" << grid.ny << "x" << grid.nz << ": relative error "
                << error << ", " << equal << " of " << cpu[k].size() << " voxels equal\n";
    }
  }
}

TEST(FilterBankCuda, LargeVolumeMatchesCpu)
{
  // A volume of brain size (181 x 217 x 181 at 1 mm), enough lines to fill the GPU.
  CANOPY_REQUIRE_GPU();
  FilterBankGrid grid;
  grid.nx = 181, grid.ny = 217, grid.nz = 181;
  const auto                               volume = RandomFilterBankVolume(grid, 3);
  const std::vector<FilterBankChannelSpec> specs{ { Kind::Gaussian, 1.0, 0 },
                                                  { Kind::GradientMagnitude, 1.0, 0 },
                                                  { Kind::LaplacianOfGaussian, 2.0, 0 } };
  const auto                               cpu = FilterBankChannels(volume, grid, specs, ResolvedBackend{}, 0);
  const auto device = FilterBankChannels(volume, grid, specs, ResolveBackend(BackendRequest::Parse("cuda")), 0);
  for (std::size_t k = 0; k < specs.size(); ++k)
  {
    const double error = RelativeMaxError(device[k], cpu[k]);
    EXPECT_TRUE(error <= 1e-6) << SpecName(specs[k]) << ": relative error " << error;
  }
}

TEST(FilterBankCuda, NaNInputPropagatesAsOnTheCpu)
{
  // A NaN voxel spreads along its lines on both backends (as in ITK); the GPU must not hide it.
  CANOPY_REQUIRE_GPU();
  FilterBankGrid grid = FilterBankTestGrids()[1];
  auto           volume = RandomFilterBankVolume(grid, 4);
  volume[volume.size() / 2] = std::nanf("");
  const std::vector<FilterBankChannelSpec> specs{ { Kind::Gaussian, 1.0, 0 } };
  const auto                               cpu = FilterBankChannels(volume, grid, specs, ResolvedBackend{}, 0);
  const auto  device = FilterBankChannels(volume, grid, specs, ResolveBackend(BackendRequest::Parse("cuda")), 0);
  std::size_t mismatched = 0;
  for (std::size_t i = 0; i < cpu[0].size(); ++i)
    mismatched += std::isnan(cpu[0][i]) != std::isnan(device[0][i]) ||
                  (!std::isnan(cpu[0][i]) && !(std::fabs(cpu[0][i] - device[0][i]) <= 1e-3f));
  EXPECT_EQ(mismatched, 0u);
}

} // namespace
