// A PNG of three orthogonal slices with a probability or label overlay: the quick look at a result
// that the demo, `canopy segment --snapshot` and reports use.
#pragma once

#include "itkImage.h"

#include <string>

namespace canopy
{

struct SnapshotOptions
{
  double overlayThreshold = 0.5;     // overlay (and reference) voxels >= this are inside
  double overlayOpacity = 0.4;       // red tint over the inside, in [0, 1]
  int    outlineThickness = 1;       // outline width in pixels (0: no outline), at most 10
  double windowLowPercentile = 1, windowHighPercentile = 99; // grey window, 0 <= low < high <= 100
};

/** Writes an RGB PNG of three orthogonal slices (axial, coronal, sagittal, side by side, each
 * resampled to isotropic pixels using the image spacing, oriented for radiological viewing) through
 * the centre of mass of the overlay (or the image centre when the overlay is empty): greyscale image
 * windowed at the given percentiles, overlay >= threshold tinted red with the given opacity and its
 * outline drawn solid. overlay must have the same grid as image (else canopy::Error naming the
 * mismatch). Writes to a temporary name and renames (no half-written file). Optional second overlay
 * (e.g. ground truth) outlined in green.
 *
 * Layout: pixel size = the smallest image spacing; each panel covers the image's physical bounding
 * box (LPS) along its two axes, so its size is ceil(extent / pixel size). Axial: patient left to the
 * right, anterior at the top; coronal: patient left to the right, superior at the top; sagittal:
 * anterior to the left, superior at the top. Panels are placed left to right, top-aligned, on black;
 * the PNG is (sum of panel widths) x (largest panel height). overlay may be null (image only). */
void
WriteOrthogonalSnapshot(const itk::Image<float, 3> * image, const itk::Image<float, 3> * overlay,
                        const std::string & pngPath, const SnapshotOptions & options = {},
                        const itk::Image<float, 3> * reference = nullptr);

} // namespace canopy
