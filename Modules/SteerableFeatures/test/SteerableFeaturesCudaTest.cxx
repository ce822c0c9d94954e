// GPU against CPU for steerable features: random volumes, random poses (some outside the volume),
// random and exhaustive banks, both layouts and sliced evaluation. Skipped without a GPU.
#include "SteerableFeaturesTestSupport.h"
#include "canopySteerableFeatureBank.h"
#include "canopySteerablePyramid.h"
#include "canopySteerableResponseEngine.h"

#include <gtest/gtest.h>

namespace
{
using namespace canopy;
using namespace canopy::testing;

// Both sides run EvaluateSteerableFeatures with uncontracted arithmetic; what differs is the last
// bits of sqrt/cbrt/log/atan2, so responses agree to a few float ulps. The tolerance below is
// relative to the response's size; NaN fails.
constexpr double kTolerance = 2e-5;

struct Case
{
  SteerablePyramid              pyramid;
  SteerableGrid                 grid;
  std::vector<SteerableFeature> bank;
  std::vector<SteerablePose>    poses;
};

Case
MakeCase(std::uint64_t seed, bool exhaustive)
{
  Case c;
  auto image = MakeRandomVolume<float>(48, 40, 24, 0.0, 255.0, seed);
  c.pyramid = SteerablePyramid::Build(image, SteerablePyramidOptions{ {}, { 1.0, 2.0, 4.0 } });
  c.grid = exhaustive ? SteerableGrid{ 3, 2.0f } : SteerableGrid{ 7, 1.5f };
  c.bank = exhaustive ? ExhaustiveSteerableFeatures(c.grid, 3) : RandomSteerableFeatures(c.grid, 3, 3000, seed);
  std::mt19937_64                        rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < 5000; ++k)
  {
    // Continuous index in [-0.2, 1.2] of each axis: about half of the poses reach outside.
    itk::ContinuousIndex<double, 3> index;
    for (unsigned a = 0; a < 3; ++a)
      index[a] = (-0.2 + 1.4 * u(rng)) * image->GetLargestPossibleRegion().GetSize()[a];
    itk::Point<double, 3> centre;
    image->TransformContinuousIndexToPhysicalPoint(index, centre);
    c.poses.push_back(MakePose({ centre[0], centre[1], centre[2] },
                               RandomRotation(rng),
                               { 0.5 + 1.5 * u(rng), 0.5 + 1.5 * u(rng), 0.5 + 1.5 * u(rng) }));
  }
  return c;
}

std::vector<float>
Evaluate(const Case & c,
         const char * device,
         bool         pointMajor = false,
         std::size_t  maxDeviceBytes = std::size_t{ 512 } << 20)
{
  SteerableResponseEngine engine(ResolveBackend(BackendRequest::Parse(device)), 0, maxDeviceBytes);
  engine.SetPyramid(c.pyramid);
  engine.SetFeatures(c.grid, c.bank);
  const auto         nf = static_cast<std::int64_t>(c.bank.size());
  const auto         np = static_cast<std::int64_t>(c.poses.size());
  std::vector<float> out(static_cast<std::size_t>(nf * np));
  engine.Evaluate(
    c.poses.data(), np, pointMajor ? ResponseLayout{ out.data(), 1, nf } : ResponseLayout{ out.data(), np, 1 });
  if (!pointMajor)
    return out;
  std::vector<float> featureMajor(out.size()); // back to feature-major for comparison
  for (std::int64_t f = 0; f < nf; ++f)
    for (std::int64_t p = 0; p < np; ++p)
      featureMajor[f * np + p] = out[p * nf + f];
  return featureMajor;
}

void
ExpectParity(const Case & c, const std::vector<float> & gpu, const std::vector<float> & cpu)
{
  ASSERT_EQ(gpu.size(), cpu.size());
  const std::size_t np = c.poses.size();
  std::size_t       failures = 0;
  double            worst = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i)
  {
    const double err = std::abs(static_cast<double>(gpu[i]) - cpu[i]) / (1.0 + std::abs(cpu[i]));
    if (!(err <= kTolerance)) // NaN fails
    {
      if (failures++ < 5)
        ADD_FAILURE() << "feature " << i / np << " (type " << SteerableFeatureTypeName(c.bank[i / np].type)
                      << ", level " << int(c.bank[i / np].level) << ") pose " << i % np << ": gpu " << gpu[i] << " cpu "
                      << cpu[i];
    }
    worst = std::max(worst, std::isfinite(err) ? err : 1e300);
  }
  EXPECT_EQ(failures, 0u) << "of " << cpu.size() << " responses; worst relative error " << worst;
  ::testing::Test::RecordProperty("worst_relative_error", std::to_string(worst));
}

