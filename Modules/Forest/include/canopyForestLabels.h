// Labels from a forest's class distributions at a chosen operating point. ArgMax (the default output)
// labels a voxel background as soon as class 0 is the most probable; a foreground threshold moves that
// decision, e.g. to trade a structure's outer boundary against its narrow gaps (issue 13: colin27's
// sulci). The threshold is chosen on held-out data (canopy evaluate --thresholds), never on the test.
#pragma once

#include <cstddef>
#include <cstdint>

namespace canopy
{

/** The probability of not being background, 1 - p(0), of one voxel's class distribution: the value
 * that a foreground threshold compares, computed here once so that labels (LabelsAtForegroundThreshold)
 * and sweeps over thresholds (canopy evaluate --thresholds) decide every voxel alike. */
inline float
ForegroundProbability(const float * distribution)
{
  return 1.0f - distribution[0];
}

/** Labels `voxels` distributions of `classes` values each (x fastest, as ForestOutputMode::Distribution
 * writes them): background (class 0) unless ForegroundProbability reaches `threshold` (as a float);
 * then the most probable class above 0 (the lowest on ties). With two classes this is p(1) >= threshold
 * up to float rounding. `threshold` must lie in (0, 1) and `classes` be at least 2 (canopy::Error). */
void
LabelsAtForegroundThreshold(const float *  distribution,
                            std::size_t    voxels,
                            int            classes,
                            double         threshold,
                            std::int32_t * labels);

} // namespace canopy
