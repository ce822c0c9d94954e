// The initial pose of shape segmentation: the similarity that takes the model's pose onto a target pose
// (poses and their reader are PoseDetection's, tested by StructurePoseTest), the named entry of a list of
// detected structures and its errors, poses outside the volume.
#include "ShapeTestPhantoms.h"
#include "canopy/Errors.h"
#include "canopyInitialPose.h"
#include "canopyTesting.h"

#include <gtest/gtest.h>

namespace
{
using namespace canopy;
using canopy::testing::Ellipsoid;

void
ExpectError(const std::function<void()> & run, const std::string & part)
{
  try
  {
    run();
    ADD_FAILURE() << "no error; expected one containing: " << part;
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

StructurePose
PoseOf(const Eigen::Vector3d & centre, const Eigen::Matrix3d & rows, const Eigen::Vector3d & size)
{
  StructurePose pose;
  for (int a = 0; a < 3; ++a)
  {
    pose.centerMm[a] = centre(a);
    pose.sizeMm[a] = size(a);
    for (int k = 0; k < 3; ++k)
      pose.axes[a][k] = rows(a, k);
  }
  return pose;
}

TEST(InitialPose, SimilarityMapsTheModelPoseOntoTheTarget)
{
  const Eigen::Vector3d modelCentre(1, 2, 3), modelSize(30, 20, 10), targetCentre(40, -5, 7);
  const Eigen::Matrix3d targetAxes =
    Eigen::AngleAxisd(0.3, Eigen::Vector3d(0.2, 0.3, 1).normalized()).toRotationMatrix().transpose();
  const StructurePose model = PoseOf(modelCentre, Eigen::Matrix3d::Identity(), modelSize);
  const StructurePose target = PoseOf(targetCentre, targetAxes, 1.5 * modelSize);
  const Similarity    pose = SimilarityBetweenPoses(model, target);
  EXPECT_NEAR(pose.scale, 1.5, 1e-12);
  EXPECT_LT((pose.Apply(modelCentre) - targetCentre).norm(), 1e-12);
  for (int a = 0; a < 3; ++a) // the target's rows are already canonical (closest to +x, +y)
    EXPECT_LT((pose.rotation.col(a) - targetAxes.row(a).transpose()).norm(), 1e-12) << "axis " << a;
  EXPECT_LT((SimilarityBetweenPoses(model, target, false).rotation - Eigen::Matrix3d::Identity()).norm(), 1e-15);
  // Axes of either sign give the same rotation: both frames are taken under CanonicalAxes' convention.
  const Eigen::Matrix3d flipped = Eigen::Vector3d(-1, -1, 1).asDiagonal() * targetAxes;
  EXPECT_LT(
    (SimilarityBetweenPoses(model, PoseOf(targetCentre, flipped, 1.5 * modelSize)).rotation - pose.rotation).norm(),
    1e-12);
}

TEST(InitialPose, FoundPoseTakesTheNamedEntryOrSaysWhyNot)
{
  DetectedStructure left, right;
  left.name = "left";
  left.found = true;
  left.score = 0.9;
  left.pose = PoseOf(Eigen::Vector3d(1, 2, 3), Eigen::Matrix3d::Identity(), Eigen::Vector3d(30, 20, 10));
  right.name = "right";
  right.score = 0.01;
  double score = 0;
  EXPECT_EQ(FoundPose({ right, left }, "left", "--pose p.json", &score), left.pose);
  EXPECT_EQ(score, 0.9);
  ExpectError(
    [&] {
      FoundPose({ right, left }, "right", "--pose p.json");
    },
    "--pose p.json: the detector did not find right (\"found\": false, best score 0.01)");
  ExpectError(
    [&] {
      FoundPose({ right, left }, "middle", "--pose p.json");
    },
    "--pose p.json: no structure named \"middle\"");
}

TEST(InitialPose, PoseOutsideTheVolumeIsRefused)
{
  ShapeModel model;
  model.structure = "blob";
  ShapeLevel level;
  level.mean = Eigen::Matrix3Xd::Random(3, 10);
  model.levels.push_back(level);
  const auto image = canopy::testing::MakeEllipsoidLabels(Ellipsoid());
  Similarity pose;
  pose.translation = Eigen::Vector3d(32, 32, 32);
  EXPECT_NO_THROW(CheckPoseInsideImage(model, pose, image, "--pose p.json"));
  pose.translation = Eigen::Vector3d(32, 32, 90);
  ExpectError([&] { CheckPoseInsideImage(model, pose, image, "--pose p.json"); },
              "--pose p.json: the initial pose puts blob");
  pose.scale = 0;
  ExpectError([&] { CheckPoseInsideImage(model, pose, image, "--pose p.json"); }, "degenerate");
}
} // namespace
