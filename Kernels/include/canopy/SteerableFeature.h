// Steerable features (Birkbeck, Sofka & Zhou, Table 1; Zheng et al. TMI 2008): transforms of the
// intensity, the gradient and the gradient's projection on a direction d, sampled at the points of a
// regular grid aligned with a hypothesis pose, on one level of an image pyramid. One definition,
// shared by the CPU reference (SteerableFeaturesCPU.cxx) and the CUDA kernel (SteerableFeatures.cu).
//
// The 24 types. The paper's Table 1 lists 21 entries as extracted (the |grad I| row shows only
// |grad I|^2) but says 24 types; the |g| row here takes the modifiers of the other non-negative
// quantity, theta (x, x^2, x^3, log), which makes 24:
//    0 I        1 sqrt(max(0,I))  2 cbrt(I)   3 I^2     4 I^3     5 log(max(1e-3, I))
//    6 gx       7 gy              8 gz         (gradient components along the pose's three axes)
//    9 |g|     10 |g|^2          11 |g|^3     12 log(max(1e-3, |g|))
//   13 f = g.d 14 |f|            15 sqrt|f|   16 f^2    17 |f|^3   18 log(max(1e-3, |f|))
//   19 |g - (g.d) d|  (the gradient's component perpendicular to d)
//   20 theta = angle(g, d) in [0, pi]  21 theta^2  22 theta^3  23 log(max(1e-3, theta))
// gx, gy, gz are taken along the pose's axes, not the image axes, so every type is steered: turning
// the pose and the volume together leaves all 24 responses unchanged (the image-axis components
// would change). theta is atan2(|perp|, f) (accurate near 0 and pi, unlike acos); where the sampled
// gradient is exactly zero theta is pi/2 (no preferred direction).
//
// Geometry. A pose is a centre (mm, world = LPS), three orthonormal axes (rows, world) and a scale
// per axis. d is the pose's first axis (for boundary detection, build the vertex frame with the
// normal as its first axis). Grid point (i, j, k) of an n^3 grid of spacing s mm lies at
//   centre + sum_a (idx_a - (n-1)/2) * s * scale_a * axis_a.
// Sampling is trilinear on the level's voxels; continuous indices are clamped to [0, n-1] on each
// axis first, so a point outside the volume reads the nearest border value (a texture's clamp mode):
// defined, finite and the same on CPU and GPU.
#pragma once

#include "canopy/HostDevice.h"

#include <math.h>
#include <stdint.h>

