// The detector's stages on the GPU against the CPU (issue 9 part 3): the same phantom, the same
// model; position candidates, orientation and scale scores and the final poses. Skipped (never
// passed) without a GPU.
#include "PoseTestPhantoms.h"

#include "canopyTesting.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace
{
using namespace canopy;
using namespace canopy::posetest;

TEST(PoseDetectorCuda, StagesAndPosesMatchCpu)
{
  CANOPY_REQUIRE_GPU();
  std::vector<DetectorTrainingSubject> subjects;
  for (std::uint64_t seed = 1; seed <= 4; ++seed)
    subjects.push_back(MakeSubject(seed));
  auto options = SmallTrainingOptions();
  options.backend = ResolveBackend(BackendRequest::Parse("cpu"));
  const auto model = TrainDetector(subjects, { { "large", kLarge }, { "small", kSmall } }, options);

  DetectionOptions cpuOptions, gpuOptions;
  cpuOptions.backend = ResolveBackend(BackendRequest::Parse("cpu"));
  gpuOptions.backend = ResolveBackend(BackendRequest::Parse("cuda"));
  PoseDetector cpu(model, cpuOptions), gpu(model, gpuOptions);
  const auto   subject = MakeSubject(101);
  cpu.SetImage(subject.image, subject.name);
  gpu.SetImage(subject.image, subject.name);
  cpuOptions.refineStepMm = gpuOptions.refineStepMm = 1.0;
  PoseDetector cpuRefined(model, cpuOptions), gpuRefined(model, gpuOptions);
  cpuRefined.SetImage(subject.image, subject.name);
  gpuRefined.SetImage(subject.image, subject.name);
  for (int s = 0; s < 2; ++s)
  {
    // Position: the dense Haar posteriors agree within 1e-5 (PBTEvaluatorCudaTest), so the k-th best
    // scores agree; equal scores on a plateau may be kept in another order or swapped for an equal one,
    // so the centres are compared as sets (at least half in common).
    const auto pc = cpu.PositionCandidates(s), pg = gpu.PositionCandidates(s);
    ASSERT_EQ(pc.size(), pg.size());
    std::size_t common = 0;
    for (std::size_t k = 0; k < pc.size(); ++k)
    {
      EXPECT_NEAR(pc[k].score, pg[k].score, 1e-5) << "candidate " << k;
      common +=
        std::any_of(pg.begin(), pg.end(), [&](const ScoredPose & g) { return g.pose.centerMm == pc[k].pose.centerMm; });
    }
    EXPECT_GE(common, pc.size() / 2);
    // Orientation and scale on the CPU's candidates: steerable responses differ in the last bits
    // (SteerablePBTCudaTest), so 99% of the scores within 1e-5 and the best the same hypothesis.
    const auto oc = cpu.OrientationCandidates(s, pc, 0), og = gpu.OrientationCandidates(s, pc, 0);
    ASSERT_EQ(oc.size(), og.size());
    std::size_t        close = 0;
    std::vector<float> cpuScores, gpuScores;
    for (std::size_t k = 0; k < oc.size(); ++k)
    {
      cpuScores.push_back(oc[k].score);
      gpuScores.push_back(og[k].score);
    }
    std::sort(cpuScores.begin(), cpuScores.end());
    std::sort(gpuScores.begin(), gpuScores.end());
    for (std::size_t k = 0; k < oc.size(); ++k)
      close += std::abs(cpuScores[k] - gpuScores[k]) <= 1e-5f;
    EXPECT_GE(close, oc.size() * 99 / 100);
    EXPECT_NEAR(oc.front().score, og.front().score, 1e-5);
    const std::vector<ScoredPose> kept(oc.begin(), oc.begin() + 20);
    const auto                    sc = cpu.ScaleCandidates(s, kept, 0), sg = gpu.ScaleCandidates(s, kept, 0);
    ASSERT_EQ(sc.size(), sg.size());
    EXPECT_NEAR(sc.front().score, sg.front().score, 1e-5);

    const auto dc = cpu.Detect(s), dg = gpu.Detect(s);
    EXPECT_EQ(dc.found, dg.found);
    double d2 = 0;
    for (int k = 0; k < 3; ++k)
      d2 += (dc.pose.centerMm[k] - dg.pose.centerMm[k]) * (dc.pose.centerMm[k] - dg.pose.centerMm[k]);
    // The final poses average the best 30 hypotheses: a reordered plateau moves them a little.
    EXPECT_LE(std::sqrt(d2), 1.0) << "structure " << s;
    EXPECT_LE(OrientationErrorDegrees(dc.pose.axes, dg.pose.axes), 2.0) << "structure " << s;
    EXPECT_NEAR(dc.score, dg.score, 1e-4) << "structure " << s;

    // Centre refinement (detect --refine-step): the scale stage's traversal on shifted poses.
    const std::vector<ScoredPose> best(sc.begin(), sc.begin() + std::min<std::size_t>(10, sc.size()));
    const auto rc = cpuRefined.RefineCentres(s, best, -1.0), rg = gpuRefined.RefineCentres(s, best, -1.0);
    ASSERT_EQ(rc.size(), rg.size());
    EXPECT_NEAR(rc.front().score, rg.front().score, 1e-5) << "structure " << s;
    const auto fc = cpuRefined.Detect(s), fg = gpuRefined.Detect(s);
    EXPECT_EQ(fc.found, fg.found);
    double r2 = 0;
    for (int k = 0; k < 3; ++k)
      r2 += (fc.pose.centerMm[k] - fg.pose.centerMm[k]) * (fc.pose.centerMm[k] - fg.pose.centerMm[k]);
    EXPECT_LE(std::sqrt(r2), 1.0) << "structure " << s;
    EXPECT_NEAR(fc.score, fg.score, 1e-4) << "structure " << s;

    // detect --truth: the stages' posteriors at the true pose, whole grid and a box around it.
    const StructurePose truth = PoseFromLabel(subject.labels, s == 0 ? kLarge : kSmall, subject.name);
    GridBox             box;
    box.lo = { { 5, 5, 5 } };
    box.hi = { { 24, 24, 24 } };
    for (const GridBox & region : { GridBox{}, box })
    {
      const TruthScores tc = cpu.ScoreTruth(s, truth, region), tg = gpu.ScoreTruth(s, truth, region);
      EXPECT_NEAR(tc.position, tg.position, 1e-5) << "structure " << s;
      EXPECT_NEAR(tc.orientation, tg.orientation, 1e-4) << "structure " << s;
      EXPECT_NEAR(tc.scale, tg.scale, 1e-4) << "structure " << s;
      EXPECT_NEAR(static_cast<double>(tc.positionRank), static_cast<double>(tg.positionRank), 2.0)
        << "ties may reorder";
      EXPECT_EQ(tc.searchedVoxels, tg.searchedVoxels);
    }
  }
}
} // namespace

