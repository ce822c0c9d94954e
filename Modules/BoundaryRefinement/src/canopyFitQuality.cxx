#include "canopyFitQuality.h"

#include "canopy/Errors.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace canopy
{
double
MahalanobisLimit(int modes, double z)
{
  if (modes < 1)
    return 0;
  const double k = modes, a = 2.0 / (9.0 * k), c = std::max(0.0, 1.0 - a + z * std::sqrt(a));
  return std::sqrt(k * c * c * c);
}

FitQuality
AssessShapeFit(const ShapeModel &            model,
               BoundaryScorer &              scorer,
               const Similarity &            initialPose,
               const ShapeRefinementResult & fit,
               const FitQualityOptions &     options)
{
  if (!(options.probeMm > 0 && options.probeMm <= 100) || !(options.lowScore >= 0 && options.lowScore <= 1) ||
      !(options.maxLowScoreShare >= 0 && options.maxLowScoreShare <= 1) ||
      !(options.minSurfaceScore >= 0 && options.minSurfaceScore <= 1) ||
      !(options.shapeQuantileZ > 0 && options.shapeQuantileZ <= 10))
    CANOPY_THROW("fit quality: the probe range must be in (0, 100] mm and the score and share thresholds in [0, 1], "
                 "the shape quantile's z in (0, 10]");
  if (fit.points.cols() != Eigen::Index(model.Finest().Vertices()) || fit.points.cols() < 1)
    CANOPY_THROW("fit quality: the fit has " << fit.points.cols() << " vertices, the model's finest level "
                                             << model.Finest().Vertices());
  // Offsets -probe .. +probe in steps of probe / 4: index 4 is exactly 0, the surface itself.
  constexpr int       half = 4;
  std::vector<double> offsets;
  for (int k = -half; k <= half; ++k)
    offsets.push_back(options.probeMm * double(k) / half);
  Eigen::MatrixXf scores;
  scorer.Score(model.levels.size() - 1, fit.points, VertexNormals(fit.points, fit.triangles), offsets, scores);
  if (scores.rows() != Eigen::Index(offsets.size()) || scores.cols() != fit.points.cols() || !scores.allFinite())
    CANOPY_THROW("fit quality: the boundary scorer returned " << scores.rows() << " x " << scores.cols()
                                                              << " scores (or non-finite ones) for " << offsets.size()
                                                              << " offsets x " << fit.points.cols() << " vertices");
  FitQuality q;
  q.vertices = int(fit.points.cols());
  const Eigen::VectorXf best = scores.colwise().maxCoeff().transpose();
  q.surfaceScoreMean = double(scores.row(half).mean());
  q.bestScoreMean = double(best.mean());
  q.lowScoreShare = double((best.array() < float(options.lowScore)).count()) / double(q.vertices);
  q.mahalanobis = fit.sigmas.size() ? fit.sigmas.norm() : 0.0;
  q.mahalanobisLimit = MahalanobisLimit(int(fit.sigmas.size()), options.shapeQuantileZ);
  // the mean shape's vertex centroid is the model frame's origin, so the start's centroid is its translation
  q.centreShiftMm = (fit.points.rowwise().mean() - initialPose.translation).norm();
  q.scaleRatio = initialPose.scale > 0 ? fit.pose.scale / initialPose.scale : 0.0;
  const auto why = [&](auto &&... parts)
  {
    std::ostringstream s;
    (s << ... << parts);
    q.reasons.push_back(s.str());
  };
  if (q.lowScoreShare > options.maxLowScoreShare)
    why(std::lround(100 * q.lowScoreShare),
        "% of the vertices have no boundary score >= ",
        options.lowScore,
        " within ",
        options.probeMm,
        " mm (limit ",
        std::lround(100 * options.maxLowScoreShare),
        "%)");
  if (q.surfaceScoreMean < options.minSurfaceScore)
    why("mean boundary score on the surface ", q.surfaceScoreMean, " < ", options.minSurfaceScore);
  if (fit.sigmas.size() && q.mahalanobis > q.mahalanobisLimit)
    why("the shape is ",
        q.mahalanobis,
        " sigma from the mean shape (limit ",
        q.mahalanobisLimit,
        " for ",
        fit.sigmas.size(),
        " modes)");
  q.suspect = !q.reasons.empty();
  return q;
}
} // namespace canopy
