// Shared test helpers: synthetic phantoms, GPU skipping, unique output paths.
#pragma once

#include "canopy/Device.h"
#include "canopy/Errors.h"
#include "itkImage.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace canopy::testing
{

/** A 3D image of the given size with unit spacing, a non-trivial origin and direction. */
template<typename TPixel>
typename itk::Image<TPixel, 3>::Pointer
MakeVolume(int nx, int ny, int nz);

/** Uniform random voxels in [low, high] (integers for integer pixel types), seeded. */
template<typename TPixel>
typename itk::Image<TPixel, 3>::Pointer
MakeRandomVolume(int nx, int ny, int nz, double low, double high, std::uint64_t seed);

/** Ellipsoid phantom: `inside` within the ellipsoid of centre c and semi-axes r (voxels), `outside`
 * elsewhere, plus Gaussian noise of sigma `noise`. */
itk::Image<float, 3>::Pointer
MakeEllipsoidPhantom(int           nx,
                     int           ny,
                     int           nz,
                     const double  c[3],
                     const double  r[3],
                     float         inside,
                     float         outside,
                     float         noise,
                     std::uint64_t seed);

/** A small bright ball on a 1 mm isotropic grid (MakeVolume's origin and direction): `image` holds
 * `inside` within radiusMm of the centre c (voxel coordinates), `outside` elsewhere, plus Gaussian
 * noise of sigma `noise`; `mask` is 1 exactly inside the ball. For structures near the size a
 * regulariser removes. */
struct BallPhantom
{
  itk::Image<float, 3>::Pointer         image;
  itk::Image<unsigned char, 3>::Pointer mask;
};
BallPhantom
MakeBallPhantom(int           nx,
                int           ny,
                int           nz,
                const double  c[3],
                double        radiusMm,
                float         inside,
                float         outside,
                float         noise,
                std::uint64_t seed);

/** The auto-context phantom (nx*ny*nz voxels, x fastest): balls of intensity 1 on 0 with Gaussian noise
 * of sd 0.25, class 1 inside 3 balls of radius 7, class 2 inside up to 6 of radius 2.5, placed at
 * random (seeded) without overlap. A ball's class is its size, which features of short reach cannot
 * see from its rim: a cascade that reads the previous stage's maps must beat its first stage. */
struct SizeLabelledBalls
{
  std::vector<float>        image;
  std::vector<std::int32_t> labels;
};
SizeLabelledBalls
MakeSizeLabelledBalls(int nx, int ny, int nz, std::uint64_t seed);

/** An oriented ellipsoid for pose tests (known centre, axes and sizes): MakeVolume's origin and
 * direction with an isotropic spacing of spacingMm; `inside` where sum_a ((p - c) . axes[a] / radiiMm[a])^2
 * <= 1 for the physical point p of a voxel, `outside` elsewhere, plus Gaussian noise of sigma `noise`.
 * The centre is given as a continuous voxel index and returned in mm (world, LPS); axes are unit
 * rows in world coordinates. */
struct OrientedEllipsoidPhantom
{
  itk::Image<float, 3>::Pointer image;
  double                        centerMm[3];
};
OrientedEllipsoidPhantom
MakeOrientedEllipsoidPhantom(int           nx,
                             int           ny,
                             int           nz,
                             double        spacingMm,
                             const double  centerIndex[3],
                             const double  axes[3][3],
                             const double  radiiMm[3],
                             float         inside,
                             float         outside,
                             float         noise,
                             std::uint64_t seed);

/** True when a CUDA device is usable in this build and process. */
bool
GpuAvailable();

/** A path under the test output folder unique to this test, e.g. for baselines comparisons. */
std::string
OutputPath(const std::string & fileName);

/** "Suite.Test." inside a test; in a suite's set-up, the process's --gtest_filter made a file name
 * (ctest runs each test as its own process, and each sets the suite up again); "" when it runs all. */
std::string
ProcessTestPrefix();

/** The process's --gtest_filter made a file name, the same inside and outside its tests ("" when it
 * runs all): for a suite's files that its set-up writes and every test of the process reads. */
std::string
ProcessFilterPrefix();

/** The description of the canopy::Error `body` throws, or "(no error)" when it throws none (other
 * exceptions propagate and fail the test). */
inline std::string
ErrorOf(const std::function<void()> & body)
{
  try
  {
    body();
  }
  catch (const canopy::Error & e)
  {
    return e.GetDescription();
  }
  return "(no error)";
}

/** What a command-line run left: exit status (128 + signal when killed) and its two streams. */
struct CommandRun
{
  int         status = -1;
  std::string out, err;
};

/** Runs `executable arguments` through the shell, its streams captured in OutputPath(name + ".stdout")
 * and ".stderr". */
CommandRun
RunCommand(const std::string & executable, const std::string & arguments, const std::string & name);

} // namespace canopy::testing

/** Skips (never passes) the current test when no GPU is usable, saying why. */
#define CANOPY_REQUIRE_GPU()                                                                                           \
  do                                                                                                                   \
  {                                                                                                                    \
    if (!::canopy::testing::GpuAvailable())                                                                            \
    {                                                                                                                  \
      GTEST_SKIP() << "no usable GPU: " << ::canopy::WhyNoCudaDevice();                                                \
    }                                                                                                                  \
  } while (false)
