// Preparing volumes for Haar-feature classifiers: resampling to a model's working spacing and back,
// and robust intensity normalisation, so models transfer between scanners and resolutions.
#pragma once

#include "canopy/IntensityNormalization.h"
#include "itkImage.h"

#include <array>
#include <string>

namespace canopy
{

using FloatVolume = itk::Image<float, 3>;
using MaskVolume = itk::Image<unsigned char, 3>;

/** Normalises in place; returns the (low, high) intensities used. A constant volume maps to 0. */
std::array<double, 2>
NormalizeIntensities(FloatVolume * volume, const IntensityNormalization & normalization);

/** Largest working grid ResampleToSpacing makes (2^31 voxels, 8 GiB of floats): a corrupt or
 * mistaken working spacing fails with a clear error instead of an allocation failure. */
constexpr double kMaxWorkingVoxels = 2147483648.0;

/** Throws canopy::Error starting with `where` when resampling `volume` to `spacing` gives a grid of
 * more than kMaxWorkingVoxels voxels (or the spacing is not positive and finite). */
void
CheckWorkingGrid(const FloatVolume * volume, const std::array<double, 3> & spacing, const std::string & where);

/** Resamples onto a grid of the given spacing that covers the input's physical extent, with the
 * input's direction (linear interpolation; outside = 0). Spacing must be positive and finite. */
FloatVolume::Pointer
ResampleToSpacing(const FloatVolume * volume, const std::array<double, 3> & spacing);

/** Nearest-neighbour resampling of a mask onto the grid of `reference`. */
MaskVolume::Pointer
ResampleMaskLike(const MaskVolume * mask, const itk::ImageBase<3> * reference);

/** Linear resampling of a float volume onto the grid of `reference` (outside = `outsideValue`). */
FloatVolume::Pointer
ResampleLike(const FloatVolume * volume, const itk::ImageBase<3> * reference, float outsideValue = 0.0f);

/** True when both images have the same size, origin, spacing and direction (within 1e-6 relative). */
bool
SameGrid(const itk::ImageBase<3> * a, const itk::ImageBase<3> * b);

} // namespace canopy
