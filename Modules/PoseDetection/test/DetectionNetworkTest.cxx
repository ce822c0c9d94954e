// The hierarchical detection network (issue 9 part 5) without training a detector: the network file's
// errors, spatial priors with known answers (poses built by hand, and ellipsoid label maps), the search
// box, the cropped position stage against the whole volume, and the model file's network fields
// (round trip, version 1 files, damaged fields).
#include "PoseTestPhantoms.h"
#include "canopyDetectionNetwork.h"
#include "canopyDetectorModelFile.h"
#include "canopyPBTEvaluator.h"
#include "canopySteerableFeatureBank.h"

#include "canopy/Errors.h"
#include "canopy/PortableRandom.h"
#include "canopyTesting.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace
{
using namespace canopy;
using namespace canopy::posetest;
using canopy::testing::ErrorOf;

const std::vector<std::string> kTrained{ "stem", "left", "right", "far" };

std::string
NetworkError(const std::string & text)
{
  return ErrorOf([&] { DetectionNetworkFromJson(nlohmann::json::parse(text), "net.json", kTrained); });
}

TEST(DetectionNetwork, ReadsArcsAndOrdersParentsFirst)
{
  const auto arcs = DetectionNetworkFromJson(
    nlohmann::json::parse(
      R"({"structures": [{"name": "left", "parent": "stem"}, {"name": "stem"}, {"name": "far", "parent": "left"}]})"),
    "net.json",
    kTrained);
  ASSERT_EQ(arcs.size(), 2u);
  EXPECT_EQ(arcs[0].child, "left");
  EXPECT_EQ(arcs[0].parent, "stem");
  EXPECT_EQ(arcs[1].child, "far");
  const auto order = NetworkOrder(kTrained, arcs, "net.json");
  ASSERT_EQ(order.size(), 4u); // "right" is not in the network: a root
  auto position = [&](int s) { return std::find(order.begin(), order.end(), s) - order.begin(); };
  EXPECT_LT(position(0), position(1));
  EXPECT_LT(position(1), position(3));
}

TEST(DetectionNetwork, BadNetworksNameTheFileAndTheStructure)
{
  EXPECT_EQ(NetworkError(R"({"structures": [{"name": "stem", "parent": "far"}, {"name": "left", "parent": "stem"},
                                            {"name": "far", "parent": "left"}]})"),
            "net.json: the network has a cycle through structure 'stem' (stem -> left -> far -> stem; parent -> "
            "child)");
  EXPECT_EQ(NetworkError(R"({"structures": [{"name": "left", "parent": "left"}]})"),
            "net.json: the network has a cycle through structure 'left' (left -> left; parent -> child)");
  EXPECT_EQ(NetworkError(R"({"structures": [{"name": "left", "parent": "brainstem"}]})"),
            "net.json: structure 'left' has parent 'brainstem', which is not a structure of the network");
  EXPECT_EQ(NetworkError(R"({"structures": [{"name": "stem"}, {"name": "cerebellum", "parent": "stem"}]})"),
            "net.json: structure 'cerebellum' is not trained (give it with --structure NAME=LABEL)");
  EXPECT_EQ(NetworkError(R"({"structures": [{"name": "stem"}, {"name": "stem"}]})"),
            "net.json: structure 'stem' is listed twice");
  EXPECT_EQ(NetworkError(R"({"structures": [{"parent": "stem"}]})"),
            "net.json: structures[0]: needs a non-empty string \"name\"");
  EXPECT_EQ(NetworkError(R"({"structures": [{"name": "left", "parent": 3}]})"),
            "net.json: structures[0] (left): \"parent\" must be a string");
  EXPECT_EQ(NetworkError(R"([1, 2])"),
            "net.json: a detection network must be {\"structures\": [{\"name\": ..., \"parent\": ...}, ...]}");
  const auto missing = ErrorOf([] { ReadDetectionNetwork("/nonexistent/net.json", kTrained); });
  EXPECT_EQ(missing, "/nonexistent/net.json: cannot open the detection network (no such file)");
}

