// Per-voxel math of preparing a volume for steerable features on the device (issue 9, "Speed"):
// intensity normalisation, the separable Gaussian of itk::DiscreteGaussianImageFilter and the linear
// resampling of itk::ResampleImageFilter (identity transform, LinearInterpolateImageFunction,
// NearestNeighborExtrapolateImageFunction), written so that the same IEEE operations happen in the same
// order as in ITK 5.2: the host pyramid (SteerablePyramid::Build, ITK filters) stays the reference and
// the device pyramid matches it (SteerableFeaturesCudaTest; SteerableFeaturesTest checks these
// functions against the ITK filters on the CPU). Gradients are SteerableVoxelAt (SteerableFeature.h).
//
//  - Normalisation: NormalizeIntensities (canopyVolumePreparation.h) calls NormalizedPercentile /
//    NormalizedWindow too, with the percentiles taken from the strided sample NormalizationStride
//    describes, the k-th smallest finite value at PercentileRank.
//  - Gaussian: per axis z, then y, then x (the order DiscreteGaussianImageFilter chains its
//    directional operators), sum over taps -r..r of double(coefficient) * double(voxel) in double,
//    index clamped at the borders (ZeroFluxNeumannBoundaryCondition), rounded to float after each axis.
//  - Resampling: the continuous input index of output voxel (x, y, z) is interpolated along its
//    scanline between the indices of x = 0 and x = nx, as ResampleImageFilter's linear path does;
//    inside [-0.5, n - 0.5) the trilinear value in double (x, then y, then z; a non-positive distance or
//    a missing upper neighbour uses the lower voxel alone), outside the nearest voxel.
#pragma once

#include "canopy/HostDevice.h"
#include "canopy/IntegralVolume.h" // StreamHandle
#include "canopy/SteerableFeature.h"

#include <math.h>
#include <stdint.h>

