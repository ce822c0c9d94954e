#include "canopyFitQualityOptions.h"

#include "canopyOptionChecks.h"

#include <iomanip>
#include <iostream>
#include <sstream>

namespace canopy::app
{
void
AddFitQualityOptions(CLI::App * c, FitQualityOptions & o)
{
  c->add_option("--fit-low-score",
                o.lowScore,
                "Fit check: a vertex whose best boundary score within --fit-probe mm of the fitted surface is below "
                "this counts as low")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 1.0));
  c->add_option("--fit-max-low-share",
                o.maxLowScoreShare,
                "Fit check: the fit is flagged suspect when more than this share of the vertices is low")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 1.0));
  c->add_option("--fit-min-surface-score",
                o.minSurfaceScore,
                "Fit check: the fit is flagged suspect when the mean boundary score on the fitted surface is below "
                "this")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 1.0));
  c->add_option("--fit-shape-z",
                o.shapeQuantileZ,
                "Fit check: the fit is flagged suspect when its shape's Mahalanobis distance exceeds the chi quantile "
                "at this normal z for the model's modes (3.09: 99.9%)")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 10.0, true));
  c->add_option("--fit-probe", o.probeMm, "Fit check: half-range (mm) of the offsets scored around the fitted surface")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 100.0, true));
}

nlohmann::json
FitQualityJson(const FitQuality & q, const FitQualityOptions & o)
{
  return { { "vertices", q.vertices },
           { "surfaceScoreMean", q.surfaceScoreMean },
           { "bestScoreMean", q.bestScoreMean },
           { "lowScoreShare", q.lowScoreShare },
           { "mahalanobis", q.mahalanobis },
           { "mahalanobisLimit", q.mahalanobisLimit },
           { "centreShiftMm", q.centreShiftMm },
           { "scaleRatio", q.scaleRatio },
           { "suspect", q.suspect },
           { "reasons", q.reasons },
           { "thresholds",
             { { "lowScore", o.lowScore },
               { "probeMm", o.probeMm },
               { "maxLowScoreShare", o.maxLowScoreShare },
               { "minSurfaceScore", o.minSurfaceScore },
               { "shapeQuantileZ", o.shapeQuantileZ } } } };
}

void
PrintFitQuality(const std::string & structure, const FitQuality & q)
{
  std::cout << structure << " fit: boundary score on the surface " << std::fixed << std::setprecision(3)
            << q.surfaceScoreMean << ", best nearby " << q.bestScoreMean << ", low vertices " << std::setprecision(1)
            << 100 * q.lowScoreShare << "%, shape " << std::setprecision(2) << q.mahalanobis
            << " sigma from the mean (limit " << q.mahalanobisLimit << "), moved " << std::setprecision(1)
            << q.centreShiftMm << " mm, scale x" << std::setprecision(3) << q.scaleRatio
            << (q.suspect ? " (SUSPECT)" : "") << '\n';
  if (q.suspect)
  {
    std::ostringstream why;
    for (std::size_t k = 0; k < q.reasons.size(); ++k)
      why << (k ? "; " : "") << q.reasons[k];
    std::cerr << "canopy: warning: segment-shape: the " << structure
              << " fit is suspect (fit_suspect: true): " << why.str()
              << "; the refinement may have left the structure: check the result\n";
  }
}
} // namespace canopy::app
