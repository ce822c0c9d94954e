// Recursive (IIR) Gaussian filtering along one axis of a volume: Deriche's fourth-order
// approximation of convolution with a Gaussian or its first or second derivative, with edge-value
// extension at both ends of every line. The coefficients and the order of every operation are those
// of ITK 5.2's itk::RecursiveGaussianImageFilter (RecursiveSeparableImageFilter::FilterDataArray):
// lines read as float, filtered in double, written as float, so the CPU reference gives ITK's values
// and the filter-bank channels of models trained with ITK's filters stay the same. One line per
// thread: the CPU reference and the CUDA kernel call the same RecursiveGaussianLine.
#pragma once

#include "canopy/HostDevice.h"

#include <cmath>
#include <cstdint>

struct CUstream_st;

namespace canopy
{

/** Causal (n), recursive (d), anti-causal (m) and boundary (bn, bm) coefficients of one filter. */
struct RecursiveGaussianCoefficients
{
  double n0 = 0, n1 = 0, n2 = 0, n3 = 0;
  double d1 = 0, d2 = 0, d3 = 0, d4 = 0;
  double m1 = 0, m2 = 0, m3 = 0, m4 = 0;
  double bn1 = 0, bn2 = 0, bn3 = 0, bn4 = 0;
  double bm1 = 0, bm2 = 0, bm3 = 0, bm4 = 0;
};

/** Coefficients for a Gaussian of `sigma` (mm) on a grid of `spacing` (mm, > 0) along the line,
 * `order` 0 (smoothing), 1 or 2 (derivatives per voxel, as ITK's with NormalizeAcrossScale off). */
inline RecursiveGaussianCoefficients
MakeRecursiveGaussianCoefficients(double sigma, double spacing, int order)
{
  // Parameters of the exponential series (Deriche), per order 0, 1, 2.
  const double A1[3] = { 1.3530, -0.6724, -1.3563 };
  const double B1[3] = { 1.8151, -3.4327, 5.2318 };
  const double A2[3] = { -0.3531, 0.6724, 0.3446 };
  const double B2[3] = { 0.0902, 0.6100, -2.2355 };
  const double W1 = 0.6681, L1 = -1.3932, W2 = 2.0787, L2 = -1.3732;
  const double sigmad = sigma / spacing;

  RecursiveGaussianCoefficients c;
  const double                  Cos1 = std::cos(W1 / sigmad), Cos2 = std::cos(W2 / sigmad);
  const double                  Exp1 = std::exp(L1 / sigmad), Exp2 = std::exp(L2 / sigmad);
  c.d4 = Exp1 * Exp1 * Exp2 * Exp2;
  c.d3 = -2 * Cos1 * Exp1 * Exp2 * Exp2;
  c.d3 += -2 * Cos2 * Exp2 * Exp1 * Exp1;
  c.d2 = 4 * Cos2 * Cos1 * Exp1 * Exp2;
  c.d2 += Exp1 * Exp1 + Exp2 * Exp2;
  c.d1 = -2 * (Exp2 * Cos2 + Exp1 * Cos1);
  const double SD = 1.0 + c.d1 + c.d2 + c.d3 + c.d4;
  const double DD = c.d1 + 2 * c.d2 + 3 * c.d3 + 4 * c.d4;
  const double ED = c.d1 + 4 * c.d2 + 9 * c.d3 + 16 * c.d4;

  struct N
  {
    double n0, n1, n2, n3, SN, DN, EN;
  };
  const auto numerator = [&](int k)
  {
    const double a1 = A1[k], b1 = B1[k], a2 = A2[k], b2 = B2[k];
    const double Sin1 = std::sin(W1 / sigmad), Sin2 = std::sin(W2 / sigmad);
    N            r;
    r.n0 = a1 + a2;
    r.n1 = Exp2 * (b2 * Sin2 - (a2 + 2 * a1) * Cos2);
    r.n1 += Exp1 * (b1 * Sin1 - (a1 + 2 * a2) * Cos1);
    r.n2 = (a1 + a2) * Cos2 * Cos1;
    r.n2 -= b1 * Cos2 * Sin1 + b2 * Cos1 * Sin2;
    r.n2 *= 2 * Exp1 * Exp2;
    r.n2 += a2 * Exp1 * Exp1 + a1 * Exp2 * Exp2;
    r.n3 = Exp2 * Exp1 * Exp1 * (b2 * Sin2 - a2 * Cos2);
    r.n3 += Exp1 * Exp2 * Exp2 * (b1 * Sin1 - a1 * Cos1);
    r.SN = r.n0 + r.n1 + r.n2 + r.n3;
    r.DN = r.n1 + 2 * r.n2 + 3 * r.n3;
    r.EN = r.n1 + 4 * r.n2 + 9 * r.n3;
    return r;
  };
  double scale = 1.0;
  N      n{};
  if (order == 0)
  {
    n = numerator(0);
    scale = 2 * n.SN / SD - n.n0;
  }
  else if (order == 1)
  {
    n = numerator(1);
    scale = 2 * (n.SN * DD - n.DN * SD) / (SD * SD);
  }
  else
  {
    const N      zero = numerator(0), second = numerator(2);
    const double beta = -(2 * second.SN - SD * second.n0) / (2 * zero.SN - SD * zero.n0);
    n.n0 = second.n0 + beta * zero.n0;
    n.n1 = second.n1 + beta * zero.n1;
    n.n2 = second.n2 + beta * zero.n2;
    n.n3 = second.n3 + beta * zero.n3;
    const double SN = second.SN + beta * zero.SN, DN = second.DN + beta * zero.DN, EN = second.EN + beta * zero.EN;
    scale = EN * SD * SD - ED * SN * SD - 2 * DN * DD * SD + 2 * DD * DD * SN;
    scale /= SD * SD * SD;
  }
  c.n0 = n.n0 * (1.0 / scale);
  c.n1 = n.n1 * (1.0 / scale);
  c.n2 = n.n2 * (1.0 / scale);
  c.n3 = n.n3 * (1.0 / scale);
  const double sign = order == 1 ? -1.0 : 1.0; // the first derivative's kernel is antisymmetric
  c.m1 = sign * (c.n1 - c.d1 * c.n0);
  c.m2 = sign * (c.n2 - c.d2 * c.n0);
  c.m3 = sign * (c.n3 - c.d3 * c.n0);
  c.m4 = order == 1 ? c.d4 * c.n0 : -c.d4 * c.n0;
  // Boundary coefficients: the edge value extended to infinity on either side.
  const double SNc = c.n0 + c.n1 + c.n2 + c.n3;
  const double SM = c.m1 + c.m2 + c.m3 + c.m4;
  const double SDc = 1.0 + c.d1 + c.d2 + c.d3 + c.d4;
  c.bn1 = c.d1 * SNc / SDc;
  c.bn2 = c.d2 * SNc / SDc;
  c.bn3 = c.d3 * SNc / SDc;
  c.bn4 = c.d4 * SNc / SDc;
  c.bm1 = c.d1 * SM / SDc;
  c.bm2 = c.d2 * SM / SDc;
  c.bm3 = c.d3 * SM / SDc;
  c.bm4 = c.d4 * SM / SDc;
  return c;
}

/** Filters one line of n >= 4 samples at in[k * stride] into out[k * stride]; `in` may be `out`.
 * causal[k * causalStride] (n doubles) is scratch for the causal pass. */
CANOPY_HD void
RecursiveGaussianLine(const float *                         in,
                      float *                               out,
                      double *                              causal,
                      std::int64_t                          stride,
                      std::int64_t                          causalStride,
                      int                                   n,
                      const RecursiveGaussianCoefficients & c)
{
  // Causal pass, the first four samples against the extended edge value as ITK writes them.
  const double v = in[0];
  double       x1 = in[1 * stride], x2 = in[2 * stride], x3 = in[3 * stride];
  double       s0 = v * c.n0 + v * c.n1 + v * c.n2 + v * c.n3;
  s0 -= v * c.bn1 + v * c.bn2 + v * c.bn3 + v * c.bn4;
  double s1 = x1 * c.n0 + v * c.n1 + v * c.n2 + v * c.n3;
  s1 -= s0 * c.d1 + v * c.bn2 + v * c.bn3 + v * c.bn4;
  double s2 = x2 * c.n0 + x1 * c.n1 + v * c.n2 + v * c.n3;
  s2 -= s1 * c.d1 + s0 * c.d2 + v * c.bn3 + v * c.bn4;
  double s3 = x3 * c.n0 + x2 * c.n1 + x1 * c.n2 + v * c.n3;
  s3 -= s2 * c.d1 + s1 * c.d2 + s0 * c.d3 + v * c.bn4;
  causal[0] = s0;
  causal[1 * causalStride] = s1;
  causal[2 * causalStride] = s2;
  causal[3 * causalStride] = s3;
  // History: p* inputs i-1, i-2, i-3; q* outputs i-1 .. i-4.
  double p1 = x3, p2 = x2, p3 = x1;
  double q1 = s3, q2 = s2, q3 = s1, q4 = s0;
  for (int i = 4; i < n; ++i)
  {
    const double x = in[i * stride];
    double       s = x * c.n0 + p1 * c.n1 + p2 * c.n2 + p3 * c.n3;
    s -= q1 * c.d1 + q2 * c.d2 + q3 * c.d3 + q4 * c.d4;
    causal[i * causalStride] = s;
    p3 = p2, p2 = p1, p1 = x;
    q4 = q3, q3 = q2, q2 = q1, q1 = s;
  }

  // Anti-causal pass, added to the causal one. Every input is read before its place in `out` is
  // written, so the line may be filtered in place.
  const std::int64_t last = n - 1;
  const double       w = in[last * stride];
  const double       e1 = w, e2 = in[(last - 1) * stride], e3 = in[(last - 2) * stride], e4 = in[(last - 3) * stride];
  double             a0 = w * c.m1 + w * c.m2 + w * c.m3 + w * c.m4;
  a0 -= w * c.bm1 + w * c.bm2 + w * c.bm3 + w * c.bm4;
  double a1 = e1 * c.m1 + w * c.m2 + w * c.m3 + w * c.m4;
  a1 -= a0 * c.d1 + w * c.bm2 + w * c.bm3 + w * c.bm4;
  double a2 = e2 * c.m1 + e1 * c.m2 + w * c.m3 + w * c.m4;
  a2 -= a1 * c.d1 + a0 * c.d2 + w * c.bm3 + w * c.bm4;
  double a3 = e3 * c.m1 + e2 * c.m2 + e1 * c.m3 + w * c.m4;
  a3 -= a2 * c.d1 + a1 * c.d2 + a0 * c.d3 + w * c.bm4;
  out[last * stride] = static_cast<float>(causal[last * causalStride] + a0);
  out[(last - 1) * stride] = static_cast<float>(causal[(last - 1) * causalStride] + a1);
  out[(last - 2) * stride] = static_cast<float>(causal[(last - 2) * causalStride] + a2);
  out[(last - 3) * stride] = static_cast<float>(causal[(last - 3) * causalStride] + a3);
  // History: u* inputs i .. i+3; r* outputs i .. i+3, for the output at i-1.
  double u0 = e4, u1 = e3, u2 = e2, u3 = e1;
  double r0 = a3, r1 = a2, r2 = a1, r3 = a0;
  for (std::int64_t i = last - 3; i > 0; --i)
  {
    double a = u0 * c.m1 + u1 * c.m2 + u2 * c.m3 + u3 * c.m4;
    a -= r0 * c.d1 + r1 * c.d2 + r2 * c.d3 + r3 * c.d4;
    const double x = in[(i - 1) * stride]; // before out[i - 1] overwrites it
    out[(i - 1) * stride] = static_cast<float>(causal[(i - 1) * causalStride] + a);
    u3 = u2, u2 = u1, u1 = u0, u0 = x;
    r3 = r2, r2 = r1, r1 = r0, r0 = a;
  }
}

/** Lines along `axis` of an nx x ny x nz volume (x fastest): how many, where line `line` starts and
 * the step between its samples. Consecutive lines are neighbours along the fastest other axis, so a
 * warp's threads read consecutive addresses for the y and z axes. */
struct VolumeLines
{
  int nx = 1, ny = 1, nz = 1, axis = 0;