namespace canopy
{

/** Percentiles are taken from every stride-th voxel: about 2 million of them. */
CANOPY_HD int64_t
NormalizationStride(int64_t voxels)
{
  const int64_t stride = voxels / 2000000;
  return stride > 1 ? stride : 1;
}

/** Rank (0-based, among `count` sorted finite samples) of a percentile: llround(p / 100 (count - 1)). */
CANOPY_HD int64_t
PercentileRank(double percentile, int64_t count)
{
  return static_cast<int64_t>(llround(percentile / 100.0 * static_cast<double>(count - 1)));
}

/** "percentile": (v - low) * scale, scale = 1 / (high - low) (0 for a constant volume); non-finite -> 0. */
CANOPY_HD float
NormalizedPercentile(float v, double low, double scale)
{
  return isfinite(v) ? static_cast<float>((v - low) * scale) : 0.0f;
}

/** "window": v clipped to [low, high] (non-finite -> low), mapped to [0, 1]. */
CANOPY_HD float
NormalizedWindow(float v, double low, double high)
{
  const double clipped = isfinite(v) ? fmin(high, fmax(low, static_cast<double>(v))) : low;
  return static_cast<float>((clipped - low) / (high - low));
}

/** One tap sum of a directional Gaussian: line[i * stride] for i in [0, n), taps c[0..2r] at offsets
 * -r..r, clamped indices, accumulated in double in ITK's order. */
CANOPY_HD float
GaussianLineAt(const float * line, int64_t stride, int n, int i, const double * c, int radius)
{
  double sum = 0.0;
  for (int t = -radius; t <= radius; ++t)
  {
    int j = i + t;
    j = j < 0 ? 0 : (j > n - 1 ? n - 1 : j);
    sum += c[t + radius] * static_cast<double>(line[j * stride]);
  }
  return static_cast<float>(sum);
}

/** Geometry of a resampling: ITK's index-to-physical matrix and origin of the output grid and the
 * physical-to-index matrix and origin of the input (row-major 3x3). */
struct ResampleGeometry
{
  int    outSize[3];
  int    inSize[3];
  double outOrigin[3];
  double outIndexToPhysical[9];
  double inOrigin[3];
  double inPhysicalToIndex[9];
};

/** Continuous input index of output index (x, y, z), as ImageBase::TransformIndexToPhysicalPoint and
 * TransformPhysicalPointToContinuousIndex compute it (identity transform). */
CANOPY_HD void
ResampleIndexOf(const ResampleGeometry & g, double x, double y, double z, double out[3])
{
  const double index[3] = { x, y, z };
  double       v[3];
  for (int i = 0; i < 3; ++i)
  {
    double p = g.outOrigin[i];
    for (int j = 0; j < 3; ++j)
    {
      p += g.outIndexToPhysical[3 * i + j] * index[j];
    }
    v[i] = p - g.inOrigin[i];
  }
  for (int r = 0; r < 3; ++r)
  {
    double sum = 0.0;
    for (int c = 0; c < 3; ++c)
    {
      sum += g.inPhysicalToIndex[3 * r + c] * v[c];
    }
    out[r] = sum;
  }
}

/** Output voxel (x, y, z) of the resampling of `in` (float voxels, x fastest). */
CANOPY_HD float
ResampleLinearAt(const ResampleGeometry & g, const float * in, int x, int y, int z)
{
  double start[3], end[3];
  ResampleIndexOf(g, 0.0, y, z, start);
  ResampleIndexOf(g, static_cast<double>(g.outSize[0]), y, z, end);
  const double alpha = static_cast<double>(x) / static_cast<double>(g.outSize[0]);
  double       q[3];
  bool         inside = true;
  for (int a = 0; a < 3; ++a)
  {
    q[a] = start[a];
    q[a] += alpha * (end[a] - start[a]);
    inside = inside && (q[a] >= -0.5 && q[a] < static_cast<double>(g.inSize[a] - 1) + 0.5);
  }
  const int64_t sy = g.inSize[0], sz = static_cast<int64_t>(g.inSize[0]) * g.inSize[1];
  if (!inside)
  {
    int i[3];
    for (int a = 0; a < 3; ++a)
    {
      const double r = floor(q[a] + 0.5); // RoundHalfIntegerUp; NaN reads voxel 0
      i[a] = !(r > 0.0) ? 0 : (r > g.inSize[a] - 1 ? g.inSize[a] - 1 : static_cast<int>(r));
    }
    return in[i[2] * sz + i[1] * sy + i[0]];
  }
  int    lo[3], hi[3];
  double d[3];
  for (int a = 0; a < 3; ++a)
  {
    int base = static_cast<int>(floor(q[a]));
    base = base < 0 ? 0 : base;
    d[a] = q[a] - static_cast<double>(base);
    lo[a] = base;
    // No upper neighbour, or no positive distance: the axis reads the lower voxel alone. With finite
    // voxels v + (v - v) * d == v and v + (w - v) * 0 == v, which is what ITK's branches return.
    hi[a] = (base + 1 > g.inSize[a] - 1) ? base : base + 1;
    if (!(d[a] > 0.0))
    {
      d[a] = 0.0;
      hi[a] = base;
    }
  }
  auto         at = [&](int ix, int iy, int iz) { return static_cast<double>(in[iz * sz + iy * sy + ix]); };
  const double v000 = at(lo[0], lo[1], lo[2]), v100 = at(hi[0], lo[1], lo[2]);
  const double v010 = at(lo[0], hi[1], lo[2]), v110 = at(hi[0], hi[1], lo[2]);
  const double v001 = at(lo[0], lo[1], hi[2]), v101 = at(hi[0], lo[1], hi[2]);
  const double v011 = at(lo[0], hi[1], hi[2]), v111 = at(hi[0], hi[1], hi[2]);
  const double x00 = v000 + (v100 - v000) * d[0];
  const double x10 = v010 + (v110 - v010) * d[0];
  const double x01 = v001 + (v101 - v001) * d[0];
  const double x11 = v011 + (v111 - v011) * d[0];
  const double y0 = x00 + (x10 - x00) * d[1];
  const double y1 = x01 + (x11 - x01) * d[1];
  return static_cast<float>(y0 + (y1 - y0) * d[2]);
}

namespace cuda
{
/** Device pointers, enqueued on `stream`, no synchronisation. */

/** out[i] = in[i * stride] when finite, else a positive NaN (sorts last), for i < count; *finite
 * (zeroed by the caller) counts the finite ones. */
void
LaunchNormalizationSample(const float *        in,
                          int64_t              stride,
                          int64_t              count,
                          float *              out,
                          unsigned long long * finite,
                          StreamHandle         stream);

/** Sorts `count` floats ascending (CUB radix sort); `scratch` of ScratchBytesForSortFloats(count). */
size_t
ScratchBytesForSortFloats(int64_t count);
void
LaunchSortFloats(const float * in,
                 float *       out,
                 int64_t       count,
                 void *        scratch,
                 size_t        scratchBytes,
                 StreamHandle  stream);

/** In place: window (method 1: a = low, b = high) or percentile (method 0: a = low, b = scale). */
void
LaunchNormalize(float * v, int64_t count, int method, double a, double b, StreamHandle stream);

/** One directional Gaussian pass along `axis` (0 = x) of an nx*ny*nz volume; c: 2r+1 device taps. */
void
LaunchGaussianLine(const float *  in,
                   float *        out,
                   int            nx,
                   int            ny,
                   int            nz,
                   int            axis,
                   const double * c,
                   int            radius,
                   StreamHandle   stream);

/** out (g.outSize) = ResampleLinearAt of in (g.inSize). */
void
LaunchResampleLinear(const ResampleGeometry & g, const float * in, float * out, StreamHandle stream);

/** out = SteerableVoxelAt of every voxel (ComputeSteerableVoxelsCPU on the device). */
void
LaunchSteerableVoxels(const float *    intensity,
                      int              nx,
                      int              ny,
                      int              nz,
                      const float      worldToIndex[9],
                      SteerableVoxel * out,
                      StreamHandle     stream);
} // namespace cuda

} // namespace canopy
