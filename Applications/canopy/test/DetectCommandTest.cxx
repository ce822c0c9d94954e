// `canopy train-detector`, `detect` and `evaluate-poses` end to end on synthesized phantoms written
// here (Modules/PoseDetection/test/PoseTestPhantoms.h): a detector, poses.json in the issue's format,
// Slicer markups, the oriented boxes as a VTK mesh, a PNG snapshot and a report that read back, pose
// errors, centre refinement on by default; and bad input (a label missing from a training map, a damaged
// model, a constant volume, a poses file without the structure, bad output names) as one-line errors
// naming the file, with no output left behind.
#include "../../../Modules/PoseDetection/test/PoseTestPhantoms.h"
#include "canopyDetectorModelFile.h"
#include "canopyMeshIO.h"
#include "canopyTesting.h"

#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkFieldData.h>
#include <vtkStringArray.h>

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkRGBPixel.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <sys/wait.h>

namespace
{
namespace fs = std::filesystem;
using namespace canopy;
using namespace canopy::posetest;

using canopy::testing::CommandRun;

CommandRun
Canopy(const std::string & arguments, const std::string & name)
{
  return canopy::testing::RunCommand(CANOPY_EXECUTABLE, arguments, name);
}

/** This process's folder, the same for the suite's set-up and its tests: processes running in parallel
 * each write the suite's inputs (a shared folder had one process read a volume another was rewriting). */
fs::path
TestDir()
{
  return fs::path(CANOPY_DETECT_TEST_DIR) / canopy::testing::ProcessFilterPrefix();
}

template<typename TImage>
std::string
Write(const TImage * image, const std::string & name)
{
  const std::string path = (TestDir() / name).string();
  auto              writer = itk::ImageFileWriter<TImage>::New();
  writer->SetInput(image);
  writer->SetFileName(path);
  writer->Update();
  return path;
}

nlohmann::json
ReadJson(const std::string & path)
{
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

/** Subjects written once for every test: 12 training pairs, one held-out pair, and a detector. */
class DetectCommand : public ::testing::Test
{
protected:
  static void SetUpTestSuite()
  {
    fs::create_directories(TestDir());
    // A hierarchical network: the small structure is searched where the large one predicts it.
    s_Network = (TestDir() / "net.json").string();
    std::ofstream(s_Network) << R"({"structures": [{"name": "large"}, {"name": "small", "parent": "large"}]})";
    s_Train = "train-detector --structure large=2 --structure small=3 --threads 2 --quiet";
    for (std::uint64_t seed = 1; seed <= 12; ++seed)
    {
      const auto subject = MakeSubject(seed);
      s_Train += " --image " + Write(subject.image.GetPointer(), "image" + std::to_string(seed) + ".nii.gz");
      s_Train += " --label " + Write(subject.labels.GetPointer(), "label" + std::to_string(seed) + ".nii.gz");
    }
    const auto heldOut = MakeSubject(102);
    s_Image = Write(heldOut.image.GetPointer(), "heldout-image.nii.gz");
    s_Labels = Write(heldOut.labels.GetPointer(), "heldout-label.nii.gz");
    s_Model = (TestDir() / "detector.json").string();
    fs::remove(s_Model);
    s_TrainRun = Canopy(s_Train + " --network " + s_Network + " --out " + s_Model, "train");
  }
  static std::string s_Train, s_Image, s_Labels, s_Model, s_Network;
  static CommandRun  s_TrainRun;

  static std::string Out(const std::string & name) { return (TestDir() / name).string(); }
};
std::string DetectCommand::s_Train, DetectCommand::s_Image, DetectCommand::s_Labels, DetectCommand::s_Model,
  DetectCommand::s_Network;
CommandRun DetectCommand::s_TrainRun;

TEST_F(DetectCommand, TrainDetectAndEvaluate)
{
  ASSERT_EQ(s_TrainRun.status, 0) << s_TrainRun.err;
  EXPECT_EQ(LoadDetectorModel(s_Model).structures.size(), 2u);

  const auto poses = Out("poses.json"), markups = Out("poses.mrk.json"), report = Out("detect-report.json");
  for (const auto & p : { poses, markups, report })
    fs::remove(p);
  const auto detect = Canopy("detect --model " + s_Model + " --input " + s_Image + " --output " + poses +
                               " --markups " + markups + " --report " + report + " --device cpu",
                             "detect");
  ASSERT_EQ(detect.status, 0) << detect.err;
  const auto doc = ReadJson(poses);
  ASSERT_EQ(doc.size(), 1u) << "only \"structures\" at the top";
  ASSERT_EQ(doc["structures"].size(), 2u);
  for (const auto & s : doc["structures"])
  {
    EXPECT_EQ(s.size(), 7u) << s.dump();
    EXPECT_TRUE(s["found"].get<bool>()) << s.dump();
    EXPECT_EQ(s["axes"].size(), 3u);
    EXPECT_EQ(s["center_mm"].size(), 3u);
    EXPECT_EQ(s["size_mm"].size(), 3u);
  }
  const auto slicer = ReadJson(markups);
  ASSERT_EQ(slicer["markups"].size(), 3u); // the centres and two boxes
  EXPECT_EQ(slicer["markups"][0]["type"], "Fiducial");
  EXPECT_EQ(slicer["markups"][0]["controlPoints"].size(), 2u);
  EXPECT_EQ(slicer["markups"][1]["type"], "ROI");
  EXPECT_EQ(slicer["markups"][1]["orientation"].size(), 9u);
  const auto stages = ReadJson(report)["stages"];
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0]["searched"], "whole volume");
  EXPECT_EQ(stages[1]["searched"], "region predicted from parent large");
  EXPECT_LT(stages[1]["searchBox"]["voxels"].get<double>(), stages[1]["searchBox"]["gridVoxels"].get<double>());
  EXPECT_EQ(LoadDetectorModel(s_Model).network.size(), 1u);

