#include "canopyShapeProjection.h"

#include "canopy/Errors.h"

#include "itk_eigen.h" // ITK's own Eigen: one Eigen in every unit that also includes ITK IO
#include ITK_EIGEN(Cholesky)

#include <algorithm>
#include <cmath>

namespace canopy
{
Eigen::VectorXd
SolveBoxConstrainedLeastSquares(const Eigen::MatrixXd & gram,
                                const Eigen::VectorXd & rhs,
                                const Eigen::VectorXd & limit)
{
  const Eigen::Index k = rhs.size();
  if (k == 0)
    return Eigen::VectorXd();
  // Start from the unconstrained solution clamped to the box, then coordinate descent on the convex
  // quadratic: each step minimises exactly along one coefficient and clamps it.
  Eigen::VectorXd b = gram.ldlt().solve(rhs);
  if (!b.allFinite())
    b.setZero();
  b = b.cwiseMax(-limit).cwiseMin(limit);
  for (int sweep = 0; sweep < 500; ++sweep)
  {
    double change = 0;
    for (Eigen::Index j = 0; j < k; ++j)
    {
      if (!(gram(j, j) > 0))
        continue;
      const double value = b(j) + (rhs(j) - gram.row(j).dot(b)) / gram(j, j);
      const double clamped = std::clamp(value, -limit(j), limit(j));
      change = std::max(change, std::abs(clamped - b(j)));
      b(j) = clamped;
    }
    if (change < 1e-10 * (1.0 + limit.maxCoeff()))
      break;
  }
  return b;
}

ShapeProjection
ProjectOntoShapeSpace(const ShapeModel &             model,
                      std::size_t                    level,
                      const Eigen::Matrix3Xd &       points,
                      const ShapeProjectionOptions & options)
{
  if (level >= model.levels.size())
    CANOPY_THROW("ProjectOntoShapeSpace: level " << level << " but the model has " << model.levels.size());
  const ShapeLevel & l = model.levels[level];
  const Eigen::Index n = l.Vertices();
  if (points.cols() != n)
    CANOPY_THROW("ProjectOntoShapeSpace: the mesh has " << points.cols() << " vertices, level " << level << " of \""
                                                        << model.structure << "\" has " << n);
  if (!points.allFinite())
    CANOPY_THROW("ProjectOntoShapeSpace: a vertex of the mesh is not finite");
  if (!(options.bound >= 0) || !std::isfinite(options.bound))
    CANOPY_THROW("ProjectOntoShapeSpace: the bound must be a finite number >= 0 (standard deviations)");
  if (options.modes < -1 || options.modes > model.Modes())
    CANOPY_THROW("ProjectOntoShapeSpace: " << options.modes << " modes asked, the model has " << model.Modes());
  Eigen::VectorXd w = options.weights.size() == 0 ? Eigen::VectorXd::Ones(n) : options.weights;
  if (w.size() != n || !w.allFinite() || (w.array() < 0).any() || !(w.sum() > 0))
    CANOPY_THROW("ProjectOntoShapeSpace: weights must be " << n << " finite numbers >= 0, not all 0");
  const Eigen::Index    k = options.modes < 0 ? model.Modes() : options.modes;
  const auto            modes = l.modes.leftCols(k);
  const Eigen::VectorXd limit = options.bound * model.variances.head(k).cwiseSqrt();
  // Normal equations of the coefficient fit: the weights repeat for x, y, z of a vertex.
  Eigen::VectorXd w3(3 * n);
  for (Eigen::Index i = 0; i < n; ++i)
    w3.segment<3>(3 * i).setConstant(w(i));
  const Eigen::MatrixXd gram = modes.transpose() * w3.asDiagonal() * modes;

  ShapeProjection result;
  result.coefficients = Eigen::VectorXd::Zero(k);
  Eigen::Matrix3Xd shape = l.mean;
  for (int it = 0; it < std::max(1, options.iterations); ++it)
  {
    result.iterations = it + 1;
    const Similarity       pose = FitSimilarity(shape, points, w, options.withScale);
    const Eigen::Matrix3Xd inModel = pose.Inverse().Apply(points);
    const Eigen::Matrix3Xd residual = inModel - l.mean;
    const Eigen::VectorXd  rhs =
      modes.transpose() * (w3.asDiagonal() * Eigen::Map<const Eigen::VectorXd>(residual.data(), 3 * n));
    const Eigen::VectorXd b = SolveBoxConstrainedLeastSquares(gram, rhs, limit);
    const double          change = (b - result.coefficients).cwiseAbs().maxCoeff() +
                          (pose.Apply(shape) - result.pose.Apply(shape)).cwiseAbs().maxCoeff();
    result.coefficients = b;
    result.pose = pose;
    shape = l.mean;
    if (k > 0)
      Eigen::Map<Eigen::VectorXd>(shape.data(), 3 * n) += modes * b;
    if (it > 0 && change < 1e-6)
      break;
  }
  result.pose = FitSimilarity(shape, points, w, options.withScale); // the pose of the final shape
  result.points = result.pose.Apply(shape);
  result.rmsDistanceMm = RmsDistance(result.points, points);
  result.sigmas = result.coefficients.cwiseQuotient(model.variances.head(k).cwiseSqrt());
  result.clampedModes =
    int(((result.coefficients.cwiseAbs() - limit).array() >= -1e-9 * (1.0 + limit.array())).count());
  return result;
}
} // namespace canopy
