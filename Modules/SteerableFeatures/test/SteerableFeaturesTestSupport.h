// Shared pieces of the steerable-feature tests: analytic volumes, random poses, the expected value of
// every type computed in double from an intensity and a gradient.
#pragma once

#include "canopy/SteerableFeature.h"
#include "canopyTesting.h"

#include "itkImage.h"

#include <array>
#include <cmath>
#include <functional>
#include <random>

namespace canopy::testing
{

using Vec3 = std::array<double, 3>;

/** MakeVolume's grid (anisotropic spacing, flipped x) filled with value(world point). */
inline itk::Image<float, 3>::Pointer
MakeAnalyticVolume(int nx, int ny, int nz, const std::function<double(const Vec3 &)> & value)
{
  auto    image = MakeVolume<float>(nx, ny, nz);
  float * p = image->GetBufferPointer();
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
      {
        itk::Index<3>         index{ { x, y, z } };
        itk::Point<double, 3> w;
        image->TransformIndexToPhysicalPoint(index, w);
        *p++ = static_cast<float>(value({ w[0], w[1], w[2] }));
      }
  return image;
}

/** A rotation matrix (rows) from a unit quaternion drawn uniformly. */
inline std::array<Vec3, 3>
RandomRotation(std::mt19937_64 & rng)
{
  std::normal_distribution<double> n(0.0, 1.0);
  double                           q[4];
  double                           norm = 0;
  for (double & v : q)
  {
    v = n(rng);
    norm += v * v;
  }
  norm = std::sqrt(norm);
  const double w = q[0] / norm, x = q[1] / norm, y = q[2] / norm, z = q[3] / norm;
  return { Vec3{ 1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y) },
           Vec3{ 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x) },
           Vec3{ 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y) } };
}

/** A pose whose axes are the rows of `axes`. */
inline SteerablePose
MakePose(const Vec3 & center, const std::array<Vec3, 3> & axes, const Vec3 & scale)
{
  SteerablePose pose{};
  for (int k = 0; k < 3; ++k)
  {
    pose.center[k] = static_cast<float>(center[k]);
    pose.scale[k] = static_cast<float>(scale[k]);
    for (int a = 0; a < 3; ++a)
      pose.axes[a][k] = static_cast<float>(axes[a][k]);
  }
  return pose;
}

/** Table 1 in double, independently of SteerableValue: the expected response of `type` for intensity
 * I and world gradient g under `pose`. */
inline double
ExpectedSteerable(int type, double I, const Vec3 & g, const SteerablePose & pose)
{
  auto         dot = [](const Vec3 & a, const float * b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; };
  const double m = std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
  const double f = dot(g, pose.axes[0]);
  const double perp = std::sqrt(std::max(0.0, m * m - f * f));
  const double theta = m == 0 ? M_PI / 2 : std::acos(std::clamp(f / m, -1.0, 1.0));
  auto         lg = [](double x) { return std::log(std::max(1e-3, x)); };
  switch (type)
  {
    case 0:
      return I;
    case 1:
      return std::sqrt(std::max(0.0, I));
    case 2:
      return std::cbrt(I);
    case 3:
      return I * I;
    case 4:
      return I * I * I;
    case 5:
      return lg(I);
    case 6:
      return dot(g, pose.axes[0]);
    case 7:
      return dot(g, pose.axes[1]);
    case 8:
      return dot(g, pose.axes[2]);
    case 9:
      return m;
    case 10:
      return m * m;
    case 11:
      return m * m * m;
    case 12:
      return lg(m);
    case 13:
      return f;
    case 14:
      return std::abs(f);
    case 15:
      return std::sqrt(std::abs(f));
    case 16:
      return f * f;
    case 17:
      return std::pow(std::abs(f), 3);
    case 18:
      return lg(std::abs(f));
    case 19:
      return perp;
    case 20:
      return theta;
    case 21:
      return theta * theta;
    case 22:
      return theta * theta * theta;
    default:
      return lg(theta);
  }
}

/** World position of grid point (x, y, z) for a pose, in double. */
inline Vec3
GridPoint(const SteerablePose & pose, const SteerableGrid & grid, int x, int y, int z)
{
  const double half = 0.5 * (grid.size - 1);
  const double o[3] = { (x - half) * grid.spacingMm * pose.scale[0],
                        (y - half) * grid.spacingMm * pose.scale[1],
                        (z - half) * grid.spacingMm * pose.scale[2] };
  Vec3         p;
  for (int k = 0; k < 3; ++k)
    p[k] = pose.center[k] + o[0] * pose.axes[0][k] + o[1] * pose.axes[1][k] + o[2] * pose.axes[2][k];
  return p;
}

} // namespace canopy::testing
