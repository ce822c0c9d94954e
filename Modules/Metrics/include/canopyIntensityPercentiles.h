// Robust intensity range of an image (windowing, augmentation, normalisation).
#pragma once

#include "itkImage.h"

namespace canopy
{

/** The two requested percentiles and the extremes of the finite voxel values. */
struct IntensityPercentiles
{
  double low = 0, high = 0, minimum = 0, maximum = 0;
};

/** Percentiles (in percent, 0..100) of the finite voxel values: the value of rank floor(p/100 (n-1))
 * in sorted order. Throws canopy::Error for a null image, an image without finite voxels, or
 * percentiles outside [0, 100]. */
IntensityPercentiles
ComputeIntensityPercentiles(const itk::Image<float, 3> * image, double lowPercent, double highPercent);

} // namespace canopy
