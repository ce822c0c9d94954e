#include "canopyBoundaryRefinement.h"

#include "canopy/Elapsed.h"
#include "canopy/Errors.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace canopy
{
namespace
{
void
CheckOptions(const ShapeRefinementOptions & o, const std::vector<double> & ranges)
{
  if (o.displacements < 2 || o.displacements > 1024)
    CANOPY_THROW("shape refinement: " << o.displacements << " displacements per vertex is outside 2..1024");
  if (ranges.empty())
    CANOPY_THROW("shape refinement: no search range (options.searchMm and the scorer's ranges are empty)");
  for (double r : ranges)
    if (!(r > 0 && r < 1000))
      CANOPY_THROW("shape refinement: search range " << r << " mm is outside (0, 1000)");
  if (o.iterationsPerLevel < 1 || o.iterationsPerLevel > 1000 || o.freeIterations < 0 || o.freeIterations > 1000)
    CANOPY_THROW("shape refinement: iterations per level must be 1..1000 and free iterations 0..1000");
  if (!(o.rangeDecay > 0 && o.rangeDecay <= 1) || o.smoothingPasses < 0 || o.smoothingPasses > 1000)
    CANOPY_THROW("shape refinement: range decay must be in (0, 1] and smoothing passes 0..1000");
  if (!(o.bound > 0) || !std::isfinite(o.bound) || !(o.convergenceMm >= 0))
    CANOPY_THROW("shape refinement: the bound must be finite and > 0, the convergence threshold >= 0");
  if (!(o.startSpreadMm >= 0 && o.startSpreadMm < 1000))
    CANOPY_THROW("shape refinement: the start spread " << o.startSpreadMm << " mm is outside [0, 1000)");
  if (o.keptStarts < 1 || o.keptStarts > 7)
    CANOPY_THROW("shape refinement: " << o.keptStarts << " starts kept for the finer levels is outside 1..7");
  if (!(o.startMargin >= 0 && o.startMargin <= 1))
    CANOPY_THROW("shape refinement: the start margin " << o.startMargin << " is outside [0, 1]");
}

/** Each vertex's best offset (ties: the smaller |offset|) as a displacement along its normal, and
 * the best score. */
void
BestDisplacements(const Eigen::MatrixXf &     scores,
                  const std::vector<double> & offsets,
                  const Eigen::Matrix3Xd &    normals,
                  Eigen::Matrix3Xd &          displacement,
                  Eigen::VectorXd &           best)
{
  if (scores.rows() != Eigen::Index(offsets.size()) || scores.cols() != normals.cols())
    CANOPY_THROW("shape refinement: the boundary scorer returned " << scores.rows() << " x " << scores.cols()
                                                                   << " scores for " << offsets.size() << " offsets x "
                                                                   << normals.cols() << " vertices");
  if (!scores.allFinite())
    CANOPY_THROW("shape refinement: the boundary scorer returned non-finite scores");
  displacement.resize(3, normals.cols());
  best.resize(normals.cols());
  for (Eigen::Index i = 0; i < normals.cols(); ++i)
  {
    Eigen::Index j = 0;
    for (Eigen::Index k = 1; k < scores.rows(); ++k)
      if (scores(k, i) > scores(j, i) ||
          (scores(k, i) == scores(j, i) && std::abs(offsets[std::size_t(k)]) < std::abs(offsets[std::size_t(j)])))
        j = k;
    displacement.col(i) = offsets[std::size_t(j)] * normals.col(i);
    best(i) = scores(j, i);
  }
}
} // namespace

std::vector<double>
RefinementOffsets(int count, double range)
{
  std::vector<double> offsets(static_cast<std::size_t>(std::max(count, 2)));
  for (std::size_t j = 0; j < offsets.size(); ++j)
    offsets[j] = -range + 2.0 * range * double(j) / double(offsets.size() - 1);
  return offsets;
}

Eigen::Matrix3Xd
SmoothOverMesh(const Eigen::Matrix3Xd & values, const Eigen::Matrix3Xi & triangles)
{
  Eigen::Matrix3Xd sum = Eigen::Matrix3Xd::Zero(3, values.cols());
  Eigen::VectorXd  count = Eigen::VectorXd::Zero(values.cols());
  for (Eigen::Index t = 0; t < triangles.cols(); ++t)
    for (int k = 0; k < 3; ++k)
    {
      // Each edge appears in two triangles (once per direction), so every neighbour counts equally.
      const int a = triangles(k, t), b = triangles((k + 1) % 3, t);
      sum.col(a) += values.col(b);
      count(a) += 1;
      sum.col(b) += values.col(a);
      count(b) += 1;
    }
  Eigen::Matrix3Xd out = values;
  for (Eigen::Index i = 0; i < values.cols(); ++i)
    if (count(i) > 0)
      out.col(i) = 0.5 * (values.col(i) + sum.col(i) / count(i));
  return out;
}

namespace
{
/** The state RefineShape carries from level to level. */
struct RefinementState
{
  Similarity       pose;
  Eigen::VectorXd  coefficients, sigmas;
  Eigen::Matrix3Xd points;
};

/** Level l's iterations (score, best offsets, smoothing, projection) from `state`, updated in place. */
ShapeRefinementLevelReport
RefineLevel(const ShapeModel &             model,
            std::size_t                    l,
            BoundaryScorer &               scorer,
            const ShapeRefinementOptions & options,
            double                         searchMm,
            RefinementState &              state)
{
  const auto                 levelStart = std::chrono::steady_clock::now();
  const ShapeLevel &         level = model.levels[l];
  ShapeRefinementLevelReport report;
  report.vertices = int(level.Vertices());
  report.searchMm = searchMm;
  double                 range = report.searchMm;
  Eigen::MatrixXf        scores;
  Eigen::Matrix3Xd       displacement;
  Eigen::VectorXd        best;
  Eigen::Matrix3Xd       points = ShapeInstance(model, l, state.coefficients, state.pose);
  ShapeProjectionOptions projection;
  projection.bound = options.bound;
  projection.modes = options.modes;
  for (int it = 0; it < options.iterationsPerLevel; ++it)
  {
    const std::vector<double> offsets = RefinementOffsets(options.displacements, range);
    const Eigen::Matrix3Xd    normals = VertexNormals(points, level.triangles);
    const auto                scoreStart = std::chrono::steady_clock::now();
    scorer.Score(l, points, normals, offsets, scores);
    report.scoringSeconds += SecondsSince(scoreStart);
    BestDisplacements(scores, offsets, normals, displacement, best);
    report.meanMoveMm = displacement.colwise().norm().mean();
    report.meanScore = best.mean();
    for (int pass = 0; pass < options.smoothingPasses; ++pass)
      displacement = SmoothOverMesh(displacement, level.triangles);
    projection.weights = best.cwiseMax(1e-3); // confidence; a floor keeps every vertex in the fit
    const ShapeProjection fit = ProjectOntoShapeSpace(model, l, points + displacement, projection);
    const double          moved = (fit.points - points).colwise().norm().maxCoeff();
    points = fit.points;
    state.pose = fit.pose;
    state.coefficients = fit.coefficients;
    state.sigmas = fit.sigmas;
    report.projectionRmsMm = fit.rmsDistanceMm;
    report.clampedModes = fit.clampedModes;
    report.iterations = it + 1;
    range = std::max(range * options.rangeDecay, report.searchMm / 3.0);
    if (moved < options.convergenceMm)
      break;
  }
  state.points = points;
  report.mahalanobis = state.sigmas.size() ? state.sigmas.norm() : 0.0;
  report.scale = state.pose.scale;
  report.centerMm = points.rowwise().mean();
  report.seconds = SecondsSince(levelStart);
  return report;
}
} // namespace

std::vector<Similarity>
RefinementStarts(const Similarity & initialPose, double spreadMm)
{
  std::vector<Similarity> starts{ initialPose };
  if (spreadMm > 0)
    for (int axis = 0; axis < 3; ++axis)
      for (double sign : { -1.0, 1.0 })
      {
        Similarity shifted = initialPose;
        shifted.translation += sign * spreadMm * initialPose.rotation.col(axis);
        starts.push_back(shifted);
      }
  return starts;
}

ShapeRefinementResult
RefineShape(const ShapeModel &             model,
            BoundaryScorer &               scorer,
            const Similarity &             initialPose,
            const ShapeRefinementOptions & options,
            const std::vector<double> &    searchMm)
{
  const auto                  start = std::chrono::steady_clock::now();
  const std::vector<double> & ranges = options.searchMm.empty() ? searchMm : options.searchMm;
  CheckOptions(options, ranges);
  model.Validate("shape refinement");
  ShapeRefinementResult result;
  const auto            rangeOf = [&](std::size_t l) { return ranges[std::min(l, ranges.size() - 1)]; };
  // The coarsest level from every start; the initial pose and the keptStarts - 1 other fits the
  // boundary classifier likes best (mean best score of the level's last iteration) go on to the finer
  // levels. Another start replaces the initial pose only when its finest-level mean score beats the
  // initial pose's by more than startMargin (the scores of nearby fits differ by little, and the
  // detector's pose is evidence too); the best such score wins.
  struct Candidate
  {
    RefinementState                         state;
    std::vector<ShapeRefinementLevelReport> levels;
    int                                     start = 0;
  };
  std::vector<Candidate> candidates;
  for (const Similarity & pose : RefinementStarts(initialPose, options.startSpreadMm))
  {
    Candidate c;
    c.start = int(candidates.size());
    c.state.pose = pose;
    c.state.coefficients = Eigen::VectorXd::Zero(model.Modes());
    c.levels.push_back(RefineLevel(model, 0, scorer, options, rangeOf(0), c.state));
    result.startScores.push_back(c.levels.front().meanScore);
    candidates.push_back(std::move(c));
  }
  // candidates[0] is the initial pose; the best alternatives by coarse score follow it
  std::stable_sort(candidates.begin() + 1,
                   candidates.end(),
                   [](const Candidate & a, const Candidate & b)
                   { return a.levels.front().meanScore > b.levels.front().meanScore; });
  candidates.resize(std::min(candidates.size(), std::size_t(options.keptStarts)));
  result.finestScores.assign(result.startScores.size(), -1.0);
  for (Candidate & c : candidates)
  {
    for (std::size_t l = 1; l < model.levels.size(); ++l)
      c.levels.push_back(RefineLevel(model, l, scorer, options, rangeOf(l), c.state));
    result.finestScores[std::size_t(c.start)] = c.levels.back().meanScore;
  }
  const Candidate * winner = &candidates.front();
  for (const Candidate & c : candidates)
    if (c.levels.back().meanScore > candidates.front().levels.back().meanScore + options.startMargin &&
        c.levels.back().meanScore > winner->levels.back().meanScore)
      winner = &c;
  result.chosenStart = winner->start;
  result.levels = winner->levels;
  const RefinementState & chosen = winner->state;
  result.pose = chosen.pose;
  result.coefficients = chosen.coefficients;
  result.sigmas = chosen.sigmas;
  Eigen::Matrix3Xd   points = chosen.points;
  Eigen::MatrixXf    scores;
  Eigen::Matrix3Xd   displacement;
  Eigen::VectorXd    best;
  const ShapeLevel & finest = model.Finest();
  const double       freeRange = ranges[std::min(model.levels.size() - 1, ranges.size() - 1)] / 3.0;
  for (int it = 0; it < options.freeIterations; ++it)
  {
    const std::vector<double> offsets = RefinementOffsets(options.displacements, freeRange);
    const Eigen::Matrix3Xd    normals = VertexNormals(points, finest.triangles);
    scorer.Score(model.levels.size() - 1, points, normals, offsets, scores);
    BestDisplacements(scores, offsets, normals, displacement, best);
    for (int pass = 0; pass < std::max(1, options.smoothingPasses); ++pass)
      displacement = SmoothOverMesh(displacement, finest.triangles);
    points += displacement;
  }
  result.points = points;
  result.triangles = finest.triangles;
  result.seconds = SecondsSince(start);
  return result;
}
} // namespace canopy
