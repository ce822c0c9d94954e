// Boundary scores on the GPU (issue 10 part 2): all vertices x 32 displacements of a level in one
// launch (BoundaryFeatureFunc) against the CPU reference, for trained classifiers on an ellipsoid
// phantom (some frames reaching outside the volume), and a whole refinement on both backends; the
// boundary kernel against the pose family's on the displaced frames for list lengths that are not
// whole warps or blocks and displacement counts other than 32. Skipped (never passed) without a GPU.
#include "BoundaryTestPhantoms.h"
#include "canopy/PBTBoundaryVariants.h"
#include "canopyBoundaryRefinement.h"
#include "canopyPBTEvaluator.h" // MakeRandomPBTModel
#include "canopyTesting.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

namespace
{
using namespace canopy;
using namespace canopy::boundarytest;

/** A boundary hypothesis list: per vertex the first `displacements` of RefinementOffsets over ±4 mm,
 * vertex by vertex, or shuffled (a seeded permutation) to part a warp's vertices. */
struct HypothesisCase
{
  int  vertices, displacements;
  bool shuffled;
};

std::vector<BoundaryHypothesis>
MakeHypotheses(const HypothesisCase & c, std::uint64_t shuffleSeed)
{
  std::vector<BoundaryHypothesis> hypotheses;
  for (int v = 0; v < c.vertices; ++v)
    for (double offset : RefinementOffsets(std::max(c.displacements, 2), 4.0))
      if (int(hypotheses.size()) < (v + 1) * c.displacements)
        hypotheses.push_back({ v, float(offset) });
  if (c.shuffled)
    std::shuffle(hypotheses.begin(), hypotheses.end(), std::mt19937_64(shuffleSeed));
  return hypotheses;
}

TEST(BoundaryRefinementCuda, ScoresAndRefinementMatchTheCpu)
{
  CANOPY_REQUIRE_GPU();
  const auto data = MakeEllipsoidTrainingData(6, 7);
  auto       options = SmallClassifierOptions();
  options.backend = ResolveBackend(BackendRequest::Parse("cpu"));
  const auto      classifiers = TrainBoundaryClassifiers(data.shape.model, data.subjects, options);
  std::mt19937_64 random(11);
  const Ellipsoid e = canopy::testing::RandomEllipsoid(random);
  const auto      pyramid =
    SteerablePyramid::Build(NormalizeBoundaryIntensities(MakeEllipsoidImage(e, 3), "zscore"), classifiers.Pyramid());
  PBTBoundaryScorer  cpu(classifiers, pyramid, ResolveBackend(BackendRequest::Parse("cpu")));
  PBTBoundaryScorer  gpu(classifiers, pyramid, ResolveBackend(BackendRequest::Parse("cuda")));
  const ShapeModel & model = data.shape.model;
  for (std::size_t l = 0; l < model.levels.size(); ++l)
  {
    Similarity pose;
    pose.translation = e.centre;
    pose.scale = 1.6; // the largest frames reach outside the 64^3 volume: clamped sampling on both
    const Eigen::Matrix3Xd    points = ShapeInstance(model, l, {}, pose);
    const Eigen::Matrix3Xd    normals = VertexNormals(points, model.levels[l].triangles);
    const std::vector<double> offsets = RefinementOffsets(32, classifiers.levels[l].searchMm);
    Eigen::MatrixXf           a, b;
    cpu.Score(l, points, normals, offsets, a);
    gpu.Score(l, points, normals, offsets, b);
    ASSERT_EQ(a.rows(), b.rows());
    ASSERT_EQ(a.cols(), b.cols());
    // GPU and CPU responses differ in the last bits of sqrt/log/atan2, so a response on a histogram bin
    // edge may take the neighbouring bin (SteerablePBTCudaTest): every score in [0, 1], 99% within 1e-5.
    Eigen::Index close = 0;
    for (Eigen::Index k = 0; k < b.size(); ++k)
    {
      ASSERT_TRUE(b.data()[k] >= 0.0f && b.data()[k] <= 1.0f) << "level " << l << " score " << k;
      close += std::abs(a.data()[k] - b.data()[k]) <= 1e-5f;
    }
    std::cout << "level " << l << ": " << a.size() << " scores, " << a.size() - close << " differ by more than 1e-5\n";
    EXPECT_GE(close, a.size() * 99 / 100) << "level " << l;

    // On the device, the boundary family equals the pose family on the displaced frames, bit for bit
    // (the same SteerableResponse of the same pose).
    const auto                 frames = BoundaryVertexFrames(points, normals, classifiers.levels[l].frameScale);
    std::vector<SteerablePose> displaced;
    for (const auto & frame : frames)
      for (double offset : offsets)
        displaced.push_back(DisplacedBoundaryFrame(frame, float(offset)));
    SteerableResponseEngine engine(ResolveBackend(BackendRequest::Parse("cuda")));
    engine.SetPyramid(pyramid);
    SetSteerablePBT(engine, classifiers.levels[l].pbt);
    std::vector<float> poseScores(displaced.size());
    engine.EvaluatePBT(displaced.data(), std::int64_t(displaced.size()), poseScores.data());
    for (std::size_t k = 0; k < poseScores.size(); ++k)
      ASSERT_EQ(poseScores[k], b.data()[k]) << "level " << l << " hypothesis " << k;
  }
  std::vector<double> ranges;
  for (const auto & level : classifiers.levels)
    ranges.push_back(level.searchMm);
  Similarity start;
  start.translation = e.centre + Eigen::Vector3d(1.5, -1.5, 1.0);
  const auto            onCpu = RefineShape(model, cpu, start, {}, ranges);
  const auto            onGpu = RefineShape(model, gpu, start, {}, ranges);
  const Eigen::VectorXd difference = (onCpu.points - onGpu.points).colwise().norm().transpose();
  std::cout << "refined meshes: vertex difference mean " << difference.mean() << " mm, largest "
            << difference.maxCoeff() << " mm\n";
  // A score that took a neighbouring bin can move one vertex's best offset; smoothing and the
  // projection spread it thinly.
  EXPECT_LT(difference.mean(), 0.05);
  EXPECT_LT(difference.maxCoeff(), 0.5);

  // Seven starts, three through every level, and two free iterations: the same start chosen and the
  // same mesh within the same tolerances.
  ShapeRefinementOptions several;
  several.startSpreadMm = 3;
  several.freeIterations = 2;
  const auto manyCpu = RefineShape(model, cpu, start, several, ranges);
  const auto manyGpu = RefineShape(model, gpu, start, several, ranges);
  EXPECT_EQ(manyCpu.chosenStart, manyGpu.chosenStart);
  ASSERT_EQ(manyGpu.startScores.size(), 7u);
  for (std::size_t k = 0; k < 7; ++k)
    EXPECT_NEAR(manyCpu.startScores[k], manyGpu.startScores[k], 1e-3) << "start " << k;
  const Eigen::VectorXd manyDifference = (manyCpu.points - manyGpu.points).colwise().norm().transpose();
  std::cout << "seven starts: vertex difference mean " << manyDifference.mean() << " mm, largest "
            << manyDifference.maxCoeff() << " mm\n";
  EXPECT_LT(manyDifference.mean(), 0.05);
  EXPECT_LT(manyDifference.maxCoeff(), 0.5);
}
// EvaluateBoundaryPBT displaces each vertex frame inside the kernel (BoundaryFeatureFunc); the pose
// family's EvaluatePBT is given the displaced frames. They must agree bit for bit whatever the list
// looks like: vertex counts and displacement
// counts that leave partial warps and blocks, warps spanning several vertices, a shuffled list, one
// hypothesis. A random depth-5 tree, so neighbouring threads take different paths.
TEST(BoundaryRefinementCuda, BoundaryKernelEqualsThePoseKernelOnDisplacedFrames)
{
  CANOPY_REQUIRE_GPU();
  const SteerableGrid           grid{ 5, 1.0f };
  const SteerablePyramidOptions pyramidOptions{ { 1.0, 2.0, 4.0 }, {} };
  Ellipsoid                     e;
  e.radii = Eigen::Vector3d(20, 15, 12);
  e.centre = Eigen::Vector3d::Constant(32.0);
  const auto pyramid =
    SteerablePyramid::Build(NormalizeBoundaryIntensities(MakeEllipsoidImage(e, 5), "zscore"), pyramidOptions);
  const PBTModel          model = RandomBoundaryPBT(grid, pyramidOptions, 23);
  SteerableResponseEngine gpu(ResolveBackend(BackendRequest::Parse("cuda")));
  SteerableResponseEngine cpu(ResolveBackend(BackendRequest::Parse("cpu")));
  for (SteerableResponseEngine * engine : { &gpu, &cpu })
  {
    engine->SetPyramid(pyramid);
    SetSteerablePBT(*engine, model);
  }
  for (const HypothesisCase c : { HypothesisCase{ 64, 32, false },
                                  HypothesisCase{ 37, 7, false },
                                  HypothesisCase{ 5, 33, false },
                                  HypothesisCase{ 3, 50, false },
                                  HypothesisCase{ 41, 32, true },
                                  HypothesisCase{ 1, 1, false } })
  {
    const auto                            frames = RandomVertexFrames(c.vertices, 64, 1.5, 100 + c.vertices);
    const std::vector<BoundaryHypothesis> hypotheses = MakeHypotheses(c, 7);
    const std::int64_t                    n = std::int64_t(hypotheses.size());
    std::vector<SteerablePose>            displaced;
    for (const auto & h : hypotheses)
      displaced.push_back(DisplacedBoundaryFrame(frames[std::size_t(h.vertex)], h.offsetMm));
    std::vector<float> boundary(hypotheses.size()), independent(hypotheses.size()), host(hypotheses.size());
    gpu.EvaluateBoundaryPBT(frames.data(), c.vertices, hypotheses.data(), n, boundary.data());
    gpu.EvaluatePBT(displaced.data(), n, independent.data());
    cpu.EvaluateBoundaryPBT(frames.data(), c.vertices, hypotheses.data(), n, host.data());
    std::int64_t close = 0;
    for (std::int64_t k = 0; k < n; ++k)
    {
      ASSERT_EQ(boundary[k], independent[k]) << c.vertices << " x " << c.displacements << ", hypothesis " << k;
      ASSERT_TRUE(boundary[k] >= 0.0f && boundary[k] <= 1.0f) << "hypothesis " << k;
      close += std::abs(boundary[k] - host[k]) <= 1e-5f;
    }
    // The CPU: as in the test above (last bits of sqrt/log/atan2 may move a response across a bin edge).
    EXPECT_GE(close, n * 99 / 100) << c.vertices << " x " << c.displacements;
  }
}

// Every boundary kernel variant (PBTBoundaryVariants.h: teams of lanes per hypothesis, packed learner
// records, register caps) gives the baseline kernel's scores bit for bit: a random tree of 6 learners
// per node (teams of 4, 8 and 16 end their rounds part-way), a random tree of stumps and histograms,
// and a trained classifier (nodes of different learner counts), on lists with partial warps and
// blocks, warps spanning vertices, a shuffled list and a single hypothesis.
TEST(BoundaryRefinementCuda, EveryKernelVariantEqualsTheBaseline)
{
  CANOPY_REQUIRE_GPU();
  const SteerableGrid           grid{ 5, 1.0f };
  const SteerablePyramidOptions pyramidOptions{ { 1.0, 2.0, 4.0 }, {} };
  Ellipsoid                     e;
  e.radii = Eigen::Vector3d(20, 15, 12);
  e.centre = Eigen::Vector3d::Constant(32.0);
  PBTModel mixed;
  {
    RandomPBTModelOptions random;
    random.depth = 6;
    random.learnersPerNode = 11;
    random.numFeatures = 300;
    random.responseLow = -3.0f;
    random.responseHigh = 3.0f;
    random.mixStumps = true;
    random.fullTree = false;
    random.seed = 37;
    mixed = MakeRandomPBTModel(random);
    mixed.featureFamily = PBTFeatureFamily::Steerable;
    mixed.features.clear();
    mixed.steerable.grid = grid;
    mixed.steerable.pyramid = pyramidOptions;
    mixed.steerable.features = RandomSteerableFeatures(grid, 3, random.numFeatures, 38);
    mixed.Validate("mixed boundary PBT");
  }
  const auto data = MakeEllipsoidTrainingData(6, 7);
  auto       options = SmallClassifierOptions();
  options.backend = ResolveBackend(BackendRequest::Parse("cpu"));
  const auto trained = TrainBoundaryClassifiers(data.shape.model, data.subjects, options);
  const std::vector<std::pair<const char *, PBTModel>> models{ { "random",
                                                                 RandomBoundaryPBT(grid, pyramidOptions, 23) },
                                                               { "stumps and histograms", mixed },
                                                               { "trained", trained.levels.back().pbt } };
  for (const auto & [name, model] : models)
  {
    const auto modelPyramid = SteerablePyramid::Build(NormalizeBoundaryIntensities(MakeEllipsoidImage(e, 5), "zscore"),
                                                      model.steerable.pyramid);
    SteerableResponseEngine gpu(ResolveBackend(BackendRequest::Parse("cuda")));
    gpu.SetPyramid(modelPyramid);
    SetSteerablePBT(gpu, model);
    for (const HypothesisCase c : { HypothesisCase{ 64, 32, false },
                                    HypothesisCase{ 37, 7, false },
                                    HypothesisCase{ 5, 33, false },
                                    HypothesisCase{ 41, 32, true },
                                    HypothesisCase{ 1, 1, false } })
    {
      const auto                            frames = RandomVertexFrames(c.vertices, 64, 1.5, 200 + c.vertices);
      const std::vector<BoundaryHypothesis> hypotheses = MakeHypotheses(c, 9);
      const std::int64_t                    n = std::int64_t(hypotheses.size());
      std::vector<float>                    baseline(hypotheses.size()), scores(hypotheses.size());
      gpu.SetBoundaryKernel(BoundaryKernelVariant{});
      gpu.EvaluateBoundaryPBT(frames.data(), c.vertices, hypotheses.data(), n, baseline.data());
      for (const auto & variant : BuiltBoundaryKernelVariants())
      {
        std::fill(scores.begin(), scores.end(), -1.0f);
        gpu.SetBoundaryKernel(variant);
        gpu.EvaluateBoundaryPBT(frames.data(), c.vertices, hypotheses.data(), n, scores.data());
        for (std::int64_t k = 0; k < n; ++k)
          ASSERT_EQ(std::memcmp(&scores[k], &baseline[k], sizeof(float)), 0)
            << name << ", " << variant.Name() << ", " << c.vertices << " x " << c.displacements << ", hypothesis " << k
            << ": " << scores[k] << " against " << baseline[k];
      }
    }
  }
}
} // namespace