namespace
{
// The network's region search on the GPU: the crop's dense posteriors inside the box equal the CPU's
// whole-volume ones (within the 1e-5 of PBTEvaluatorCudaTest), and DetectAll searches the same regions.
TEST(PoseDetectorCuda, RegionSearchMatchesCpuWholeVolume)
{
  CANOPY_REQUIRE_GPU();
  std::vector<DetectorTrainingSubject> subjects;
  for (std::uint64_t seed = 1; seed <= 4; ++seed)
    subjects.push_back(MakeSubject(seed));
  auto options = SmallTrainingOptions();
  options.backend = ResolveBackend(BackendRequest::Parse("cpu"));
  options.network = { { "small", "large" } };
  const auto         model = TrainDetector(subjects, { { "large", kLarge }, { "small", kSmall } }, options);
  const auto         subject = MakeSubject(102);
  const auto &       position = model.structures[1].position;
  const auto         grid = PrepareVolume(subject.image, position.workingSpacing, position.normalization);
  const auto         size = grid->GetLargestPossibleRegion().GetSize();
  std::vector<float> whole(grid->GetLargestPossibleRegion().GetNumberOfPixels());
  PBTVolumeEvaluator(position.tree, ResolveBackend(BackendRequest::Parse("cpu")))
    .Evaluate(grid->GetBufferPointer(), int(size[0]), int(size[1]), int(size[2]), whole.data());
  const GridBox box{ { { 4, 5, 3 } }, { { 14, 12, 16 } } };
  const auto    scores = PositionScoresInBox(position, grid, box, ResolveBackend(BackendRequest::Parse("cuda")), 0);
  ASSERT_EQ(static_cast<std::int64_t>(scores.size()), box.Voxels());
  std::size_t i = 0;
  for (long z = box.lo[2]; z <= box.hi[2]; ++z)
    for (long y = box.lo[1]; y <= box.hi[1]; ++y)
      for (long x = box.lo[0]; x <= box.hi[0]; ++x, ++i)
        ASSERT_NEAR(scores[i], whole[(z * long(size[1]) + y) * long(size[0]) + x], 1e-5) << x << "," << y << "," << z;

  DetectionOptions cpuOptions, gpuOptions;
  cpuOptions.backend = ResolveBackend(BackendRequest::Parse("cpu"));
  gpuOptions.backend = ResolveBackend(BackendRequest::Parse("cuda"));
  PoseDetector cpu(model, cpuOptions), gpu(model, gpuOptions);
  cpu.SetImage(subject.image, subject.name);
  gpu.SetImage(subject.image, subject.name);
  const auto c = cpu.DetectAll(), g = gpu.DetectAll();
  ASSERT_EQ(c.size(), g.size());
  for (std::size_t s = 0; s < c.size(); ++s)
  {
    EXPECT_EQ(c[s].searched, g[s].searched) << s;
    EXPECT_EQ(c[s].result.found, g[s].result.found) << s;
    if (c[s].result.found && g[s].result.found)
      for (int k = 0; k < 3; ++k)
        EXPECT_NEAR(c[s].result.pose.centerMm[k], g[s].result.pose.centerMm[k], 3.5) << s; // a working voxel
  }
}
} // namespace
