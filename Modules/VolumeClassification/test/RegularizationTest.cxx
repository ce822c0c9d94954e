// The graph-cut lambda a PBT model recommends (issue 8, defect 6): chosen on the training volumes,
// stored in the model file as the optional "regularization" field, and a small structure the old
// fixed lambda = 1 mm erased is kept with it. Also the all-or-nothing outputs of one command.
#include "canopy/Errors.h"
#include "canopy/AtomicFile.h"
#include "canopyPBTClassification.h"
#include "canopyPBTModelFile.h"
#include "canopyPBTVolumeTraining.h"
#include "canopyRegularization.h"
#include "canopyTesting.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace
{
using namespace canopy;

// A ball of radius 2.8 mm on a 1 mm grid: lambda = 1 mm removes it whatever its probability (a ball
// survives only when r > 3 lambda / (2p - 1) >= 3 mm).
LabelledVolume
Ball(std::uint64_t seed, double cx, double cy, double cz)
{
  const double c[3] = { cx, cy, cz };
  auto         phantom = canopy::testing::MakeBallPhantom(28, 28, 24, c, 2.8, 100.0f, 20.0f, 12.0f, seed);
  return LabelledVolume{ phantom.image, phantom.mask, "ball" + std::to_string(seed) };
}

PBTVolumeTrainingOptions
BallOptions()
{
  PBTVolumeTrainingOptions o;
  o.workingSpacing = { 1.0, 1.0, 1.0 };
  o.sampling.positivesPerVolume = 100;
  o.sampling.negativesPerVolume = 300;
  o.sampling.nearBoundaryMm = 4.0;
  o.featureBankSize = 200;
  o.sampleBoxMm = { 10, 10, 10 };
  o.pbt.maxDepth = 3;
  o.pbt.weakLearnersPerNode = 8;
  o.pbt.featureCandidatesPerRound = 50;
  o.pbt.minSamplesToSplit = 50;
  o.backend = ResolveBackend(BackendRequest::Parse("cpu"));
  return o;
}

double
Dice(const MaskVolume * a, const MaskVolume * b)
{
  std::int64_t both = 0, sum = 0;
  for (itk::SizeValueType i = 0; i < a->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
  {
    both += a->GetBufferPointer()[i] && b->GetBufferPointer()[i];
    sum += (a->GetBufferPointer()[i] != 0) + (b->GetBufferPointer()[i] != 0);
  }
  return sum ? 2.0 * both / sum : 1.0;
}

TEST(Regularization, ModelLambdaKeepsASmallStructureTheOldDefaultErased)
{
  const std::vector<LabelledVolume> training{ Ball(1, 10, 12, 11), Ball(2, 17, 15, 12), Ball(3, 13, 17, 10) };
  const auto                        options = BallOptions();
  PBTModelFile                      model = TrainPBTFromVolumes(training, options);
  model.regularization = RecommendRegularization(model, training, options.backend);
  const auto & selection = model.regularization->selection;
  EXPECT_EQ(selection["grid"].size(), selection["meanDice"].size());
  EXPECT_EQ(selection["volumes"].size(), training.size());
  EXPECT_LT(model.regularization->lambda, kDefaultLambdaMm) << selection.dump();

  const LabelledVolume test = Ball(9, 14, 13, 12);
  const auto           probability = ClassifyVolume(test.image, model, options.backend, {});
  const auto           old = RegularizeProbabilityMap(probability, kDefaultLambdaMm, 6);
  ASSERT_GT(old.confident, 20) << "the classifier should find the ball before regularisation";
  EXPECT_EQ(old.labelled, 0) << "lambda = 1 mm was expected to erase a 2.8 mm ball";
  EXPECT_GT(old.RemovedFraction(), 0.5);
  const auto kept = RegularizeProbabilityMap(probability, model.regularization->lambda, 6);
  EXPECT_GT(Dice(kept.labels, test.mask), 0.6) << "lambda " << model.regularization->lambda;
  EXPECT_LT(kept.RemovedFraction(), 0.5);
}

TEST(Regularization, ModelFileRoundTripWithAndWithoutTheField)
{
  PBTModelFile model; // a one-leaf tree is a valid model
  model.tree.nodes.push_back(PBTNodeFlat{ 0, 0, 1.0f, 0.0f, 0.25f, -1, -1 });
  model.tree.sampleBox = { 3, 3, 3 };
  const std::string without = canopy::testing::OutputPath("no-regularization.json");
  SavePBTModelFile(model, without);
  EXPECT_FALSE(PBTModelFileToJson(model).contains("regularization"));
  EXPECT_FALSE(LoadPBTModelFile(without).regularization.has_value()); // older models load as before

  RegularizationRecommendation r;
  r.lambda = 0.3;
  r.neighborhood = 26;
  r.selection = { { "grid", { 0.0, 0.3, 1.0 } }, { "meanDice", { 0.7, 0.8, 0.1 } } };
  model.regularization = r;
  const std::string with = canopy::testing::OutputPath("with-regularization.json");
  SavePBTModelFile(model, with);
  const auto loaded = LoadPBTModelFile(with);
  ASSERT_TRUE(loaded.regularization.has_value());
  EXPECT_EQ(loaded.regularization->lambda, 0.3);
  EXPECT_EQ(loaded.regularization->neighborhood, 26);
  EXPECT_EQ(loaded.regularization->selection, r.selection);
  EXPECT_EQ(PBTModelFileToJson(loaded)["regularization"]["version"], kRegularizationFieldVersion);

  // A field this Canopy cannot read is an error naming the file, not silently ignored.
  auto write = [](const std::string & path, const nlohmann::json & doc) { std::ofstream(path) << doc.dump(); };
  const std::string bad = canopy::testing::OutputPath("bad-regularization.json");
  for (const auto & field : { nlohmann::json{ { "version", 2 }, { "lambda", 0.3 } },
                              nlohmann::json{ { "version", 1 }, { "lambda", -1.0 } },
                              nlohmann::json{ { "version", 1 } },
                              nlohmann::json{ { "version", 1 }, { "lambda", 0.3 }, { "neighborhood", 8 } },
                              nlohmann::json("0.3") })
  {
    auto doc = PBTModelFileToJson(model);
    doc["regularization"] = field;
    write(bad, doc);
    try
    {
      LoadPBTModelFile(bad);
      ADD_FAILURE() << field.dump() << " was accepted";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find(bad), std::string::npos) << e.GetDescription();
      EXPECT_NE(std::string(e.GetDescription()).find("regularization"), std::string::npos) << e.GetDescription();
    }
  }
}

TEST(Regularization, SelectionRejectsABadGrid)
{
  const std::vector<LabelledVolume> none;
  LambdaSelectionOptions            options;
  options.grid = { 0.5, 0.2 };
  EXPECT_THROW(RecommendRegularization(PBTModelFile{}, { Ball(1, 10, 10, 10) }, ResolvedBackend{}, options),
               itk::ExceptionObject);
  EXPECT_THROW(RecommendRegularization(PBTModelFile{}, none, ResolvedBackend{}), itk::ExceptionObject);
}

TEST(StagedOutputs, NothingAppearsUnlessEveryOutputWasWritten)
{
  const std::string a = canopy::testing::OutputPath("a.txt"), b = canopy::testing::OutputPath("b.txt");
  std::filesystem::remove(a);
  std::filesystem::remove(b);
  {
    StagedOutputs outputs;
    outputs.Write(a, [](const std::string & t) { std::ofstream(t) << "a"; });
    EXPECT_FALSE(std::filesystem::exists(a)); // not before Commit
    try
    {
      outputs.Write(b, [](const std::string & t) { CANOPY_THROW(t << ": cannot write"); });
      ADD_FAILURE() << "the failed write was not reported";
    }
    catch (const itk::ExceptionObject & e)
    {
      EXPECT_EQ(std::string(e.GetDescription()), b + ": cannot write"); // names the output, not the temporary
    }
  } // no Commit: the written temporary goes
  EXPECT_FALSE(std::filesystem::exists(a));
  EXPECT_FALSE(std::filesystem::exists(TemporaryPathFor(a)));
  EXPECT_FALSE(std::filesystem::exists(b));

  StagedOutputs outputs;
  outputs.Write(a, [](const std::string & t) { std::ofstream(t) << "a"; });
  EXPECT_THROW(outputs.Write(a, [](const std::string &) {}), itk::ExceptionObject); // one path, two outputs
  outputs.Write(b, [](const std::string & t) { std::ofstream(t) << "b"; });
  outputs.Commit();
  EXPECT_TRUE(std::filesystem::exists(a));
  EXPECT_TRUE(std::filesystem::exists(b));
  EXPECT_FALSE(std::filesystem::exists(TemporaryPathFor(a)));
}

} // namespace
