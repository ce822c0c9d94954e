// Ground-truth poses from label maps (issue 9 part 4) and poses.json: exact answers on painted
// ellipsoids, the sign convention, errors naming the file and label, and a strict reader.
#include "PoseTestPhantoms.h"
#include "canopyStructurePose.h"

#include "canopy/Errors.h"
#include "canopyTesting.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace
{
using namespace canopy;
using namespace canopy::posetest;

StructurePose
PoseOfPainted(const EllipsoidSpec & e, int n = 80, double spacing = 1.0)
{
  return PoseFromLabel(ToPoseLabels(PaintEllipsoids(n, spacing, { e })), e.label, "painted");
}

using canopy::testing::ErrorOf;

TEST(StructurePose, EllipsoidCentreAxesAndSize)
{
  const EllipsoidSpec e{ 5, { { 3.5, -2.0, 4.25 } }, { { 22, 13, 8 } }, Rotation(25, -10, 40) };
  const auto          pose = PoseOfPainted(e);
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(pose.centerMm[k], e.centreMm[k], 0.05) << "axis " << k;
  EXPECT_LT(OrientationErrorDegrees(pose.axes, e.axes), 1.0);
  for (int a = 0; a < 3; ++a)
    EXPECT_NEAR(pose.sizeMm[a] / (2 * e.radiiMm[a]), 1.0, 0.05) << "axis " << a << ": " << pose.sizeMm[a] << " mm";
}

TEST(StructurePose, SameVoxelsUnderAnotherDirectionGiveTheSamePose)
{
  // The same physical voxels stored with the x axis reversed (direction diag(-1, 1, 1), origin at the
  // other end): the pose is a property of the structure in LPS, not of the voxel order.
  const auto labels =
    ToPoseLabels(PaintEllipsoids(40, 1.0, { { 4, { { 2.5, -1.5, 3.0 } }, { { 14, 8, 5 } }, Rotation(30, 20, -35) } }));
  auto flipped = PoseLabelMap::New();
  flipped->SetRegions(labels->GetLargestPossibleRegion());
  flipped->SetSpacing(labels->GetSpacing());
  auto direction = labels->GetDirection();
  direction[0][0] = -1.0;
  flipped->SetDirection(direction);
  auto origin = labels->GetOrigin();
  origin[0] += 39.0;
  flipped->SetOrigin(origin);
  flipped->Allocate();
  for (long z = 0; z < 40; ++z)
    for (long y = 0; y < 40; ++y)
      for (long x = 0; x < 40; ++x)
        flipped->SetPixel({ { 39 - x, y, z } }, labels->GetPixel({ { x, y, z } }));
  const auto a = PoseFromLabel(labels, 4, "a"), b = PoseFromLabel(flipped, 4, "b");
  for (int k = 0; k < 3; ++k)
  {
    EXPECT_NEAR(a.centerMm[k], b.centerMm[k], 1e-9);
    EXPECT_NEAR(a.sizeMm[k], b.sizeMm[k], 1e-6);
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(a.axes[k][j], b.axes[k][j], 1e-6);
  }
}

TEST(StructurePose, SignConventionIsCanonicalAndRightHanded)
{
  // The same structure turned by 180 degrees about its own axis 2 paints the same voxels: the pose
  // must not depend on which eigenvector signs the solver returned.
  for (double turn : { 0.0, 7.0, 130.0, 250.0 })
  {
    const auto pose = PoseOfPainted({ 2, { { 0, 0, 0 } }, { { 20, 11, 6 } }, Rotation(turn, turn / 2, -turn) }, 64);
    const auto canonical = CanonicalAxes(pose.axes);
    for (int a = 0; a < 3; ++a)
      for (int k = 0; k < 3; ++k)
        EXPECT_DOUBLE_EQ(pose.axes[a][k], canonical[a][k]);
    for (int a = 0; a < 2; ++a)
    {
      int closest = 0;
      for (int k = 1; k < 3; ++k)
        closest = std::abs(pose.axes[a][k]) > std::abs(pose.axes[a][closest]) ? k : closest;
      EXPECT_GT(pose.axes[a][closest], 0.0) << "axis " << a << " at turn " << turn;
    }
    const Vec3d cross{ { pose.axes[0][1] * pose.axes[1][2] - pose.axes[0][2] * pose.axes[1][1],
                         pose.axes[0][2] * pose.axes[1][0] - pose.axes[0][0] * pose.axes[1][2],
                         pose.axes[0][0] * pose.axes[1][1] - pose.axes[0][1] * pose.axes[1][0] } };
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(cross[k], pose.axes[2][k], 1e-12);
  }
}

TEST(StructurePose, NearbyOrientationsGiveNearbyFramesNotFlippedOnes)
{
  // Two subjects whose structure differs by a few degrees: every axis agrees in sign too.
  const auto a = PoseOfPainted({ 1, { { 0, 0, 0 } }, { { 20, 11, 6 } }, Rotation(20, -15, 30) }, 64);
  const auto b = PoseOfPainted({ 1, { { 0, 0, 0 } }, { { 20, 11, 6 } }, Rotation(24, -12, 34) }, 64);
  for (int k = 0; k < 3; ++k)
    EXPECT_GT(a.axes[k][0] * b.axes[k][0] + a.axes[k][1] * b.axes[k][1] + a.axes[k][2] * b.axes[k][2], 0.95);
}

TEST(StructurePose, SingleVoxelHasTheVoxelsSize)
{
  auto labels = PoseLabelMap::New();
  labels->SetRegions(PoseLabelMap::SizeType{ { 5, 5, 5 } });
  const double spacing[3] = { 0.5, 1.0, 2.0 };
  labels->SetSpacing(spacing);
  labels->Allocate(true);
  labels->SetPixel({ { 2, 3, 1 } }, 9);
  const auto pose = PoseFromLabel(labels, 9, "one.nii.gz");
  EXPECT_DOUBLE_EQ(pose.centerMm[0], 1.0);
  EXPECT_DOUBLE_EQ(pose.centerMm[1], 3.0);
  EXPECT_DOUBLE_EQ(pose.centerMm[2], 2.0);
  std::vector<double> sizes(pose.sizeMm.begin(), pose.sizeMm.end());
  std::sort(sizes.begin(), sizes.end());
  EXPECT_NEAR(sizes[0], 0.5, 1e-9);
  EXPECT_NEAR(sizes[1], 1.0, 1e-9);
  EXPECT_NEAR(sizes[2], 2.0, 1e-9);
}

TEST(StructurePose, AbsentLabelNamesFileAndLabel)
{
  const auto labels =
    ToPoseLabels(PaintEllipsoids(16, 1.0, { { 1, { { 0, 0, 0 } }, { { 5, 4, 3 } }, Rotation(0, 0, 0) } }));
  EXPECT_EQ(ErrorOf([&] { PoseFromLabel(labels, 17, "subject03.nii.gz"); }),
            "subject03.nii.gz: label 17 is absent (no voxel has this value)");
}

TEST(StructurePose, AxisAnglesIgnoreSigns)
{
  EXPECT_NEAR(AxisAngleDegrees({ { 1, 0, 0 } }, { { -1, 0, 0 } }), 0.0, 1e-9);
  EXPECT_NEAR(AxisAngleDegrees({ { 1, 0, 0 } }, { { 0, 1, 0 } }), 90.0, 1e-9);
  const Frame identity = Rotation(0, 0, 0);
  Frame       flipped = identity;
  for (int a : { 0, 1 })
    for (double & v : flipped[a])
      v = -v;
  EXPECT_NEAR(OrientationErrorDegrees(identity, flipped), 0.0, 1e-9);
  EXPECT_NEAR(OrientationErrorDegrees(identity, Rotation(0, 0, 10)), 10.0, 1e-6);
}

std::vector<DetectedStructure>
TwoStructures()
{
  DetectedStructure a;
  a.name = "hippocampus_left";
  a.found = true;
  a.pose.centerMm = { { 1.25, -30.5, 12 } };
  a.pose.axes = Rotation(10, 20, 30);
  a.pose.sizeMm = { { 40, 20, 15 } };
  a.score = 0.875;
  a.seconds = 0.125;
  DetectedStructure b;
  b.name = "thalamus";
  b.found = false;
  b.score = 0.25;
  return { a, b };
}

TEST(PosesFile, RoundTripsAndWritesTheIssueFormat)
{
  const auto path = canopy::testing::OutputPath("poses-roundtrip.json");
  WritePosesFile(TwoStructures(), path);
  std::ifstream  in(path);
  nlohmann::json doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc.size(), 1u);
  const auto & first = doc["structures"][0];
  for (const char * key : { "name", "found", "center_mm", "axes", "size_mm", "score", "seconds" })
    EXPECT_TRUE(first.contains(key)) << key;
  EXPECT_TRUE(doc["structures"][1]["center_mm"].is_null());
  EXPECT_EQ(doc["structures"][1]["found"], false);

  const auto back = ReadPosesFile(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].name, "hippocampus_left");
  EXPECT_TRUE(back[0].found);
  EXPECT_EQ(back[0].pose.centerMm, TwoStructures()[0].pose.centerMm);
  EXPECT_EQ(back[0].pose.axes, TwoStructures()[0].pose.axes);
  EXPECT_EQ(back[0].pose.sizeMm, TwoStructures()[0].pose.sizeMm);
  EXPECT_EQ(back[0].score, 0.875);
  EXPECT_FALSE(back[1].found);
  EXPECT_FALSE(first.contains("lowConfidence")); // written only when set: older files stay the same
  EXPECT_FALSE(back[0].lowConfidence);
}

