// Overlap metrics between binary masks (issue 4: surface distances join them later).
#pragma once

#include "itkImage.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>

namespace canopy
{

/** Voxel-overlap agreement between a test and a reference mask. Volumes are in mm^3 (voxel count
 * times the voxel volume). volumeDifferencePercent = 100 (V_test - V_ref) / V_ref; 0 when both are
 * empty, +infinity when only the reference is empty (ToJson writes null for it). */
struct OverlapMetrics
{
  double       dice = 0, jaccard = 0, volumeTestMm3 = 0, volumeReferenceMm3 = 0, volumeDifferencePercent = 0;
  std::int64_t truePositives = 0, falsePositives = 0, falseNegatives = 0;
};

/** test and reference: binary masks on the same grid (non-zero = inside); canopy::Error naming the
 * mismatch if grids differ (size, spacing, origin, direction within 1e-6). Two empty masks:
 * dice = jaccard = 1. */
OverlapMetrics
ComputeOverlap(const itk::Image<unsigned char, 3> * test, const itk::Image<unsigned char, 3> * reference);

/** {"dice", "jaccard", "volumeTestMm3", "volumeReferenceMm3", "volumeDifferencePercent",
 * "truePositives", "falsePositives", "falseNegatives"}; non-finite values become null. */
nlohmann::json
ToJson(const OverlapMetrics & metrics);

/** Binary mask (1 inside, 0 outside) of image >= threshold, on the image's grid. NaN voxels are outside. */
itk::Image<unsigned char, 3>::Pointer
ThresholdToMask(const itk::Image<float, 3> * image, float threshold);

} // namespace canopy
