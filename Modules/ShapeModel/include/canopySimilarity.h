// Similarity transforms (rotation, isotropic scale, translation) of point sets, and their
// least-squares fit between corresponding points (Umeyama 1991), the building block of ICP,
// generalised Procrustes alignment and shape-space projection.
#pragma once

#include "itk_eigen.h" // ITK's own Eigen: one Eigen in every unit that also includes ITK IO
#include ITK_EIGEN(Core)

namespace canopy
{
/** x -> scale * rotation * x + translation. Points are the columns of a 3 x n matrix (mm). */
struct Similarity
{
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();
  double          scale = 1.0;
  Eigen::Vector3d translation = Eigen::Vector3d::Zero();

  Eigen::Vector3d  Apply(const Eigen::Vector3d & point) const { return scale * (rotation * point) + translation; }
  Eigen::Matrix3Xd Apply(const Eigen::Matrix3Xd & points) const;
  Similarity       Inverse() const;
  /** (this * other)(x) = this(other(x)). */
  Similarity operator*(const Similarity & other) const;
};

/** The similarity T minimising sum_i w_i |T(from_i) - to_i|^2 (Umeyama's closed form, a proper rotation:
 * no reflection). `weights` empty: all 1; withScale false: scale 1 (a rigid fit). canopy::Error when
 * the sizes differ, fewer than 3 points have weight > 0, or `from` collapses to one point. */
Similarity
FitSimilarity(const Eigen::Matrix3Xd & from,
              const Eigen::Matrix3Xd & to,
              const Eigen::VectorXd &  weights = Eigen::VectorXd(),
              bool                     withScale = true);

/** Root mean square distance between corresponding columns. */
double
RmsDistance(const Eigen::Matrix3Xd & a, const Eigen::Matrix3Xd & b);
} // namespace canopy
