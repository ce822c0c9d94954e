// `canopy train-forest` / `predict-forest` with pose channels (issue 13) end to end: volumes of pure
// noise holding a box at a random place, so only the box's frame can tell where it is. Training frames
// from the label maps (--reference-label), held-out and predicted volumes' frames from poses.json files
// (here the boxes' own poses, as a perfect detector would write them): pose channels find the box,
// image-box position channels cannot (both with a "zero" channel, which makes coordinates absolute). The model records
// its reference; predicting without one, or options that do not fit, are one-line errors and leave no output.
#include "canopyStructurePose.h"
#include "canopyTesting.h"

#include "itkImageFileWriter.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>

namespace
{
namespace fs = std::filesystem;
using Volume = itk::Image<float, 3>;
using canopy::testing::CommandRun;

CommandRun
Canopy(const std::string & arguments, const std::string & name)
{
  return canopy::testing::RunCommand(CANOPY_EXECUTABLE, arguments, name);
}

constexpr int kSize = 20;

void
Write(const Volume * v, const std::string & path)
{
  fs::create_directories(fs::path(path).parent_path());
  auto writer = itk::ImageFileWriter<Volume>::New();
  writer->SetInput(v);
  writer->SetFileName(path);
  writer->Update();
}

Volume::Pointer
NewVolume()
{
  auto v = Volume::New();
  v->SetRegions(Volume::SizeType{ { kSize, kSize, kSize } });
  const double origin[3] = { -10.0, 4.0, 2.5 };
  v->SetOrigin(origin);
  v->Allocate();
  v->FillBuffer(0.0f);
  return v;
}

struct Cases
{
  std::string              root, images, poses;
  std::vector<std::string> imagePaths, labelPaths;
};

/** Eight noise volumes, each with a 7 x 4 x 3 box (label 1) at a random place; their poses.json. */
const Cases &
MakeCases()
{
  static Cases cases = []
  {
    Cases c;
    c.root = canopy::testing::OutputPath("forest-pose-cases");
    c.images = c.root + "/images";
    c.poses = c.root + "/poses";
    fs::remove_all(c.root);
    fs::create_directories(c.poses);
    std::mt19937_64                 random(5);
    std::normal_distribution<float> noise(50.0f, 10.0f);
    std::uniform_int_distribution<> corner(1, kSize - 9);
    for (int s = 0; s < 8; ++s)
    {
      auto        image = NewVolume(), label = NewVolume();
      const int   x0 = corner(random), y0 = corner(random), z0 = corner(random);
      float *     in = image->GetBufferPointer();
      float *     lab = label->GetBufferPointer();
      std::size_t i = 0;
      for (int z = 0; z < kSize; ++z)
        for (int y = 0; y < kSize; ++y)
          for (int x = 0; x < kSize; ++x, ++i)
          {
            in[i] = noise(random);
            lab[i] = x >= x0 && x < x0 + 7 && y >= y0 && y < y0 + 4 && z >= z0 && z < z0 + 3 ? 1.0f : 0.0f;
          }
      const std::string name = "case" + std::to_string(s);
      c.imagePaths.push_back(c.images + "/" + name + ".nii.gz");
      c.labelPaths.push_back(c.root + "/labels/" + name + ".nii.gz");
      Write(image, c.imagePaths.back());
      Write(label, c.labelPaths.back());
      auto map = canopy::PoseLabelMap::New();
      map->CopyInformation(label);
      map->SetRegions(label->GetLargestPossibleRegion());
      map->Allocate();
      for (std::size_t k = 0; k < i; ++k)
        map->GetBufferPointer()[k] = int(lab[k]);
      canopy::DetectedStructure box;
      box.name = "box";
      box.found = true;
      box.score = 1.0;
      box.pose = canopy::PoseFromLabel(map, 1, name);
      canopy::WritePosesFile({ box }, c.poses + "/" + name + ".poses.json");
    }
    return c;
  }();
  return cases;
}

std::string
Pairs(const Cases & c)
{
  std::string a;
  for (std::size_t i = 0; i < c.imagePaths.size(); ++i)
    a += " --image " + c.imagePaths[i] + " --label " + c.labelPaths[i];
  return a;
}

const std::string kForest =
  " --trees 4 --depth 10 --features 60 --max-offset 4 --max-box 3 --samples-per-image 600 --sampling balanced"
  " --test-fraction 0.25 --split-seed 1 --classes 2 --device cpu --quiet";

double
HeldOutDice(const std::string & report)
{
  return nlohmann::json::parse(std::ifstream(report))["dice"]["1"]["mean"].get<double>();
}

TEST(ForestPoseCommand, PoseChannelsFindWhatTheImageBoxCannot)
{
  const Cases &     c = MakeCases();
  const std::string out = canopy::testing::OutputPath("pose-model.json"), report = out + ".report.json";
  const CommandRun  pose = Canopy("train-forest" + Pairs(c) + kForest +
                                   " --channels intensity,pose,zero --reference-structure box --reference-label 1"
                                    " --reference-poses " +
                                   c.poses + " --out " + out + " --report " + report,
                                 "train-pose");
  ASSERT_EQ(pose.status, 0) << pose.err;
  const double poseDice = HeldOutDice(report);
  const auto   model = nlohmann::json::parse(std::ifstream(out));
  EXPECT_EQ(model["reference"]["structure"], "box");
  EXPECT_EQ(model["reference"]["training"], "label 1");
  const auto r = nlohmann::json::parse(std::ifstream(report));
  EXPECT_EQ(r["referencePoses"]["train"].size(), 6u);
  EXPECT_EQ(r["referencePoses"]["test"].size(), 2u);
  EXPECT_EQ(r["referencePoses"]["test"][0]["source"], "detected");

  const std::string boxOut = canopy::testing::OutputPath("box-model.json"), boxReport = boxOut + ".report.json";
  const CommandRun  box = Canopy("train-forest" + Pairs(c) + kForest + " --channels intensity,position,zero --out " +
                                  boxOut + " --report " + boxReport,
                                "train-box");
  ASSERT_EQ(box.status, 0) << box.err;
  const double boxDice = HeldOutDice(boxReport);
  EXPECT_GT(poseDice, 0.8) << "image-box position: " << boxDice;
  EXPECT_GT(poseDice, boxDice + 0.3);

  // The same model as an auto-context cascade of 2 stages.
  const std::string cascade = canopy::testing::OutputPath("pose-cascade.json");
  const CommandRun  two =
    Canopy("train-forest" + Pairs(c) + kForest +
             " --channels intensity,pose,zero --reference-structure box --reference-label 1"
             " --reference-poses " +
             c.poses + " --auto-context 2 --context-folds 2 --out " + cascade + " --report " + cascade + ".report.json",
           "train-cascade");
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_GT(HeldOutDice(cascade + ".report.json"), 0.8);
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(cascade))["reference"]["structure"], "box");

  // Prediction: one volume with its poses file, a batch with the folder; without: an error, no output.
  for (const std::string & m : { out, cascade })
  {
    const std::string labels = canopy::testing::OutputPath("predicted.nii.gz");
    fs::remove(labels);
    const CommandRun missing =
      Canopy("predict-forest --model " + m + " --input " + c.imagePaths[0] + " --output " + labels, "no-reference");
    EXPECT_EQ(missing.status, 1);
    EXPECT_NE(missing.err.find("reads pose channels in the frame of structure 'box' (trained on label 1): give "
                               "--reference-poses"),
              std::string::npos)
      << missing.err;
    EXPECT_FALSE(fs::exists(labels));
    const CommandRun one = Canopy("predict-forest --model " + m + " --input " + c.imagePaths[0] + " --output " +
                                    labels + " --reference-poses " + c.poses + "/case0.poses.json --device cpu --quiet",
                                  "predict-one");
    ASSERT_EQ(one.status, 0) << one.err;
    EXPECT_TRUE(fs::exists(labels));
  }
  const std::string batch = canopy::testing::OutputPath("batch");
  const CommandRun  many = Canopy("predict-forest --model " + out + " --inputs " + c.images + " --output-dir " + batch +
                                   " --reference-poses " + c.poses + " --device cpu --quiet",
                                 "predict-batch");
  ASSERT_EQ(many.status, 0) << many.err;
  EXPECT_TRUE(fs::exists(batch + "/case7.nii.gz"));
}

TEST(ForestPoseCommand, OptionsThatDoNotFitAreNamed)
{
  const Cases &     c = MakeCases();
  const std::string out = canopy::testing::OutputPath("never.json");
  const auto        error = [&](const std::string & arguments, const std::string & expected)
  {
    const CommandRun run = Canopy(arguments, "error");
    EXPECT_EQ(run.status, 1) << arguments;
    EXPECT_NE(run.err.find(expected), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find(".cxx:"), std::string::npos) << "the message names a source file: " << run.err;
    EXPECT_FALSE(fs::exists(out));
  };
  const std::string train = "train-forest" + Pairs(c) + " --out " + out + " --quiet";
  error(train + " --channels intensity,pose --reference-label 1", "pose channels need --reference-structure NAME");
  error(train + " --channels intensity,pose,zero --reference-structure box",
        "pose channels need the training volumes' reference poses");
  error(train + " --channels intensity,pose,zero --reference-structure box --reference-label 1 --test-fraction 0.25",
        "the held-out volumes' reference poses must be detected");
  error(train + " --channels intensity --reference-structure box --reference-label 1", "has no pose channel");
  error(train + " --channels intensity,pose --reference-structure lesion --reference-poses " + c.poses, "\"lesion\"");
}

} // namespace
