// `canopy train-shape --boundary` and `canopy segment-shape` end to end on ellipsoid phantoms written
// here: a model with boundary classifiers, a held-out ellipsoid segmented from a label-map pose and
// from a poses.json (label map on the input grid, mesh with correspondence ids, report), and the bad
// inputs: both or neither initialisation, a pose outside the volume, a structure the poses file lacks,
// a model without boundary classifiers; no output is left behind by a failed run.
#include "../../../Modules/BoundaryRefinement/test/BoundaryTestPhantoms.h"
#include "canopyMeshIO.h"
#include "canopyShapeSegmentationModel.h"
#include "canopyTesting.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include <vtkPointData.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/wait.h>

namespace
{
namespace fs = std::filesystem;
using namespace canopy;

using canopy::testing::CommandRun;

CommandRun
Canopy(const std::string & arguments, const std::string & name)
{
  return canopy::testing::RunCommand(CANOPY_EXECUTABLE, arguments, name);
}

template<typename TImage>
std::string
Write(const TImage * image, const std::string & name)
{
  const std::string path = canopy::testing::OutputPath(name);
  auto              writer = itk::ImageFileWriter<TImage>::New();
  writer->SetInput(image);
  writer->SetFileName(path);
  writer->Update();
  return path;
}

LabelImage::Pointer
ReadLabels(const std::string & path)
{
  return itk::ReadImage<LabelImage>(path);
}

double
Dice(const LabelImage * a, const LabelImage * b, int label)
{
  std::int64_t both = 0, na = 0, nb = 0;
  for (std::size_t k = 0; k < a->GetLargestPossibleRegion().GetNumberOfPixels(); ++k)
  {
    const bool x = a->GetBufferPointer()[k] == label, y = b->GetBufferPointer()[k] == label;
    both += x && y;
    na += x;
    nb += y;
  }
  return 2.0 * double(both) / double(na + nb);
}

class SegmentShapeCommand : public ::testing::Test
{
protected:
  static void SetUpTestSuite()
  {
    std::mt19937_64 random(31);
    std::string     arguments = "train-shape --boundary";
    for (int s = 0; s < 6; ++s)
    {
      const auto e = canopy::testing::RandomEllipsoid(random);
      arguments += " --label " + Write(canopy::testing::MakeEllipsoidLabels(e, 5).GetPointer(),
                                       "segment-shape-label-" + std::to_string(s) + ".nii.gz");
      arguments += " --image " + Write(boundarytest::MakeEllipsoidImage(e, 40 + s).GetPointer(),
                                       "segment-shape-image-" + std::to_string(s) + ".nii.gz");
    }
    heldOut = canopy::testing::RandomEllipsoid(random);
    truth = canopy::testing::MakeEllipsoidLabels(heldOut, 5);
    truthPath = Write(truth.GetPointer(), "segment-shape-truth.nii.gz");
    input = Write(boundarytest::MakeEllipsoidImage(heldOut, 99).GetPointer(), "segment-shape-input.nii.gz");
    model = canopy::testing::OutputPath("segment-shape-model.json");
    fs::remove(model);
    const auto run = Canopy(arguments +
                              " --structure blob=5 --levels 150,300 --passes 1 --threads 2 --quiet"
                              " --boundary-search 6,3 --boundary-scale 2,1 --boundary-vertices 120"
                              " --boundary-features 500 --boundary-depth 3 --device cpu --out " +
                              model,
                            "segment-shape-train");
    trainStatus = run.status;
    trainError = run.err + run.out;
  }
  void                                     SetUp() override { ASSERT_EQ(trainStatus, 0) << trainError; }
  static inline canopy::testing::Ellipsoid heldOut;
  static inline LabelImage::Pointer        truth;
  static inline std::string                truthPath, input, model, trainError;
  static inline int                        trainStatus = -1;
};

TEST_F(SegmentShapeCommand, ModelHoldsBoundaryClassifiersPerLevel)
{
  const auto file = LoadShapeSegmentationModel(model);
  ASSERT_NE(file.Boundary("blob"), nullptr);
  EXPECT_EQ(file.Boundary("blob")->levels.size(), 2u);
  EXPECT_EQ(file.Boundary("blob")->levels[0].searchMm, 6.0);
  EXPECT_EQ(file.Boundary("blob")->levels[1].frameScale, 1.0);
  EXPECT_NO_THROW(LoadShapeModelFile(model)); // plain shape-model readers still read it
  // The phantoms' centres lie within 3 mm of (32, 32, 32) per axis, the volumes' centre is 31.5.
  const Eigen::Vector3d offset = file.Boundary("blob")->offsetFromImageCenterMm;
  EXPECT_LT(offset.cwiseAbs().maxCoeff(), 3.6) << offset.transpose();
  EXPECT_GT(offset.norm(), 1e-6) << "the offset was not stored";
}

TEST_F(SegmentShapeCommand, SegmentsFromALabelPoseAndFromAPosesFile)
{
  const std::string output = canopy::testing::OutputPath("segment-shape-out.nii.gz");
  const std::string mesh = canopy::testing::OutputPath("segment-shape-out.vtk");
  const std::string report = canopy::testing::OutputPath("segment-shape-report.json");
  for (const auto & p : { output, mesh, report })
    fs::remove(p);
  auto run = Canopy("segment-shape --shape " + model + " --input " + input + " --init-label " + truthPath +
                      " --output " + output + " --mesh " + mesh + " --report " + report + " --device cpu",
                    "segment-shape-label");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto labels = ReadLabels(output);
  EXPECT_EQ(labels->GetLargestPossibleRegion(), truth->GetLargestPossibleRegion());
  const double dice = Dice(labels, truth, 5);
  std::cout << "Dice from the label-map pose: " << dice << '\n';
  EXPECT_GT(dice, 0.9);
  const MeshFile read = ReadMesh(mesh);
  ASSERT_NE(read.mesh->GetPointData()->GetArray("CorrespondenceId"), nullptr);
  EXPECT_EQ(read.mesh->GetNumberOfPoints(),
            LoadShapeSegmentationModel(model).shapes.Structure("blob").Finest().Vertices());
  nlohmann::json r;
  std::ifstream(report) >> r;
  EXPECT_EQ(r["fullyAutomatic"], false);
  EXPECT_EQ(r["levels"].size(), 2u);
  EXPECT_NE(r["initialisation"].get<std::string>().find("not fully automatic"), std::string::npos);

  // A detector's poses.json: the truth's centre moved by 3 mm, its axes and sizes.
  const std::string     poses = canopy::testing::OutputPath("segment-shape-poses.json");
  const Eigen::Vector3d centre = heldOut.centre + Eigen::Vector3d(2, -2, 1);
  std::ofstream(poses)
    << "{\"structures\": [{\"name\": \"other\", \"found\": false, \"center_mm\": null, \"axes\": null, "
       "\"size_mm\": null, \"score\": 0.01, \"seconds\": 0.01}, {\"name\": \"blob\", "
       "\"found\": true, \"center_mm\": ["
    << centre(0) << ", " << centre(1) << ", " << centre(2)
    << "], \"axes\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], \"size_mm\": [" << 2 * heldOut.radii(0) << ", "
    << 2 * heldOut.radii(1) << ", " << 2 * heldOut.radii(2) << "], \"score\": 0.8, \"seconds\": 0.01}]}";
  fs::remove(output);
  run = Canopy("segment-shape --shape " + model + " --input " + input + " --pose " + poses + " --output " + output +
                 " --report " + report + " --device cpu",
               "segment-shape-pose");
  ASSERT_EQ(run.status, 0) << run.err;
  const double dicePose = Dice(ReadLabels(output), truth, 5);
  std::cout << "Dice from a poses.json 3 mm off: " << dicePose << '\n';
  EXPECT_GT(dicePose, 0.9);
  std::ifstream(report) >> r;
  EXPECT_EQ(r["fullyAutomatic"], true);
  EXPECT_EQ(r["detectionScore"], 0.8);

  // The volume's centre (the phantoms lie within 3 mm of it): automatic for cropped volumes.
  fs::remove(output);
  run = Canopy("segment-shape --shape " + model + " --input " + input + " --init-image-center --output " + output +
                 " --report " + report + " --device cpu",
               "segment-shape-center");
  ASSERT_EQ(run.status, 0) << run.err;
  const double diceCenter = Dice(ReadLabels(output), truth, 5);
  std::cout << "Dice from the volume's centre: " << diceCenter << '\n';
  EXPECT_GT(diceCenter, 0.9);
  std::ifstream(report) >> r;
  EXPECT_EQ(r["fullyAutomatic"], true);
}

TEST_F(SegmentShapeCommand, BadInputsGiveOneLineErrorsAndNoOutput)
{
  const std::string output = canopy::testing::OutputPath("segment-shape-never.nii.gz");
  fs::remove(output);
  const std::string base = "segment-shape --shape " + model + " --input " + input + " --output " + output;
  auto              expect = [&](const std::string & extra, const std::string & message, const std::string & name)
  {
    const auto run = Canopy(base + " " + extra, name);
    EXPECT_GT(run.status, 0) << name;
    EXPECT_LT(run.status, 128) << name;
    EXPECT_NE(run.err.find(message), std::string::npos) << name << ": " << run.err;
    EXPECT_FALSE(fs::exists(output)) << name;
  };
  expect("", "give exactly one of --pose", "segment-shape-neither");
  const std::string poses = canopy::testing::OutputPath("segment-shape-far.json");
  std::ofstream(poses) << R"({"structures": [{"name": "blob", "found": true, "center_mm": [500, 0, 0],
    "axes": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "size_mm": [30, 20, 16], "score": 0.9, "seconds": 0}]})";
  expect("--pose " + poses + " --init-label " + truthPath, "give exactly one of --pose", "segment-shape-both");
  expect("--init-image-center --init-label " + truthPath, "give exactly one of --pose", "segment-shape-center-label");
  expect("--pose " + poses, "--pose " + poses + ": the initial pose puts blob", "segment-shape-far");
  std::ofstream(poses) << R"({"structures": [{"name": "liver", "found": true, "center_mm": [32, 32, 32],
    "axes": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "size_mm": [30, 20, 16], "score": 0.9, "seconds": 0}]})";
  expect("--pose " + poses, "--pose " + poses + ": no structure named \"blob\"", "segment-shape-missing");
  std::ofstream(poses) << R"({"structures": [{"name": "blob", "found": false, "center_mm": null, "axes": null,
    "size_mm": null, "score": 0.01, "seconds": 0}]})";
  expect("--pose " + poses, "--pose " + poses + ": the detector did not find blob", "segment-shape-not-found");
  std::ofstream(poses) << R"({"structures": [{"name": "blob", "found": true}]})";
  expect("--pose " + poses, poses + ": structures[0] (blob)", "segment-shape-malformed");
  expect("--init-label " + truthPath + " --init-label-value 9", "label 9 is absent", "segment-shape-label-absent");

  // A plain shape model (no boundary classifiers).
  const std::string plain = canopy::testing::OutputPath("segment-shape-plain.json");
  ShapeModelFile    file = LoadShapeSegmentationModel(model).shapes;
  SaveShapeModelFile(file, plain);
  const auto run = Canopy("segment-shape --shape " + plain + " --input " + input + " --init-label " + truthPath +
                            " --output " + output,
                          "segment-shape-plain");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("no structure has boundary classifiers"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(output));
}
} // namespace
