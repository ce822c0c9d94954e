// Steerable features on the CPU: every type against values computed by hand on analytic volumes,
// steering (pose and volume turned together), outside-volume handling, thread-count determinism,
// the sample reuse of sorted banks, the pyramid and the feature banks.
#include "SteerableFeaturesTestSupport.h"
#include "canopySteerableFeatureBank.h"
#include "canopySteerablePyramid.h"
#include "canopySteerableResponseEngine.h"

#include "canopy/Errors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace
{
using namespace canopy;
using namespace canopy::testing;

std::vector<float>
Responses(const SteerablePyramid &              pyramid,
          const SteerableGrid &                 grid,
          const std::vector<SteerableFeature> & bank,
          const std::vector<SteerablePose> &    poses,
          int                                   threads = 0)
{
  std::vector<float> out(bank.size() * poses.size());
  EvaluateSteerableCPU(pyramid.GetView(),
                       grid,
                       bank.data(),
                       static_cast<int>(bank.size()),
                       poses.data(),
                       static_cast<std::int64_t>(poses.size()),
                       ResponseLayout{ out.data(), static_cast<std::int64_t>(poses.size()), 1 },
                       threads);
  return out;
}

// Within tol of the expected value, relative to its size; NaN fails.
void
ExpectClose(double actual, double expected, double tol, const std::string & what)
{
  EXPECT_TRUE(std::abs(actual - expected) <= tol * (1.0 + std::abs(expected)))
    << what << ": got " << actual << ", expected " << expected;
}

const Vec3 kRampSlope{ 0.8, -1.3, 0.45 };

double
Ramp(const Vec3 & p)
{
  return 200.0 + kRampSlope[0] * p[0] + kRampSlope[1] * p[1] + kRampSlope[2] * p[2];
}

// A linear ramp has an exact central-difference gradient and exact trilinear samples: every type of
// every feature equals Table 1 applied to I(p) and the constant slope, for a rotated, scaled pose.
TEST(SteerableFeatures, LinearRampMatchesTableOneForEveryType)
{
  auto             image = MakeAnalyticVolume(40, 36, 20, Ramp);
  SteerablePyramid pyramid;
  pyramid.AddLevel(image);
  const SteerableGrid grid{ 5, 1.5f };
  const auto          bank = ExhaustiveSteerableFeatures(grid, 1);
  std::mt19937_64     rng(7);
  // Centre of the volume in world coordinates; the 5^3 grid spans at most 6 mm * 1.2 from it.
  itk::ContinuousIndex<double, 3> centreIndex;
  centreIndex[0] = 19.5, centreIndex[1] = 17.5, centreIndex[2] = 9.5;
  itk::Point<double, 3> c;
  image->TransformContinuousIndexToPhysicalPoint(centreIndex, c);
  std::vector<SteerablePose> poses;
  for (int k = 0; k < 4; ++k)
    poses.push_back(MakePose({ c[0] + k, c[1] - k, c[2] + 0.5 * k }, RandomRotation(rng), { 1.2, 0.8, 1.0 }));
  const auto out = Responses(pyramid, grid, bank, poses);
  for (std::size_t p = 0; p < poses.size(); ++p)
    for (std::size_t f = 0; f < bank.size(); ++f)
    {
      const auto & feature = bank[f];
      const Vec3   point = GridPoint(poses[p], grid, feature.x, feature.y, feature.z);
      ExpectClose(out[f * poses.size() + p],
                  ExpectedSteerable(feature.type, Ramp(point), kRampSlope, poses[p]),
                  2e-4,
                  std::string("type ") + SteerableFeatureTypeName(feature.type));
    }
}

// A quadratic's gradient is linear, so central differences are exact inside and trilinear sampling of
// the gradient is exact: the gradient types match 2 A (p - c0) at arbitrary points. Intensity types
// are checked at voxel centres (pose on the image axes), where sampling is exact too.
TEST(SteerableFeatures, QuadraticMatchesTableOne)
{
  const Vec3 c0{ -25.0, 24.0, 125.0 };
  const Vec3 a{ 0.05, 0.02, 0.01 };
  auto       quadratic = [&](const Vec3 & p)
  {
    return 10.0 + a[0] * (p[0] - c0[0]) * (p[0] - c0[0]) + a[1] * (p[1] - c0[1]) * (p[1] - c0[1]) +
           a[2] * (p[2] - c0[2]) * (p[2] - c0[2]);
  };
  auto gradient = [&](const Vec3 & p) {
    return Vec3{ 2 * a[0] * (p[0] - c0[0]), 2 * a[1] * (p[1] - c0[1]), 2 * a[2] * (p[2] - c0[2]) };
  };
  auto             image = MakeAnalyticVolume(40, 40, 24, quadratic);
  SteerablePyramid pyramid;
  pyramid.AddLevel(image);
  const SteerableGrid grid{ 3, 2.0f };
  const auto          bank = ExhaustiveSteerableFeatures(grid, 1);
  std::mt19937_64     rng(11);

  // Arbitrary rotated pose, off voxel centres: gradient-based types (6..23).
  const auto rotated = MakePose({ -21.3, 30.7, 131.1 }, RandomRotation(rng), { 1, 1, 1 });
  // The image axes in world coordinates (x flipped), spacing-aligned grid: every point a voxel centre.
  itk::Index<3>         at{ { 20, 18, 10 } };
  itk::Point<double, 3> w;
  image->TransformIndexToPhysicalPoint(at, w);
  SteerablePose                    aligned = MakePose({ w[0], w[1], w[2] },
                                   { Vec3{ -1, 0, 0 }, Vec3{ 0, 1, 0 }, Vec3{ 0, 0, 1 } },
                                   { 0.5, 0.6, 2.5 }); // grid spacing 2 mm * scale = 1, 1.2, 5 mm = 1, 1, 2 voxels
  const std::vector<SteerablePose> poses{ rotated, aligned };
  const auto                       out = Responses(pyramid, grid, bank, poses);
  for (std::size_t p = 0; p < poses.size(); ++p)
    for (std::size_t f = 0; f < bank.size(); ++f)
    {
      const auto & feature = bank[f];
      if (p == 0 && feature.type < kSteerGradientX)
        continue;
      const Vec3 point = GridPoint(poses[p], grid, feature.x, feature.y, feature.z);
      ExpectClose(out[f * poses.size() + p],
                  ExpectedSteerable(feature.type, quadratic(point), gradient(point), poses[p]),
                  5e-4,
                  std::string("pose ") + std::to_string(p) + " type " + SteerableFeatureTypeName(feature.type));
    }
}

// A smooth, non-degenerate test volume: a ramp plus two Gaussian blobs.
double
Blobs(const Vec3 & p)
{
  auto blob = [&](const Vec3 & c, double s, double h)
  {
    const double d2 = (p[0] - c[0]) * (p[0] - c[0]) + (p[1] - c[1]) * (p[1] - c[1]) + (p[2] - c[2]) * (p[2] - c[2]);
    return h * std::exp(-d2 / (2 * s * s));
  };
  return Ramp(p) + blob({ -25, 25, 120 }, 6, 80) + blob({ -32, 18, 130 }, 4, -50);
}

// Turning the volume (same voxels, rotated direction and origin) and the pose together by the same
// rotation about a point leaves every response unchanged: the features are steered by the pose.
TEST(SteerableFeatures, TurningPoseAndVolumeTogetherLeavesResponsesUnchanged)
{
  auto            image = MakeAnalyticVolume(36, 36, 20, Blobs);
  std::mt19937_64 rng(3);
  const auto      R = RandomRotation(rng);
  const Vec3      pivot{ -5.0, 40.0, 90.0 };
  auto            turn = [&](const Vec3 & v) { // R v
    return Vec3{ R[0][0] * v[0] + R[0][1] * v[1] + R[0][2] * v[2],
                 R[1][0] * v[0] + R[1][1] * v[1] + R[1][2] * v[2],
                 R[2][0] * v[0] + R[2][1] * v[1] + R[2][2] * v[2] };
  };
  auto turnPoint = [&](const Vec3 & p)
  {
    const Vec3 r = turn({ p[0] - pivot[0], p[1] - pivot[1], p[2] - pivot[2] });
    return Vec3{ r[0] + pivot[0], r[1] + pivot[1], r[2] + pivot[2] };
  };
  auto turned = itk::Image<float, 3>::New();
  turned->Graft(image);
  itk::Matrix<double, 3, 3> matrix;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      matrix[r][c] = R[r][c];
  turned->SetDirection(matrix * image->GetDirection());
  const auto o = turnPoint({ image->GetOrigin()[0], image->GetOrigin()[1], image->GetOrigin()[2] });
  turned->SetOrigin(o.data());

  SteerablePyramid original, rotatedPyramid;
  original.AddLevel(image);
  rotatedPyramid.AddLevel(turned);
  const SteerableGrid        grid{ 5, 2.0f };
  const auto                 bank = ExhaustiveSteerableFeatures(grid, 1);
  std::vector<SteerablePose> poses, turnedPoses;
  for (int k = 0; k < 6; ++k)
  {
    const auto axes = RandomRotation(rng);
    const Vec3 centre{ -27.0 + 2 * k, 22.0 + k, 120.0 + 3 * k };
    poses.push_back(MakePose(centre, axes, { 1.0, 1.5, 0.7 }));
    turnedPoses.push_back(
      MakePose(turnPoint(centre), { turn(axes[0]), turn(axes[1]), turn(axes[2]) }, { 1.0, 1.5, 0.7 }));
  }
  const auto before = Responses(original, grid, bank, poses);
  const auto after = Responses(rotatedPyramid, grid, bank, turnedPoses);
  for (std::size_t i = 0; i < before.size(); ++i)
  {
    const int type = bank[i / poses.size()].type;
    ExpectClose(after[i], before[i], 1e-3, std::string("type ") + SteerableFeatureTypeName(type));
  }
}

// Outside the volume a sample reads the nearest border value: a point far beyond the +x index border
// responds as the point on the border, for every type, with finite values.
TEST(SteerableFeatures, OutsideTheVolumeReadsTheBorder)
{
  auto             image = MakeAnalyticVolume(20, 16, 12, Blobs);
  SteerablePyramid pyramid;
  pyramid.AddLevel(image);
  const SteerableGrid             grid{ 1, 1.0f };
  const auto                      bank = ExhaustiveSteerableFeatures(grid, 1);
  itk::ContinuousIndex<double, 3> border, beyond;
  border[0] = 19, border[1] = 7.25, border[2] = 5.5;
  beyond = border;
  beyond[0] = 250; // far outside along the index x axis
  itk::Point<double, 3> pb, po;
  image->TransformContinuousIndexToPhysicalPoint(border, pb);
  image->TransformContinuousIndexToPhysicalPoint(beyond, po);
  std::mt19937_64                  rng(5);
  const auto                       axes = RandomRotation(rng);
  const std::vector<SteerablePose> poses{ MakePose({ pb[0], pb[1], pb[2] }, axes, { 1, 1, 1 }),
                                          MakePose({ po[0], po[1], po[2] }, axes, { 1, 1, 1 }) };
  const auto                       out = Responses(pyramid, grid, bank, poses);
  for (std::size_t f = 0; f < bank.size(); ++f)
  {
    EXPECT_TRUE(std::isfinite(out[f * 2 + 1])) << SteerableFeatureTypeName(bank[f].type);
    EXPECT_FLOAT_EQ(out[f * 2 + 1], out[f * 2]) << SteerableFeatureTypeName(bank[f].type);
  }
  // A non-finite pose reads a defined voxel instead of memory anywhere.
  SteerablePose broken = poses[0];
  broken.center[0] = std::numeric_limits<float>::quiet_NaN();
  const auto nanOut = Responses(pyramid, grid, bank, { broken });
  for (float v : nanOut)
    EXPECT_TRUE(std::isfinite(v));
}

// A flat volume has a zero gradient: theta is pi/2 by definition, the gradient types are 0.
TEST(SteerableFeatures, ZeroGradientHasDefinedAngle)
{
  auto             image = MakeAnalyticVolume(8, 8, 8, [](const Vec3 &) { return 5.0; });
  SteerablePyramid pyramid;
  pyramid.AddLevel(image);
  const SteerableGrid              grid{ 1, 1.0f };
  const auto                       bank = ExhaustiveSteerableFeatures(grid, 1);
  const std::vector<SteerablePose> poses{ MakePose(
    { -13, 8, 110 }, { Vec3{ 1, 0, 0 }, Vec3{ 0, 1, 0 }, Vec3{ 0, 0, 1 } }, { 1, 1, 1 }) };
  const auto                       out = Responses(pyramid, grid, bank, poses);
  EXPECT_FLOAT_EQ(out[kSteerAngle], static_cast<float>(M_PI / 2));
  EXPECT_FLOAT_EQ(out[kSteerGradientMagnitude], 0.0f);
  EXPECT_FLOAT_EQ(out[kSteerPerpendicular], 0.0f);
  EXPECT_FLOAT_EQ(out[kSteerProjectionAbsLog], std::log(1e-3f));
}

// Responses do not depend on the thread count (bit for bit), and any bank order gives the same
// values as the sorted order (the sample reuse never serves a stale sample).
TEST(SteerableFeatures, DeterministicAcrossThreadsAndBankOrder)
{
  auto                       image = MakeRandomVolume<float>(30, 28, 26, 0.0, 100.0, 17);
  const auto                 pyramid = SteerablePyramid::Build(image, SteerablePyramidOptions{ {}, { 1.0, 2.0 } });
  const SteerableGrid        grid{ 5, 2.0f };
  auto                       bank = RandomSteerableFeatures(grid, 2, 500, 9);
  std::mt19937_64            rng(1);
  std::vector<SteerablePose> poses;
  for (int k = 0; k < 300; ++k)
    poses.push_back(MakePose({ -20.0 + 0.1 * k, 20.0, 130.0 - 0.1 * k }, RandomRotation(rng), { 1, 1, 1 }));
  const auto one = Responses(pyramid, grid, bank, poses, 1);
  const auto many = Responses(pyramid, grid, bank, poses, 7);
  ASSERT_EQ(0, std::memcmp(one.data(), many.data(), one.size() * sizeof(float)));

  std::reverse(bank.begin(), bank.end());
  const auto        reversed = Responses(pyramid, grid, bank, poses, 1);
  const std::size_t n = bank.size(), np = poses.size();
  for (std::size_t f = 0; f < n; ++f)
    for (std::size_t p = 0; p < np; ++p)
      ASSERT_EQ(reversed[f * np + p], one[(n - 1 - f) * np + p]);
}

TEST(SteerableFeatures, EngineOnTheCpuMatchesTheReferenceInBothLayouts)
{
  auto                       image = MakeRandomVolume<float>(24, 24, 24, -50.0, 50.0, 4);
  const auto                 pyramid = SteerablePyramid::Build(image, SteerablePyramidOptions{ { 1.5, 3.0 }, {} });
  const SteerableGrid        grid{ 7, 1.0f };
  const auto                 bank = RandomSteerableFeatures(grid, 2, 300, 2);
  std::mt19937_64            rng(8);
  std::vector<SteerablePose> poses;
  for (int k = 0; k < 50; ++k)
    poses.push_back(MakePose({ -20.0, 15.0 + 0.2 * k, 125.0 }, RandomRotation(rng), { 0.5, 1.0, 2.0 }));
  const auto reference = Responses(pyramid, grid, bank, poses);

  SteerableResponseEngine engine(ResolveBackend(BackendRequest::Parse("cpu")));
  engine.SetPyramid(pyramid);
  engine.SetFeatures(grid, bank);
  std::vector<float> pointMajor(reference.size());
  engine.Evaluate(poses.data(),
                  static_cast<std::int64_t>(poses.size()),
                  ResponseLayout{ pointMajor.data(), 1, static_cast<std::int64_t>(bank.size()) });
  for (std::size_t f = 0; f < bank.size(); ++f)
    for (std::size_t p = 0; p < poses.size(); ++p)
      ASSERT_EQ(pointMajor[p * bank.size() + f], reference[f * poses.size() + p]);
}

TEST(SteerableFeatures, PyramidLevelsHaveTheAskedSpacingAndCoverTheVolume)
{
  auto       image = MakeAnalyticVolume(40, 30, 16, Ramp); // spacing 1, 1.2, 2.5
  const auto pyramid = SteerablePyramid::Build(image, SteerablePyramidOptions{ { 1.0, 2.0, 4.0 }, {} });
  ASSERT_EQ(pyramid.GetNumberOfLevels(), 3);
  for (int k = 0; k < 3; ++k)
  {
    const auto * level = pyramid.GetLevelImage(k);
    const double t = std::pow(2.0, k);
    for (unsigned a = 0; a < 3; ++a)
    {
      EXPECT_DOUBLE_EQ(level->GetSpacing()[a], t);
      // The level's physical extent (box of its voxels) lies within the input's.
      const double inputExtent = image->GetLargestPossibleRegion().GetSize()[a] * image->GetSpacing()[a];
      EXPECT_LE(level->GetLargestPossibleRegion().GetSize()[a] * t, inputExtent + 1e-9);
    }
    EXPECT_EQ(level->GetDirection(), image->GetDirection());
  }
  // Smoothing and linear resampling keep a linear ramp (away from the ends, where the smoothing's
  // border condition bends it): the gradient of a coarse level is still the ramp's slope.
  const auto & voxels = pyramid.GetLevelVoxels(1);
  const auto * level = pyramid.GetLevelImage(1);
  const auto   size = level->GetLargestPossibleRegion().GetSize();
  const auto & v = voxels[(size[2] / 2 * size[1] + size[1] / 2) * size[0] + size[0] / 2];
  EXPECT_NEAR(v.gx, kRampSlope[0], 1e-3);
  EXPECT_NEAR(v.gy, kRampSlope[1], 1e-3);
  EXPECT_NEAR(v.gz, kRampSlope[2], 1e-3);
  // Factors: level 0 is the input's own grid and voxels.
  const auto byFactor = SteerablePyramid::Build(image, SteerablePyramidOptions{ {}, { 1.0, 2.0 } });
  EXPECT_EQ(byFactor.GetLevelImage(0)->GetSpacing(), image->GetSpacing());
  EXPECT_EQ(byFactor.GetLevelImage(1)->GetSpacing()[2], 5.0);
  EXPECT_EQ(byFactor.GetLevelVoxels(0)[123].intensity, image->GetBufferPointer()[123]);

  EXPECT_THROW(SteerablePyramid::Build(image, SteerablePyramidOptions{ { 1, 2, 4, 8, 16 }, {} }), canopy::Error);
  EXPECT_THROW(SteerablePyramid::Build(image, SteerablePyramidOptions{ { 1, 0 }, {} }), canopy::Error);
  EXPECT_THROW(SteerablePyramid::Build(nullptr), canopy::Error);
}

TEST(SteerableFeatures, BanksAreCompleteDistinctSortedAndSeeded)
{
  const SteerableGrid grid{ 5, 1.0f };
  const auto          all = ExhaustiveSteerableFeatures(grid, 3);
  EXPECT_EQ(all.size(), 125u * 24u * 3u);
  const auto a = RandomSteerableFeatures(grid, 3, 1000, 42);
  const auto b = RandomSteerableFeatures(grid, 3, 1000, 42);
  const auto c = RandomSteerableFeatures(grid, 3, 1000, 43);
  ASSERT_EQ(a.size(), 1000u);
  auto key = [](const SteerableFeature & f)
  { return ((((f.level * 256 + f.z) * 256 + f.y) * 256 + f.x) * 32) + f.type; };
  bool sameAsC = true;
  for (std::size_t k = 0; k < a.size(); ++k)
  {
    EXPECT_EQ(key(a[k]), key(b[k]));
    sameAsC = sameAsC && key(a[k]) == key(c[k]);
    if (k > 0)
      EXPECT_LT(key(a[k - 1]), key(a[k])); // sorted and distinct
  }
  EXPECT_FALSE(sameAsC);
  EXPECT_THROW(RandomSteerableFeatures(grid, 3, 0, 1), canopy::Error);
  EXPECT_THROW(ExhaustiveSteerableFeatures(SteerableGrid{ 0, 1.0f }, 1), canopy::Error);
  EXPECT_THROW(ValidateSteerableFeatures(grid, 1, { SteerableFeature{ 0, 0, 0, 24, 0 } }), canopy::Error);
  EXPECT_THROW(ValidateSteerableFeatures(grid, 1, { SteerableFeature{ 0, 5, 0, 0, 0 } }), canopy::Error);
  EXPECT_THROW(ValidateSteerableFeatures(grid, 1, { SteerableFeature{ 0, 0, 0, 0, 1 } }), canopy::Error);
}

} // namespace
