// Shape model files: a trained model survives the round trip (meshes, modes, projections), and
// damaged or foreign files are refused with an error naming the file and what is wrong.
#include "ShapeTestPhantoms.h"
#include "canopy/Errors.h"
#include "canopyShapeModelFile.h"
#include "canopyShapeProjection.h"
#include "canopyShapeTraining.h"
#include "canopyTesting.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

namespace
{
using namespace canopy;
using Json = nlohmann::json;

const ShapeModelFile &
TrainedFile()
{
  static const ShapeModelFile file = []
  {
    std::mt19937_64                   random(4);
    std::vector<ShapeTrainingSubject> subjects;
    for (int s = 0; s < 5; ++s)
      subjects.push_back(
        { "e" + std::to_string(s),
          TrainingSurface(canopy::testing::MakeEllipsoidLabels(canopy::testing::RandomEllipsoid(random), 3),
                          3,
                          "e" + std::to_string(s)) });
    ShapeTrainingOptions options;
    options.levelVertices = { 100, 200 };
    options.passes = 1;
    options.threads = 2;
    ShapeModelFile f;
    f.structures.push_back(TrainShapeModel(subjects, "blob", 3, options).model);
    f.provenance = { { "test", "ShapeModelFileTest" } };
    return f;
  }();
  return file;
}

void
WriteText(const std::string & path, const std::string & text)
{
  std::ofstream(path, std::ios::binary) << text;
}

TEST(ShapeModelFile, RoundTripKeepsMeshesModesAndProjections)
{
  const ShapeModelFile & original = TrainedFile();
  const std::string      path = canopy::testing::OutputPath("shape-roundtrip.json");
  SaveShapeModelFile(original, path);
  const ShapeModelFile loaded = LoadShapeModelFile(path);
  ASSERT_EQ(loaded.structures.size(), 1u);
  const ShapeModel & a = original.structures[0];
  const ShapeModel & b = loaded.Structure("blob");
  EXPECT_EQ(b.label, 3);
  ASSERT_EQ(b.levels.size(), a.levels.size());
  for (std::size_t l = 0; l < a.levels.size(); ++l)
  {
    EXPECT_EQ((a.levels[l].mean - b.levels[l].mean).cwiseAbs().maxCoeff(), 0.0);
    EXPECT_EQ(a.levels[l].triangles, b.levels[l].triangles);
    EXPECT_EQ(a.levels[l].finestVertex, b.levels[l].finestVertex);
  }
  ASSERT_EQ(b.Modes(), a.Modes());
  EXPECT_LT((a.modes - b.modes).cwiseAbs().maxCoeff(), 1e-6); // modes are stored in single precision
  EXPECT_EQ(a.variances, b.variances);
  EXPECT_EQ(a.spectrum, b.spectrum);
  EXPECT_EQ(b.training["templateSubject"], a.training["templateSubject"]);
  const Eigen::Matrix3Xd input = ShapeInstance(a, 0, Eigen::VectorXd::Constant(a.Modes(), 0.5));
  EXPECT_LT(RmsDistance(ProjectOntoShapeSpace(a, 0, input).points, ProjectOntoShapeSpace(b, 0, input).points), 1e-5);
  EXPECT_THROW(loaded.Structure("liver"), canopy::Error);
}

struct Damage
{
  const char *                name;
  std::function<void(Json &)> apply;
  const char *                message;
};

TEST(ShapeModelFile, DamagedFilesAreRefusedWithAClearError)
{
  const Json                original = ShapeModelFileToJson(TrainedFile());
  const std::vector<Damage> damages = {
    { "format", [](Json & d) { d["format"] = "something"; }, "not a Canopy shape model" },
    { "pbt", [](Json & d) { d["format"] = "canopy-model"; }, "is a voxel classifier" },
    { "version", [](Json & d) { d["version"] = 99; }, "version 99 is not supported" },
    { "units", [](Json & d) { d["units"] = "cm"; }, "\"units\" must be \"mm\"" },
    { "space", [](Json & d) { d["space"] = "RAS"; }, "\"space\" must be \"LPS\"" },
    { "no-structures", [](Json & d) { d["structures"] = Json::array(); }, "\"structures\" is empty" },
    { "twice", [](Json & d) { d["structures"].push_back(d["structures"][0]); }, "appears twice" },
    { "name", [](Json & d) { d["structures"][0]["name"] = ""; }, "\"name\" must be a non-empty string" },
    { "label", [](Json & d) { d["structures"][0]["label"] = 1.5; }, "\"label\" must be an integer" },
    { "triangle-range",
      [](Json & d) { d["structures"][0]["levels"][0]["triangles"][4][1] = 100000; },
      "triangle 4 names a vertex outside" },
    { "triangle-repeat",
      [](Json & d)
      { d["structures"][0]["levels"][1]["triangles"][2][1] = d["structures"][0]["levels"][1]["triangles"][2][0]; },
      "triangle 2 repeats a vertex" },
    { "point-null",
      [](Json & d) { d["structures"][0]["levels"][1]["mean"][7][2] = nullptr; },
      "point 7 must be a finite number" },
    { "level-mismatch",
      [](Json & d) { d["structures"][0]["levels"][0]["mean"][0][0] = 1e4; },
      "is not the finest level's vertex" },
    { "finest-repeat",
      [](Json & d)
      { d["structures"][0]["levels"][0]["finestVertex"][1] = d["structures"][0]["levels"][0]["finestVertex"][0]; },
      "out of range or repeated" },
    { "order",
      [](Json & d) { std::swap(d["structures"][0]["levels"][0], d["structures"][0]["levels"][1]); },
      "levels must go from coarse to fine" },
    { "mode-length", [](Json & d) { d["structures"][0]["modes"][0].erase(0); }, "mode 0 must be an array of" },
    { "orthonormal", [](Json & d) { d["structures"][0]["modes"][0][0] = 5.0; }, "not orthonormal" },
    { "variance-count", [](Json & d) { d["structures"][0]["variances"].erase(0); }, "variances for" },
    { "variance-negative",
      [](Json & d) { d["structures"][0]["variances"].back() = -1.0; },
      "must be a positive finite number" },
    { "no-modes-field", [](Json & d) { d["structures"][0].erase("modes"); }, "has no field \"modes\"" },
  };
  for (const auto & damage : damages)
  {
    Json doc = original;
    damage.apply(doc);
    const std::string path = canopy::testing::OutputPath(std::string("shape-damaged-") + damage.name + ".json");
    WriteText(path, doc.dump());
    try
    {
      LoadShapeModelFile(path);
      ADD_FAILURE() << damage.name << ": accepted";
    }
    catch (const canopy::Error & e)
    {
      const std::string message = e.what();
      EXPECT_NE(message.find(damage.message), std::string::npos) << damage.name << ": " << message;
      EXPECT_NE(message.find(path), std::string::npos) << damage.name << ": the error does not name the file";
    }
  }
  const std::string truncated = canopy::testing::OutputPath("shape-truncated.json");
  WriteText(truncated, original.dump().substr(0, 2000));
  EXPECT_THROW(LoadShapeModelFile(truncated), canopy::Error);
  const std::string empty = canopy::testing::OutputPath("shape-empty.json");
  WriteText(empty, "");
  EXPECT_THROW(LoadShapeModelFile(empty), canopy::Error);
  EXPECT_THROW(LoadShapeModelFile(std::filesystem::path(empty).parent_path().string()), canopy::Error);
  EXPECT_THROW(LoadShapeModelFile("nonexistent-shape.json"), canopy::Error);
}
} // namespace
