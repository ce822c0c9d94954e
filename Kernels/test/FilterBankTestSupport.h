// Random volumes and channel comparisons for the filter-bank tests (CPU against ITK, GPU against CPU).
#pragma once

#include "canopy/FilterBank.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace canopy::testing
{

/** A smooth field, a sharp-edged block and uniform noise: every scale of the bank sees structure. */
inline std::vector<float>
RandomFilterBankVolume(const FilterBankGrid & grid, std::uint64_t seed)
{
  std::mt19937_64                       rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const float        fx = 0.1f + 0.2f * (u(rng) + 1), fy = 0.1f + 0.2f * (u(rng) + 1), fz = 0.1f + 0.2f * (u(rng) + 1);
  std::vector<float> v(grid.Voxels());
  std::int64_t       i = 0;
  for (int z = 0; z < grid.nz; ++z)
    for (int y = 0; y < grid.ny; ++y)
      for (int x = 0; x < grid.nx; ++x)
      {
        const bool block = 2 * x > grid.nx && 3 * y < 2 * grid.ny;
        v[i++] = 300.0f * std::sin(fx * x) * std::cos(fy * y + fz * z) + (block ? 500.0f : 0.0f) + 80.0f * u(rng);
      }
  return v;
}

/** The channels the tests run: each filter at a small and a large sigma (mm). */
inline std::vector<FilterBankChannelSpec>
FilteredSpecs()
{
  using Kind = FilterBankChannelSpec::Kind;
  std::vector<FilterBankChannelSpec> specs;
  for (Kind kind : { Kind::Gaussian, Kind::GradientMagnitude, Kind::LaplacianOfGaussian })
    for (double sigma : { 0.7, 2.5 })
      specs.push_back({ kind, sigma, 0 });
  return specs;
}

inline std::string
SpecName(const FilterBankChannelSpec & s)
{
  using Kind = FilterBankChannelSpec::Kind;
  const char * kind = s.kind == Kind::Gaussian              ? "gaussian"
                      : s.kind == Kind::GradientMagnitude   ? "gradient"
                      : s.kind == Kind::LaplacianOfGaussian ? "log"
                      : s.kind == Kind::Position            ? "position"
                      : s.kind == Kind::ReferencePosition   ? "pose"
                                                            : "intensity";
  return std::string(kind) + ":" + std::to_string(s.sigma);
}

/** Largest |test - reference| over the channel divided by the channel's largest |reference| (NaN when
 * either holds a NaN, so `!(error <= tolerance)` fails on it). */
inline double
RelativeMaxError(const std::vector<float> & test, const std::vector<float> & reference)
{
  if (test.size() != reference.size())
    return std::nan("");
  double scale = 0.0, worst = 0.0;
  for (std::size_t i = 0; i < test.size(); ++i)
  {
    if (std::isnan(test[i]) || std::isnan(reference[i]))
      return std::nan("");
    scale = std::max(scale, double(std::fabs(reference[i])));
    worst = std::max(worst, std::fabs(double(test[i]) - double(reference[i])));
  }
  return worst / std::max(scale, 1e-30);
}

/** Every channel of `specs` on `grid` with `backend`. */
inline std::vector<std::vector<float>>
FilterBankChannels(const std::vector<float> &                 volume,
                   const FilterBankGrid &                     grid,
                   const std::vector<FilterBankChannelSpec> & specs,
                   const ResolvedBackend &                    backend,
                   int                                        threads)
{
  std::vector<std::vector<float>> channels(specs.size(), std::vector<float>(grid.Voxels(), -12345.0f));
  std::vector<float *>            outputs;
  for (auto & c : channels)
    outputs.push_back(c.data());
  ComputeFilterBank(volume.data(), grid, specs, outputs, backend, threads);
  return channels;
}

/** Grids of the tests: 3D anisotropic with odd sizes, a 4-voxel axis (the filters' minimum), 2D. */
inline std::vector<FilterBankGrid>
FilterBankTestGrids()
{
  FilterBankGrid a;
  a.nx = 37, a.ny = 29, a.nz = 23, a.spacing[0] = 0.8, a.spacing[1] = 1.1, a.spacing[2] = 2.0;
  FilterBankGrid thin;
  thin.nx = 16, thin.ny = 4, thin.nz = 9, thin.spacing[0] = 1.0, thin.spacing[1] = 1.0, thin.spacing[2] = 1.5;
  FilterBankGrid flat;
  flat.dimension = 2, flat.nx = 53, flat.ny = 41, flat.nz = 1, flat.spacing[0] = 0.5, flat.spacing[1] = 0.9;
  return { a, thin, flat };
}

} // namespace canopy::testing
