#include "canopySteerableFeatureBank.h"

#include "canopy/Errors.h"
#include "canopy/PortableRandom.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace canopy
{

const char *
SteerableFeatureTypeName(int type)
{
  static const char * const names[kSteerableFeatureTypes] = { "I",       "sqrt(I)", "cbrt(I)", "I^2",       "I^3",
                                                              "log(I)",  "gx",      "gy",      "gz",        "|g|",
                                                              "|g|^2",   "|g|^3",   "log|g|",  "f",         "|f|",
                                                              "sqrt|f|", "f^2",     "|f|^3",   "log|f|",    "|g-fd|",
                                                              "theta",   "theta^2", "theta^3", "log(theta)" };
  return type >= 0 && type < kSteerableFeatureTypes ? names[type] : "unknown";
}

void
ValidateSteerableGrid(const SteerableGrid & grid, int numLevels)
{
  if (grid.size < 1 || grid.size > 255)
    CANOPY_THROW("steerable features: grid size must be in [1, 255], got " << grid.size);
  if (!(std::isfinite(grid.spacingMm) && grid.spacingMm > 0))
    CANOPY_THROW("steerable features: grid spacing must be finite and > 0 mm, got " << grid.spacingMm);
  if (numLevels < 1 || numLevels > kMaxSteerableLevels)
    CANOPY_THROW("steerable features: number of pyramid levels must be in [1, " << kMaxSteerableLevels << "], got "
                                                                                << numLevels);
}

void
ValidateSteerableFeatures(const SteerableGrid & grid, int numLevels, const std::vector<SteerableFeature> & features)
{
  ValidateSteerableGrid(grid, numLevels);
  for (std::size_t k = 0; k < features.size(); ++k)
  {
    const auto & f = features[k];
    if (f.x >= grid.size || f.y >= grid.size || f.z >= grid.size || f.type >= kSteerableFeatureTypes ||
        f.level >= numLevels)
      CANOPY_THROW("steerable features: feature "
                   << k << " (position " << int(f.x) << "," << int(f.y) << "," << int(f.z) << ", type " << int(f.type)
                   << ", level " << int(f.level) << ") is outside a grid of size " << grid.size << " with " << numLevels
                   << " levels");
  }
}

std::vector<SteerableFeature>
ExhaustiveSteerableFeatures(const SteerableGrid & grid, int numLevels)
{
  ValidateSteerableGrid(grid, numLevels);
  std::vector<SteerableFeature> features;
  features.reserve(static_cast<std::size_t>(grid.size) * grid.size * grid.size * kSteerableFeatureTypes * numLevels);
  for (int level = 0; level < numLevels; ++level)
    for (int z = 0; z < grid.size; ++z)
      for (int y = 0; y < grid.size; ++y)
        for (int x = 0; x < grid.size; ++x)
          for (int type = 0; type < kSteerableFeatureTypes; ++type)
            features.push_back(SteerableFeature{ static_cast<uint8_t>(x),
                                                 static_cast<uint8_t>(y),
                                                 static_cast<uint8_t>(z),
                                                 static_cast<uint8_t>(type),
                                                 static_cast<uint8_t>(level) });
  return features;
}

std::vector<SteerableFeature>
RandomSteerableFeatures(const SteerableGrid & grid, int numLevels, int count, std::uint64_t seed)
{
  const auto all = ExhaustiveSteerableFeatures(grid, numLevels);
  if (count < 1 || static_cast<std::size_t>(count) > all.size())
    CANOPY_THROW("steerable features: random bank size must be in [1, " << all.size() << "], got " << count);
  // Partial Fisher-Yates over indices with the portable draw, then back into exhaustive order.
  std::vector<std::uint32_t> index(all.size());
  std::iota(index.begin(), index.end(), 0u);
  std::mt19937_64 rng(seed);
  for (int k = 0; k < count; ++k)
    std::swap(index[k], index[k + UniformIndex(rng, index.size() - k)]);
  index.resize(count);
  std::sort(index.begin(), index.end());
  std::vector<SteerableFeature> features;
  features.reserve(count);
  for (auto i : index)
    features.push_back(all[i]);
  return features;
}

} // namespace canopy
