// The CPU filter bank (canopy/FilterBank.h) against ITK 5.2's recursive Gaussian filters, the
// implementation it replaces in the forest's channels: random 2D and 3D volumes, anisotropic spacing,
// odd sizes and a 4-voxel axis, each filter at two sigmas. Also: the same values on 1 and 4 threads,
// a line filtered in place, position channels and the input checks.
#include "FilterBankTestSupport.h"
#include "canopy/Errors.h"
#include "canopy/RecursiveGaussian.h"
#include "itkGradientMagnitudeRecursiveGaussianImageFilter.h"
#include "itkImage.h"
#include "itkLaplacianRecursiveGaussianImageFilter.h"
#include "itkSmoothingRecursiveGaussianImageFilter.h"

#include <gtest/gtest.h>

namespace
{
using namespace canopy;
using namespace canopy::testing;
using Kind = FilterBankChannelSpec::Kind;

template<unsigned D, typename TFilter>
std::vector<float>
RunItk(const std::vector<float> & volume, const FilterBankGrid & grid, double sigma)
{
  using Image = itk::Image<float, D>;
  auto                        image = Image::New();
  typename Image::SizeType    size;
  typename Image::SpacingType spacing;
  for (unsigned d = 0; d < D; ++d)
  {
    size[d] = grid.Size(int(d));
    spacing[d] = grid.spacing[d];
  }
  image->SetRegions(size);
  image->SetSpacing(spacing);
  image->Allocate();
  std::copy(volume.begin(), volume.end(), image->GetBufferPointer());
  auto filter = TFilter::New();
  filter->SetInput(image);
  filter->SetSigma(sigma);
  filter->Update();
  const float * out = filter->GetOutput()->GetBufferPointer();
  return std::vector<float>(out, out + volume.size());
}

template<unsigned D>
std::vector<float>
ItkChannel(const std::vector<float> & volume, const FilterBankGrid & grid, const FilterBankChannelSpec & spec)
{
  using Image = itk::Image<float, D>;
  if (spec.kind == Kind::Gaussian)
    return RunItk<D, itk::SmoothingRecursiveGaussianImageFilter<Image, Image>>(volume, grid, spec.sigma);
  if (spec.kind == Kind::GradientMagnitude)
    return RunItk<D, itk::GradientMagnitudeRecursiveGaussianImageFilter<Image, Image>>(volume, grid, spec.sigma);
  return RunItk<D, itk::LaplacianRecursiveGaussianImageFilter<Image, Image>>(volume, grid, spec.sigma);
}

TEST(FilterBank, CpuMatchesItkRecursiveGaussianFilters)
{
  // The same operations in the same order as ITK: equal up to float rounding of the last step.
  constexpr double tolerance = 1e-6;
  std::uint64_t    seed = 11;
  for (const auto & grid : FilterBankTestGrids())
  {
    const auto volume = RandomFilterBankVolume(grid, seed++);
    const auto specs = FilteredSpecs();
    const auto channels = FilterBankChannels(volume, grid, specs, ResolvedBackend{}, 0);
    for (std::size_t k = 0; k < specs.size(); ++k)
    {
      const auto reference =
        grid.dimension == 3 ? ItkChannel<3>(volume, grid, specs[k]) : ItkChannel<2>(volume, grid, specs[k]);
      const double error = RelativeMaxError(channels[k], reference);
      EXPECT_TRUE(error <= tolerance) << SpecName(specs[k]) << " on " << grid.nx << "x" << grid.ny << "x" << grid.nz
                                      << " (" << grid.dimension << "D): relative error " << error;
    }
  }
}

TEST(FilterBank, SameValuesOnOneAndFourThreads)
{
  const auto grid = FilterBankTestGrids()[0];
  const auto volume = RandomFilterBankVolume(grid, 5);
  const auto specs = FilteredSpecs();
  const auto one = FilterBankChannels(volume, grid, specs, ResolvedBackend{}, 1);
  const auto four = FilterBankChannels(volume, grid, specs, ResolvedBackend{}, 4);
  for (std::size_t k = 0; k < specs.size(); ++k)
    EXPECT_EQ(one[k], four[k]) << SpecName(specs[k]);
}

TEST(FilterBank, LineFilteredInPlaceEqualsOutOfPlace)
{
  const FilterBankGrid grid = FilterBankTestGrids()[0];
  const auto           volume = RandomFilterBankVolume(grid, 9);
  for (int order = 0; order <= 2; ++order)
    for (int axis = 0; axis < 3; ++axis)
    {
      const auto         c = MakeRecursiveGaussianCoefficients(1.3, grid.spacing[axis], order);
      const VolumeLines  lines{ grid.nx, grid.ny, grid.nz, axis };
      std::vector<float> apart(volume.size()), inPlace = volume;
      RecursiveGaussianPassCPU(volume.data(), apart.data(), lines, c, 2);
      RecursiveGaussianPassCPU(inPlace.data(), inPlace.data(), lines, c, 2);
      EXPECT_EQ(apart, inPlace) << "order " << order << ", axis " << axis;
    }
}

TEST(FilterBank, SmoothingKeepsAConstantAndDerivativesOfAConstantVanish)
{
  FilterBankGrid           grid = FilterBankTestGrids()[0];
  const std::vector<float> constant(grid.Voxels(), 7.0f);
  const auto               channels = FilterBankChannels(constant, grid, FilteredSpecs(), ResolvedBackend{}, 0);
  for (std::size_t k = 0; k < channels.size(); ++k)
  {
    const float expected = FilteredSpecs()[k].kind == Kind::Gaussian ? 7.0f : 0.0f;
    for (float v : channels[k])
      ASSERT_TRUE(std::fabs(v - expected) <= 1e-4f) << SpecName(FilteredSpecs()[k]) << ": " << v;
  }
}

TEST(FilterBank, IntensityAndPositionChannels)
{
  FilterBankGrid grid;
  grid.nx = 3, grid.ny = 2, grid.nz = 5;
  std::vector<float> volume(grid.Voxels());
  for (std::size_t i = 0; i < volume.size(); ++i)
    volume[i] = float(i);
  const std::vector<FilterBankChannelSpec> specs{ { Kind::Intensity, 0, 0 },
                                                  { Kind::Position, 0, 0 },
                                                  { Kind::Position, 0, 2 } };
  const auto                               channels = FilterBankChannels(volume, grid, specs, ResolvedBackend{}, 0);
  EXPECT_EQ(channels[0], volume);
  EXPECT_EQ(channels[1][1], 0.5f);                 // x = 1 of 0..2
  EXPECT_EQ(channels[2][grid.Voxels() - 1], 1.0f); // z = 4 of 0..4
  EXPECT_EQ(channels[2][3 * 2 * 2], 0.5f);         // z = 2
}

TEST(FilterBank, ReferencePositionIsTheCoordinateInTheFrame)
{
  // A grid placed in the world (origin, spacing, axes x and y swapped) and a frame of half sizes 2, 4, 1:
  // each voxel reads (point - centre) . axis / half size.
  FilterBankGrid grid;
  grid.nx = 3, grid.ny = 2, grid.nz = 2;
  grid.spacing[0] = 2.0, grid.origin[0] = 10.0, grid.origin[1] = -1.0;
  grid.direction[0][0] = grid.direction[1][1] = 0.0;
  grid.direction[0][1] = grid.direction[1][0] = 1.0; // physical x = 10 + y index, physical y = -1 + 2 x index
  ReferenceFrame frame;
  frame.center[0] = 10.0, frame.center[1] = 1.0;
  frame.halfSize[0] = 2.0, frame.halfSize[1] = 4.0;
  grid.reference = &frame;
  const std::vector<float>                 volume(grid.Voxels(), 0.0f);
  const std::vector<FilterBankChannelSpec> specs{ { Kind::ReferencePosition, 0, 0 },
                                                  { Kind::ReferencePosition, 0, 1 },
                                                  { Kind::ReferencePosition, 0, 2 } };
  const auto                               channels = FilterBankChannels(volume, grid, specs, ResolvedBackend{}, 0);
  std::size_t                              i = 0;
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 3; ++x, ++i)
      {
        EXPECT_FLOAT_EQ(channels[0][i], float((10.0 + y - 10.0) / 2.0));
        EXPECT_FLOAT_EQ(channels[1][i], float((-1.0 + 2.0 * x - 1.0) / 4.0));
        EXPECT_FLOAT_EQ(channels[2][i], float(z));
      }
  // Without a frame, or with a flat one: an error.
  grid.reference = nullptr;
  EXPECT_THROW(FilterBankChannels(volume, grid, specs, ResolvedBackend{}, 0), canopy::Error);
  frame.halfSize[1] = 0.0;
  grid.reference = &frame;
  EXPECT_THROW(FilterBankChannels(volume, grid, specs, ResolvedBackend{}, 0), canopy::Error);
}

TEST(FilterBank, RejectsTooSmallAxesAndBadSpacing)
{
  FilterBankGrid grid;
  grid.nx = 8, grid.ny = 3, grid.nz = 8;
  const std::vector<float>                 volume(grid.Voxels(), 1.0f);
  const std::vector<FilterBankChannelSpec> gaussian{ { Kind::Gaussian, 1.0, 0 } };
  EXPECT_THROW(FilterBankChannels(volume, grid, gaussian, ResolvedBackend{}, 0), canopy::Error);
  // Position and intensity need no filtering: any size.
  EXPECT_NO_THROW(FilterBankChannels(volume, grid, { { Kind::Position, 0, 1 } }, ResolvedBackend{}, 0));
  grid.ny = 8;
  grid.spacing[1] = 0.0;
  const std::vector<float> bigger(grid.Voxels(), 1.0f);
  EXPECT_THROW(FilterBankChannels(bigger, grid, gaussian, ResolvedBackend{}, 0), canopy::Error);
}

} // namespace