namespace canopy
{

constexpr int kSteerableFeatureTypes = 24;
constexpr int kMaxSteerableLevels = 4;

enum SteerableFeatureType : int
{
  kSteerIntensity = 0,
  kSteerIntensitySqrt,
  kSteerIntensityCbrt,
  kSteerIntensitySquared,
  kSteerIntensityCubed,
  kSteerIntensityLog,
  kSteerGradientX,
  kSteerGradientY,
  kSteerGradientZ,
  kSteerGradientMagnitude,
  kSteerGradientMagnitudeSquared,
  kSteerGradientMagnitudeCubed,
  kSteerGradientMagnitudeLog,
  kSteerProjection,
  kSteerProjectionAbs,
  kSteerProjectionAbsSqrt,
  kSteerProjectionSquared,
  kSteerProjectionAbsCubed,
  kSteerProjectionAbsLog,
  kSteerPerpendicular,
  kSteerAngle,
  kSteerAngleSquared,
  kSteerAngleCubed,
  kSteerAngleLog
};

/** One voxel of a pyramid level: intensity and its gradient in world coordinates (per mm). */
struct alignas(16) SteerableVoxel
{
  float intensity;
  float gx;
  float gy;
  float gz;
};

/** One pyramid level: nx*ny*nz voxels, x fastest; index = worldToIndex * (p - origin). */
struct SteerableLevelView
{
  const SteerableVoxel * voxels = nullptr;
  int                    nx = 0;
  int                    ny = 0;
  int                    nz = 0;
  float                  worldToIndex[9] = {}; // row-major 3x3, (direction * spacing)^-1
  float                  origin[3] = {};       // world position of voxel (0,0,0), mm
};

struct SteerablePyramidView
{
  SteerableLevelView levels[kMaxSteerableLevels];
  int                numLevels = 0;
};

/** The sampling pattern: size^3 points, spacingMm apart before the pose's scale. */
struct SteerableGrid
{
  int   size = 5;
  float spacingMm = 1.0f;
};

/** (grid position, type, pyramid level): 5 bytes, as the paper packs it. */
struct SteerableFeature
{
  uint8_t x, y, z; // grid index, each in [0, grid.size)
  uint8_t type;    // SteerableFeatureType
  uint8_t level;   // pyramid level
};

/** A hypothesis: centre (mm), axes[a] = unit axis a in world coordinates, scale per axis. */
struct SteerablePose
{
  float center[3];
  float axes[3][3];
  float scale[3];
};

/** The cell a trilinear sample reads: voxel `index` of the level (its lowest corner), the strides to
 * the other seven corners (0 along an axis of one voxel) and the fractions along each axis. */
struct SteerableCell
{
  int64_t index;
  int64_t sx, sy, sz;
  float   t[3];
};

/** The cell of world point p on a level (clamp-to-edge; see the file comment). */
CANOPY_HD SteerableCell
SteerableSampleCell(const SteerableLevelView & level, const float p[3])
{
  const float   r[3] = { p[0] - level.origin[0], p[1] - level.origin[1], p[2] - level.origin[2] };
  const int     n[3] = { level.nx, level.ny, level.nz };
  int           i0[3];
  int           step[3];
  SteerableCell cell;
  for (int a = 0; a < 3; ++a)
  {
    float q =
      level.worldToIndex[3 * a] * r[0] + level.worldToIndex[3 * a + 1] * r[1] + level.worldToIndex[3 * a + 2] * r[2];
    const float high = static_cast<float>(n[a] - 1);
    q = q < 0.0f ? 0.0f : (q > high ? high : q);
    q = q == q ? q : 0.0f; // a NaN position (non-finite pose) reads voxel 0 rather than memory anywhere
    int base = static_cast<int>(floorf(q));
    base = base > n[a] - 2 ? n[a] - 2 : base;
    base = base < 0 ? 0 : base;
    i0[a] = base;
    cell.t[a] = q - static_cast<float>(base);
    step[a] = n[a] > 1 ? 1 : 0;
  }
  cell.sx = step[0];
  cell.sy = static_cast<int64_t>(step[1]) * level.nx;
  cell.sz = static_cast<int64_t>(step[2]) * level.nx * level.ny;
  cell.index = (static_cast<int64_t>(i0[2]) * level.ny + i0[1]) * level.nx + i0[0];
  return cell;
}

/** Trilinear sample of a level at world point p (clamp-to-edge; see the file comment). */
CANOPY_HD SteerableVoxel
SampleSteerableLevel(const SteerableLevelView & level, const float p[3])
{
  const SteerableCell    cell = SteerableSampleCell(level, p);
  const int64_t          sx = cell.sx, sy = cell.sy, sz = cell.sz;
  const float *          t = cell.t;
  const SteerableVoxel * c = level.voxels + cell.index;
  const SteerableVoxel   v[8] = { c[0], c[sx], c[sy], c[sx + sy], c[sz], c[sx + sz], c[sy + sz], c[sx + sy + sz] };
  float                  out[4];
  for (int k = 0; k < 4; ++k)
  {
    float w[8];
    for (int j = 0; j < 8; ++j)
    {
      w[j] = reinterpret_cast<const float *>(&v[j])[k]; // a standard-layout struct of four floats
    }
    const float x00 = w[0] + t[0] * (w[1] - w[0]);
    const float x10 = w[2] + t[0] * (w[3] - w[2]);
    const float x01 = w[4] + t[0] * (w[5] - w[4]);
    const float x11 = w[6] + t[0] * (w[7] - w[6]);
    const float y0 = x00 + t[1] * (x10 - x00);
    const float y1 = x01 + t[1] * (x11 - x01);
    out[k] = y0 + t[2] * (y1 - y0);
  }
  return SteerableVoxel{ out[0], out[1], out[2], out[3] };
}

/** World position of a feature's grid point for a pose. */
CANOPY_HD void
SteerableSamplePoint(const SteerablePose & pose, const SteerableGrid & grid, const SteerableFeature & f, float p[3])
{
  const float half = 0.5f * static_cast<float>(grid.size - 1);
  const float o[3] = { (static_cast<float>(f.x) - half) * grid.spacingMm * pose.scale[0],
                       (static_cast<float>(f.y) - half) * grid.spacingMm * pose.scale[1],
                       (static_cast<float>(f.z) - half) * grid.spacingMm * pose.scale[2] };
  for (int k = 0; k < 3; ++k)
  {
    p[k] = pose.center[k] + o[0] * pose.axes[0][k] + o[1] * pose.axes[1][k] + o[2] * pose.axes[2][k];
  }
}

CANOPY_HD float
SteerableLogFloor(float x)
{
  return logf(x > 1e-3f ? x : 1e-3f);
}

/** The value of a feature type at a sample s for a pose (d = the pose's first axis). */
CANOPY_HD float
SteerableValue(int type, const SteerableVoxel & s, const SteerablePose & pose)
{
  const float I = s.intensity;
  if (type <= kSteerIntensityLog)
  {
    switch (type)
    {
      case kSteerIntensity:
        return I;
      case kSteerIntensitySqrt:
        return sqrtf(I > 0.0f ? I : 0.0f);
      case kSteerIntensityCbrt:
        return cbrtf(I);
      case kSteerIntensitySquared:
        return I * I;
      case kSteerIntensityCubed:
        return I * I * I;
      default:
        return SteerableLogFloor(I);
    }
  }
  const float g[3] = { s.gx, s.gy, s.gz };
  if (type <= kSteerGradientZ)
  {
    // Selected, not indexed: an index computed from the type would put the pose in local memory on
    // the GPU (a per-thread array must be addressable); the arithmetic is the same.
    const int   a = type - kSteerGradientX;
    const float axis[3] = { a == 0 ? pose.axes[0][0] : (a == 1 ? pose.axes[1][0] : pose.axes[2][0]),
                            a == 0 ? pose.axes[0][1] : (a == 1 ? pose.axes[1][1] : pose.axes[2][1]),
                            a == 0 ? pose.axes[0][2] : (a == 1 ? pose.axes[1][2] : pose.axes[2][2]) };
    return g[0] * axis[0] + g[1] * axis[1] + g[2] * axis[2];
  }
  if (type <= kSteerGradientMagnitudeLog)
  {
    const float squared = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
    const float m = sqrtf(squared);
    switch (type)
    {
      case kSteerGradientMagnitude:
        return m;
      case kSteerGradientMagnitudeSquared:
        return squared;
      case kSteerGradientMagnitudeCubed:
        return squared * m;
      default:
        return SteerableLogFloor(m);
    }
  }
  const float * d = pose.axes[0];
  const float   f = g[0] * d[0] + g[1] * d[1] + g[2] * d[2];
  if (type <= kSteerProjectionAbsLog)
  {
    const float a = fabsf(f);
    switch (type)
    {
      case kSteerProjection:
        return f;
      case kSteerProjectionAbs:
        return a;
      case kSteerProjectionAbsSqrt:
        return sqrtf(a);
      case kSteerProjectionSquared:
        return f * f;
      case kSteerProjectionAbsCubed:
        return a * a * a;
      default:
        return SteerableLogFloor(a);
    }
  }
  // |g - f d| directly, not sqrt(|g|^2 - f^2), which cancels when g is nearly parallel to d.
  const float r[3] = { g[0] - f * d[0], g[1] - f * d[1], g[2] - f * d[2] };
  const float perpendicular = sqrtf(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
  if (type == kSteerPerpendicular)
  {
    return perpendicular;
  }
  const float theta = (perpendicular == 0.0f && f == 0.0f) ? 1.57079632679f : atan2f(perpendicular, f);
  switch (type)
  {
    case kSteerAngle:
      return theta;
    case kSteerAngleSquared:
      return theta * theta;
    case kSteerAngleCubed:
      return theta * theta * theta;
    default:
      return SteerableLogFloor(theta);
  }
}

/** Response of one feature for one pose: the same sample and value EvaluateSteerableFeatures computes
 * for it (bit for bit), without the shared-sample shortcut. A PBT reads its weak learners' features
 * one at a time through this (SteerableFeatureFunc, PBTHypotheses.h). NaN for a type or level out of
 * range. */
CANOPY_HD float
SteerableResponse(const SteerablePyramidView & pyramid,
                  const SteerableGrid &        grid,
                  const SteerablePose &        pose,
                  const SteerableFeature &     f)
{
  if (f.level >= pyramid.numLevels || f.type >= kSteerableFeatureTypes)
  {
    return nanf("");
  }
  float p[3];
  SteerableSamplePoint(pose, grid, f, p);
  return SteerableValue(f.type, SampleSteerableLevel(pyramid.levels[f.level], p), pose);
}

/** Responses of features[0..count) for one pose: out[k * outStride]. A feature at the same grid point
 * and level as the one before it reuses that sample, so banks sorted by (level, z, y, x, type) sample
 * each point once. Types or levels out of range give NaN (banks are validated on the host). */
CANOPY_HD void
EvaluateSteerableFeatures(const SteerablePyramidView & pyramid,
                          const SteerableGrid &        grid,
                          const SteerablePose &        pose,
                          const SteerableFeature *     features,
                          int                          count,
                          float *                      out,
                          int64_t                      outStride)
{
  SteerableVoxel sample{ 0.0f, 0.0f, 0.0f, 0.0f };
  int            last = -1; // packed (level, z, y, x) of `sample`
  for (int k = 0; k < count; ++k)
  {
    const SteerableFeature f = features[k];
    if (f.level >= pyramid.numLevels || f.type >= kSteerableFeatureTypes)
    {
      out[k * outStride] = nanf("");
      continue;
    }
    const int key = (((f.level << 8) | f.z) << 8 | f.y) << 8 | f.x;
    if (key != last)
    {
      float p[3];
      SteerableSamplePoint(pose, grid, f, p);
      sample = SampleSteerableLevel(pyramid.levels[f.level], p);
      last = key;
    }
    out[k * outStride] = SteerableValue(f.type, sample, pose);
  }
}

/** Gradient of voxel (x, y, z) in world coordinates: central differences along the index axes (one-sided
 * at the borders, 0 along an axis of one voxel), then g_world = worldToIndex^T * dI/didx. */
CANOPY_HD SteerableVoxel
SteerableVoxelAt(const float * intensity, int nx, int ny, int nz, int x, int y, int z, const float worldToIndex[9])
{
  const int64_t sx = 1, sy = nx, sz = static_cast<int64_t>(nx) * ny;
  const int64_t at = z * sz + y * sy + x;
  const int     idx[3] = { x, y, z };
  const int     n[3] = { nx, ny, nz };
  const int64_t stride[3] = { sx, sy, sz };
  float         di[3];
  for (int a = 0; a < 3; ++a)
  {
    if (n[a] < 2)
    {
      di[a] = 0.0f;
      continue;
    }
    const int64_t lo = idx[a] > 0 ? at - stride[a] : at;
    const int64_t hi = idx[a] < n[a] - 1 ? at + stride[a] : at;
    const float   span = (idx[a] > 0 && idx[a] < n[a] - 1) ? 0.5f : 1.0f;
    di[a] = (intensity[hi] - intensity[lo]) * span;
  }
  SteerableVoxel v;
  v.intensity = intensity[at];
  v.gx = worldToIndex[0] * di[0] + worldToIndex[3] * di[1] + worldToIndex[6] * di[2];
  v.gy = worldToIndex[1] * di[0] + worldToIndex[4] * di[1] + worldToIndex[7] * di[2];
  v.gz = worldToIndex[2] * di[0] + worldToIndex[5] * di[1] + worldToIndex[8] * di[2];
  return v;
}

} // namespace canopy
