// How a volume's intensities are mapped before features are computed: a plain description stored in
// model files, shared by the voxel classifiers (VolumeClassification: NormalizeIntensities) and the
// steerable pyramid (SteerableFeatures: PyramidScalingOf), so neither module depends on the other.
#pragma once

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

} // namespace canopy
