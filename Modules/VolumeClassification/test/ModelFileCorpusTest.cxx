// Model-file robustness: a corpus of broken files (Data/Testing/bad-models) and random byte-level
// mutations of a valid model must all give a clear itk::ExceptionObject naming the file, never a
// crash or a model that evaluates out of range.
#include "canopy/Errors.h"
#include "canopyPBTEvaluator.h"
#include "canopyPBTModelFile.h"
#include "canopyPBTVolumeTraining.h"
#include "canopySteerableFeatureBank.h"
#include "canopyTesting.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace
{
using namespace canopy;

TEST(ModelFileCorpus, EveryBrokenFileIsRejectedNamingTheFile)
{
  const std::filesystem::path corpus = std::filesystem::path(CANOPY_SOURCE_DIR) / "Data/Testing/bad-models";
  int                         files = 0;
  for (const auto & entry : std::filesystem::directory_iterator(corpus))
  {
    ++files;
    const std::string path = entry.path().string();
    try
    {
      LoadPBTModelFile(path);
      ADD_FAILURE() << path << " was accepted";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find(path), std::string::npos) << e.GetDescription();
    }
  }
  EXPECT_GE(files, 10);
}

PBTModelFile
SmallTrainedModel()
{
  const double c[3] = { 12, 11, 9 }, r[3] = { 6, 5, 4 };
  auto image = canopy::testing::MakeEllipsoidPhantom(24, 22, 18, c, r, 100.0f, 20.0f, 5.0f, 1);
  auto mask = MaskVolume::New();
  mask->CopyInformation(image);
  mask->SetRegions(image->GetLargestPossibleRegion());
  mask->Allocate();
  for (itk::SizeValueType i = 0; i < image->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    mask->GetBufferPointer()[i] = image->GetBufferPointer()[i] > 60.0f;
  PBTVolumeTrainingOptions o;
  o.workingSpacing = { 2.0, 2.4, 5.0 };
  o.sampling.positivesPerVolume = 200;
  o.sampling.negativesPerVolume = 200;
  o.featureBankSize = 40;
  o.sampleBoxMm = { 12, 12, 20 };
  o.pbt.maxDepth = 2;
  o.pbt.weakLearnersPerNode = 4;
  o.pbt.featureCandidatesPerRound = 10;
  o.pbt.minSamplesToSplit = 20;
  return TrainPBTFromVolumes({ LabelledVolume{ image, mask, "phantom" } }, o);
}

void
ExpectRejected(const std::string & text, const std::string & what, const std::string & name)
{
  const std::string path = canopy::testing::OutputPath(name);
  std::ofstream(path, std::ios::trunc) << text;
  try
  {
    LoadPBTModelFile(path);
    ADD_FAILURE() << name << " was accepted";
  }
  catch (const itk::ExceptionObject & e)
  {
    const std::string message = e.GetDescription();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << name << ": " << message;
  }
}

// 1,000,000 nested arrays: parsing is iterative in nlohmann-json, but copying the "training" value
// recursed once per level and overflowed the stack (SIGSEGV; 100,000 levels still fit) before the
// depth limit.
TEST(ModelFileCorpus, DeepNestingIsRejectedNotAStackOverflow)
{
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  ExpectRejected(deep, "nested deeper", "deep-array.json");
  const std::string valid = canopy::testing::OutputPath("valid-for-deep.json");
  SavePBTModelFile(SmallTrainedModel(), valid);
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(valid));
  doc["training"] = "@deep@";
  std::string text = doc.dump();
  text.replace(text.find("\"@deep@\""), 8, deep);
  ExpectRejected(text, "nested deeper", "deep-training.json");
}

// A forest model, and Haar cuboids far outside the sample box (lround(corner x box) overflowed int).
TEST(ModelFileCorpus, ForestModelsAndFarFeaturesAreRejected)
{
  ExpectRejected(R"({"format": "canopy-forest", "version": 1})", "is a forest model", "forest-model.json");
  const std::string valid = canopy::testing::OutputPath("valid-for-far.json");
  SavePBTModelFile(SmallTrainedModel(), valid);
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(valid));
  doc["pbt"]["features"][0]["cuboids"][0]["lo"] = { -1e30, -1e30, -1e30 };
  doc["pbt"]["features"][0]["cuboids"][0]["hi"] = { 1e30, 1e30, 1e30 };
  ExpectRejected(doc.dump(), "cuboid corners must lie within", "far-feature.json");
  ExpectRejected("", "is empty", "empty-model.json");
}