// Poses built by hand: the child's offset along the parent's axes is u0 + d_i with d_i = +-2 mm on axis 0
// and +-1 mm on axis 2 (known mean and covariance), whatever the parent's place and orientation.
TEST(SpatialPrior, ExactOnPosesBuiltByHand)
{
  const Vec3d                u0{ { 12, -5, 3 } };
  const Frame                relative = Rotation(10, -20, 30);
  const Vec3d                ratio{ { 0.5, 0.25, 0.4 } };
  const double               d0[4] = { 2, -2, 2, -2 }, d2[4] = { 1, 1, -1, -1 };
  std::vector<StructurePose> parents, children;
  for (int i = 0; i < 4; ++i)
  {
    const Frame axes = Rotation(15 * i, -10 * i, 5 + 20 * i);
    const Vec3d centre{ { 3.0 * i, -2.0 * i, 1.0 + i } };
    const Vec3d size{ { 40.0 + i, 30.0, 20.0 - i } };
    parents.push_back(Pose(centre, axes, size));
    const Vec3d offset = InWorld(axes, { { u0[0] + d0[i], u0[1], u0[2] + d2[i] } });
    children.push_back(Pose({ { centre[0] + offset[0], centre[1] + offset[1], centre[2] + offset[2] } },
                            Times(relative, axes),
                            { { size[0] * ratio[0], size[1] * ratio[1], size[2] * ratio[2] } }));
  }
  const SpatialPrior prior = EstimateSpatialPrior(parents, children);
  EXPECT_EQ(prior.subjects, 4);
  EXPECT_EQ(prior.frame, "parent"); // the offsets are constant in it, not in the long-axis frame
  for (int k = 0; k < 3; ++k)
  {
    EXPECT_NEAR(prior.offsetMm.mean[k], u0[k], 1e-9);
    EXPECT_NEAR(prior.sizeRatio.mean[k], ratio[k], 1e-12);
    for (int j = 0; j < 3; ++j)
    {
      EXPECT_NEAR(prior.relativeAxes[k][j], relative[k][j], 1e-9);
      EXPECT_NEAR(prior.rotationCovariance[k][j], 0.0, 1e-12);
      EXPECT_NEAR(prior.sizeRatio.covariance[k][j], 0.0, 1e-12);
    }
  }
  // Sample covariance (n - 1 = 3): var(d0) = 16 / 3, var(d2) = 4 / 3, cov(d0, d2) = 0.
  EXPECT_NEAR(prior.offsetMm.covariance[0][0], 16.0 / 3.0, 1e-9);
  EXPECT_NEAR(prior.offsetMm.covariance[2][2], 4.0 / 3.0, 1e-9);
  EXPECT_NEAR(prior.offsetMm.covariance[0][2], 0.0, 1e-9);
  EXPECT_NEAR(prior.offsetMm.covariance[1][1], 0.0, 1e-9);

  // Prediction from a new parent pose: the mean child, exactly.
  const StructurePose parent = Pose({ { -7, 4, 9 } }, Rotation(-30, 25, 60), { { 36, 28, 22 } });
  const StructurePose predicted = PredictPose(prior, parent);
  const Vec3d         expected = InWorld(parent.axes, u0);
  for (int k = 0; k < 3; ++k)
  {
    EXPECT_NEAR(predicted.centerMm[k], parent.centerMm[k] + expected[k], 1e-9);
    EXPECT_NEAR(predicted.sizeMm[k], parent.sizeMm[k] * ratio[k], 1e-9);
  }
  EXPECT_LT(OrientationErrorDegrees(predicted.axes, Times(relative, parent.axes)), 1e-6);
  // The predicted centre's covariance is the offset's turned into LPS: variance along parent axis 0.
  const PredictedCentre c = PredictCentre(prior, parent);
  double                along0 = 0.0;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      along0 += parent.axes[0][a] * c.covariance[a][b] * parent.axes[0][b];
  EXPECT_NEAR(along0, 16.0 / 3.0, 1e-9);
}

