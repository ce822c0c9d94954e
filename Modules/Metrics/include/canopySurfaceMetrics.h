// Surface distances between masks (and between meshes, which share the summary), and per-label
// overlap + surface metrics of multi-label maps (issue 4).
#pragma once

#include "canopyOverlapMetrics.h"

#include "itkImage.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace canopy
{

/** Integer label maps (0 = background). */
using LabelImage = itk::Image<int, 3>;

/** Symmetric surface distances in mm between a test surface T and a reference surface R.
 * mean: average of the distances of every T sample to R and every R sample to T (ASSD);
 * percentile95: the larger of the two directed 95th percentiles (HD95 as MONAI and DeepMind's
 * surface-distance compute it); maximum: the Hausdorff distance. Both surfaces empty: all 0;
 * exactly one empty: mean, percentile95, maximum and the directed means are +infinity. */
struct SurfaceDistances
{
  double       mean = 0, percentile95 = 0, maximum = 0;
  double       meanTestToReference = 0, meanReferenceToTest = 0;
  std::int64_t testSamples = 0, referenceSamples = 0; // surface voxels or mesh points
};

/** Summary of the directed distance samples (T -> R and R -> T, in mm). Percentiles interpolate
 * linearly between order statistics (numpy's default). */
SurfaceDistances
SummarizeSurfaceDistances(std::vector<double> testToReference, std::vector<double> referenceToTest);

/** {"meanMm", "percentile95Mm", "maximumMm", "meanTestToReferenceMm", "meanReferenceToTestMm",
 * "testSamples", "referenceSamples"}; infinite values become null. */
nlohmann::json
ToJson(const SurfaceDistances & distances);

/** Surface voxels of a binary mask (non-zero = inside): inside voxels with at least one of their 6
 * face neighbours outside; voxels beyond the image border count as outside. 1 on the surface, 0
 * elsewhere, same grid. */
itk::Image<unsigned char, 3>::Pointer
ExtractSurfaceVoxels(const itk::Image<unsigned char, 3> * mask);

/** Distances between the surface voxels of two masks on the same grid (voxel centre to nearest
 * surface voxel centre, exact Euclidean distance in mm with the image spacing, through
 * itk::SignedMaurerDistanceMapImageFilter on the bounding box of both surfaces). canopy::Error when
 * the grids differ or a mask is null. */
SurfaceDistances
ComputeSurfaceDistances(const itk::Image<unsigned char, 3> * test, const itk::Image<unsigned char, 3> * reference);

/** Overlap and surface distances of one label value. */
struct LabelMetrics
{
  int              label = 0;
  OverlapMetrics   overlap;
  SurfaceDistances surface;
};

/** The distinct non-zero values of a label map, ascending. */
std::vector<int>
FindLabels(const LabelImage * labels);

/** 1 where labels == value, 0 elsewhere, same grid. */
itk::Image<unsigned char, 3>::Pointer
LabelToMask(const LabelImage * labels, int value);

/** Label map from a float image by rounding to the nearest integer; canopy::Error naming `what`
 * when a voxel is not finite or further than 1e-3 from an integer (a probability map, not labels). */
LabelImage::Pointer
RoundToLabels(const itk::Image<float, 3> * image, const std::string & what);

/** Per-label overlap and surface distances of test against reference (same grid, else
 * canopy::Error). `labels` empty: every label found in either map. A label missing from one map
 * gives Dice 0 and infinite distances; missing from both, Dice 1 and zero distances. */
std::vector<LabelMetrics>
ComputeLabelMetrics(const LabelImage * test, const LabelImage * reference, std::vector<int> labels = {});

/** {"label", "overlap": ToJson(OverlapMetrics), "surface": ToJson(SurfaceDistances)}. */
nlohmann::json
ToJson(const LabelMetrics & metrics);

} // namespace canopy
