// Shape model on ellipsoid phantoms: nested template levels, correspondence against the analytic
// axis-scaling map, modes that capture the radii, sub-voxel projection of a held-out ellipsoid,
// clamping of an absurd shape, and the label checks (empty, in pieces).
#include "ShapeTestPhantoms.h"
#include "canopy/Errors.h"
#include "canopyLabelMesh.h"
#include "canopyMeshDistance.h"
#include "canopyShapeProjection.h"
#include "canopyShapeTemplate.h"
#include "canopyShapeTraining.h"

#include <gtest/gtest.h>

#include <map>

namespace
{
using namespace canopy;
using canopy::testing::Ellipsoid;

vtkSmartPointer<vtkPolyData>
SurfaceOf(const Ellipsoid & e, const std::string & name = "phantom")
{
  return TrainingSurface(canopy::testing::MakeEllipsoidLabels(e), 1, name);
}

TEST(ShapeTemplate, LevelsAreNestedClosedAndNearTheAskedSizes)
{
  const auto levels = BuildTemplateHierarchy(SurfaceOf(Ellipsoid()), { 2400, 600, 1200 });
  ASSERT_EQ(levels.size(), 3u);
  const int asked[3] = { 600, 1200, 2400 };
  for (std::size_t l = 0; l < 3; ++l)
  {
    const auto & level = levels[l];
    EXPECT_NEAR(double(level.Vertices()), asked[l], 0.05 * asked[l]) << "level " << l;
    // Closed: every edge in exactly two triangles.
    std::map<std::pair<int, int>, int> uses;
    for (Eigen::Index t = 0; t < level.triangles.cols(); ++t)
      for (int k = 0; k < 3; ++k)
      {
        const int a = level.triangles(k, t), b = level.triangles((k + 1) % 3, t);
        ++uses[{ std::min(a, b), std::max(a, b) }];
      }
    for (const auto & [edge, count] : uses)
      ASSERT_EQ(count, 2) << "level " << l << " edge " << edge.first << "-" << edge.second;
    for (Eigen::Index i = 0; i < level.Vertices(); ++i)
      ASSERT_EQ((level.mean.col(i) - levels[2].mean.col(level.finestVertex[i])).norm(), 0.0);
  }
}

TEST(ShapeSimilarity, UmeyamaRecoversAKnownSimilarity)
{
  std::mt19937_64  random(3);
  Eigen::Matrix3Xd from = Eigen::Matrix3Xd::Random(3, 50);
  Similarity       truth;
  truth.rotation = Eigen::AngleAxisd(0.7, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix();
  truth.scale = 1.7;
  truth.translation = Eigen::Vector3d(4, -5, 6);
  const Similarity fit = FitSimilarity(from, truth.Apply(from));
  EXPECT_LT((fit.rotation - truth.rotation).norm(), 1e-10);
  EXPECT_NEAR(fit.scale, 1.7, 1e-10);
  EXPECT_LT((fit.translation - truth.translation).norm(), 1e-9);
  EXPECT_LT(RmsDistance((truth * truth.Inverse()).Apply(from), from), 1e-12);
}

// The template (one ellipsoid) fitted to another of different radii and pose: each template vertex
// must land where the axis scaling between the two ellipsoids takes it. Closest points alone (no
// smoothness term) slide vertices along the surface; the test checks that it would catch that.
TEST(ShapeCorrespondence, FollowsTheAnalyticMapOfAnEllipsoidFamily)
{
  Ellipsoid a, b;
  b.radii = Eigen::Vector3d(20, 13, 7);
  b.rotation = Eigen::AngleAxisd(0.25, Eigen::Vector3d(1, 1, 0).normalized()).toRotationMatrix();
  b.centre = Eigen::Vector3d(30, 33, 31);
  const auto             levels = BuildTemplateHierarchy(SurfaceOf(a), { 1200 });
  const Eigen::Matrix3Xd templatePoints = levels.back().mean;
  const TargetSurface    target(SurfaceOf(b));
  const Similarity       pose = FitSimilarityIcp(templatePoints, target);
  const auto             fit = FitNonrigid(pose.Apply(templatePoints), levels.back().triangles, target);

  auto correspondenceError = [&](const Eigen::Matrix3Xd & points)
  {
    double sum = 0;
    for (Eigen::Index i = 0; i < points.cols(); ++i)
      sum += (points.col(i) - b.SurfacePoint(a.SphereDirection(templatePoints.col(i)))).norm();
    return sum / double(points.cols());
  };
  const double error = correspondenceError(fit.points);
  std::cout << "correspondence error: " << error << " mm (mean over " << fit.points.cols() << " vertices)\n";
  EXPECT_LT(error, 0.5);
  const auto onSurface = ComputeMeshDistances(MakeTriangleMesh(fit.points, levels.back().triangles),
                                              canopy::testing::AnalyticEllipsoidMesh(b));
  EXPECT_LT(onSurface.mean, 0.3) << "the fitted template does not lie on the target";

  Eigen::Matrix3Xd       closestOnly(3, templatePoints.cols());
  const Eigen::Matrix3Xd aligned = pose.Apply(templatePoints);
  for (Eigen::Index i = 0; i < aligned.cols(); ++i)
  {
    Eigen::Vector3d closest, normal;
    target.ClosestPoint(aligned.col(i), closest, normal);
    closestOnly.col(i) = closest;
  }
  EXPECT_GT(correspondenceError(closestOnly), 2 * error) << "the analytic check does not see sliding";
}

class ShapeModelOfEllipsoids : public ::testing::Test
{
protected:
  static void SetUpTestSuite()
  {
    std::mt19937_64                   random(20261123);
    std::vector<ShapeTrainingSubject> subjects;
    for (int s = 0; s < 12; ++s)
    {
      ellipsoids.push_back(canopy::testing::RandomEllipsoid(random));
      subjects.push_back({ "ellipsoid-" + std::to_string(s), SurfaceOf(ellipsoids.back()) });
    }
    ShapeTrainingOptions options;
    options.levelVertices = { 150, 300, 600 }; // small: a fast test
    options.threads = 2;
    trained = new ShapeTrainingResult(TrainShapeModel(subjects, "ellipsoid", 1, options));
  }
  static void TearDownTestSuite()
  {
    delete trained;
    trained = nullptr;
  }
  static inline std::vector<Ellipsoid> ellipsoids;
  static inline ShapeTrainingResult *  trained = nullptr;
  void                                 CheckFirstModesCaptureTheRadiiVariation();
  void                                 CheckProjectionOfAHeldOutEllipsoidIsSubvoxel();
  void                                 CheckProjectionClampsAnAbsurdShape();
};

// Scale is removed by Procrustes, so 12 ellipsoids with two free radii have two shape parameters,
// the axis ratios: two modes must hold nearly all the variance, and their coefficients must predict
// both ratios. Pose errors or sliding correspondences spread variance over many modes.
void
ShapeModelOfEllipsoids::CheckFirstModesCaptureTheRadiiVariation()
{
  const ShapeModel & model = trained->model;
  ASSERT_GE(model.Modes(), 2) << "fewer than 2 modes";
  const double twoModes = model.spectrum.head(2).sum() / model.spectrum.sum();
  std::cout << "modes kept: " << model.Modes() << ", variance share of 2 modes: " << twoModes << '\n';
  EXPECT_GT(twoModes, 0.95);
  for (const auto & s : trained->subjects)
    EXPECT_LT(0.5 * (s.fitToSurfaceMeanMm + s.surfaceToFitMeanMm), 0.3) << s.name;

  const Eigen::Index count = Eigen::Index(ellipsoids.size());
  Eigen::MatrixXd    design(count, 3);
  Eigen::MatrixXd    ratios(count, 2);
  for (Eigen::Index s = 0; s < count; ++s)
  {
    const Eigen::VectorXd y = trained->alignedShapes.col(s) -
                              Eigen::Map<const Eigen::VectorXd>(model.Finest().mean.data(), model.Finest().mean.size());
    design.row(s) << 1.0, model.modes.col(0).dot(y), model.modes.col(1).dot(y);
    ratios.row(s) << ellipsoids[std::size_t(s)].radii(0) / 8.0, ellipsoids[std::size_t(s)].radii(1) / 8.0;
  }
  for (int r = 0; r < 2; ++r)
  {
    const Eigen::VectorXd fit = design.colPivHouseholderQr().solve(ratios.col(r));
    const Eigen::VectorXd residual = ratios.col(r) - design * fit;
    const double          total = (ratios.col(r).array() - ratios.col(r).mean()).square().sum();
    const double          r2 = 1.0 - residual.squaredNorm() / total;
    std::cout << "R^2 of radius ratio " << r << " on modes 1-2: " << r2 << '\n';
    EXPECT_GT(r2, 0.95);
  }
}

void
ShapeModelOfEllipsoids::CheckProjectionOfAHeldOutEllipsoidIsSubvoxel()
{
  const ShapeModel &     model = trained->model;
  std::mt19937_64        random(77);
  const Ellipsoid        heldOut = canopy::testing::RandomEllipsoid(random);
  const TargetSurface    target(SurfaceOf(heldOut, "held-out"));
  const Eigen::Matrix3Xd mean = model.Finest().mean;
  const auto fit = FitNonrigid(FitSimilarityIcp(mean, target).Apply(mean), model.Finest().triangles, target);
  const auto truth = canopy::testing::AnalyticEllipsoidMesh(heldOut);
  for (std::size_t level = 0; level < model.levels.size(); ++level)
  {
    Eigen::Matrix3Xd points(3, model.levels[level].Vertices());
    for (Eigen::Index i = 0; i < points.cols(); ++i)
      points.col(i) = fit.points.col(model.levels[level].finestVertex[std::size_t(i)]);
    const ShapeProjection projection = ProjectOntoShapeSpace(model, level, points);
    const auto            distances =
      ComputeMeshDistances(MakeTriangleMesh(projection.points, model.levels[level].triangles), truth);
    std::cout << "level " << level << " (" << points.cols() << " vertices): projection to the analytic surface "
              << distances.meanTestToReference << " mm mean, HD95 " << distances.percentile95 << " mm; "
              << projection.iterations << " iterations\n";
    EXPECT_LT(distances.meanTestToReference, 0.5) << "level " << level;
    EXPECT_LT(distances.percentile95, 1.0) << "level " << level; // 1 mm voxels
    EXPECT_EQ(projection.clampedModes, 0);
  }
}

void
ShapeModelOfEllipsoids::CheckProjectionClampsAnAbsurdShape()
{
  const ShapeModel & model = trained->model;
  const std::size_t  finest = model.levels.size() - 1;
  Eigen::VectorXd    absurd = Eigen::VectorXd::Zero(model.Modes());
  absurd(0) = 10.0 * std::sqrt(model.variances(0));
  Similarity pose;
  pose.rotation = Eigen::AngleAxisd(0.4, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  pose.scale = 1.2;
  pose.translation = Eigen::Vector3d(10, 20, 30);
  Eigen::Matrix3Xd                 input = ShapeInstance(model, finest, absurd, pose);
  std::mt19937_64                  random(5);
  std::normal_distribution<double> noise(0.0, 0.5);
  for (Eigen::Index i = 0; i < input.cols(); ++i)
    input.col(i) += Eigen::Vector3d(noise(random), noise(random), noise(random));

  const ShapeProjection projection = ProjectOntoShapeSpace(model, finest, input);
  EXPECT_NEAR(projection.sigmas(0), 3.0, 1e-9) << "the first mode is not held at +3 sigma";
  EXPECT_GE(projection.clampedModes, 1);
  EXPECT_LE(projection.sigmas.cwiseAbs().maxCoeff(), 3.0 + 1e-9);
  EXPECT_LT((projection.pose.rotation - pose.rotation).norm(), 0.05);
  EXPECT_LT(RmsDistance(projection.points, ShapeInstance(model, finest, projection.coefficients, projection.pose)),
            1e-9);
  ShapeProjectionOptions unbounded;
  unbounded.bound = 1e6;
  const ShapeProjection free = ProjectOntoShapeSpace(model, finest, input, unbounded);
  EXPECT_GT(free.sigmas(0), 8.0) << "without the bound, the projection should follow the absurd shape";
  EXPECT_THROW(ProjectOntoShapeSpace(model, finest, input.leftCols(10)), canopy::Error);
}

// One test, so that ctest (one process per test) trains the model once.
TEST_F(ShapeModelOfEllipsoids, ModesCaptureTheRadiiAndProjectionRegularises)
{
  {
    SCOPED_TRACE("the first modes capture the radii variation");
    CheckFirstModesCaptureTheRadiiVariation();
  }
  {
    SCOPED_TRACE("projection of a held-out ellipsoid is sub-voxel");
    CheckProjectionOfAHeldOutEllipsoidIsSubvoxel();
  }
  {
    SCOPED_TRACE("projection clamps an absurd shape");
    CheckProjectionClampsAnAbsurdShape();
  }
}

TEST(ShapeProjectionMath, BoxConstrainedLeastSquaresMeetsTheOptimalityConditions)
{
  std::mt19937_64 random(11);
  for (int trial = 0; trial < 20; ++trial)
  {
    const Eigen::MatrixXd a = Eigen::MatrixXd::Random(12, 4);
    const Eigen::MatrixXd gram = a.transpose() * a;
    const Eigen::VectorXd rhs = 3.0 * Eigen::VectorXd::Random(4);
    const Eigen::VectorXd limit = Eigen::VectorXd::Constant(4, 0.5);
    const Eigen::VectorXd b = SolveBoxConstrainedLeastSquares(gram, rhs, limit);
    const Eigen::VectorXd gradient = gram * b - rhs;
    for (int j = 0; j < 4; ++j)
    {
      ASSERT_LE(std::abs(b(j)), 0.5 + 1e-12);
      if (b(j) > 0.5 - 1e-9)
        EXPECT_LE(gradient(j), 1e-7);
      else if (b(j) < -0.5 + 1e-9)
        EXPECT_GE(gradient(j), -1e-7);
      else
        EXPECT_NEAR(gradient(j), 0.0, 1e-7);
    }
  }
}

TEST(ShapeTrainingSurface, EmptyLabelAndLabelInPiecesNameTheSubject)
{
  const auto labels = canopy::testing::MakeEllipsoidLabels(Ellipsoid());
  try
  {
    TrainingSurface(labels, 2, "subject-07");
    FAIL() << "an empty label was accepted";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.what()).find("subject-07: no voxel has label 2"), std::string::npos) << e.what();
  }
  // A second, smaller blob of the same label.
  for (int z = 2; z < 6; ++z)
    for (int y = 2; y < 6; ++y)
      for (int x = 2; x < 6; ++x)
      {
        LabelImage::IndexType index;
        index[0] = x;
        index[1] = y;
        index[2] = z;
        labels->SetPixel(index, 1);
      }
  try
  {
    TrainingSurface(labels, 1, "subject-08");
    FAIL() << "a label in two pieces was accepted";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.what()).find("subject-08: label 1 is in 2 pieces"), std::string::npos) << e.what();
  }
  TrainingSurfaceOptions keep;
  keep.keepLargestPiece = true;
  TrainingSurfaceInfo info;
  const auto          surface = TrainingSurface(labels, 1, "subject-08", keep, &info);
  EXPECT_EQ(info.pieces, 2);
  EXPECT_GT(info.droppedShare, 0.0);
  EXPECT_LT(ComputeMeshMeasures(surface).volumeMm3, 4.0 / 3.0 * M_PI * 16 * 11 * 8 * 1.05);
}

TEST(ShapeTraining, GeneralisationErrorFallsWithModes)
{
  // 6 shapes = mean + 2 random directions: 2 modes reconstruct held-out shapes exactly.
  std::mt19937_64                  random(9);
  std::normal_distribution<double> normal;
  const Eigen::VectorXd            mean = Eigen::VectorXd::Random(300);
  const Eigen::VectorXd            u = Eigen::VectorXd::Random(300), v = Eigen::VectorXd::Random(300);
  Eigen::MatrixXd                  shapes(300, 6);
  for (int s = 0; s < 6; ++s)
    shapes.col(s) = mean + normal(random) * u + normal(random) * v;
  const auto error = LeaveOneOutGeneralisation(shapes, 3);
  ASSERT_EQ(error.size(), 3u);
  EXPECT_GT(error[0], 1e-3);
  EXPECT_LT(error[1], 1e-9);
  EXPECT_EQ(ModesForVarianceShare(Eigen::Vector3d(6, 3, 1), 0.9), 2);
  EXPECT_EQ(ModesForVarianceShare(Eigen::Vector3d(6, 3, 1), 0.91), 3);
}
} // namespace
