// The device pyramid's arithmetic (PyramidMath.h) run on the host equals SteerablePyramid::Build (ITK's
// DiscreteGaussianImageFilter and ResampleImageFilter) on random volumes: what the GPU test then
// checks for the kernels is only where they run. Also: NormalizeIntensities through the shared
// per-voxel functions.
#include "DevicePyramidTestSupport.h"

namespace
{
using namespace canopy;
using namespace canopy::testing;

// The same IEEE double operations in the same order as ITK: equal to the bit (a tolerance of 0; with
// the Gaussian's axes in another order the levels differ by up to 6e-8 and this test fails).
constexpr double kTolerance = 0.0;

TEST(DevicePyramidMath, HostLoopsMatchItkPyramid)
{
  for (const auto & c : DevicePyramidCases())
  {
    const auto normalised = NormalisedCopy(c);
    const auto reference = SteerablePyramid::Build(normalised, c.options, 1);
    const auto levels = PyramidMathOnHost(normalised, c.options);
    ASSERT_EQ(int(levels.size()), reference.GetNumberOfLevels()) << c.name;
    for (int k = 0; k < reference.GetNumberOfLevels(); ++k)
    {
      const double worst =
        ExpectLevelsMatch(levels[k], reference.GetLevelVoxels(k), kTolerance, c.name + ", level " + std::to_string(k));
      ::testing::Test::RecordProperty(c.name + " level " + std::to_string(k), std::to_string(worst));
    }
  }
}

TEST(DevicePyramidMath, PlanMatchesBuildGeometry)
{
  for (const auto & c : DevicePyramidCases())
  {
    const auto normalised = NormalisedCopy(c);
    const auto reference = SteerablePyramid::Build(normalised, c.options, 1).GetView();
    const auto plans = SteerablePyramid::Plan(normalised, c.options);
    ASSERT_EQ(int(plans.size()), reference.numLevels);
    for (int k = 0; k < reference.numLevels; ++k)
    {
      const SteerableLevelView v = SteerablePyramid::LevelViewOf(plans[k].grid);
      EXPECT_EQ(v.nx, reference.levels[k].nx);
      EXPECT_EQ(v.ny, reference.levels[k].ny);
      EXPECT_EQ(v.nz, reference.levels[k].nz);
      for (int i = 0; i < 9; ++i)
        EXPECT_EQ(v.worldToIndex[i], reference.levels[k].worldToIndex[i]) << c.name;
      for (int i = 0; i < 3; ++i)
        EXPECT_EQ(v.origin[i], reference.levels[k].origin[i]) << c.name;
    }
  }
}

TEST(DevicePyramidMath, NormalisationUsesSharedFunctions)
{
  // NormalizeIntensities maps through NormalizedPercentile / NormalizedWindow: non-finite -> 0
  // (percentile) or 0 (window: low), window clipped.
  EXPECT_EQ(NormalizedWindow(std::numeric_limits<float>::quiet_NaN(), 10.0, 20.0), 0.0f);
  EXPECT_EQ(NormalizedWindow(25.0f, 10.0, 20.0), 1.0f);
  EXPECT_EQ(NormalizedWindow(15.0f, 10.0, 20.0), 0.5f);
  EXPECT_EQ(NormalizedPercentile(std::numeric_limits<float>::infinity(), 1.0, 0.5), 0.0f);
  EXPECT_EQ(NormalizedPercentile(3.0f, 1.0, 0.5), 1.0f);
  EXPECT_EQ(NormalizationStride(1999999), 1);
  EXPECT_EQ(NormalizationStride(256ll * 256 * 256), 8);
  EXPECT_EQ(PercentileRank(99.0, 101), 99);
  EXPECT_EQ(PercentileRank(1.0, 1), 0);
}

TEST(DevicePyramidMath, ScalingFollowsTheModelsNormalization)
{
  // The detector builds its pyramid with the scaling of the position model's normalisation.
  IntensityNormalization window;
  window.method = "window";
  window.windowLow = -100.0;
  window.windowHigh = 250.0;
  const PyramidIntensityScaling w = PyramidScalingOf(window);
  EXPECT_EQ(w.method, PyramidIntensityScaling::Method::Window);
  EXPECT_EQ(w.windowLow, -100.0);
  EXPECT_EQ(w.windowHigh, 250.0);

  IntensityNormalization percentile;
  percentile.lowPercentile = 2.0;
  percentile.highPercentile = 98.0;
  const PyramidIntensityScaling p = PyramidScalingOf(percentile);
  EXPECT_EQ(p.method, PyramidIntensityScaling::Method::Percentile);
  EXPECT_EQ(p.lowPercentile, 2.0);
  EXPECT_EQ(p.highPercentile, 98.0);
}

} // namespace
