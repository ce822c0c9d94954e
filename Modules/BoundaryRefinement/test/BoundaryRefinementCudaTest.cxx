// Boundary scores on the GPU (issue 10 part 2): all vertices x 32 displacements of a level in one
// launch (BoundaryFeatureFunc) against the CPU reference, for trained classifiers on an ellipsoid
// phantom (some frames reaching outside the volume), and a whole refinement on both backends.
// Skipped (never passed) without a GPU.
#include "BoundaryTestPhantoms.h"
#include "canopyBoundaryRefinement.h"
#include "canopyTesting.h"

#include <gtest/gtest.h>

namespace
{
using namespace canopy;
using namespace canopy::boundarytest;

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
    ASSERT_TRUE(b.allFinite());
    const float worst = (a - b).cwiseAbs().maxCoeff();
    std::cout << "level " << l << ": " << a.size() << " scores, largest |GPU - CPU| " << worst << '\n';
    EXPECT_LT(worst, 1e-5f); // the posterior's expf may differ by an ulp (SteerablePBTCudaTest)
  }
  std::vector<double> ranges;
  for (const auto & level : classifiers.levels)
    ranges.push_back(level.searchMm);
  Similarity start;
  start.translation = e.centre + Eigen::Vector3d(1.5, -1.5, 1.0);
  const auto   onCpu = RefineShape(model, cpu, start, {}, ranges);
  const auto   onGpu = RefineShape(model, gpu, start, {}, ranges);
  const double difference = (onCpu.points - onGpu.points).colwise().norm().maxCoeff();
  std::cout << "refined meshes: largest vertex difference " << difference << " mm\n";
  EXPECT_LT(difference, 0.1); // an ulp can flip a near-tie between two offsets of one vertex
}
} // namespace
