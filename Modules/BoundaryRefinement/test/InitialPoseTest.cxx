// The initial pose of shape segmentation: boxes of labels (the detector's conventions), the pose that
// takes the model's box onto a target box, poses.json entries and their errors, poses outside the volume.
#include "ShapeTestPhantoms.h"
#include "canopy/Errors.h"
#include "canopyInitialPose.h"
#include "canopyTesting.h"

#include <gtest/gtest.h>

#include <fstream>

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

TEST(InitialPose, BoxOfAnEllipsoidLabelHasItsAxesAndSizes)
{
  Ellipsoid e;
  e.radii = Eigen::Vector3d(20, 14, 10); // >= 10 voxels per radius, as the detector's convention states
  e.rotation = Eigen::AngleAxisd(0.4, Eigen::Vector3d(0, 0, 1)).toRotationMatrix();
  e.centre = Eigen::Vector3d(32.3, 31.6, 32.2); // off the voxel centres (a lone pole voxel is a quantile outlier)
  const OrientedBox box = BoxOfLabel(canopy::testing::MakeEllipsoidLabels(e, 5), 5, "phantom");
  EXPECT_LT((box.centerMm - e.centre).norm(), 0.1);
  for (int a = 0; a < 3; ++a)
  {
    EXPECT_NEAR(box.sizeMm(a), 2 * e.radii(a), 0.05 * 2 * e.radii(a)) << "axis " << a;
    EXPECT_GT(std::abs(box.axes.row(a).dot(e.rotation.col(a))), 0.999) << "axis " << a;
  }
  EXPECT_NEAR(box.axes.determinant(), 1.0, 1e-9);
  ExpectError([&] { BoxOfLabel(canopy::testing::MakeEllipsoidLabels(e, 5), 6, "phantom.nii"); },
              "phantom.nii: label 6 is absent");
}

TEST(InitialPose, PoseFromBoxesMapsTheModelBoxOntoTheTarget)
{
  OrientedBox model, target;
  model.centerMm = Eigen::Vector3d(1, 2, 3);
  model.sizeMm = Eigen::Vector3d(30, 20, 10);
  target.centerMm = Eigen::Vector3d(40, -5, 7);
  target.axes = Eigen::AngleAxisd(0.3, Eigen::Vector3d(1, 1, 1).normalized()).toRotationMatrix().transpose();
  target.sizeMm = 1.5 * model.sizeMm;
  const Similarity pose = PoseFromBoxes(model, target);
  EXPECT_NEAR(pose.scale, 1.5, 1e-12);
  EXPECT_LT((pose.Apply(model.centerMm) - target.centerMm).norm(), 1e-12);
  for (int a = 0; a < 3; ++a)
    EXPECT_LT((pose.rotation * model.axes.row(a).transpose() - target.axes.row(a).transpose()).norm(), 1e-12);
  EXPECT_LT((PoseFromBoxes(model, target, false).rotation - Eigen::Matrix3d::Identity()).norm(), 1e-15);
}

TEST(InitialPose, PosesFileEntriesAndErrors)
{
  const std::string path = canopy::testing::OutputPath("initial-pose-poses.json");
  auto              write = [&](const std::string & text) { std::ofstream(path) << text; };
  write(R"({"structures": [{"name": "left", "found": true, "center_mm": [1, 2, 3],
            "axes": [[0, 1, 0], [-1, 0, 0], [0, 0, 1]], "size_mm": [30, 20, 10], "score": 0.9, "seconds": 0.1},
           {"name": "right", "found": false, "center_mm": null, "axes": null, "size_mm": null, "score": 0.1}]})");
  double            score = 0;
  const OrientedBox box = ReadDetectedBox(path, "left", &score);
  EXPECT_EQ(box.centerMm, Eigen::Vector3d(1, 2, 3));
  EXPECT_EQ(box.sizeMm, Eigen::Vector3d(30, 20, 10));
  EXPECT_EQ(score, 0.9);
  EXPECT_NEAR(box.axes.determinant(), 1.0, 1e-12);
  ExpectError([&] { ReadDetectedBox(path, "right"); }, "did not find right (\"found\": false)");
  ExpectError([&] { ReadDetectedBox(path, "middle"); }, "no structure named \"middle\"");
  write(R"({"structures": [{"name": "left", "found": true, "center_mm": [1, 2], "axes": [], "size_mm": [1, 1, 1]}]})");
  ExpectError([&] { ReadDetectedBox(path, "left"); }, "structures[0]: \"center_mm\" must be an array of 3");
  write(R"({"structures": [{"name": "left", "found": true, "center_mm": [1, 2, 3],
            "axes": [[1, 0, 0], [1, 0, 0], [0, 0, 1]], "size_mm": [1, 1, 1]}]})");
  ExpectError([&] { ReadDetectedBox(path, "left"); }, "\"axes\" must be orthonormal rows");
  write("{\"structures\": [");
  ExpectError([&] { ReadDetectedBox(path, "left"); }, "not valid JSON");
  ExpectError([&] { ReadDetectedBox(path + ".missing", "left"); }, "cannot open");
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
