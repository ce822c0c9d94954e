#include "canopySimilarity.h"

#include "canopy/Errors.h"

#include "itk_eigen.h" // ITK's own Eigen: one Eigen in every unit that also includes ITK IO
#include ITK_EIGEN(Dense)

#include <cmath>

namespace canopy
{
Eigen::Matrix3Xd
Similarity::Apply(const Eigen::Matrix3Xd & points) const
{
  return ((scale * rotation) * points).colwise() + translation;
}

Similarity
Similarity::Inverse() const
{
  Similarity inverse;
  inverse.rotation = rotation.transpose();
  inverse.scale = 1.0 / scale;
  inverse.translation = -(inverse.scale * (inverse.rotation * translation));
  return inverse;
}

Similarity
Similarity::operator*(const Similarity & other) const
{
  Similarity product;
  product.rotation = rotation * other.rotation;
  product.scale = scale * other.scale;
  product.translation = Apply(other.translation);
  return product;
}

Similarity
FitSimilarity(const Eigen::Matrix3Xd & from,
              const Eigen::Matrix3Xd & to,
              const Eigen::VectorXd &  weights,
              bool                     withScale)
{
  const Eigen::Index n = from.cols();
  if (to.cols() != n || (weights.size() != 0 && weights.size() != n))
    CANOPY_THROW("FitSimilarity: " << n << " source points, " << to.cols() << " targets and " << weights.size()
                                   << " weights do not correspond");
  const Eigen::VectorXd w = weights.size() == 0 ? Eigen::VectorXd::Ones(n) : weights;
  if ((w.array() > 0).count() < 3 || !(w.sum() > 0))
    CANOPY_THROW("FitSimilarity: fewer than 3 points with a positive weight");
  const double           total = w.sum();
  const Eigen::Vector3d  meanFrom = from * w / total, meanTo = to * w / total;
  const Eigen::Matrix3Xd a = from.colwise() - meanFrom, b = to.colwise() - meanTo;
  const double           varianceFrom = (a.colwise().squaredNorm().transpose().cwiseProduct(w)).sum() / total;
  if (!(varianceFrom > 1e-20))
    CANOPY_THROW("FitSimilarity: the source points coincide");
  const Eigen::Matrix3d             covariance = b * w.asDiagonal() * a.transpose() / total;
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(covariance, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Vector3d                   sign = Eigen::Vector3d::Ones();
  if (svd.matrixU().determinant() * svd.matrixV().determinant() < 0)
    sign(2) = -1; // the best proper rotation, not a reflection
  Similarity t;
  t.rotation = svd.matrixU() * sign.asDiagonal() * svd.matrixV().transpose();
  t.scale = withScale ? svd.singularValues().dot(sign) / varianceFrom : 1.0;
  t.translation = meanTo - t.scale * (t.rotation * meanFrom);
  return t;
}

double
RmsDistance(const Eigen::Matrix3Xd & a, const Eigen::Matrix3Xd & b)
{
  if (a.cols() == 0)
    return 0.0;
  return std::sqrt((a - b).colwise().squaredNorm().mean());
}
} // namespace canopy