  const auto errors = Out("errors.json");
  fs::remove(errors);
  const auto evaluate = Canopy("evaluate-poses --test " + poses + " --reference " + s_Labels +
                                 " --structure large=2 --structure small=3 --json " + errors,
                               "evaluate");
  ASSERT_EQ(evaluate.status, 0) << evaluate.err;
  const auto e = ReadJson(errors);
  ASSERT_EQ(e["structures"].size(), 2u);
  for (const auto & s : e["structures"])
  {
    EXPECT_LE(s["centerErrorMm"].get<double>(), 4.0) << s.dump();
    EXPECT_LE(s["orientationErrorDegrees"].get<double>(), 25.0) << s.dump();
    EXPECT_LE(s["worstSizeErrorPercent"].get<double>(), 25.0) << s.dump();
  }
  EXPECT_EQ(e["summary"]["notFound"], 0);
}

/** A poses file without the seconds each structure took (the only field that differs between runs). */
nlohmann::json
PosesWithoutSeconds(const std::string & path)
{
  auto doc = ReadJson(path);
  for (auto & s : doc["structures"])
    s.erase("seconds");
  return doc;
}

// detect --inputs FOLDER --output-dir DIR: each volume's poses equal those of detecting it alone; a
// broken volume is reported and skipped, the run exits non-zero; --markups is refused in a batch.
TEST_F(DetectCommand, BatchEqualsOneByOneAndSkipsABrokenVolume)
{
  ASSERT_EQ(s_TrainRun.status, 0) << s_TrainRun.err;
  const fs::path folder = Out("batch-in"), outputs = Out("batch-out");
  fs::remove_all(folder);
  fs::remove_all(outputs);
  fs::create_directories(folder);
  fs::copy_file(s_Image, folder / "a.nii.gz");
  fs::copy_file(Out("image3.nii.gz"), folder / "b.nii.gz");
  std::ofstream(folder / "broken.nii.gz") << "not a volume";
  const auto report = Out("batch-report.json");
  const auto batch = Canopy("detect --model " + s_Model + " --inputs " + folder.string() + " --output-dir " +
                              outputs.string() + " --report " + report + " --device cpu --quiet",
                            "detect-batch");
  EXPECT_EQ(batch.status, 1) << batch.err;
  EXPECT_NE(batch.err.find("1 of 3 volumes failed"), std::string::npos) << batch.err;
  EXPECT_FALSE(fs::exists(outputs / "broken.poses.json"));
  EXPECT_EQ(ReadJson(report)["summary"]["ok"], 2);
  for (const std::string name : { "a", "b" })
  {
    const auto alone = Out(name + "-alone.poses.json");
    const auto run = Canopy("detect --model " + s_Model + " --input " + (folder / (name + ".nii.gz")).string() +
                              " --output " + alone + " --device cpu --quiet",
                            "detect-alone-" + name);
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(PosesWithoutSeconds(alone), PosesWithoutSeconds((outputs / (name + ".poses.json")).string())) << name;
  }
  const auto markups = Canopy("detect --model " + s_Model + " --inputs " + folder.string() + " --output-dir " +
                                outputs.string() + " --markups " + Out("never.mrk.json"),
                              "detect-batch-markups");
  EXPECT_NE(markups.status, 0);
  EXPECT_NE(markups.err.find("--markups: not with --inputs"), std::string::npos) << markups.err;
}

