// A PNG of three orthogonal slices with a probability or label overlay: the quick look at a result
// that the demo, `canopy segment --snapshot` and reports use.
#pragma once

#include "itkImage.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace canopy
{

/** An oriented box drawn on a snapshot (e.g. a detected pose): the outline of its intersection with
 * each slice and a cross at its centre projected onto each slice it meets, in `colour`. */
struct SnapshotBox
{
  std::array<double, 3>                centerMm{}; // LPS
  std::array<std::array<double, 3>, 3> axes{};     // unit rows (the box's edge directions)
  std::array<double, 3>                sizeMm{};   // full edge lengths along the axes, > 0
  std::array<unsigned char, 3>         colour{ { 255, 255, 0 } };
};

struct SnapshotOptions
{
  double                   overlayThreshold = 0.5; // overlay (and reference) voxels >= this are inside
  double                   overlayOpacity = 0.4;   // red tint over the inside, in [0, 1]
  int                      outlineThickness = 1;   // outline width in pixels (0: no outline), at most 10
  double                   windowLowPercentile = 1, windowHighPercentile = 99; // grey window, 0 <= low < high <= 100
  std::vector<SnapshotBox> boxes;                     // outlined (at least 1 px) over everything
  std::optional<std::array<double, 3>> sliceCentreMm; // slices through this LPS point (default: see below)
};

/** Writes an RGB PNG of three orthogonal slices (axial, coronal, sagittal, side by side, each
 * resampled to isotropic pixels using the image spacing, oriented for radiological viewing) through
 * options.sliceCentreMm when given, else the centre of mass of the overlay (or the image centre when
 * the overlay is empty): greyscale image
 * windowed at the given percentiles, overlay >= threshold tinted red with the given opacity and its
 * outline drawn solid. overlay must have the same grid as image (else canopy::Error naming the
 * mismatch). Writes to a temporary name and renames (no half-written file). Optional second overlay
 * (e.g. ground truth) outlined in green.
 *
 * Layout: pixel size = the smallest image spacing; each panel covers the image's physical bounding
 * box (LPS) along its two axes, so its size is ceil(extent / pixel size). Axial: patient left to the
 * right, anterior at the top; coronal: patient left to the right, superior at the top; sagittal:
 * anterior to the left, superior at the top. Panels are placed left to right, top-aligned, on black;
 * the PNG is (sum of panel widths) x (largest panel height). overlay may be null (image only).
 * options.boxes are drawn last: a pixel whose centre lies inside a box (|(p - centre) . axis_k| <=
 * size_k / 2) and has an outside pixel within max(1, outlineThickness) is the box's outline; a cross of
 * 2 x 3 + 1 pixels marks the centre's projection on a panel whose slice meets the box. A box with a
 * non-finite value, a size <= 0 or axes that are not unit length is a canopy::Error naming the box. */
void
WriteOrthogonalSnapshot(const itk::Image<float, 3> * image,
                        const itk::Image<float, 3> * overlay,
                        const std::string &          pngPath,
                        const SnapshotOptions &      options = {},
                        const itk::Image<float, 3> * reference = nullptr);

} // namespace canopy
