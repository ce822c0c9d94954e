// `canopy train-shape` end to end on ellipsoid label maps written here: a model and a report that
// read back, and clear errors naming the subject for an empty label or a label in pieces, with no
// output left behind.
#include "../../../Modules/ShapeModel/test/ShapeTestPhantoms.h" // ellipsoid label maps
#include "canopyShapeModelFile.h"
#include "canopyTesting.h"

#include "itkImageFileWriter.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/wait.h>

namespace
{
namespace fs = std::filesystem;

using canopy::testing::CommandRun;

CommandRun
Canopy(const std::string & arguments, const std::string & name)
{
  return canopy::testing::RunCommand(CANOPY_EXECUTABLE, arguments, name);
}

std::string
WriteLabels(const canopy::LabelImage * labels, const std::string & name)
{
  using Labels8 = itk::Image<unsigned char, 3>;
  auto out = Labels8::New();
  out->CopyInformation(labels);
  out->SetRegions(labels->GetLargestPossibleRegion());
  out->Allocate();
  for (itk::SizeValueType i = 0; i < labels->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    out->GetBufferPointer()[i] = static_cast<unsigned char>(labels->GetBufferPointer()[i]);
  const std::string path = canopy::testing::OutputPath(name);
  auto              writer = itk::ImageFileWriter<Labels8>::New();
  writer->SetInput(out);
  writer->SetFileName(path);
  writer->Update();
  return path;
}

class TrainShapeCommand : public ::testing::Test
{
protected:
  void SetUp() override
  {
    std::mt19937_64 random(12);
    arguments = "train-shape";
    for (int s = 0; s < 4; ++s)
      arguments +=
        " --label " + WriteLabels(canopy::testing::MakeEllipsoidLabels(canopy::testing::RandomEllipsoid(random), 5),
                                  "shape-cli-" + std::to_string(s) + ".nii.gz");
    arguments += " --structure blob=5 --levels 100,200 --passes 1 --threads 1 --quiet";
  }
  std::string arguments;
};

TEST_F(TrainShapeCommand, WritesAModelAndReportThatReadBack)
{
  const std::string model = canopy::testing::OutputPath("shape-cli-model.json");
  const std::string report = canopy::testing::OutputPath("shape-cli-report.json");
  fs::remove(model);
  fs::remove(report);
  const auto run = Canopy(arguments + " --leave-one-out 2 --out " + model + " --report " + report, "train-shape-ok");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto   file = canopy::LoadShapeModelFile(model);
  const auto & blob = file.Structure("blob");
  EXPECT_EQ(blob.label, 5);
  EXPECT_EQ(blob.levels.size(), 2u);
  nlohmann::json r;
  std::ifstream(report) >> r;
  ASSERT_EQ(r["structures"].size(), 1u);
  EXPECT_EQ(r["structures"][0]["subjects"].size(), 4u);
  EXPECT_EQ(r["structures"][0]["leaveOneOutMeanVertexErrorMm"].size(), 2u);
  EXPECT_NE(run.out.find("blob (label 5): 4 subjects"), std::string::npos) << run.out;
}

TEST_F(TrainShapeCommand, EmptyLabelAndLabelInPiecesNameTheSubject)
{
  const std::string model = canopy::testing::OutputPath("shape-cli-never.json");
  fs::remove(model);
  auto              empty = canopy::testing::MakeEllipsoidLabels(canopy::testing::Ellipsoid(), 2); // label 2, not 5
  const std::string emptyPath = WriteLabels(empty, "shape-cli-empty.nii.gz");
  auto              run = Canopy(arguments + " --label " + emptyPath + " --out " + model, "train-shape-empty");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find(emptyPath + " (structure blob): no voxel has label 5"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(model));

  auto pieces = canopy::testing::MakeEllipsoidLabels(canopy::testing::Ellipsoid(), 5);
  for (int z = 2; z < 6; ++z)
    for (int y = 2; y < 6; ++y)
      for (int x = 2; x < 6; ++x)
      {
        canopy::LabelImage::IndexType index;
        index[0] = x;
        index[1] = y;
        index[2] = z;
        pieces->SetPixel(index, 5);
      }
  const std::string piecesPath = WriteLabels(pieces, "shape-cli-pieces.nii.gz");
  run = Canopy(arguments + " --label " + piecesPath + " --out " + model, "train-shape-pieces");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find(piecesPath + " (structure blob): label 5 is in 2 pieces"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(model));
}
} // namespace
