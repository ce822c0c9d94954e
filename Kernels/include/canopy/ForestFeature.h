// Region-difference features of decision forests (Sharp 2008 §2.1; CURFIL Eq. 1), 2D and 3D in one
// formulation (a 2D image is a volume with nz = 1), shared by CPU and CUDA prediction and training:
//   rho(q) = mean(I[c0], R0(q)) - mean(I[c1], R1(q)),
//   Ri(q)  = box of size round(size_i * s(q)) centred at q + round(offset_i * s(q)),
// where s(q) is an optional per-voxel scale (CURFIL's 1/depth; 1 without a scale channel). Means are
// over the part of the box inside the image; a box wholly outside, or a non-finite or non-positive
// scale, makes the response NaN, and NaN tests false (left child), as in CURFIL.
// Channels are padded summed-volume tables (IntegralVolumeView.h), one per channel, at a fixed stride.
#pragma once

#include "canopy/IntegralVolumeView.h"

#include <cmath>
#include <cstdint>

namespace canopy
{

/** The channels of one image: channel c's table starts at sums + c * channelStride. `scale` (may be
 * null) holds s(q) per voxel, x fastest. */
struct ForestImagesView
{
  const double * sums = nullptr;
  std::int64_t   channelStride = 0; // PaddedTableSize(nx, ny, nz) for tightly packed channels
  int            nx = 0, ny = 0, nz = 0;
  int            numChannels = 0;
  const float *  scale = nullptr;

  CANOPY_HD IntegralVolumeView Channel(int c) const
  {
    return IntegralVolumeView{ sums + c * channelStride, nx, ny, nz };
  }
  CANOPY_HD bool Planar() const { return nz == 1; }
};

/** Two boxes on two channels: offsets of the box centres from the query voxel and box sizes, in
 * voxels at scale 1. 2D features have offset z 0 and size z 1. 20 bytes, 2-byte aligned. */
struct ForestFeature
{
  std::int16_t offset[2][3];
  std::uint8_t size[2][3];
  std::uint8_t channel[2];
};

constexpr int kForestMaxOffset = 32767;
constexpr int kForestMaxBoxSize = 255;

CANOPY_HD float
ForestNaN()
{
#if defined(__CUDA_ARCH__)
  return __int_as_float(0x7fc00000);
#else
  return std::nanf("");
#endif
}

/** round-half-up of v, identical on host and device (no fused multiply-add upstream: the .cu is
 * built with --fmad=false). Clamped to +-1e9 first, so huge scales stay defined (and sums of a
 * coordinate and two such values stay within int). */
CANOPY_HD int
ForestRound(float v)
{
  v = v < -1.0e9f ? -1.0e9f : (v > 1.0e9f ? 1.0e9f : v);
  return static_cast<int>(floorf(v + 0.5f));
}

/** Sum over [x0,x1) x [y0,y1) x [0,1) of a planar (nz = 1) table: BoxSum with its four z = 0 terms,
 * which are zero, left out. Bit-identical to BoxSum there (x - 0 == x), at half the loads. */
CANOPY_HD double
PlanarBoxSum(const IntegralVolumeView & v, int x0, int y0, int x1, int y1)
{
  const double * s = v.sums + PaddedIndex(v, 0, 0, 1);
  const std::int64_t row = v.nx + 1;
  return s[y1 * row + x1] - s[y1 * row + x0] - s[y0 * row + x1] + s[y0 * row + x0];
}

/** Mean of channel `c` over box i of `f` around (x, y, z) at scale s, clipped to the image; NaN when
 * nothing of the box is inside. kPlanar: the image has nz == 1 (then z must be 0). kScaled = false
 * skips the scaling arithmetic, which is exact for s == 1 (the caller guarantees s == 1 then). */
template <bool kPlanar, bool kScaled = true>
CANOPY_HD double
ForestBoxMean(const ForestImagesView & images, const ForestFeature & f, int i, int x, int y, int z, float s)
{
  const IntegralVolumeView v = images.Channel(f.channel[i]);
  int lo[3], hi[3];
  const int q[3] = { x, y, z };
  const int n[3] = { v.nx, v.ny, v.nz };
  int count = 1;
  for (int a = 0; a < 3; ++a)
  {
    int w = kScaled ? ForestRound(static_cast<float>(f.size[i][a]) * s) : f.size[i][a];
    w = w < 1 ? 1 : w;
    const int centre = q[a] + (kScaled ? ForestRound(static_cast<float>(f.offset[i][a]) * s) : f.offset[i][a]);
    lo[a] = ClampInt(centre - w / 2, 0, n[a]);
    hi[a] = ClampInt(centre - w / 2 + w, lo[a], n[a]);
    count *= hi[a] - lo[a];
  }
  if (count == 0)
  {
    return static_cast<double>(ForestNaN());
  }
  const double sum = kPlanar ? PlanarBoxSum(v, lo[0], lo[1], hi[0], hi[1])
                             : ClippedBoxSum(v, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]);
  return sum / count;
}

/** The per-voxel scale s(q) (1 without a scale channel). */
CANOPY_HD float
ForestScaleAt(const ForestImagesView & images, int x, int y, int z)
{
  return images.scale ? images.scale[(static_cast<std::int64_t>(z) * images.ny + y) * images.nx + x] : 1.0f;
}

/** rho(q) of feature f at voxel (x, y, z) (inside the image) with scale s; kScaled as ForestBoxMean. */
template <bool kPlanar, bool kScaled = true>
CANOPY_HD float
ForestResponse(const ForestImagesView & images, const ForestFeature & f, int x, int y, int z, float s)
{
  if (kScaled && (!(s > 0.0f) || !(s <= 3.0e38f))) // NaN, non-positive or infinite scale: undefined
  {
    return ForestNaN();
  }
  return static_cast<float>(ForestBoxMean<kPlanar, kScaled>(images, f, 0, x, y, z, s) -
                            ForestBoxMean<kPlanar, kScaled>(images, f, 1, x, y, z, s));
}

/** Dispatches on the image's dimension; prediction kernels call ForestResponse<kPlanar> directly. */
CANOPY_HD float
ForestResponseAt(const ForestImagesView & images, const ForestFeature & f, int x, int y, int z)
{
  const float s = ForestScaleAt(images, x, y, z);
  return images.Planar() ? ForestResponse<true>(images, f, x, y, z, s) : ForestResponse<false>(images, f, x, y, z, s);
}

/** Sharp's two-sided test theta0 <= rho < theta1 (theta0 = -inf for the one-sided test); NaN: false. */
CANOPY_HD bool
ForestTest(float response, float theta0, float theta1)
{
  return theta0 <= response && response < theta1;
}

} // namespace canopy
