// How a volume's intensities are mapped before features are computed: a plain description stored in
// model files, its JSON form, and the mapping of a plain array. Shared by the voxel classifiers
// (VolumeClassification: NormalizeIntensities of a volume), the forests (Forest: the channels before the
// filter bank) and the steerable pyramid (SteerableFeatures: PyramidScalingOf), so none depends on another.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace canopy
{

/** How intensities are mapped before features are computed; stored in model files.
 * "percentile" (MR, any modality without absolute units): the [lowPercentile, highPercentile] range
 * of the volume's finite voxels maps linearly to [0, 1], values outside are not clipped.
 * "window" (CT in Hounsfield units): [windowLow, windowHigh] maps to [0, 1] and values outside are
 * clipped, so scanner padding (-2000, -3024) and FOV differences do not shift the mapping.
 * Non-finite voxels become 0 in both. */
struct IntensityNormalization
{
  std::string method = "percentile";
  double      lowPercentile = 1.0;
  double      highPercentile = 99.0;
  double      windowLow = -200.0;
  double      windowHigh = 300.0;
};

/** {"method": "percentile", "lowPercentile", "highPercentile"} or {"method": "window", "windowLow",
 * "windowHigh"}; the reader throws canopy::Error starting with `where: "normalization"` for anything else (unknown
 * method, missing or non-numeric bounds, percentiles outside 0 <= low < high <= 100, low >= high). */
void
ToJson(const IntensityNormalization & normalization, nlohmann::json & out);
IntensityNormalization
IntensityNormalizationFromJson(const nlohmann::json & in, const std::string & where);

/** Maps `count` values in place (PyramidMath.h's NormalizedPercentile / NormalizedWindow; the
 * percentiles from the strided sample NormalizationStride describes); returns the (low, high)
 * intensities used. A constant array maps to 0. Throws canopy::Error for a window with low >= high. */
std::array<double, 2>
NormalizeIntensities(float * values, std::int64_t count, const IntensityNormalization & normalization);

} // namespace canopy
