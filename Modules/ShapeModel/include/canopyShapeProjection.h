// Shape-space projection, the regulariser of boundary refinement (issue 10 part 3): the closest
// plausible shape to a deformed mesh, as a similarity pose and shape coefficients bounded to
// +/- bound standard deviations of the training shapes.
#pragma once

#include "canopyShapeModel.h"

namespace canopy
{
struct ShapeProjectionOptions
{
  /** |b_k| <= bound * sqrt(variance_k): 3 = the +/-3 sigma box of the training distribution. */
  double bound = 3.0;
  /** Modes used; -1 = all the model has. */
  int modes = -1;
  /** Per-vertex weights >= 0 (e.g. the boundary classifier's confidence); empty = all 1. */
  Eigen::VectorXd weights;
  /** Fit the isotropic scale of the pose (false: rigid pose, the model's size). */
  bool withScale = true;
  /** Alternations of pose fit and coefficient fit; stops earlier when the pose and coefficients
   * settle (changes below 1e-6 mm). */
  int iterations = 30;
};

struct ShapeProjection
{
  Similarity       pose;              // model frame -> the input mesh's frame
  Eigen::VectorXd  coefficients;      // b_k, mm (one per mode used)
  Eigen::VectorXd  sigmas;            // b_k / sqrt(variance_k)
  Eigen::Matrix3Xd points;            // the regularised mesh: pose(mean + modes * b), input frame
  double           rmsDistanceMm = 0; // input vs regularised mesh (corresponding vertices)
  int              clampedModes = 0;  // coefficients held at their bound
  int              iterations = 0;
};

/** The pose and bounded coefficients minimising sum_i w_i |pose(mean_i + modes_i b) - points_i|^2 on
 * `level` (alternating a weighted Umeyama fit of the pose with a box-constrained least-squares fit of
 * b in the model frame), and the regularised mesh. `points` must be in vertex correspondence with the
 * level (a deformed copy of its mean mesh). canopy::Error for a wrong point count, non-finite points,
 * bad weights or options. */
ShapeProjection
ProjectOntoShapeSpace(const ShapeModel &             model,
                      std::size_t                    level,
                      const Eigen::Matrix3Xd &       points,
                      const ShapeProjectionOptions & options = {});

/** The coefficients minimising |A b - r|^2_W over the box |b_k| <= limit_k, given the normal
 * equations gram = A^T W A and rhs = A^T W r (projected Gauss-Seidel; exact for an orthonormal A). */
Eigen::VectorXd
SolveBoxConstrainedLeastSquares(const Eigen::MatrixXd & gram,
                                const Eigen::VectorXd & rhs,
                                const Eigen::VectorXd & limit);
} // namespace canopy
