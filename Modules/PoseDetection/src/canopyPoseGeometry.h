// Small rotation helpers of the detector's training and hypothesis sets, with portable draws
// (PortableRandom.h), so a seed gives the same hypotheses on every platform.
#pragma once

#include "canopy/PortableRandom.h"
#include "canopyPoseDetector.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace canopy::posedetail
{
inline double
Dot(const Vec3d & a, const Vec3d & b)
{
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

inline Vec3d
Cross(const Vec3d & a, const Vec3d & b)
{
  return { { a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0] } };
}

inline Vec3d
RandomUnitVector(std::mt19937_64 & rng)
{
  Vec3d  v{ { StandardNormal(rng), StandardNormal(rng), StandardNormal(rng) } };
  double n = std::sqrt(Dot(v, v));
  if (n < 1e-12)
    return { { 1.0, 0.0, 0.0 } };
  for (double & x : v)
    x /= n;
  return v;
}

/** `frame` turned about a random axis by an angle uniform in [minDegrees, maxDegrees] (Rodrigues). */
inline Frame
TurnedFrame(const Frame & frame, double minDegrees, double maxDegrees, std::mt19937_64 & rng)
{
  const Vec3d  k = RandomUnitVector(rng);
  const double theta = (minDegrees + (maxDegrees - minDegrees) * UniformUnit(rng)) * M_PI / 180.0;
  const double c = std::cos(theta), s = std::sin(theta);
  Frame        out;
  for (int a = 0; a < 3; ++a)
  {
    const Vec3d & v = frame[a];
    const double  kv = Dot(k, v);
    const Vec3d   cross = Cross(k, v);
    for (int i = 0; i < 3; ++i)
      out[a][i] = v[i] * c + cross[i] * s + k[i] * kv * (1 - c);
  }
  return out;
}

/** A rotation drawn uniformly from SO(3) (a normalised Gaussian quaternion). */
inline Frame
RandomFrame(std::mt19937_64 & rng)
{
  double q[4];
  double n = 0.0;
  for (double & x : q)
  {
    x = StandardNormal(rng);
    n += x * x;
  }
  n = std::sqrt(n);
  const double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
  return { { { { 1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y) } },
             { { 2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x) } },
             { { 2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y) } } } };
}

/** A point at a distance uniform in [minMm, maxMm] from `centre`, in a random direction. */
inline Vec3d
ShiftedCentre(const Vec3d & centre, double minMm, double maxMm, std::mt19937_64 & rng)
{
  const Vec3d  d = RandomUnitVector(rng);
  const double r = minMm + (maxMm - minMm) * UniformUnit(rng);
  return { { centre[0] + r * d[0], centre[1] + r * d[1], centre[2] + r * d[2] } };
}

/** A copy of `image` normalised as the position stage normalises (NormalizeIntensities). */
inline FloatVolume::Pointer
NormalizedCopy(const FloatVolume * image, const IntensityNormalization & normalization)
{
  auto copy = FloatVolume::New();
  copy->CopyInformation(image);
  copy->SetRegions(image->GetLargestPossibleRegion());
  copy->Allocate();
  std::copy_n(
    image->GetBufferPointer(), image->GetLargestPossibleRegion().GetNumberOfPixels(), copy->GetBufferPointer());
  NormalizeIntensities(copy, normalization);
  return copy;
}

inline double
Distance(const Vec3d & a, const Vec3d & b)
{
  const Vec3d d{ { a[0] - b[0], a[1] - b[1], a[2] - b[2] } };
  return std::sqrt(Dot(d, d));
}

/** Largest relative size difference over the axes: max_a |s_a / t_a - 1|. */
inline double
RelativeSizeError(const Vec3d & size, const Vec3d & truth)
{
  double worst = 0.0;
  for (int a = 0; a < 3; ++a)
    worst = std::max(worst, std::abs(size[a] / truth[a] - 1.0));
  return worst;
}
} // namespace canopy::posedetail
