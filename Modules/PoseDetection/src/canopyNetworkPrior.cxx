// The network's spatial prior bound to a detected parent: log-priors and prior hypotheses
// (canopyNetworkPrior.h).
#include "canopyNetworkPrior.h"

#include "canopy/Errors.h"
#include "canopy/PortableRandom.h"
#include "canopyNetworkMath.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace canopy
{
using namespace networkdetail;

namespace
{
/** The inverse of a covariance that BindChildPrior made positive definite (a floor on the diagonal). */
Eigen::Matrix3d
Inverse(const Eigen::Matrix3d & covariance)
{
  return covariance.ldlt().solve(Eigen::Matrix3d::Identity());
}

double
HalfMahalanobis(const Vector3d & d, const Matrix3d & inverse)
{
  return -0.5 * d.dot(ToEigen(inverse) * d);
}

/** A lower-triangular L with L L^T = covariance (the covariance is positive definite here). */
Eigen::Matrix3d
CholeskyFactor(const Matrix3d & covariance)
{
  return Eigen::LLT<Eigen::Matrix3d>(ToEigen(covariance)).matrixL();
}

Vector3d
StandardNormal3(std::mt19937_64 & rng)
{
  const double x = StandardNormal(rng), y = StandardNormal(rng), z = StandardNormal(rng);
  return Vector3d(x, y, z);
}

Eigen::Matrix3d
Exp(const Vector3d & turn)
{
  const double angle = turn.norm();
  if (angle < 1e-15)
    return Eigen::Matrix3d::Identity();
  return Eigen::AngleAxisd(angle, turn / angle).toRotationMatrix();
}
} // namespace

void
ValidatePriorScoring(const PriorScoringOptions & o, const std::string & where)
{
  if (!(std::isfinite(o.weight) && o.weight >= 0.0 && o.weight <= 1000.0))
    CANOPY_THROW(where << ": the prior weight must be a finite number in [0, 1000] (got " << o.weight << ")");
  if (o.hypotheses != "prior" && o.hypotheses != "model" && o.hypotheses != "both")
    CANOPY_THROW(where << ": the child hypotheses must be \"prior\", \"model\" or \"both\" (got \"" << o.hypotheses
                       << "\")");
  if (o.orientationSamples < 1 || o.orientationSamples > 10000)
    CANOPY_THROW(where << ": prior orientations must be in 1..10000 (got " << o.orientationSamples << ")");
  if (o.sizeSamples < 1 || o.sizeSamples > 10000)
    CANOPY_THROW(where << ": prior sizes must be in 1..10000 (got " << o.sizeSamples << ")");
  if (!(std::isfinite(o.parentTurnDegrees) && o.parentTurnDegrees >= 0.0 && o.parentTurnDegrees <= 180.0))
    CANOPY_THROW(where << ": the parent's turn spread must be in [0, 180] degrees (got " << o.parentTurnDegrees << ")");
  if (!(std::isfinite(o.parentSizeShare) && o.parentSizeShare >= 0.0 && o.parentSizeShare <= 10.0))
    CANOPY_THROW(where << ": the parent's size spread must be in [0, 10] (got " << o.parentSizeShare << ")");
  if (!(o.childThreshold == -1.0 || (o.childThreshold >= 0.0 && o.childThreshold <= 1.0)))
    CANOPY_THROW(where << ": the child threshold must be in [0, 1] (or -1: the structure's threshold; got "
                       << o.childThreshold << ")");
}

ChildPrior
BindChildPrior(const SpatialPrior & prior, const StructurePose & parent, const PriorScoringOptions & options)
{
  ChildPrior      out;
  const auto      predicted = PredictCentre(prior, parent);
  const double    parentSd = std::max(1.0, prior.marginMm / prior.sigmas);
  Eigen::Matrix3d centre = ToEigen(predicted.covariance) + parentSd * parentSd * Eigen::Matrix3d::Identity();
  // The parent's orientation error turns the mean offset u: a small turn t ~ N(0, s^2 I) moves the
  // prediction by t x u, of covariance s^2 (|u|^2 I - u u^T) (6 mm across a 36 mm offset at 10 degrees).
  const Vector3d u = ToEigen(predicted.centerMm) - ToEigen(parent.centerMm);
  const double   offsetTurn = options.parentTurnDegrees * M_PI / 180.0;
  centre += offsetTurn * offsetTurn * (u.squaredNorm() * Eigen::Matrix3d::Identity() - u * u.transpose());
  out.centreMm = predicted.centerMm;
  out.centreCovariance = ToRows(centre);
  out.centreInverse = ToRows(Inverse(centre));

  out.frame =
    ToRows(PriorFrame(ToEigen(parent.axes), ToEigen(prior.parentAxesReference), prior.frame == "parentLongAxis"));
  out.relativeAxes = prior.relativeAxes;
  const double    turnSd = std::max(1.0, options.parentTurnDegrees) * M_PI / 180.0;
  Eigen::Matrix3d turn = ToEigen(prior.rotationCovariance) + turnSd * turnSd * Eigen::Matrix3d::Identity();
  out.turnCovariance = ToRows(turn);
  out.turnInverse = ToRows(Inverse(turn));

  out.parentSizeMm = parent.sizeMm;
  out.ratioMean = prior.sizeRatio.mean;
  Eigen::Matrix3d ratio = ToEigen(prior.sizeRatio.covariance);
  for (int a = 0; a < 3; ++a)
  {
    const double sd = std::max(0.01, options.parentSizeShare) * prior.sizeRatio.mean[a];
    ratio(a, a) += sd * sd;
  }
  out.ratioCovariance = ToRows(ratio);
  out.ratioInverse = ToRows(Inverse(ratio));
  return out;
}

double
CentreLogPrior(const ChildPrior & prior, const Vec3d & centreMm)
{
  return HalfMahalanobis(ToEigen(centreMm) - ToEigen(prior.centreMm), prior.centreInverse);
}

double
OrientationLogPrior(const ChildPrior & prior, const Matrix3d & axes)
{
  const Eigen::Matrix3d   mean = ToEigen(prior.relativeAxes);
  const Eigen::Matrix3d   relative = SignAligned(ToEigen(axes) * ToEigen(prior.frame).transpose(), mean);
  const Eigen::AngleAxisd turn(Eigen::Matrix3d(mean.transpose() * relative));
  return HalfMahalanobis(turn.angle() * turn.axis(), prior.turnInverse);
}

double
SizeLogPrior(const ChildPrior & prior, const Vec3d & sizeMm)
{
  Vector3d d;
  for (int a = 0; a < 3; ++a)
    d[a] = sizeMm[a] / prior.parentSizeMm[a] - prior.ratioMean[a];
  return HalfMahalanobis(d, prior.ratioInverse);
}

std::vector<Matrix3d>
PriorOrientationHypotheses(const ChildPrior & prior, int count, std::uint64_t seed)
{
  std::mt19937_64       rng(seed);
  const Eigen::Matrix3d l = CholeskyFactor(prior.turnCovariance);
  const Eigen::Matrix3d mean = ToEigen(prior.relativeAxes), frame = ToEigen(prior.frame);
  std::vector<Matrix3d> out;
  for (int k = 0; k < count; ++k)
  {
    const Vector3d turn = k == 0 ? Vector3d::Zero() : Vector3d(l * StandardNormal3(rng));
    out.push_back(CanonicalAxes(ToRows(NearestRotation(mean * Exp(turn) * frame))));
  }
  return out;
}

std::vector<Vec3d>
PriorSizeHypotheses(const ChildPrior & prior, int count, std::uint64_t seed)
{
  std::mt19937_64       rng(seed);
  const Eigen::Matrix3d l = CholeskyFactor(prior.ratioCovariance);
  const Vector3d        mean = ToEigen(prior.ratioMean);
  std::vector<Vec3d>    out;
  for (int k = 0; k < count; ++k)
  {
    const Vector3d r = k == 0 ? mean : Vector3d(mean + l * StandardNormal3(rng));
    Vec3d          size;
    for (int a = 0; a < 3; ++a)
      size[a] = std::max(r[a], 0.05 * mean[a]) * prior.parentSizeMm[a];
    out.push_back(size);
  }
  return out;
}

float
PriorFactor(double weight, double logPrior)
{
  if (weight == 0.0)
    return 1.0f;
  return static_cast<float>(std::exp(weight * logPrior));
}

} // namespace canopy
