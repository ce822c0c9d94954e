// `canopy segment` end to end on a small synthetic structure (issue 8, defect 6): train-pbt stores a
// recommended lambda and segment uses it (the old fixed lambda = 1 mm erased the structure); an empty
// result gives a label map, an empty mesh and a warning (exit 0); a failed output leaves none behind.
#include "canopyTesting.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace
{
namespace fs = std::filesystem;
using Mask = itk::Image<unsigned char, 3>;

using canopy::testing::CommandRun;

CommandRun
Canopy(const std::string & arguments, const std::string & name)
{
  return canopy::testing::RunCommand(CANOPY_EXECUTABLE, arguments, name);
}

template<typename TImage>
void
Write(const TImage * image, const std::string & path)
{
  auto writer = itk::ImageFileWriter<TImage>::New();
  writer->SetInput(image);
  writer->SetFileName(path);
  writer->Update();
}

Mask::Pointer
ReadMask(const std::string & path)
{
  auto reader = itk::ImageFileReader<Mask>::New();
  reader->SetFileName(path);
  reader->Update();
  return reader->GetOutput();
}

std::int64_t
Count(const Mask * m)
{
  std::int64_t n = 0;
  for (itk::SizeValueType i = 0; i < m->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    n += m->GetBufferPointer()[i] != 0;
  return n;
}

double
Dice(const Mask * a, const Mask * b)
{
  std::int64_t both = 0;
  for (itk::SizeValueType i = 0; i < a->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    both += a->GetBufferPointer()[i] && b->GetBufferPointer()[i];
  const auto sum = Count(a) + Count(b);
  return sum ? 2.0 * both / sum : 1.0;
}

// Three training balls of radius 2.8 mm and one test ball, written once; a model trained once.
class SegmentCommand : public ::testing::Test
{
protected:
  static void SetUpTestSuite()
  {
    // One folder per process: ctest runs each test of this suite as its own process, in parallel.
    s_Dir = canopy::testing::OutputPath("segment-command-" + std::to_string(::getpid()));
    fs::create_directories(s_Dir);
    const double centres[4][3] = { { 10, 12, 11 }, { 17, 15, 12 }, { 13, 17, 10 }, { 14, 13, 12 } };
    std::string  pairs;
    for (int k = 0; k < 4; ++k)
    {
      auto ball = canopy::testing::MakeBallPhantom(28, 28, 24, centres[k], 2.8, 100.0f, 20.0f, 12.0f, k + 1);
      const std::string image = s_Dir + "/ball" + std::to_string(k) + ".nii.gz";
      const std::string label = s_Dir + "/ball" + std::to_string(k) + "-label.nii.gz";
      Write(ball.image.GetPointer(), image);
      Write(ball.mask.GetPointer(), label);
      if (k < 3)
        pairs += " --image " + image + " --label " + label;
    }
    s_Model = s_Dir + "/model.json";
    fs::remove(s_Model);
    s_Train = Canopy("train-pbt" + pairs + " --out " + s_Model +
                       " --spacing 1 --box-mm 10 --features 200 --depth 3 --learners 8 --candidates 50 --min-samples 50"
                       " --positives 100 --negatives 300 --near-boundary-mm 4 --device cpu --quiet",
                     "train");
  }

  void SetUp() override { ASSERT_EQ(s_Train.status, 0) << s_Train.err; }

  static std::string Input() { return s_Dir + "/ball3.nii.gz"; }
  static std::string Truth() { return s_Dir + "/ball3-label.nii.gz"; }
  static std::string Out(const std::string & name) { return s_Dir + "/" + name; }

  static inline std::string s_Dir, s_Model;
  static inline CommandRun  s_Train;
};

TEST_F(SegmentCommand, ModelLambdaKeepsTheSmallStructure)
{
  std::ifstream  in(s_Model);
  nlohmann::json model = nlohmann::json::parse(in);
  ASSERT_TRUE(model.contains("regularization")) << "train-pbt stores no recommended lambda";
  const double lambda = model["regularization"]["lambda"].get<double>();
  EXPECT_LT(lambda, 1.0);

  const std::string labels = Out("model-lambda.nii.gz"), report = Out("model-lambda.json");
  const CommandRun  run = Canopy("segment --model " + s_Model + " --input " + Input() + " --output " + labels +
                                  " --report " + report + " --device cpu --quiet",
                                "model-lambda");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_GT(Dice(ReadMask(labels), ReadMask(Truth())), 0.6);
  const auto parameters = nlohmann::json::parse(std::ifstream(report))["parameters"];
  EXPECT_EQ(parameters["lambda"].get<double>(), lambda);
  EXPECT_EQ(parameters["lambdaSource"], "model");
  EXPECT_EQ(run.err.find("warning"), std::string::npos) << run.err;
}

TEST_F(SegmentCommand, EmptyResultGivesLabelsEmptyMeshAndWarnings)
{
  const std::string labels = Out("lambda1.nii.gz"), mesh = Out("lambda1.vtk"), report = Out("lambda1.json");
  for (const auto & f : { labels, mesh, report })
    fs::remove(f);
  const CommandRun run = Canopy("segment --model " + s_Model + " --input " + Input() + " --output " + labels +
                                  " --mesh " + mesh + " --lambda 1 --report " + report + " --device cpu --quiet",
                                "lambda1");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(Count(ReadMask(labels)), 0);
  EXPECT_NE(run.err.find("warning: the graph cut (lambda 1 mm, --lambda) kept 0 of the"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("warning: the segmentation is empty"), std::string::npos) << run.err;
  ASSERT_TRUE(fs::exists(mesh));
  const auto json = nlohmann::json::parse(std::ifstream(report));
  EXPECT_EQ(json["mesh"]["triangles"], 0);
  EXPECT_EQ(json["parameters"]["lambdaSource"], "--lambda");
  EXPECT_GT(json["graphCut"]["voxelsAtLeastHalf"].get<std::int64_t>(), 0);
}

TEST_F(SegmentCommand, FailedOutputLeavesNoOutputBehind)
{
  const std::string labels = Out("orphan.nii.gz"), probability = Out("orphan-probability.nii.gz");
  fs::remove(labels);
  fs::remove(probability);
  const CommandRun run =
    Canopy("segment --model " + s_Model + " --input " + Input() + " --output " + labels + " --probability " +
             probability + " --mesh " + Out("no-such-folder/mesh.vtk") + " --device cpu --quiet",
           "orphan");
  EXPECT_GT(run.status, 0);
  EXPECT_LT(run.status, 126);
  // Refused by the up-front output checks (the folder does not exist) or when the staged mesh is written:
  // either way the command names the mesh and leaves no label or probability map behind.
  EXPECT_NE(run.err.find("--mesh " + Out("no-such-folder/mesh.vtk") + ": "), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(labels));
  EXPECT_FALSE(fs::exists(probability));
  for (const auto & entry : fs::directory_iterator(s_Dir))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();
}

} // namespace