  CANOPY_HD std::int64_t Count() const
  {
    const std::int64_t all = std::int64_t(nx) * ny * nz;
    return all / (axis == 0 ? nx : axis == 1 ? ny : nz);
  }
  CANOPY_HD int Length() const { return axis == 0 ? nx : axis == 1 ? ny : nz; }
  CANOPY_HD std::int64_t Stride() const { return axis == 0 ? 1 : axis == 1 ? std::int64_t(nx) : std::int64_t(nx) * ny; }
  CANOPY_HD std::int64_t Start(std::int64_t line) const
  {
    if (axis == 0)
      return line * nx;
    if (axis == 1)
      return (line % nx) + (line / nx) * std::int64_t(nx) * ny;
    return line;
  }
};

/** CPU reference: every line of `lines` from `in` into `out` (may be `in`). threads <= 0: ITK's
 * default. */
void
RecursiveGaussianPassCPU(const float *                         in,
                         float *                               out,
                         const VolumeLines &                   lines,
                         const RecursiveGaussianCoefficients & coefficients,
                         int                                   threads = 0);

namespace cuda
{
/** The same pass on device arrays (out may be in); `causalScratch` holds nx*ny*nz doubles. Enqueued on
 * `stream`, no synchronisation. */
void
LaunchRecursiveGaussianPass(const float *                         in,
                            float *                               out,
                            double *                              causalScratch,
                            const VolumeLines &                   lines,
                            const RecursiveGaussianCoefficients & coefficients,
                            CUstream_st *                         stream);
} // namespace cuda

} // namespace canopy