// Random byte mutations of a valid file: loading either fails with a canopy/ITK error or yields a
// model that passed validation (the loader's guarantee to the evaluators).
TEST(ModelFileCorpus, RandomMutationsNeverCrash)
{
  const std::string valid = canopy::testing::OutputPath("valid-model.json");
  SavePBTModelFile(SmallTrainedModel(), valid);
  std::ifstream      in(valid);
  std::stringstream  buffer;
  buffer << in.rdbuf();
  const std::string  text = buffer.str();
  std::mt19937_64    rng(12345);
  const std::string  mutated = canopy::testing::OutputPath("mutated-model.json");
  int                rejected = 0, accepted = 0;
  const char         alphabet[] = "{}[]\":,-+.eE0123456789 abcnulltrue";
  for (int trial = 0; trial < 600; ++trial)
  {
    std::string copy = text;
    const int   edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e)
    {
      const std::size_t at = rng() % copy.size();
      switch (rng() % 3)
      {
        case 0:
          copy[at] = alphabet[rng() % (sizeof(alphabet) - 1)];
          break;
        case 1:
          copy.erase(at, 1 + rng() % 8);
          break;
        default:
          copy.insert(at, 1, alphabet[rng() % (sizeof(alphabet) - 1)]);
      }
    }
    std::ofstream(mutated, std::ios::trunc) << copy;
    try
    {
      const PBTModelFile model = LoadPBTModelFile(mutated);
      model.tree.Validate("mutated"); // a loaded model is always valid
      ++accepted;
    }
    catch (const itk::ExceptionObject &)
    {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 100);
  RecordProperty("accepted", accepted);
}

// Found by Testing/Fuzz/canopyFuzzPBTModel: a free-form field nested deeply enough overflowed the stack
// while the reader copied it (nlohmann-json copies recursively). Now a clear error naming the file.
TEST(ModelFileCorpus, DeeplyNestedJsonIsRejectedNamingTheFile)
{
  const std::string path = canopy::testing::OutputPath("deeply-nested-model.json");
  const int         depth = 200000;
  std::ofstream(path) << R"({"format": "canopy-model", "version": 1, "kind": "pbt", "workingSpacing": [2, 2, 2],)"
                      << R"("normalization": {"method": "percentile", "lowPercentile": 1, "highPercentile": 99}, "training": )" << std::string(depth, '[')
                      << std::string(depth, ']') << "}";
  try
  {
    LoadPBTModelFile(path);
    ADD_FAILURE() << path << " was accepted";
  }
  catch (const itk::ExceptionObject & e)
  {
    const std::string message = e.GetDescription();
    EXPECT_NE(message.find(path + ": JSON nested deeper than"), std::string::npos) << message;
  }
}

// Format version 2 (issue 9): the "pbt" object names its feature family. Version 1 files (Haar PBTs,
// before the family existed) load unchanged; a version 2 file without the family, or a version 1
// file claiming another family, is refused naming the file.
TEST(ModelFileCorpus, FeatureFamilyIsVersionedAndOldHaarFilesLoad)
{
  const PBTModelFile model = SmallTrainedModel();
  nlohmann::json     doc = PBTModelFileToJson(model);
  EXPECT_EQ(doc["version"], kModelFormatVersion);
  EXPECT_EQ(doc["pbt"]["featureFamily"], "haar");

  nlohmann::json old = doc; // as Canopy wrote it before version 2
  old["version"] = 1;
  old["pbt"].erase("featureFamily");
  const std::string oldPath = canopy::testing::OutputPath("haar-version-1.json");
  std::ofstream(oldPath, std::ios::trunc) << old.dump();
  const PBTModelFile loaded = LoadPBTModelFile(oldPath);
  EXPECT_EQ(loaded.tree.featureFamily, PBTFeatureFamily::Haar);
  EXPECT_EQ(PBTModelFileToJson(loaded)["pbt"].dump(), doc["pbt"].dump());

  nlohmann::json noFamily = doc;
  noFamily["pbt"].erase("featureFamily");
  ExpectRejected(noFamily.dump(), "no \"featureFamily\"", "version-2-no-family.json");
  nlohmann::json oldSteerable = old;
  oldSteerable["pbt"]["featureFamily"] = "steerable";
  ExpectRejected(oldSteerable.dump(), "version 1 model holds a Haar PBT only", "version-1-steerable.json");
  nlohmann::json future = doc;
  future["version"] = kModelFormatVersion + 1;
  ExpectRejected(future.dump(), "is not supported (this Canopy reads versions 1 to 3)", "version-4.json");
}

// A steerable PBT in a model file round-trips; classification refuses it by name.
TEST(ModelFileCorpus, SteerablePBTFilesRoundTripAndAreNotVoxelClassifiers)
{
  PBTModelFile model = SmallTrainedModel();
  model.tree.featureFamily = PBTFeatureFamily::Steerable;
  model.tree.steerable.grid = SteerableGrid{ 5, 1.5f };
  model.tree.steerable.pyramid = SteerablePyramidOptions{ { 2.0, 4.0 }, {} };
  model.tree.steerable.features = RandomSteerableFeatures(model.tree.steerable.grid, 2, model.tree.NumberOfFeatures() + 3, 4);
  model.tree.features.clear();
  model.tree.Validate("test");
  const std::string path = canopy::testing::OutputPath("steerable-model.json");
  SavePBTModelFile(model, path);
  const PBTModelFile back = LoadPBTModelFile(path);
  EXPECT_EQ(back.tree.featureFamily, PBTFeatureFamily::Steerable);
  EXPECT_EQ(PBTModelFileToJson(back).dump(), PBTModelFileToJson(model).dump());
  try
  {
    PBTVolumeEvaluator evaluator(back.tree, ResolvedBackend{});
    ADD_FAILURE() << "a steerable PBT was accepted for voxel classification";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("needs a Haar PBT"), std::string::npos) << e.GetDescription();
  }
}

} // namespace
