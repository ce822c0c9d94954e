// How much to trust a shape fit (issue 10): measures segment-shape computes for every refined mesh,
// so that a user learns when the refinement left the structure. A fit that slid off the organ sits on
// boundaries the classifier does not believe in (low scores on the final surface, many vertices with no
// convincing boundary within reach), often needs an unusual shape (coefficients far out in the shape
// space) and has moved far from its start.
#pragma once

#include "canopyBoundaryRefinement.h"

#include <string>
#include <vector>

namespace canopy
{
struct FitQualityOptions
{
  /** A vertex whose best score within +/- probeMm of the final surface is below this counts as low. */
  double lowScore = 0.5;
  /** Half-range (mm) of the final check's offsets around the fitted surface. */
  double probeMm = 1.0;
  /** The fit is suspect when the share of low vertices exceeds this ... */
  double maxLowScoreShare = 0.5;
  /** ... or the mean score on the final surface (offset 0) is below this ... */
  double minSurfaceScore = 0.3;
  /** ... or the shape's Mahalanobis distance exceeds the chi distribution's quantile for the model's
   * mode count at this standard normal quantile (3.09: the 99.9% quantile; Wilson-Hilferty), i.e. the
   * fit needs a shape that one training shape in a thousand would be as far from the mean as. */
  double shapeQuantileZ = 3.09;
};

/** The Mahalanobis distance that a share Phi(z) of shapes drawn from the model (k modes) stays within:
 * sqrt of the chi-square quantile, by Wilson and Hilferty's approximation. */
double
MahalanobisLimit(int modes, double z);

struct FitQuality
{
  int                      vertices = 0;
  double                   surfaceScoreMean = 0; // boundary score exactly on the final mesh, mean over vertices
  double                   bestScoreMean = 0;    // best score within +/- probeMm, mean over vertices
  double                   lowScoreShare = 0;    // share of vertices whose best score is below lowScore
  double                   mahalanobis = 0;      // |coefficients / sigma|: the shape's distance from the mean shape
  double                   mahalanobisLimit = 0; // MahalanobisLimit(modes, options.shapeQuantileZ)
  double                   centreShiftMm = 0;    // the final mesh's centroid against the initial pose's
  double                   scaleRatio = 1;       // the fit's scale over the initial pose's
  bool                     suspect = false;
  std::vector<std::string> reasons; // why it is suspect (empty otherwise)
};

/** The quality of `fit`, refined by RefineShape from `initialPose`: the finest level's classifier
 * scores the final mesh at offsets over +/- options.probeMm (one extra scoring pass), with the fit's
 * shape coefficients and its move from the start (the move and the scale change are reported, not judged).
 * canopy::Error for bad options or a scorer that returns scores of the wrong size or non-finite ones. */
FitQuality
AssessShapeFit(const ShapeModel &            model,
               BoundaryScorer &              scorer,
               const Similarity &            initialPose,
               const ShapeRefinementResult & fit,
               const FitQualityOptions &     options = {});
} // namespace canopy
