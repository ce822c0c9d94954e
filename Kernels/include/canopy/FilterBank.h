// Filter-bank channels of a scalar volume (forest features, Sharp §2.2-2.3) on the CPU or a GPU:
// Gaussian smoothing, gradient magnitude of Gaussian and Laplacian of Gaussian at a sigma in mm, made
// of RecursiveGaussian.h passes in ITK 5.2's order (SmoothingRecursiveGaussian-,
// GradientMagnitudeRecursiveGaussian- and LaplacianRecursiveGaussianImageFilter): the CPU reference
// gives ITK's values, and the GPU, compiled without contracted multiply-adds, the CPU's. Position
// channels (over the image box or in a reference frame), the intensity and the grey-morphology
// channels (closing and black top-hat, GreyMorphology.h) are computed on the host for both backends. No ITK types:
// plain arrays, x fastest.
#pragma once

#include "canopy/Device.h"
#include "canopy/HostDevice.h"
#include "canopy/ReferenceFrame.h"

#include <cmath>
#include <cstdint>
#include <vector>

struct CUstream_st;

namespace canopy
{

struct FilterBankChannelSpec
{
  enum class Kind
  {
    Intensity,
    Gaussian,
    GradientMagnitude,
    LaplacianOfGaussian,
    Position,          // the index over the image box, [0, 1]
    ReferencePosition, // the voxel's coordinate in FilterBankGrid::reference (ReferenceFrame.h)
    Zero,              // 0 everywhere: a feature's box on it makes the other box's mean absolute
    Closing,           // grey closing with a box of half-width `sigma` mm per axis (GreyMorphology.h)
    BlackTopHat        // the closing minus the intensity (>= 0): dark valleys narrower than the box
  };
  Kind   kind = Kind::Intensity;
  double sigma = 0.0; // mm; the filters' Gaussian, or the morphology box's half-width
  int    axis = 0;    // Position: 0 x, 1 y, 2 z; ReferencePosition: the frame's axis 0, 1 or 2
};

/** A volume's grid: `dimension` 2 (nz = 1) or 3, spacing in mm per axis; origin and direction (as
 * ImageGeometry) and the reference frame only for ReferencePosition channels, which need `reference`. */
struct FilterBankGrid
{
  int                    nx = 1, ny = 1, nz = 1;
  int                    dimension = 3;
  double                 spacing[3] = { 1.0, 1.0, 1.0 };
  double                 origin[3] = { 0.0, 0.0, 0.0 };
  double                 direction[3][3] = { { 1.0, 0.0, 0.0 }, { 0.0, 1.0, 0.0 }, { 0.0, 0.0, 1.0 } };
  const ReferenceFrame * reference = nullptr; // not owned

  std::int64_t  Voxels() const { return std::int64_t(nx) * ny * nz; }
  int           Size(int axis) const { return axis == 0 ? nx : axis == 1 ? ny : nz; }
  ImageGeometry Geometry() const
  {
    ImageGeometry g;
    for (int r = 0; r < 3; ++r)
    {
      g.origin[r] = origin[r];
      g.spacing[r] = spacing[r];
      for (int c = 0; c < 3; ++c)
        g.direction[r][c] = direction[r][c];
    }
    return g;
  }
};

// Element-wise steps shared by both backends, with ITK's types and rounding: the cumulative image is
// float, each term is formed in double.
/** Gradient magnitude: adds the square of a derivative per voxel, scaled to mm. */
CANOPY_HD float
AddSquaredDerivative(float sum, float derivative, double spacing)
{
  const double d = derivative / spacing;
  return static_cast<float>(sum + d * d);
}
/** Laplacian: adds a second derivative per voxel, scaled to mm^-2. */
CANOPY_HD float
AddSecondDerivative(float sum, float derivative, double spacingSquared)
{
  return static_cast<float>(sum + derivative * (1.0 / spacingSquared));
}
CANOPY_HD float
SquareRootOf(float sum)
{
#if defined(__CUDA_ARCH__)
  return static_cast<float>(sqrt(static_cast<double>(sum)));
#else
  return static_cast<float>(std::sqrt(static_cast<double>(sum)));
#endif
}
/** Position channel: the index along the axis scaled to [0, 1]; 0 on an axis of one voxel. */
CANOPY_HD float
PositionValue(int index, int size)
{
  return size < 2 ? 0.0f : static_cast<float>(double(index) / double(size - 1));
}

/** Writes one channel per spec into outputs[k] (grid.Voxels() floats each). Throws canopy::Error when a
 * filtered channel meets an axis of fewer than 4 voxels (of the grid's dimension) or a spacing that is
 * not > 0, or a ReferencePosition channel has no grid.reference (or a half size that is not > 0). On CUDA the volume is
 * uploaded once, every channel is computed on the device and copied back; synchronous. cpuThreads <= 0: ITK's default.
 */
void
ComputeFilterBank(const float *                              volume,
                  const FilterBankGrid &                     grid,
                  const std::vector<FilterBankChannelSpec> & channels,
                  const std::vector<float *> &               outputs,
                  const ResolvedBackend &                    backend,
                  int                                        cpuThreads = 0);

namespace cuda
{
/** Element-wise steps on device arrays, enqueued on `stream`. */
void
LaunchAddSquaredDerivative(float *       sum,
                           const float * derivative,
                           std::int64_t  count,
                           double        spacing,
                           CUstream_st * stream);
void
LaunchAddSecondDerivative(float *       sum,
                          const float * derivative,
                          std::int64_t  count,
                          double        spacingSquared,
                          CUstream_st * stream);
void
LaunchSquareRoot(float * values, std::int64_t count, CUstream_st * stream);
} // namespace cuda

} // namespace canopy