// A parent whose short axes turn freely about its long axis (their sizes are close: not defined by the
// shape) and a child fixed in space relative to the long axis: the long-axis frame is chosen, and the
// prediction does not turn with the short axes.
TEST(SpatialPrior, LongAxisFrameForParentsWithUndefinedShortAxes)
{
  std::vector<StructurePose> parents, children;
  for (double turn : { -30.0, -10.0, 10.0, 30.0 })
  {
    parents.push_back(Pose({ { 1, 2, 3 } }, Rotation(turn, 0, 0), { { 40, 20, 19 } }));
    children.push_back(Pose({ { 6, 12, 3 } }, Rotation(0, 0, 0), { { 10, 8, 6 } }));
  }
  const SpatialPrior prior = EstimateSpatialPrior(parents, children);
  EXPECT_EQ(prior.frame, "parentLongAxis");
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(prior.offsetMm.covariance[k][j], 0.0, 1e-9);
  const PredictedCentre c = PredictCentre(prior, Pose({ { -4, 0, 7 } }, Rotation(50, 0, 0), { { 40, 20, 19 } }));
  EXPECT_NEAR(c.centerMm[0], 1.0, 1e-9);
  EXPECT_NEAR(c.centerMm[1], 10.0, 1e-9);
  EXPECT_NEAR(c.centerMm[2], 7.0, 1e-9);
}

// Label maps of a parent ellipsoid placed and turned differently per subject and a child at a fixed
// pose in the parent's frame: the prior recovers that pose within the voxels' resolution.
TEST(SpatialPrior, RecoversARelativePoseFromLabelMaps)
{
  const Vec3d                u0{ { 20, -6, 4 } };
  const Frame                relative = Rotation(0, 0, 35);
  std::vector<StructurePose> parents, children;
  for (int i = 0; i < 3; ++i)
  {
    const Frame axes = Rotation(10 * i, -12 * i, 8 * i);
    const Vec3d centre{ { -8.0 + 3 * i, 2.0 - i, 1.0 } };
    const Vec3d offset = InWorld(axes, u0);
    const auto  labels =
      ToPoseLabels(PaintEllipsoids(64,
                                   1.0,
                                   { { kLarge, centre, { { 14, 9, 6 } }, axes },
                                     { kSmall,
                                       { { centre[0] + offset[0], centre[1] + offset[1], centre[2] + offset[2] } },
                                       { { 8, 5, 3.5 } },
                                       Times(relative, axes) } }));
    parents.push_back(PoseFromLabel(labels, kLarge, "parent"));
    children.push_back(PoseFromLabel(labels, kSmall, "child"));
  }
  const SpatialPrior prior = EstimateSpatialPrior(parents, children);
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(prior.offsetMm.mean[k], u0[k], 0.3) << k;
  EXPECT_LT(OrientationErrorDegrees(prior.relativeAxes, relative), 2.0);
  const Vec3d ratio{ { 8.0 / 14.0, 5.0 / 9.0, 3.5 / 6.0 } };
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(prior.sizeRatio.mean[k], ratio[k], 0.05) << k;
  EXPECT_LT(std::sqrt(prior.offsetMm.covariance[0][0]), 0.3);
}

