// Cases for the device pyramid (SteerableResponseEngine::SetImage, PyramidMath.h): random volumes with
// non-finite voxels, isotropic and anisotropic grids, a turned direction, downsampled and upsampled
// axes; and the pipeline of PyramidMath.h run on the host, which must equal SteerablePyramid::Build
// (the ITK filters) before the device is asked to.
#pragma once

#include "canopySteerablePyramid.h"
#include "canopySteerableResponseEngine.h"
#include "canopyTesting.h"
#include "canopyVolumePreparation.h"

#include "canopy/SteerableEvaluation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace canopy::testing
{

struct DevicePyramidCase
{
  std::string                   name;
  itk::Image<float, 3>::Pointer image; // raw intensities (with a few NaN and inf voxels)
  SteerablePyramidOptions       options;
  IntensityNormalization        normalization;
};

inline std::vector<DevicePyramidCase>
DevicePyramidCases()
{
  std::vector<DevicePyramidCase> cases;
  auto make = [](int nx, int ny, int nz, std::uint64_t seed, itk::Vector<double, 3> spacing, bool turned)
  {
    auto image = MakeRandomVolume<float>(nx, ny, nz, -40.0, 215.0, seed);
    image->SetSpacing(spacing);
    itk::Point<double, 3> origin;
    origin[0] = -12.25;
    origin[1] = 3.5;
    origin[2] = 101.0;
    image->SetOrigin(origin);
    if (turned)
    {
      const double              a = 0.3, b = -0.2;
      itk::Matrix<double, 3, 3> d;
      d(0, 0) = std::cos(a), d(0, 1) = -std::sin(a), d(0, 2) = 0;
      d(1, 0) = std::sin(a) * std::cos(b), d(1, 1) = std::cos(a) * std::cos(b), d(1, 2) = -std::sin(b);
      d(2, 0) = std::sin(a) * std::sin(b), d(2, 1) = std::cos(a) * std::sin(b), d(2, 2) = std::cos(b);
      image->SetDirection(d);
    }
    float *         v = image->GetBufferPointer();
    const auto      n = image->GetLargestPossibleRegion().GetNumberOfPixels();
    std::mt19937_64 rng(seed);
    for (int k = 0; k < 7; ++k)
      v[rng() % n] = k % 2 ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    return image;
  };
  itk::Vector<double, 3> unit;
  unit.Fill(1.0);
  itk::Vector<double, 3> anisotropic;
  anisotropic[0] = 0.9;
  anisotropic[1] = 1.3;
  anisotropic[2] = 2.5;
  IntensityNormalization percentile; // 1 / 99
  IntensityNormalization window;
  window.method = "window";
  window.windowLow = 10.0;
  window.windowHigh = 180.0;
  cases.push_back({ "isotropic 1/2/4 mm, percentile", make(37, 29, 23, 5, unit, false), {}, percentile });
  cases.push_back({ "anisotropic turned 1/2/3.7 mm (upsampled axes), window",
                    make(41, 30, 13, 6, anisotropic, true),
                    SteerablePyramidOptions{ { 1.0, 2.0, 3.7 }, {} },
                    window });
  cases.push_back({ "factors 1/2/3, percentile 5-95",
                    make(33, 35, 31, 7, anisotropic, false),
                    SteerablePyramidOptions{ {}, { 1.0, 2.0, 3.0 } },
                    []
                    {
                      IntensityNormalization n;
                      n.lowPercentile = 5;
                      n.highPercentile = 95;
                      return n;
                    }() });
  return cases;
}

inline itk::Image<float, 3>::Pointer
NormalisedCopy(const DevicePyramidCase & c)
{
  auto copy = itk::Image<float, 3>::New();
  copy->CopyInformation(c.image);
  copy->SetRegions(c.image->GetLargestPossibleRegion());
  copy->Allocate();
  std::copy_n(
    c.image->GetBufferPointer(), c.image->GetLargestPossibleRegion().GetNumberOfPixels(), copy->GetBufferPointer());
  NormalizeIntensities(copy, c.normalization);
  return copy;
}

/** The device pipeline's arithmetic (PyramidMath.h) in plain host loops on a normalised image. */
inline std::vector<std::vector<SteerableVoxel>>
PyramidMathOnHost(const itk::Image<float, 3> * normalised, const SteerablePyramidOptions & options)
{
  const auto                               size = normalised->GetLargestPossibleRegion().GetSize();
  const int                                nx = int(size[0]), ny = int(size[1]), nz = int(size[2]);
  const std::int64_t                       plane = std::int64_t(nx) * ny, n = plane * nz;
  std::vector<std::vector<SteerableVoxel>> levels;
  for (const auto & plan : SteerablePyramid::Plan(normalised, options))
  {
    std::vector<float> source(normalised->GetBufferPointer(), normalised->GetBufferPointer() + n);
    std::vector<float> intensity = source;
    if (!plan.sameAsInput)
    {
      if (plan.smooth)
        for (int pass = 0; pass < 3; ++pass)
        {
          const unsigned axis = 2u - unsigned(pass);
          const auto     c = SteerablePyramid::GaussianTaps(plan.variance[axis], normalised->GetSpacing()[axis], axis);
          const int      extent[3] = { nx, ny, nz };
          const std::int64_t stride[3] = { 1, nx, plane };
          std::vector<float> out(source.size());
          for (std::int64_t i = 0; i < n; ++i)
          {
            const int p[3] = { int(i % nx), int((i / nx) % ny), int(i / plane) };
            out[i] = GaussianLineAt(source.data() + (i - p[axis] * stride[axis]),
                                    stride[axis],
                                    extent[axis],
                                    p[axis],
                                    c.data(),
                                    int(c.size() / 2));
          }
          source.swap(out);
        }
      const ResampleGeometry g = SteerablePyramid::ResampleGeometryOf(normalised, plan.grid);
      intensity.assign(std::size_t(g.outSize[0]) * g.outSize[1] * g.outSize[2], 0.0f);
      for (int z = 0, i = 0; z < g.outSize[2]; ++z)
        for (int y = 0; y < g.outSize[1]; ++y)
          for (int x = 0; x < g.outSize[0]; ++x, ++i)
            intensity[i] = ResampleLinearAt(g, source.data(), x, y, z);
    }
    const SteerableLevelView    view = SteerablePyramid::LevelViewOf(plan.grid);
    std::vector<SteerableVoxel> voxels(std::size_t(view.nx) * view.ny * view.nz);
    ComputeSteerableVoxelsCPU(intensity.data(), view.nx, view.ny, view.nz, view.worldToIndex, voxels.data(), 1);
    levels.push_back(std::move(voxels));
  }
  return levels;
}

/** Every component within tolerance x (1 + |reference|); NaN fails. Returns the worst error. */
inline double
ExpectLevelsMatch(const std::vector<SteerableVoxel> & test,
                  const std::vector<SteerableVoxel> & reference,
                  double                              tolerance,
                  const std::string &                 what)
{
  EXPECT_EQ(test.size(), reference.size()) << what;
  if (test.size() != reference.size())
    return 1e300;
  double      worst = 0.0;
  std::size_t failures = 0;
  for (std::size_t i = 0; i < test.size(); ++i)
    for (int k = 0; k < 4; ++k)
    {
      const double a = reinterpret_cast<const float *>(&test[i])[k];
      const double b = reinterpret_cast<const float *>(&reference[i])[k];
      const double err = std::abs(a - b) / (1.0 + std::abs(b));
      if (!(err <= tolerance) && failures++ < 5)
        ADD_FAILURE() << what << ": voxel " << i << " component " << k << ": " << a << " vs " << b;
      worst = std::max(worst, std::isfinite(err) ? err : 1e300);
    }
  EXPECT_EQ(failures, 0u) << what << ": worst relative error " << worst;
  return worst;
}

} // namespace canopy::testing