TEST(SteerableFeaturesCuda, RandomBankMatchesCpu)
{
  CANOPY_REQUIRE_GPU();
  const auto c = MakeCase(21, false);
  ExpectParity(c, Evaluate(c, "cuda"), Evaluate(c, "cpu"));
}

TEST(SteerableFeaturesCuda, ExhaustiveBankMatchesCpu)
{
  CANOPY_REQUIRE_GPU();
  const auto c = MakeCase(22, true);
  ExpectParity(c, Evaluate(c, "cuda"), Evaluate(c, "cpu"));
}

TEST(SteerableFeaturesCuda, PointMajorAndSlicedMatchCpu)
{
  CANOPY_REQUIRE_GPU();
  const auto c = MakeCase(23, false);
  const auto cpu = Evaluate(c, "cpu");
  // 1 MiB of device scratch: a few hundred poses per slice, so many slices.
  ExpectParity(c, Evaluate(c, "cuda", true, std::size_t{ 1 } << 20), cpu);
  ExpectParity(c, Evaluate(c, "cuda", false, std::size_t{ 1 } << 20), cpu);
}

} // namespace

// The pyramid built on the device from one upload of the raw image (SteerableResponseEngine::SetImage)
// against the host path (NormalizeIntensities, then SteerablePyramid::Build): levels' geometry equal,
// voxels (intensity and world gradient) within kPyramidTolerance x (1 + |host|), NaN fails. The device
// runs ITK's double operations in ITK's order (PyramidMath.h; DevicePyramidTest checks that on the
// host), so the levels are expected equal; the tolerance absorbs a last-bit difference.
#include "DevicePyramidTestSupport.h"

namespace
{
constexpr double kPyramidTolerance = 1e-6;

TEST(SteerableFeaturesCuda, DevicePyramidMatchesHostPyramid)
{
  CANOPY_REQUIRE_GPU();
  using namespace canopy;
  using namespace canopy::testing;
  for (const auto & c : DevicePyramidCases())
  {
    const auto              reference = SteerablePyramid::Build(NormalisedCopy(c), c.options, 1);
    SteerableResponseEngine engine(ResolveBackend(BackendRequest::Parse("cuda")));
    engine.SetImage(c.image, c.options, PyramidScalingOf(c.normalization));
    for (int k = 0; k < reference.GetNumberOfLevels(); ++k)
    {
      const double worst = ExpectLevelsMatch(engine.DownloadLevel(k),
                                             reference.GetLevelVoxels(k),
                                             kPyramidTolerance,
                                             c.name + ", level " + std::to_string(k));
      ::testing::Test::RecordProperty(c.name + " level " + std::to_string(k), std::to_string(worst));
    }
    EXPECT_THROW(engine.DownloadLevel(reference.GetNumberOfLevels()), canopy::Error);
  }
}

TEST(SteerableFeaturesCuda, DevicePyramidScoresLikeHostPyramid)
{
  // Responses of random poses read from the device-built pyramid equal those of the host pyramid.
  CANOPY_REQUIRE_GPU();
  using namespace canopy;
  using namespace canopy::testing;
  const auto                             c = DevicePyramidCases().front();
  const auto                             reference = SteerablePyramid::Build(NormalisedCopy(c), c.options, 1);
  SteerableGrid                          grid{ 5, 2.0f };
  const auto                             bank = RandomSteerableFeatures(grid, reference.GetNumberOfLevels(), 500, 3);
  std::mt19937_64                        rng(4);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<SteerablePose>             poses;
  for (int k = 0; k < 300; ++k)
    poses.push_back(
      MakePose({ -12 + 40 * u(rng), 3 + 30 * u(rng), 101 + 25 * u(rng) }, RandomRotation(rng), { 1, 1, 1 }));
  auto run = [&](bool device)
  {
    SteerableResponseEngine engine(ResolveBackend(BackendRequest::Parse(device ? "cuda" : "cpu")));
    if (device)
      engine.SetImage(c.image, c.options, PyramidScalingOf(c.normalization));
    else
      engine.SetPyramid(reference);
    engine.SetFeatures(grid, bank);
    std::vector<float> out(bank.size() * poses.size());
    engine.Evaluate(
      poses.data(), std::int64_t(poses.size()), ResponseLayout{ out.data(), std::int64_t(poses.size()), 1 });
    return out;
  };
  const auto  gpu = run(true), cpu = run(false);
  std::size_t failures = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i)
    if (!(std::abs(double(gpu[i]) - cpu[i]) / (1.0 + std::abs(cpu[i])) <= kTolerance) && failures++ < 5)
      ADD_FAILURE() << "response " << i << ": gpu " << gpu[i] << " cpu " << cpu[i];
  EXPECT_EQ(failures, 0u);
}

} // namespace