FloatVolume::Pointer
RandomGrid(int nx, int ny, int nz, double spacing)
{
  auto image = FloatVolume::New();
  image->SetRegions(FloatVolume::SizeType{ { std::size_t(nx), std::size_t(ny), std::size_t(nz) } });
  image->SetSpacing(spacing);
  image->Allocate();
  std::mt19937_64 rng(5);
  for (std::size_t i = 0; i < image->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    image->GetBufferPointer()[i] = static_cast<float>(std::sin(0.05 * i) * 3.0 + UniformUnit(rng));
  return image;
}

PBTModelFile
RandomPositionModel()
{
  RandomPBTModelOptions o;
  o.depth = 3;
  o.learnersPerNode = 8;
  o.numFeatures = 60;
  o.sampleBox = { { 7, 5, 9 } };
  o.responseLow = -2.0f;
  o.responseHigh = 2.0f;
  o.seed = 11;
  PBTModelFile model;
  model.tree = MakeRandomPBTModel(o);
  model.workingSpacing = { { 3, 3, 3 } };
  return model;
}

// The crop (box + the features' reach) gives the whole volume's scores inside the box, also where the
// box touches the volume's faces, and BestPositionsInBox ranks as the whole volume's ranking restricted.
TEST(RegionSearch, CropScoresEqualTheWholeVolumeInsideTheBox)
{
  const auto model = RandomPositionModel();
  const auto grid = RandomGrid(30, 27, 24, 3.0);
  const auto cpu = ResolveBackend(BackendRequest::Parse("cpu"));
  const auto reach = HaarReach(model.tree);
  for (int d = 0; d < 3; ++d)
  {
    EXPECT_GE(reach[d], 2) << d;
    EXPECT_LE(reach[d], model.tree.sampleBox[d]) << d;
  }
  std::vector<float> whole(grid->GetLargestPossibleRegion().GetNumberOfPixels());
  PBTVolumeEvaluator(model.tree, cpu).Evaluate(grid->GetBufferPointer(), 30, 27, 24, whole.data());
  for (const GridBox & box : { GridBox{ { { 9, 8, 7 } }, { { 17, 15, 13 } } },
                               GridBox{ { { 0, 0, 0 } }, { { 6, 5, 4 } } },
                               GridBox{ { { 25, 3, 20 } }, { { 29, 26, 23 } } } })
  {
    std::int64_t voxels = 0;
    const auto   scores = PositionScoresInBox(model, grid, box, cpu, 1, &voxels);
    ASSERT_EQ(static_cast<std::int64_t>(scores.size()), box.Voxels());
    EXPECT_LT(voxels, 30 * 27 * 24);
    std::size_t i = 0, differing = 0;
    for (long z = box.lo[2]; z <= box.hi[2]; ++z)
      for (long y = box.lo[1]; y <= box.hi[1]; ++y)
        for (long x = box.lo[0]; x <= box.hi[0]; ++x, ++i)
          differing += !(std::abs(scores[i] - whole[(z * 27 + y) * 30 + x]) <= 1e-6f);
    EXPECT_EQ(differing, 0u) << "box from " << box.lo[0] << "," << box.lo[1] << "," << box.lo[2];
  }
  // Without the reach, the crop's own faces clip features: the scores would differ (the check can fail).
  const GridBox      inner{ { { 9, 8, 7 } }, { { 17, 15, 13 } } };
  std::vector<float> tight(static_cast<std::size_t>(inner.Voxels()));
  {
    std::vector<float> crop;
    for (long z = 7; z <= 13; ++z)
      for (long y = 8; y <= 15; ++y)
        for (long x = 9; x <= 17; ++x)
          crop.push_back(grid->GetBufferPointer()[(z * 27 + y) * 30 + x]);
    PBTVolumeEvaluator(model.tree, cpu).Evaluate(crop.data(), 9, 8, 7, tight.data());
  }
  const auto scores = PositionScoresInBox(model, grid, inner, cpu, 1);
  EXPECT_NE(tight, scores);

  const auto              best = BestPositionsInBox(model, grid, inner, 5, { { 1, 1, 1 } }, cpu, 1);
  const auto              all = BestPositions(model, grid, 30 * 27 * 24, { { 1, 1, 1 } }, cpu, 1);
  std::vector<ScoredPose> restricted;
  for (const auto & c : all)
  {
    const Vec3d & p = c.pose.centerMm; // spacing 3, origin 0: index = p / 3
    bool          inside = true;
    for (int d = 0; d < 3; ++d)
      inside = inside && p[d] / 3.0 >= inner.lo[d] - 0.01 && p[d] / 3.0 <= inner.hi[d] + 0.01;
    if (inside && restricted.size() < 5)
      restricted.push_back(c);
  }
  ASSERT_EQ(best.size(), 5u);
  for (std::size_t k = 0; k < 5; ++k)
  {
    EXPECT_EQ(best[k].pose.centerMm, restricted[k].pose.centerMm) << k;
    EXPECT_NEAR(best[k].score, restricted[k].score, 1e-6f) << k;
  }
}

TEST(RegionSearch, SearchBoxFollowsTheCovarianceAndClips)
{
  const auto      grid = RandomGrid(30, 30, 30, 2.0); // origin 0, spacing 2 mm
  PredictedCentre c;
  c.centerMm = { { 30, 30, 30 } };                                          // voxel 15
  c.covariance = { { { { 4, 0, 0 } }, { { 0, 1, 0 } }, { { 0, 0, 0 } } } }; // sd 2 mm, 1 mm, 0
  const GridBox box = SearchBoxOnGrid(c, 3.0, 2.0, grid);
  // x: (3 x 2 + 2) / 2 = 4 voxels; y: (3 x 1 + 2) / 2 = 2.5; z: 1.
  EXPECT_EQ(box.lo, (std::array<long, 3>{ { 11, 12, 14 } }));
  EXPECT_EQ(box.hi, (std::array<long, 3>{ { 19, 18, 16 } }));
  c.centerMm = { { 2, 30, 300 } };
  const GridBox clipped = SearchBoxOnGrid(c, 3.0, 2.0, grid);
  EXPECT_EQ(clipped.lo[0], 0);
  EXPECT_EQ(clipped.Voxels(), 0); // beyond the far z face: nothing to search
}

/** A two-structure detector with tiny random stages (no training) and a prior of "small" given "large". */
DetectorModel
TinyNetworkModel()
{
  auto steerable = [](std::uint64_t seed)
  {
    RandomPBTModelOptions o;
    o.depth = 1;
    o.learnersPerNode = 2;
    o.numFeatures = 4;
    o.numBins = 4;
    o.sampleBox = { { 3, 3, 3 } };
    o.seed = seed;
    PBTModel tree = MakeRandomPBTModel(o);
    tree.featureFamily = PBTFeatureFamily::Steerable;
    tree.features.clear();
    tree.steerable.grid = SteerableGrid{ 3, 1.0f };
    tree.steerable.pyramid = SteerablePyramidOptions{ { 2.0 }, {} };
    tree.steerable.features = RandomSteerableFeatures(tree.steerable.grid, 1, 4, seed);
    tree.CompactFeatures();
    return tree;
  };
  DetectorModel model;
  for (int s = 0; s < 2; ++s)
  {
    StructureDetector d;
    d.name = s == 0 ? "large" : "small";
    d.label = s + 2;
    d.position = RandomPositionModel();
    d.position.tree.CompactFeatures();
    d.candidates = 3;
    d.orientation = steerable(32 + s);
    d.scale = steerable(40 + s);
    d.orientations = { Rotation(0, 0, 0), Rotation(0, 0, 90) };
    d.meanSizeMm = { { 6, 4, 3 } };
    d.orientationKeep = 2;
    d.sizesMm = { { { 6, 4, 3 } }, { { 7, 5, 3 } } };
    d.aggregateCount = 2;
    model.structures.push_back(d);
  }
  SpatialPrior prior;
  prior.child = "small";
  prior.parent = "large";
  prior.subjects = 5;
  prior.offsetMm = { { { 10, -4, 2 } }, { { { { 4, 1, 0 } }, { { 1, 2, 0 } }, { { 0, 0, 1 } } } } };
  prior.relativeAxes = Rotation(0, 0, 20);
  prior.rotationCovariance = { { { { 0.01, 0, 0 } }, { { 0, 0.01, 0 } }, { { 0, 0, 0.02 } } } };
  prior.sizeRatio = { { { 0.6, 0.7, 0.8 } }, { { { { 0.01, 0, 0 } }, { { 0, 0.01, 0 } }, { { 0, 0, 0.01 } } } } };
  model.network.push_back(prior);
  return model;
}

TEST(DetectorModelNetwork, RoundTripAndVersion1)
{
  const DetectorModel model = TinyNetworkModel();
  ValidateDetectorModel(model, "tiny");
  const nlohmann::json doc = DetectorModelToJson(model);
  EXPECT_EQ(doc["version"], 2);
  ASSERT_EQ(doc["network"].size(), 1u);
  const DetectorModel back = DetectorModelFromJson(doc, "d.json");
  EXPECT_EQ(DetectorModelToJson(back), doc);
  ASSERT_EQ(back.network.size(), 1u);
  EXPECT_EQ(back.network[0].offsetMm.covariance, model.network[0].offsetMm.covariance);

  // A version 1 file (before the network): read, every structure a root.
  nlohmann::json old = doc;
  old["version"] = 1;
  old.erase("network");
  const DetectorModel v1 = DetectorModelFromJson(old, "old.json");
  EXPECT_TRUE(v1.network.empty());
  EXPECT_EQ(v1.structures.size(), 2u);
}

TEST(DetectorModelNetwork, DamagedNetworkFieldsAreRejected)
{
  const nlohmann::json good = DetectorModelToJson(TinyNetworkModel());
  auto                 expect = [](const nlohmann::json & doc, const std::string & part)
  {
    const auto message = ErrorOf([&] { DetectorModelFromJson(doc, "d.json"); });
    EXPECT_NE(message.find(part), std::string::npos) << message;
  };
  auto d = good;
  d.erase("network");
  expect(d, "d.json has no field \"network\"");
  d = good;
  d["network"] = 3;
  expect(d, "d.json: \"network\" must be an array");
  d = good;
  d["network"][0]["parent"] = "medium";
  expect(d, "d.json: network[0] (small): structure 'medium' is not a structure of the detector");
  d = good;
  d["network"][0]["parent"] = "small";
  expect(d, "d.json: network[0] (small): structure 'small' is its own parent");
  d = good;
  d["network"].push_back(good["network"][0]);
  d["network"][1]["structure"] = "large";
  d["network"][1]["parent"] = "small";
  expect(d, "d.json: network: the network has a cycle through structure 'large'");
  d = good;
  d["network"].push_back(good["network"][0]);
  expect(d, "d.json: network: structure 'small' has two parents");
  d = good;
  d["network"][0]["offsetMm"]["covariance"][0][0] = -4;
  expect(d, "d.json: network[0] (small): \"offsetMm\".\"covariance\": the covariance must be positive semi-definite");
  d = good;
  d["network"][0]["offsetMm"]["covariance"][0][1] = 3;
  expect(d, "d.json: network[0] (small): \"offsetMm\".\"covariance\": the covariance must be symmetric");
  d = good;
  d["network"][0]["relativeAxes"]["mean"][0] = { 2, 0, 0 };
  expect(d, "d.json: network[0] (small): \"relativeAxes\".\"mean\" must be a rotation");
  d = good;
  d["network"][0]["sizeRatio"]["mean"][1] = 0;
  expect(d, "d.json: network[0] (small): \"sizeRatio\".\"mean\" must be > 0");
  d = good;
  d["network"][0]["search"]["sigmas"] = "wide";
  expect(d, "d.json: network[0] (small): \"search\": \"sigmas\" must be a finite number");
  d = good;
  d["network"][0]["subjects"] = 1;
  expect(d, "d.json: network[0] (small): \"subjects\" must be an integer >= 2");
  d = good;
  d["network"][0]["frame"] = "world";
  expect(d, "d.json: network[0] (small): \"frame\" must be \"parent\" or \"parentLongAxis\"");
  d = good;
  d["network"][0].erase("offsetMm");
  expect(d, "d.json: network[0] (small) has no field \"offsetMm\"");
}

// DetectAll on the tiny model: the parent first; the child's region search when the parent is found;
// the whole volume, said so, when it is not.
TEST(DetectorModelNetwork, DetectAllSaysWhereEachStructureWasSearched)
{
  const DetectorModel model = TinyNetworkModel();
  const auto          image = RandomGrid(40, 40, 40, 2.0);
  DetectionOptions    options;
  options.backend = ResolveBackend(BackendRequest::Parse("cpu"));
  options.cpuThreads = 1;
  options.thresholdOverride = 0.0; // every structure found
  {
    PoseDetector detector(model, options);
    detector.SetImage(image, "grid");
    const auto all = detector.DetectAll();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0].searched, "whole volume");
    ASSERT_TRUE(all[0].result.found);
    EXPECT_EQ(all[1].searched, "region predicted from parent large");
    EXPECT_EQ(all[1].parent, "large");
    EXPECT_GT(all[1].box.Voxels(), 0);
    EXPECT_LT(all[1].box.Voxels(), all[1].gridVoxels);
    EXPECT_LT(all[1].timings.positionVoxels, all[0].timings.positionVoxels);
  }
  options.thresholdOverride = 1.0; // nothing reaches it: the parent is not found
  PoseDetector detector(model, options);
  detector.SetImage(image, "grid");
  const auto all = detector.DetectAll();
  EXPECT_FALSE(all[0].result.found);
  EXPECT_EQ(all[1].searched, "whole volume (parent large not found)");
  EXPECT_EQ(all[1].timings.positionVoxels, all[0].timings.positionVoxels);
}

} // namespace
