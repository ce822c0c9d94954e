// The fit check of segment-shape (canopyFitQuality.h) on ellipsoid phantoms: a fit refined from a
// displaced start is not flagged; a fit started far from the ellipsoid (in the background, beyond every
// search range) and a fit whose classifiers do not match the image's boundary (the contrast inverted:
// the model of another structure) are flagged, with reasons, and so is a shape far out in the shape space;
// the shape limit is the chi quantile; bad options are refused.
#include "BoundaryTestPhantoms.h"
#include "canopy/Errors.h"
#include "canopyFitQuality.h"
#include "canopyShapeSegmentationModel.h"

#include <gtest/gtest.h>

namespace
{
using namespace canopy;
using namespace canopy::boundarytest;

class FitQualityOnEllipsoids : public ::testing::Test
{
protected:
  static void SetUpTestSuite()
  {
    data = new EllipsoidTrainingData(MakeEllipsoidTrainingData(10, 20261124));
    auto options = SmallClassifierOptions();
    options.backend = ResolveBackend(BackendRequest::Parse("cpu"));
    classifiers = new BoundaryClassifiers(TrainBoundaryClassifiers(data->shape.model, data->subjects, options));
  }
  static void TearDownTestSuite()
  {
    delete classifiers;
    delete data;
  }
  /** RefineShape from `start` on `image`, then its fit check (default thresholds). */
  static FitQuality FitAndAssess(const SteerablePyramid::ImageType * image, const Similarity & start)
  {
    const auto pyramid = SteerablePyramid::Build(NormalizeBoundaryIntensities(image, "zscore"), classifiers->Pyramid());
    PBTBoundaryScorer   scorer(*classifiers, pyramid, ResolveBackend(BackendRequest::Parse("cpu")), 2);
    std::vector<double> ranges;
    for (const auto & level : classifiers->levels)
      ranges.push_back(level.searchMm);
    const ShapeRefinementResult fit = RefineShape(data->shape.model, scorer, start, {}, ranges);
    const FitQuality            q = AssessShapeFit(data->shape.model, scorer, start, fit);
    std::cout << "surface score " << q.surfaceScoreMean << ", best " << q.bestScoreMean << ", low share "
              << q.lowScoreShare << ", " << q.mahalanobis << " sigma, moved " << q.centreShiftMm << " mm, scale x"
              << q.scaleRatio << (q.suspect ? ": suspect" : ": good") << '\n';
    return q;
  }
  static Similarity At(const Eigen::Vector3d & centre, double scale = 1)
  {
    Similarity pose;
    pose.translation = centre;
    pose.scale = scale;
    return pose;
  }
  static inline EllipsoidTrainingData * data = nullptr;
  static inline BoundaryClassifiers *   classifiers = nullptr;
};

TEST_F(FitQualityOnEllipsoids, AGoodFitIsNotFlagged)
{
  std::mt19937_64 random(4242);
  const Ellipsoid e = canopy::testing::RandomEllipsoid(random);
  const auto      q = FitAndAssess(MakeEllipsoidImage(e, 7), At(e.centre + Eigen::Vector3d(2, -2, 2), 0.88));
  EXPECT_FALSE(q.suspect);
  EXPECT_TRUE(q.reasons.empty());
  EXPECT_GT(q.surfaceScoreMean, 0.5);
  EXPECT_LT(q.lowScoreShare, 0.2);
  EXPECT_GE(q.bestScoreMean, q.surfaceScoreMean); // the best over offsets that include 0
  EXPECT_EQ(q.vertices, data->shape.model.Finest().Vertices());
}

TEST_F(FitQualityOnEllipsoids, AFitStartedFarOffIsFlagged)
{
  // 20 mm off along x: the mesh starts in the background, beyond every search range (6 mm at most).
  std::mt19937_64 random(4242);
  const Ellipsoid e = canopy::testing::RandomEllipsoid(random);
  const auto      q = FitAndAssess(MakeEllipsoidImage(e, 7), At(e.centre + Eigen::Vector3d(20, 0, 0)));
  EXPECT_TRUE(q.suspect);
  EXPECT_FALSE(q.reasons.empty());
  EXPECT_GT(q.lowScoreShare, 0.5);
}

TEST_F(FitQualityOnEllipsoids, AFitWithTheModelOfAnotherStructureIsFlagged)
{
  // The contrast inverted (bright outside): the classifiers know a boundary the image does not have,
  // as a model of another structure would; the refinement starts on the true surface.
  std::mt19937_64 random(4242);
  const Ellipsoid e = canopy::testing::RandomEllipsoid(random);
  auto            image = MakeEllipsoidImage(e, 7);
  float *         p = image->GetBufferPointer();
  for (std::size_t k = 0; k < image->GetLargestPossibleRegion().GetNumberOfPixels(); ++k)
    p[k] = 200.0f - p[k];
  const auto q = FitAndAssess(image, At(e.centre));
  EXPECT_TRUE(q.suspect);
  EXPECT_LT(q.surfaceScoreMean, 0.3);
}

TEST_F(FitQualityOnEllipsoids, AnImplausibleShapeIsFlaggedOnAWellScoredSurface)
{
  // The SynthSeg caudate failures: the boundary scores are middling, and the projection holds many
  // modes at +/-3 sigma. Here the good fit with every coefficient at 3 sigma: flagged by the shape alone.
  std::mt19937_64 random(4242);
  const Ellipsoid e = canopy::testing::RandomEllipsoid(random);
  const auto      pyramid =
    SteerablePyramid::Build(NormalizeBoundaryIntensities(MakeEllipsoidImage(e, 7), "zscore"), classifiers->Pyramid());
  PBTBoundaryScorer   scorer(*classifiers, pyramid, ResolveBackend(BackendRequest::Parse("cpu")), 2);
  std::vector<double> ranges;
  for (const auto & level : classifiers->levels)
    ranges.push_back(level.searchMm);
  const Similarity      start = At(e.centre + Eigen::Vector3d(2, -2, 2), 0.88);
  ShapeRefinementResult fit = RefineShape(data->shape.model, scorer, start, {}, ranges);
  ASSERT_FALSE(AssessShapeFit(data->shape.model, scorer, start, fit).suspect);
  fit.sigmas = Eigen::VectorXd::Constant(fit.sigmas.size(), 3.0);
  const FitQuality q = AssessShapeFit(data->shape.model, scorer, start, fit);
  EXPECT_TRUE(q.suspect);
  ASSERT_EQ(q.reasons.size(), 1u);
  EXPECT_NE(q.reasons[0].find("sigma from the mean shape"), std::string::npos) << q.reasons[0];
  EXPECT_NEAR(q.mahalanobis, 3.0 * std::sqrt(double(fit.sigmas.size())), 1e-9);
}

TEST(FitQualityMath, MahalanobisLimitIsTheChiQuantile)
{
  // sqrt of chi-square quantiles (tables): 99.9% for 12 and 14 degrees of freedom 32.909 and 36.123,
  // 50% for 14 degrees 13.339.
  EXPECT_NEAR(MahalanobisLimit(12, 3.0902), std::sqrt(32.909), 0.02);
  EXPECT_NEAR(MahalanobisLimit(14, 3.0902), std::sqrt(36.123), 0.02);
  EXPECT_NEAR(MahalanobisLimit(14, 0.0), std::sqrt(13.339), 0.01);
  EXPECT_EQ(MahalanobisLimit(0, 3.09), 0.0);
}

TEST_F(FitQualityOnEllipsoids, BadOptionsAreRefused)
{
  std::mt19937_64 random(4242);
  const Ellipsoid e = canopy::testing::RandomEllipsoid(random);
  const auto      pyramid =
    SteerablePyramid::Build(NormalizeBoundaryIntensities(MakeEllipsoidImage(e, 7), "zscore"), classifiers->Pyramid());
  PBTBoundaryScorer     scorer(*classifiers, pyramid, ResolveBackend(BackendRequest::Parse("cpu")), 2);
  ShapeRefinementResult fit;
  fit.points = ShapeInstance(data->shape.model, 2, {}, At(e.centre));
  fit.triangles = data->shape.model.Finest().triangles;
  EXPECT_NO_THROW(AssessShapeFit(data->shape.model, scorer, At(e.centre), fit));
  FitQualityOptions bad;
  bad.probeMm = 0;
  EXPECT_THROW(AssessShapeFit(data->shape.model, scorer, At(e.centre), fit, bad), canopy::Error);
  bad = {};
  bad.maxLowScoreShare = 1.5;
  EXPECT_THROW(AssessShapeFit(data->shape.model, scorer, At(e.centre), fit, bad), canopy::Error);
  ShapeRefinementResult coarse = fit;
  coarse.points = ShapeInstance(data->shape.model, 0, {}, At(e.centre)); // not the finest level's vertices
  EXPECT_THROW(AssessShapeFit(data->shape.model, scorer, At(e.centre), coarse), canopy::Error);
}
} // namespace
