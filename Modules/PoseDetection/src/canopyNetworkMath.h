// Eigen helpers of the detection network's priors (canopyDetectionNetwork.cxx, canopyNetworkPrior.cxx):
// conversions, the nearest rotation, sign alignment and the frame a prior is expressed in.
#pragma once

#include "canopyDetectionNetwork.h"
#include "itk_eigen.h" // ITK's own Eigen: one Eigen in every unit that also includes ITK IO
#include ITK_EIGEN(Dense)

namespace canopy::networkdetail
{
using Eigen::Vector3d;

inline Eigen::Matrix3d
ToEigen(const std::array<Vec3d, 3> & rows)
{
  Eigen::Matrix3d m;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      m(r, c) = rows[r][c];
  return m;
}

inline Vector3d
ToEigen(const Vec3d & v)
{
  return Vector3d(v[0], v[1], v[2]);
}

inline std::array<Vec3d, 3>
ToRows(const Eigen::Matrix3d & m)
{
  std::array<Vec3d, 3> rows;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      rows[r][c] = m(r, c);
  return rows;
}

inline Vec3d
ToVec(const Vector3d & v)
{
  return { { v[0], v[1], v[2] } };
}

/** The rotation nearest to m (Frobenius; SVD, determinant +1). */
inline Eigen::Matrix3d
NearestRotation(const Eigen::Matrix3d & m)
{
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(m, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d                   d = Eigen::Matrix3d::Identity();
  d(2, 2) = (svd.matrixU() * svd.matrixV().transpose()).determinant() < 0.0 ? -1.0 : 1.0;
  return svd.matrixU() * d * svd.matrixV().transpose();
}

/** Rows 0 and 1 of rel sign-aligned to ref's (row 2 follows, keeping the frame right-handed). */
inline Eigen::Matrix3d
SignAligned(Eigen::Matrix3d rel, const Eigen::Matrix3d & ref)
{
  for (int a = 0; a < 2; ++a)
    if (rel.row(a).dot(ref.row(a)) < 0.0)
    {
      rel.row(a) *= -1.0;
      rel.row(2) *= -1.0;
    }
  return rel;
}

/** The frame (rows) a prior is expressed in, for a parent frame: the parent's axes sign-aligned to the
 * reference, or (longAxisOnly) the parent's long axis completed by the reference's axis 1 made
 * orthogonal to it (the parent's short axes left out: they are not defined when the parent's two
 * shorter sizes are close, e.g. the brain stem's). */
inline Eigen::Matrix3d
PriorFrame(const Eigen::Matrix3d & parentAxes, const Eigen::Matrix3d & reference, bool longAxisOnly)
{
  Eigen::Matrix3d a = SignAligned(parentAxes, reference);
  if (!longAxisOnly)
    return a;
  const Vector3d e0 = a.row(0).transpose();
  Vector3d       w = reference.row(1).transpose();
  if ((w - w.dot(e0) * e0).norm() < 1e-6)
    w = reference.row(2).transpose();
  const Vector3d e1 = (w - w.dot(e0) * e0).normalized();
  a.row(1) = e1.transpose();
  a.row(2) = e0.cross(e1).transpose();
  return a;
}

} // namespace canopy::networkdetail
