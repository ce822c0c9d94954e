// The network's prior at detection time (canopyNetworkPrior.h) without training a detector: log priors
// with known answers, prior hypotheses that follow a turned and resized parent, the options' errors.
#include "PoseTestPhantoms.h"
#include "canopyNetworkPrior.h"

#include "canopyTesting.h"

#include <gtest/gtest.h>

#include <cmath>

namespace
{
using namespace canopy;
using namespace canopy::posetest;
using canopy::testing::ErrorOf;

const Frame kRelative = Rotation(10, -20, 30);
const Vec3d kOffset{ { 12, -5, 3 } }, kRatio{ { 0.5, 0.25, 0.4 } };

/** A prior learnt from hand-made poses: the child's offset along the parent's axes kOffset + d_i
 * (d_i = +-2 mm on axis 0, +-1 mm on axis 2), its axes kRelative x the parent's, its size kRatio x the
 * parent's with +-5% on axis 0, whatever the parent's place and orientation. */
SpatialPrior
HandMadePrior()
{
  const double               d0[4] = { 2, -2, 2, -2 }, d2[4] = { 1, 1, -1, -1 }, s0[4] = { 1.05, 0.95, 1.05, 0.95 };
  std::vector<StructurePose> parents, children;
  for (int i = 0; i < 4; ++i)
  {
    const Frame axes = Rotation(15 * i, -10 * i, 5 + 20 * i);
    const Vec3d centre{ { 3.0 * i, -2.0 * i, 1.0 + i } };
    const Vec3d size{ { 40.0 + i, 30.0, 20.0 - i } };
    parents.push_back(Pose(centre, axes, size));
    const Vec3d offset = InWorld(axes, { { kOffset[0] + d0[i], kOffset[1], kOffset[2] + d2[i] } });
    children.push_back(Pose({ { centre[0] + offset[0], centre[1] + offset[1], centre[2] + offset[2] } },
                            CanonicalAxes(Times(kRelative, axes)),
                            { { size[0] * kRatio[0] * s0[i], size[1] * kRatio[1], size[2] * kRatio[2] } }));
  }
  SpatialPrior prior = EstimateSpatialPrior(parents, children);
  prior.child = "child";
  prior.parent = "parent";
  prior.sigmas = 3.0;
  prior.marginMm = 6.0; // the parent's own centre error: sd 6 / 3 = 2 mm
  return prior;
}

// Centre: the predicted covariance plus the parent's (2 mm)^2 per axis: along the parent's axis 1 the
// offsets do not vary, so 2 mm off there is one standard deviation (log prior -1/2).
TEST(NetworkPrior, LogPriorsHaveTheirKnownValues)
{
  const SpatialPrior  prior = HandMadePrior();
  const StructurePose parent = Pose({ { -7, 4, 9 } }, Rotation(-30, 25, 60), { { 36, 28, 22 } });
  PriorScoringOptions exactParent;
  exactParent.parentTurnDegrees = 0.0; // no orientation error of the parent carried to the centre
  const ChildPrior    fixedTurn = BindChildPrior(prior, parent, exactParent);
  const StructurePose mean = PredictPose(prior, parent);
  EXPECT_NEAR(CentreLogPrior(fixedTurn, mean.centerMm), 0.0, 1e-12);
  Vec3d off = mean.centerMm;
  for (int k = 0; k < 3; ++k)
    off[k] += 2.0 * parent.axes[1][k];
  EXPECT_NEAR(CentreLogPrior(fixedTurn, off), -0.5, 1e-9);
  // Along axis 0 the offsets vary with variance 16/3 mm^2: 1 sd = sqrt(16/3 + 4).
  off = mean.centerMm;
  for (int k = 0; k < 3; ++k)
    off[k] += std::sqrt(16.0 / 3.0 + 4.0) * parent.axes[0][k];
  EXPECT_NEAR(CentreLogPrior(fixedTurn, off), -0.5, 1e-9);
  // The parent's 10 degrees of orientation error widen the centre across the offset u (r^2 |u|^2 more
  // variance, r = 10 degrees) and not along it: 2 mm along axis 1 now costs less.
  const ChildPrior bound = BindChildPrior(prior, parent, PriorScoringOptions{});
  off = mean.centerMm;
  for (int k = 0; k < 3; ++k)
    off[k] += 2.0 * parent.axes[1][k];
  EXPECT_GT(CentreLogPrior(bound, off), -0.5);
  Vec3d        u;
  const double r = 10.0 * M_PI / 180.0;
  for (int k = 0; k < 3; ++k)
    u[k] = mean.centerMm[k] - parent.centerMm[k];
  const double u2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      EXPECT_NEAR(bound.centreCovariance[a][b] - fixedTurn.centreCovariance[a][b],
                  r * r * ((a == b ? u2 : 0.0) - u[a] * u[b]),
                  1e-9)
        << a << ", " << b;
  EXPECT_GT(r * std::sqrt(u2), 2.0); // the widening across u is several mm here

  // Orientation: the mean is 0 (whatever the canonical signs); a turn of 10 degrees about an axis
  // (learnt spread 0, the parent's 10 degrees added) is one standard deviation.
  EXPECT_NEAR(OrientationLogPrior(bound, mean.axes), 0.0, 1e-9);
  Frame flipped = mean.axes; // a pair of axes flipped: the same orientation
  for (int a : { 0, 2 })
    for (double & x : flipped[a])
      x = -x;
  EXPECT_NEAR(OrientationLogPrior(bound, flipped), 0.0, 1e-9);
  EXPECT_NEAR(OrientationLogPrior(bound, Times(mean.axes, Rotation(0, 0, 10))), -0.5, 1e-6);
  EXPECT_LT(OrientationLogPrior(bound, Times(mean.axes, Rotation(0, 0, 40))), -7.0);

  // Size: the mean ratio x the parent's size is 0; off by 10% of the mean on axis 1 (learnt spread 0,
  // the parent's 10% added) is one standard deviation.
  EXPECT_NEAR(SizeLogPrior(bound, mean.sizeMm), 0.0, 1e-9);
  Vec3d size = mean.sizeMm;
  size[1] *= 1.1;
  EXPECT_NEAR(SizeLogPrior(bound, size), -0.5, 1e-9);

  // The factor of a weight: exp(w x log prior); weight 0 is exactly 1, far hypotheses underflow to 0.
  EXPECT_EQ(PriorFactor(0.0, -1e6), 1.0f);
  EXPECT_FLOAT_EQ(PriorFactor(2.0, -0.5), std::exp(-1.0f));
  EXPECT_EQ(PriorFactor(1.0, -1e6), 0.0f);
}

// The child's hypotheses are made from the detected parent: turn and resize the parent and they turn
// and resize with it (the model's fixed training orientations cannot), the first of each is the
// prior's mean, and the draws lie within the prior's spread.
TEST(NetworkPrior, HypothesesFollowATurnedAndResizedParent)
{
  const SpatialPrior prior = HandMadePrior();
  for (const Frame & turn : { Rotation(0, 0, 0), Rotation(25, 0, 0), Rotation(-10, 30, 20) })
  {
    const StructurePose parent = Pose({ { 5, -3, 2 } }, Times(Rotation(5, 10, 15), turn), { { 42, 29, 21 } });
    const ChildPrior    bound = BindChildPrior(prior, parent, PriorScoringOptions{});
    const auto          frames = PriorOrientationHypotheses(bound, 50, 7);
    ASSERT_EQ(frames.size(), 50u);
    const Frame truth = Times(kRelative, parent.axes);          // the child's axes for this parent
    EXPECT_LT(OrientationErrorDegrees(frames[0], truth), 1e-4); // acos near 1: ~1e-6 degrees of rounding
    double farthest = 0.0;
    for (const auto & f : frames)
    {
      farthest = std::max(farthest, OrientationErrorDegrees(f, truth));
      EXPECT_GT(OrientationLogPrior(bound, f), -0.5 * 25.0); // within 5 sd (chi-square, 3 dof)
    }
    EXPECT_GT(farthest, 2.0);  // they spread ...
    EXPECT_LT(farthest, 60.0); // ... about the prediction
    const auto sizes = PriorSizeHypotheses(bound, 20, 7);
    ASSERT_EQ(sizes.size(), 20u);
    for (int a = 0; a < 3; ++a)
      EXPECT_NEAR(sizes[0][a], parent.sizeMm[a] * prior.sizeRatio.mean[a], 1e-9);
    for (const auto & z : sizes)
      EXPECT_GT(SizeLogPrior(bound, z), -0.5 * 25.0);
  }
  // Same seed, same hypotheses (portable draws).
  const StructurePose parent = Pose({ { 0, 0, 0 } }, Rotation(0, 0, 0), { { 40, 30, 20 } });
  const ChildPrior    bound = BindChildPrior(prior, parent, PriorScoringOptions{});
  EXPECT_EQ(PriorOrientationHypotheses(bound, 10, 3), PriorOrientationHypotheses(bound, 10, 3));
  EXPECT_NE(PriorOrientationHypotheses(bound, 10, 3), PriorOrientationHypotheses(bound, 10, 4));
}

TEST(NetworkPrior, BadOptionsAreClearErrors)
{
  auto error = [](auto change)
  {
    PriorScoringOptions o;
    change(o);
    return ErrorOf([&] { ValidatePriorScoring(o, "detect"); });
  };
  EXPECT_EQ(error([](PriorScoringOptions &) {}), "(no error)");
  EXPECT_EQ(error([](PriorScoringOptions & o) { o.weight = NAN; }),
            "detect: the prior weight must be a finite number in [0, 1000] (got nan)");
  EXPECT_EQ(error([](PriorScoringOptions & o) { o.weight = -1; }),
            "detect: the prior weight must be a finite number in [0, 1000] (got -1)");
  EXPECT_EQ(error([](PriorScoringOptions & o) { o.hypotheses = "all"; }),
            "detect: the child hypotheses must be \"prior\", \"model\" or \"both\" (got \"all\")");
  EXPECT_EQ(error([](PriorScoringOptions & o) { o.orientationSamples = 0; }),
            "detect: prior orientations must be in 1..10000 (got 0)");
  EXPECT_EQ(error([](PriorScoringOptions & o) { o.sizeSamples = 20000; }),
            "detect: prior sizes must be in 1..10000 (got 20000)");
  EXPECT_EQ(error([](PriorScoringOptions & o) { o.parentTurnDegrees = INFINITY; }),
            "detect: the parent's turn spread must be in [0, 180] degrees (got inf)");
  EXPECT_EQ(error([](PriorScoringOptions & o) { o.childThreshold = 0.01; }), "(no error)");
  EXPECT_EQ(error([](PriorScoringOptions & o) { o.childThreshold = 1.5; }),
            "detect: the child threshold must be in [0, 1] (or -1: the structure's threshold; got 1.5)");
  EXPECT_EQ(error([](PriorScoringOptions & o) { o.childThreshold = NAN; }),
            "detect: the child threshold must be in [0, 1] (or -1: the structure's threshold; got nan)");
}

TEST(DetectionOptions, BadRefinementIsAClearError)
{
  auto error = [](auto change)
  {
    DetectionOptions o;
    change(o);
    return ErrorOf([&] { ValidateDetectionOptions(o, "detect"); });
  };
  EXPECT_EQ(error([](DetectionOptions & o) { o.refineStepMm = 1.0; }), "(no error)");
  EXPECT_EQ(error([](DetectionOptions & o) { o.refineStepMm = -1.0; }),
            "detect: the centre refinement step must be in [0, 20] mm (0: off; got -1)");
  EXPECT_EQ(error([](DetectionOptions & o) { o.refineReach = 0; }),
            "detect: the centre refinement reach must be 1..5 steps per side (got 0)");
  EXPECT_EQ(error([](DetectionOptions & o) { o.prior.childThreshold = 2; }),
            "detect: the child threshold must be in [0, 1] (or -1: the structure's threshold; got 2)");
}

} // namespace