// A child found under --child-threshold below its own threshold is flagged, and the flag survives the file.
TEST(PosesFile, LowConfidenceRoundTrips)
{
  auto structures = TwoStructures();
  structures[0].lowConfidence = true;
  const auto doc = PosesToJson(structures);
  EXPECT_EQ(doc["structures"][0]["lowConfidence"], true);
  EXPECT_FALSE(doc["structures"][1].contains("lowConfidence"));
  const auto back = PosesFromJson(doc, "p.json");
  EXPECT_EQ(back, structures);
  auto bad = doc;
  bad["structures"][1]["lowConfidence"] = true;
  EXPECT_EQ(ErrorOf([&] { PosesFromJson(bad, "p.json"); }),
            "p.json: structures[1] (thalamus): \"lowConfidence\" must be true or false, and true only for a found "
            "structure");
}

TEST(PosesFile, ReaderNamesTheEntryAndField)
{
  auto doc = PosesToJson(TwoStructures());
  auto expect = [](nlohmann::json d, const std::string & message)
  { EXPECT_EQ(ErrorOf([&] { PosesFromJson(d, "p.json"); }), message) << d.dump(); };
  expect(nlohmann::json::object(), "p.json has no field \"structures\"");
  auto d = doc;
  d["structures"][0].erase("center_mm");
  expect(d, "p.json: structures[0] (hippocampus_left) has no field \"center_mm\"");
  d = doc;
  d["structures"][0]["axes"][1] = { 1, 0, 0 };
  d["structures"][0]["axes"][0] = { 1, 0, 0 };
  expect(d,
         "p.json: structures[0] (hippocampus_left): \"axes\" rows must be unit vectors at right angles (rows 0 and 1)");
  d = doc;
  d["structures"][0]["size_mm"][2] = 0;
  expect(d, "p.json: structures[0] (hippocampus_left): \"size_mm\" entries must be > 0");
  d = doc;
  d["structures"][1]["name"] = "hippocampus_left";
  expect(d, "p.json: structures[1] (hippocampus_left): a second entry of this name");
  d = doc;
  d["structures"][1]["found"] = "no";
  expect(d, "p.json: structures[1] (thalamus): \"found\" must be true or false");
  d = doc;
  d["structures"][0]["score"] = "high";
  expect(d, "p.json: structures[0] (hippocampus_left): \"score\" must be a finite number");
}

TEST(PosesFile, DamagedFilesAreErrorsNamingTheFile)
{
  const auto path = canopy::testing::OutputPath("poses-damaged.json");
  EXPECT_EQ(ErrorOf([&] { ReadPosesFile(path + ".missing"); }), path + ".missing: no such file");
  std::ofstream(path) << "";
  EXPECT_EQ(ErrorOf([&] { ReadPosesFile(path); }), path + ": the poses file is empty");
  std::ofstream(path) << PosesToJson(TwoStructures()).dump().substr(0, 40);
  EXPECT_NE(ErrorOf([&] { ReadPosesFile(path); }).find(path + ": the poses file is truncated or not valid JSON"),
            std::string::npos);
}

} // namespace