// `augment --keep-label-values` keeps an atlas' values (the demo trains detectors on AAL this way).
TEST_F(DetectCommand, AugmentKeepsLabelValues)
{
  const auto image = Out("image1.nii.gz"), labels = Out("label1.nii.gz");
  const auto outImage = Out("augmented.nii.gz"), outLabels = Out("augmented-labels.nii.gz");
  const auto run = Canopy("augment --image " + image + " --label " + labels +
                            " --keep-label-values --seed 3 --out-image " + outImage + " --out-label " + outLabels,
                          "augment");
  ASSERT_EQ(run.status, 0) << run.err;
  auto reader = itk::ImageFileReader<itk::Image<unsigned char, 3>>::New();
  reader->SetFileName(outLabels);
  reader->Update();
  std::set<int> values;
  const auto *  out = reader->GetOutput();
  for (itk::SizeValueType i = 0; i < out->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    values.insert(out->GetBufferPointer()[i]);
  EXPECT_EQ(values, (std::set<int>{ 0, kHead, kLarge, kSmall }));
  const auto both =
    Canopy("augment --image " + image + " --label " + labels + " --keep-label-values --positive-label 2 --out-image " +
             Out("never.nii.gz") + " --out-label " + Out("never-labels.nii.gz"),
           "augment-both");
  EXPECT_NE(both.status, 0);
  EXPECT_NE(both.err.find("--keep-label-values excludes --positive-label"), std::string::npos) << both.err;
  EXPECT_FALSE(fs::exists(Out("never.nii.gz")));
}

// A bad network file stops train-detector before any volume is read: exit code, message, no output.
TEST_F(DetectCommand, BadNetworkFilesAreErrorsNamingTheFileAndStructure)
{
  const auto                                             out = Out("never-network-detector.json");
  const std::vector<std::pair<std::string, std::string>> cases{
    { R"({"structures": [{"name": "large", "parent": "small"}, {"name": "small", "parent": "large"}]})",
      "cyclic-net.json: the network has a cycle through structure 'large' (large -> small -> large; parent -> child)" },
    { R"({"structures": [{"name": "small", "parent": "brainstem"}]})",
      "unknown-net.json: structure 'small' has parent 'brainstem', which is not a structure of the network" },
    { R"({"structures": [{"name": "medium"}]})",
      "untrained-net.json: structure 'medium' is not trained (give it with --structure NAME=LABEL)" },
    { R"({"structures": [{"name": "large"}, {"name": "large"}]})",
      "duplicate-net.json: structure 'large' is listed twice" },
    { R"({"structures": [{"name": "large"})", "truncated-net.json: not valid JSON" }
  };
  for (const auto & [text, message] : cases)
  {
    const std::string name = message.substr(0, message.find(':'));
    const auto        network = Out(name);
    std::ofstream(network) << text;
    fs::remove(out);
    const auto run = Canopy(s_Train + " --network " + network + " --out " + out, name);
    EXPECT_NE(run.status, 0) << name;
    EXPECT_LT(run.status, 128) << name;
    EXPECT_NE(run.err.find(message), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(out)) << name;
  }
}

// detect --ignore-network searches every structure on the whole volume (the comparison without network).
TEST_F(DetectCommand, IgnoreNetworkSearchesTheWholeVolume)
{
  ASSERT_EQ(s_TrainRun.status, 0) << s_TrainRun.err;
  const auto poses = Out("poses-ignore.json"), report = Out("detect-ignore-report.json");
  const auto run = Canopy("detect --model " + s_Model + " --input " + s_Image + " --output " + poses + " --report " +
                            report + " --device cpu --ignore-network",
                          "detect-ignore");
  ASSERT_EQ(run.status, 0) << run.err;
  for (const auto & stage : ReadJson(report)["stages"])
    EXPECT_EQ(stage["searched"], "whole volume") << stage.dump();
}

// The network's prior in detect: the report says the child was detected under it, with its options;
// bad weights and modes are errors naming the option, and nothing is written.
TEST_F(DetectCommand, PriorOptionsAndTheirErrors)
{
  ASSERT_EQ(s_TrainRun.status, 0) << s_TrainRun.err;
  const auto poses = Out("poses-prior.json"), report = Out("detect-prior-report.json");
  const auto run = Canopy("detect --model " + s_Model + " --input " + s_Image + " --output " + poses + " --report " +
                            report + " --device cpu --prior-weight 2 --child-hypotheses prior --prior-orientations 40",
                          "detect-prior");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto doc = ReadJson(report);
  EXPECT_EQ(doc["parameters"]["priorWeight"], 2.0);
  EXPECT_EQ(doc["parameters"]["childHypotheses"], "prior");
  EXPECT_FALSE(doc["stages"][0].contains("prior")) << "the root has no prior";
  const auto & child = doc["stages"][1];
  ASSERT_TRUE(child.contains("prior")) << child.dump();
  EXPECT_EQ(child["prior"]["priorOrientations"], 40);
  EXPECT_EQ(child["prior"]["priorSizes"], 30);
  if (ReadJson(poses)["structures"][1]["found"].get<bool>())
    EXPECT_LE(child["prior"]["centreLogPrior"].get<double>(), 0.0);
  const std::vector<std::pair<std::string, std::string>> bad{
    { "--prior-weight nan", "--prior-weight: 'nan' is not a finite number" },
    { "--prior-weight -1", "--prior-weight: '-1' is not in [0, 1000]" },
    { "--child-hypotheses all", "--child-hypotheses: all not in {model,prior,both}" },
    { "--prior-orientations 0", "--prior-orientations" }
  };
  for (const auto & [option, message] : bad)
  {
    const auto never = Out("never-prior-poses.json");
    fs::remove(never);
    const auto failed =
      Canopy("detect --model " + s_Model + " --input " + s_Image + " --output " + never + " --device cpu " + option,
             "detect-bad-prior");
    EXPECT_NE(failed.status, 0) << option;
    EXPECT_LT(failed.status, 128) << option;
    EXPECT_NE(failed.err.find(message), std::string::npos) << option << ": " << failed.err;
    EXPECT_FALSE(fs::exists(never)) << option;
  }
}

// --child-threshold and --refine-step reach the detector and the report; a child found below its own
// threshold (here: every structure's threshold put out of reach by --threshold 1) is flagged in poses.json.
TEST_F(DetectCommand, ChildThresholdAndRefinementOptions)
{
  ASSERT_EQ(s_TrainRun.status, 0) << s_TrainRun.err;
  const auto poses = Out("poses-refined.json"), report = Out("detect-refined-report.json");
  const auto run = Canopy("detect --model " + s_Model + " --input " + s_Image + " --output " + poses + " --report " +
                            report + " --device cpu --refine-step 1.5 --refine-reach 1",
                          "detect-refined");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto doc = ReadJson(report);
  EXPECT_EQ(doc["parameters"]["refineStepMm"], 1.5);
  EXPECT_EQ(doc["parameters"]["refineReach"], 1);
  EXPECT_GT(doc["stages"][0]["refineHypotheses"].get<std::int64_t>(), 0);
  EXPECT_EQ(doc["stages"][0]["lowConfidence"], false);

  const auto low = Out("poses-child-threshold.json");
  const auto lowered = Canopy("detect --model " + s_Model + " --input " + s_Image + " --output " + low +
                                " --device cpu --threshold 1 --child-threshold 0",
                              "detect-child-threshold");
  ASSERT_EQ(lowered.status, 0) << lowered.err;
  const auto structures = ReadJson(low)["structures"];
  // A root keeps its threshold: never found below it, never flagged.
  EXPECT_FALSE(structures[0].contains("lowConfidence"));
  if (structures[0]["found"].get<bool>() && structures[1]["found"].get<bool>() &&
      structures[1]["score"].get<double>() < 1.0)
    EXPECT_EQ(structures[1]["lowConfidence"], true) << structures.dump();
  if (!structures[0]["found"].get<bool>())
    EXPECT_FALSE(structures[1]["found"].get<bool>()) << "a child of a missed parent keeps its threshold";

  const std::vector<std::pair<std::string, std::string>> bad{
    { "--child-threshold 2", "--child-threshold: '2' is not in [0, 1]" },
    { "--refine-step -1", "--refine-step: '-1' is not in [0, 20]" },
    { "--refine-reach 9", "--refine-reach: Value 9 not in range 1 to 5" }
  };
  for (const auto & [option, message] : bad)
  {
    const auto never = Out("never-refined-poses.json");
    fs::remove(never);
    const auto failed =
      Canopy("detect --model " + s_Model + " --input " + s_Image + " --output " + never + " --device cpu " + option,
             "detect-bad-refine");
    EXPECT_NE(failed.status, 0) << option;
    EXPECT_LT(failed.status, 128) << option;
    EXPECT_NE(failed.err.find(message), std::string::npos) << option << ": " << failed.err;
    EXPECT_FALSE(fs::exists(never)) << option;
  }
}

// --truth: the report's stage rows and the console give the stages' posteriors at the reference pose and
// its position rank; a missing reference file is an error naming the option, with no output written.
TEST_F(DetectCommand, TruthScoresTheReferencePoses)
{
  ASSERT_EQ(s_TrainRun.status, 0) << s_TrainRun.err;
  const auto poses = Out("poses-truth.json"), report = Out("detect-truth-report.json");
  const auto run = Canopy("detect --model " + s_Model + " --input " + s_Image + " --truth " + s_Labels + " --output " +
                            poses + " --report " + report + " --device cpu",
                          "detect-truth");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("truth: posteriors position"), std::string::npos) << run.out;
  const auto stages = ReadJson(report)["stages"];
  ASSERT_EQ(stages.size(), 2u);
  for (const auto & stage : stages)
  {
    ASSERT_TRUE(stage.contains("truth")) << stage.dump();
    const auto & t = stage["truth"];
    for (const char * key : { "position", "orientation", "scale", "evidence" })
    {
      EXPECT_GE(t[key].get<double>(), 0.0) << key;
      EXPECT_LE(t[key].get<double>(), 1.0) << key;
    }
    EXPECT_NEAR(t["evidence"].get<double>(),
                t["position"].get<double>() * t["orientation"].get<double>() * t["scale"].get<double>(),
                1e-6);
    EXPECT_GE(t["positionRank"].get<std::int64_t>(), 0) << "the truth lies in every searched region here";
    EXPECT_GT(t["searchedVoxels"].get<std::int64_t>(), t["positionRank"].get<std::int64_t>());
    EXPECT_LT(t["centreErrorMm"].get<double>(), 6.0);
  }
  EXPECT_LT(stages[1]["truth"]["searchedVoxels"], stages[0]["truth"]["searchedVoxels"]) << "the child's box";

  const auto never = Out("never-truth-poses.json");
  fs::remove(never);
  const auto missing = Canopy("detect --model " + s_Model + " --input " + s_Image + " --truth " +
                                Out("no-such-labels.nii.gz") + " --output " + never + " --device cpu",
                              "detect-truth-missing");
  EXPECT_NE(missing.status, 0);
  EXPECT_LT(missing.status, 128);
  EXPECT_NE(missing.err.find("--truth"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(never));
}

// The stages' capacity options reach the model: a 7^3 steerable grid in both pose stages, the banks and
// the weak learners per node; out-of-range values are refused before anything is written.
TEST_F(DetectCommand, CapacityOptionsReachTheModel)
{
  const auto model = Out("detector-capacity.json"), report = Out("train-capacity-report.json");
  fs::remove(model);
  const auto run =
    Canopy(s_Train + " --steerable-grid 7 --steerable-features 400 --haar-features 300 --weak-learners 8" + " --out " +
             model + " --report " + report,
           "train-capacity");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto detector = LoadDetectorModel(model);
  for (const auto & d : detector.structures)
  {
    EXPECT_EQ(d.orientation.steerable.grid.size, 7) << d.name;
    EXPECT_EQ(d.scale.steerable.grid.size, 7) << d.name;
    for (const auto & node : d.orientation.nodes)
      EXPECT_LE(node.numLearners, 8) << d.name;
    for (const auto & node : d.position.tree.nodes)
      EXPECT_LE(node.numLearners, 8) << d.name;
    EXPECT_GT(d.position.tree.nodes.at(0).numLearners, 0) << d.name;
  }
  const auto parameters = ReadJson(report)["parameters"];
  EXPECT_EQ(parameters["steerableGrid"], 7);
  EXPECT_EQ(parameters["steerableFeatures"], 400);
  EXPECT_EQ(parameters["haarFeatures"], 300);
  EXPECT_EQ(parameters["weakLearners"], 8);
  const auto poses = Out("poses-capacity.json");
  const auto detect = Canopy("detect --model " + model + " --input " + s_Image + " --output " + poses + " --device cpu",
                             "detect-capacity");
  ASSERT_EQ(detect.status, 0) << detect.err;
  EXPECT_EQ(ReadJson(poses)["structures"].size(), 2u);

  for (const std::string option : { "--steerable-grid 11", "--weak-learners 0", "--haar-features 5" })
  {
    const auto never = Out("never-capacity.json");
    fs::remove(never);
    const auto failed = Canopy(s_Train + " " + option + " --out " + never, "train-bad-capacity");
    EXPECT_NE(failed.status, 0) << option;
    EXPECT_LT(failed.status, 128) << option;
    EXPECT_NE(failed.err.find(option.substr(0, option.find(' '))), std::string::npos) << option << ": " << failed.err;
    EXPECT_FALSE(fs::exists(never)) << option;
  }
}

// detect --boxes / --snapshot: one box (12 triangles) per found structure, its corners at centre +/- axes x
// size / 2 of poses.json, the structure's index and score as cell data and the names as field data; a PNG of
// the three slices (the layout of canopySnapshot.h) through the first box's centre, its colour (yellow) on it.
TEST_F(DetectCommand, BoxesMeshAndSnapshot)
{
  ASSERT_EQ(s_TrainRun.status, 0) << s_TrainRun.err;
  const auto poses = Out("poses-boxes.json"), boxes = Out("boxes.vtk"), png = Out("detect-snapshot.png");
  for (const auto & p : { poses, boxes, png })
    fs::remove(p);
  const auto run = Canopy("detect --model " + s_Model + " --input " + s_Image + " --output " + poses + " --boxes " +
                            boxes + " --snapshot " + png + " --device cpu --quiet",
                          "detect-boxes");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto               structures = ReadJson(poses)["structures"];
  std::vector<std::size_t> found;
  for (std::size_t i = 0; i < structures.size(); ++i)
    if (structures[i]["found"].get<bool>())
      found.push_back(i);
  ASSERT_EQ(found.size(), 2u) << structures.dump();

  const auto file = ReadMesh(boxes, MeshSpace::RAS, "--boxes");
  EXPECT_EQ(file.spaceInFile, "LPS");
  const auto & mesh = file.mesh;
  ASSERT_EQ(mesh->GetNumberOfPoints(), static_cast<vtkIdType>(8 * found.size()));
  ASSERT_EQ(mesh->GetNumberOfPolys(), static_cast<vtkIdType>(12 * found.size()));
  auto * index = mesh->GetCellData()->GetArray("StructureIndex");
  auto * score = mesh->GetCellData()->GetArray("Score");
  auto * names = vtkStringArray::SafeDownCast(mesh->GetFieldData()->GetAbstractArray("StructureNames"));
  ASSERT_TRUE(index && score && names);
  ASSERT_EQ(names->GetNumberOfValues(), static_cast<vtkIdType>(structures.size()));
  for (std::size_t b = 0; b < found.size(); ++b)
  {
    const auto & s = structures[found[b]];
    EXPECT_EQ(names->GetValue(found[b]), s["name"].get<std::string>());
    for (int corner = 0; corner < 8; ++corner)
    {
      double p[3];
      mesh->GetPoint(static_cast<vtkIdType>(8 * b + corner), p);
      for (int d = 0; d < 3; ++d)
      {
        double expected = s["center_mm"][d].get<double>();
        for (int k = 0; k < 3; ++k)
          expected += ((corner >> k) & 1 ? 0.5 : -0.5) * s["size_mm"][k].get<double>() * s["axes"][k][d].get<double>();
        EXPECT_NEAR(p[d], expected, 1e-6 * (1.0 + std::abs(expected))) << s["name"] << " corner " << corner;
      }
    }
    for (int t = 0; t < 12; ++t)
    {
      const auto cell = static_cast<vtkIdType>(12 * b + t);
      EXPECT_EQ(index->GetTuple1(cell), static_cast<double>(found[b]));
      EXPECT_FLOAT_EQ(score->GetTuple1(cell), s["score"].get<double>());
    }
  }

  // The PNG: three panels at the smallest spacing over the volume's bounding box, side by side.
  auto         image = itk::ReadImage<itk::Image<float, 3>>(s_Image);
  const auto   size = image->GetLargestPossibleRegion().GetSize();
  const auto   spacing = image->GetSpacing();
  const double pixel = std::min({ spacing[0], spacing[1], spacing[2] });
  double       lo[3] = { HUGE_VAL, HUGE_VAL, HUGE_VAL }, hi[3] = { -HUGE_VAL, -HUGE_VAL, -HUGE_VAL };
  for (int corner = 0; corner < 8; ++corner)
  {
    itk::ContinuousIndex<double, 3> c;
    for (int d = 0; d < 3; ++d)
      c[d] = -0.5 + ((corner >> d) & 1 ? static_cast<double>(size[d]) : 0.0);
    itk::Point<double, 3> p;
    image->TransformContinuousIndexToPhysicalPoint(c, p);
    for (int d = 0; d < 3; ++d)
      lo[d] = std::min(lo[d], p[d]), hi[d] = std::max(hi[d], p[d]);
  }
  const auto pixels = [&](int d) { return static_cast<unsigned>(std::ceil((hi[d] - lo[d]) / pixel - 1e-6)); };
  const auto snapshot = itk::ReadImage<itk::Image<itk::RGBPixel<unsigned char>, 2>>(png);
  EXPECT_EQ(snapshot->GetLargestPossibleRegion().GetSize()[0], 2 * pixels(0) + pixels(1));
  EXPECT_EQ(snapshot->GetLargestPossibleRegion().GetSize()[1], std::max(pixels(1), pixels(2)));
  std::size_t  yellow = 0;
  const auto * rgb = snapshot->GetBufferPointer();
  for (std::size_t i = 0; i < snapshot->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    yellow += rgb[i][0] == 255 && rgb[i][1] == 255 && rgb[i][2] == 0;
  EXPECT_GT(yellow, 30u) << "the first box (slices through its centre): outline and centre cross";
  // The axial panel (left; columns along +x, rows along +y from the box's low corner): the cross' middle.
  const auto & centre = structures[found[0]]["center_mm"];
  const long   column = std::lround((centre[0].get<double>() - lo[0]) / pixel - 0.5),
             row = std::lround((centre[1].get<double>() - lo[1]) / pixel - 0.5);
  const auto middle = snapshot->GetPixel({ { column, row } });
  EXPECT_TRUE(middle[0] == 255 && middle[1] == 255 && middle[2] == 0) << "pixel " << column << ", " << row;
}

// Bad --boxes / --snapshot names are errors naming the option before any work, with no output; a batch
// refuses them.
TEST_F(DetectCommand, BadBoxesAndSnapshotNamesAreErrors)
{
  ASSERT_EQ(s_TrainRun.status, 0) << s_TrainRun.err;
  const auto                                             never = Out("never-boxes-poses.json");
  const std::vector<std::pair<std::string, std::string>> bad{
    { "--boxes " + Out("boxes.obj"), "--boxes " + Out("boxes.obj") + ": unknown mesh format '.obj'" },
    { "--boxes " + Out("no-such-folder/boxes.vtk"), "--boxes" },
    { "--snapshot " + Out("s.jpg"), "--snapshot " + Out("s.jpg") + ": the snapshot is a PNG" },
    { "--snapshot " + never, "--snapshot" } // the same file as --output
  };
  for (const auto & [option, message] : bad)
  {
    fs::remove(never);
    const auto failed =
      Canopy("detect --model " + s_Model + " --input " + s_Image + " --output " + never + " --device cpu " + option,
             "detect-bad-boxes");
    EXPECT_NE(failed.status, 0) << option;
    EXPECT_LT(failed.status, 128) << option;
    EXPECT_NE(failed.err.find(message), std::string::npos) << option << ": " << failed.err;
    EXPECT_FALSE(fs::exists(never)) << option;
    EXPECT_FALSE(fs::exists(Out("boxes.obj")) || fs::exists(Out("s.jpg"))) << option;
  }
  const auto batch = Canopy("detect --model " + s_Model + " --inputs " + TestDir().string() + " --output-dir " +
                              Out("never-batch") + " --boxes " + Out("batch-boxes.vtk"),
                            "detect-batch-boxes");
  EXPECT_NE(batch.status, 0);
  EXPECT_NE(batch.err.find("--boxes: not with --inputs"), std::string::npos) << batch.err;
}

// Centre refinement is on by default (1 mm steps, reach 2: 125 offsets per kept hypothesis); --refine-step 0
// turns it off.
TEST_F(DetectCommand, CentreRefinementIsOnByDefault)
{
  ASSERT_EQ(s_TrainRun.status, 0) << s_TrainRun.err;
  for (const auto & [option, step] : { std::pair<std::string, double>{ "", 1.0 }, { " --refine-step 0", 0.0 } })
  {
    const auto poses = Out("poses-default-refine.json"), report = Out("detect-default-refine.json");
    const auto run = Canopy("detect --model " + s_Model + " --input " + s_Image + " --output " + poses + " --report " +
                              report + " --device cpu --quiet" + option,
                            "detect-default-refine");
    ASSERT_EQ(run.status, 0) << run.err;
    const auto doc = ReadJson(report);
    EXPECT_EQ(doc["parameters"]["refineStepMm"], step) << option;
    EXPECT_EQ(doc["parameters"]["refineReach"], 2) << option;
    for (const auto & stage : doc["stages"])
      if (step > 0.0)
      {
        EXPECT_GT(stage["refineHypotheses"].get<std::int64_t>(), 0) << stage.dump();
        EXPECT_EQ(stage["refineHypotheses"].get<std::int64_t>() % 125, 0) << stage.dump();
      }
      else
        EXPECT_EQ(stage["refineHypotheses"].get<std::int64_t>(), 0) << stage.dump();
  }
}

TEST_F(DetectCommand, LabelMissingFromATrainingMapNamesTheFile)
{
  const auto out = Out("never-detector.json");
  const auto run = Canopy(s_Train + " --structure absent=9 --out " + out, "train-absent");
  EXPECT_NE(run.status, 0);
  EXPECT_LT(run.status, 128);
  EXPECT_NE(run.err.find("label1.nii.gz (structure absent): label 9 is absent (no voxel has this value)"),
            std::string::npos)
    << run.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(DetectCommand, DamagedModelConstantVolumeAndMissingStructureAreErrors)
{
  ASSERT_EQ(s_TrainRun.status, 0) << s_TrainRun.err;
  auto damaged = ReadJson(s_Model);
  damaged["structures"][0]["scale"]["sizesMm"] = nlohmann::json::array();
  const auto damagedPath = Out("damaged-detector.json");
  std::ofstream(damagedPath) << damaged.dump();
  const auto poses = Out("never-poses.json");
  fs::remove(poses);
  auto run = Canopy("detect --model " + damagedPath + " --input " + s_Image + " --output " + poses, "damaged");
  EXPECT_NE(run.status, 0);
  EXPECT_NE(
    run.err.find("damaged-detector.json: structures[0] (large): \"scale\": \"sizesMm\" must be a non-empty array"),
    std::string::npos)
    << run.err;
  EXPECT_FALSE(fs::exists(poses));

  std::ofstream(damagedPath) << ReadJson(s_Model).dump().substr(0, 500);
  run = Canopy("detect --model " + damagedPath + " --input " + s_Image + " --output " + poses, "truncated");
  EXPECT_NE(run.err.find("damaged-detector.json: the detector model is truncated or not valid JSON"), std::string::npos)
    << run.err;
  EXPECT_FALSE(fs::exists(poses));

  auto flat = MakeSubject(7).image;
  flat->FillBuffer(12.0f);
  const auto flatPath = Write(flat.GetPointer(), "flat.nii.gz");
  run = Canopy("detect --model " + s_Model + " --input " + flatPath + " --output " + poses + " --device cpu", "flat");
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.err.find("flat.nii.gz: the volume is constant"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(poses));

  const auto                     onlyLarge = Out("only-large.json");
  std::vector<DetectedStructure> one(1);
  one[0].name = "large";
  WritePosesFile(one, onlyLarge);
  run = Canopy("evaluate-poses --test " + onlyLarge + " --reference " + s_Labels + " --structure small=3", "missing");
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.err.find("only-large.json: has no structure named 'small'"), std::string::npos) << run.err;
}

} // namespace
