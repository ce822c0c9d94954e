// Feature lists for steerable features: every (grid point, type, level), or a seeded random subset,
// sorted so that consecutive features share their sample (EvaluateSteerableFeatures reuses it).
#pragma once

#include "canopy/SteerableFeature.h"

#include <cstdint>
#include <vector>

namespace canopy
{

/** "I", "sqrt(I)", ..., "log(theta)": the Table 1 name of a type (see SteerableFeature.h). */
const char *
SteerableFeatureTypeName(int type);

/** Throws canopy::Error unless 1 <= grid.size <= 255, grid.spacingMm is finite and > 0 and
 * 1 <= numLevels <= kMaxSteerableLevels. */
void
ValidateSteerableGrid(const SteerableGrid & grid, int numLevels);

/** Throws canopy::Error naming the first feature whose position, type or level is out of range. */
void
ValidateSteerableFeatures(const SteerableGrid & grid, int numLevels, const std::vector<SteerableFeature> & features);

/** Every feature: size^3 * 24 * numLevels of them, ordered by (level, z, y, x, type). */
std::vector<SteerableFeature>
ExhaustiveSteerableFeatures(const SteerableGrid & grid, int numLevels);

/** `count` distinct features drawn uniformly from the exhaustive list with a portable generator
 * (same seed, same list everywhere), in the exhaustive order. count must be in [1, exhaustive size]. */
std::vector<SteerableFeature>
RandomSteerableFeatures(const SteerableGrid & grid, int numLevels, int count, std::uint64_t seed);

} // namespace canopy
