// Auto-context cascades: a phantom where the class of a voxel depends on context wider than the
// forest's features reach (balls of one intensity, labelled by their size), so only the stages that
// read earlier stages' maps can decide it; the JSON form; a plain forest file as a one-stage cascade.
#include "ForestCascadeTestSupport.h"
#include "canopyForestCascade.h"
#include "canopyTesting.h"
#include "itkForestCascadeClassificationImageFilter.h"
#include "itkRandomForestClassificationImageFilter.h"

#include "canopy/Errors.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <random>

namespace
{
using namespace canopy;

TEST(ForestCascade, LaterStagesDecideWhatLocalFeaturesCannot)
{
  const auto &                          p = SharedPhantoms();
  std::vector<ForestCascadeStageReport> report;
  const auto cascade = TrainForestCascade(p.trainPointers, 3, SmallOptions(3), p.testPointers, &report);
  ASSERT_EQ(cascade.stages.size(), 3u);
  ASSERT_EQ(report.size(), 3u);
  for (int k = 0; k < 3; ++k)
  {
    ASSERT_EQ(report[k].heldOutDice.size(), 3u);
    std::cout << "stage " << k + 1 << ": held-out Dice big " << report[k].heldOutDice[1] << ", small "
              << report[k].heldOutDice[2] << ", " << report[k].samples << " samples, " << report[k].trainSeconds
              << " s\n";
    for (double d : report[k].heldOutDice)
      ASSERT_FALSE(std::isnan(d));
  }
  EXPECT_EQ(cascade.stages[0].numChannels, 1);
  EXPECT_EQ(cascade.stages[1].numChannels, 4);
  EXPECT_EQ(cascade.stages[2].numChannels, 4);
  // Stage 1 mixes the rims of big balls up with small balls; the maps let later stages tell them apart.
  const double first = 0.5 * (report[0].heldOutDice[1] + report[0].heldOutDice[2]);
  const double last = 0.5 * (report[2].heldOutDice[1] + report[2].heldOutDice[2]);
  EXPECT_LT(first, 0.9);
  EXPECT_GT(last, first + 0.05);

  // Prediction reproduces the held-out labels the trainer scored for the last stage.
  ForestDensePredictionOptions options;
  options.backend = "cpu";
  options.threads = 2;
  ForestLabelScores scores(3);
  ASSERT_EQ(report[2].heldOutLabels.size(), p.testPointers.size());
  EXPECT_TRUE(report[0].heldOutLabels.empty() && report[1].heldOutLabels.empty()) << "the last stage's only";
  for (std::size_t i = 0; i < p.testPointers.size(); ++i)
  {
    const auto * item = p.testPointers[i];
    const auto   labels = ArgMaxLabels(PredictForestCascade(cascade, item->image, options), 3);
    EXPECT_EQ(report[2].heldOutLabels[i], labels) << "held-out image " << i;
    scores.Add(labels.data(), item->labels.data(), labels.size());
  }
  for (int c = 0; c < 3; ++c)
    EXPECT_DOUBLE_EQ(scores.Dice(c), report[2].heldOutDice[c]) << c;
}

TEST(ForestCascade, PredictionDoesNotDependOnThreads)
{
  const auto & p = SharedPhantoms();
  auto         o = SmallOptions(2);
  o.forest.numTrees = 1;
  o.forest.maxDepth = 6;
  const auto                   cascade = TrainForestCascade(p.trainPointers, 3, o);
  ForestDensePredictionOptions one, two;
  one.backend = two.backend = "cpu";
  one.threads = 1;
  two.threads = 2;
  EXPECT_EQ(PredictForestCascade(cascade, p.test[0].image, one), PredictForestCascade(cascade, p.test[0].image, two));
}

TEST(ForestCascade, JsonRoundTripAndCorruptFiles)
{
  const auto & p = SharedPhantoms();
  auto         o = SmallOptions(2);
  o.forest.numTrees = 1;
  o.forest.maxDepth = 4;
  auto cascade = TrainForestCascade(p.trainPointers, 3, o);
  cascade.filterBank = { "intensity" };
  const std::string path = canopy::testing::OutputPath("cascade.json");
  WriteForestCascadeJson(cascade, path);
  const auto back = ReadForestOrCascadeJson(path);
  EXPECT_EQ(ForestCascadeToJsonString(back), ForestCascadeToJsonString(cascade));
  EXPECT_EQ(back.filterBank, cascade.filterBank);
  // The text is streamed stage by stage; it must be what nlohmann-json writes for the same document.
  EXPECT_EQ(nlohmann::json::parse(ForestCascadeToJsonString(cascade)).dump(), ForestCascadeToJsonString(cascade));

  const auto text = ForestCascadeToJsonString(cascade);
  auto       corrupt = [&](auto change)
  {
    auto doc = nlohmann::json::parse(text);
    change(doc);
    return doc.dump();
  };
  using J = nlohmann::json;
  const std::vector<std::pair<std::string, std::string>> cases = {
    { corrupt([](J & d) { d["format"] = "canopy-forest"; }), "\"format\"" },
    { corrupt([](J & d) { d["version"] = 99; }), "version 99 is newer" },
    { corrupt([](J & d) { d["version"] = "1"; }), "\"version\"" },
    { corrupt([](J & d) { d["stages"] = J::array(); }), "\"stages\"" },
    { corrupt([](J & d) { d["filterBank"] = { "blur:2" }; }), "unknown filter-bank channel" },
    { corrupt([](J & d) { d["stages"][1]["channels"] = 1; }), "stage 1" },
    { corrupt([](J & d) { d["stages"][1]["classes"] = 2; }), "stage 1" },
    { corrupt([](J & d) { d["stages"].push_back(d["stages"][0]); }), "stage 2: reads 1 channels" },
  };
  for (const auto & [doc, expected] : cases)
  {
    try
    {
      ForestCascadeFromJsonString(doc, "m.json");
      ADD_FAILURE() << "accepted: " << expected;
    }
    catch (const canopy::Error & e)
    {
      EXPECT_NE(std::string(e.what()).find("m.json"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

TEST(ForestCascade, PlainForestFileIsOneStage)
{
  const auto & p = SharedPhantoms();
  auto         o = SmallOptions(1);
  o.forest.numTrees = 1;
  o.forest.maxDepth = 6;
  const auto  cascade = TrainForestCascade(p.trainPointers, 3, o);
  ForestModel forest = cascade.stages[0];
  forest.filterBank = { "intensity" };
  const std::string path = canopy::testing::OutputPath("plain-forest.json");
  WriteForestModelJson(forest, path);
  const auto read = ReadForestOrCascadeJson(path);
  ASSERT_EQ(read.stages.size(), 1u);
  EXPECT_EQ(read.filterBank, forest.filterBank);
  ForestDensePredictionOptions options;
  options.backend = "cpu";
  std::vector<float> direct(std::size_t(kNx) * kNy * kNz * 3);
  options.mode = ForestOutputMode::Distribution;
  PredictForestDense(forest, p.test[0].image, options, direct.data(), nullptr);
  EXPECT_EQ(PredictForestCascade(read, p.test[0].image, options), direct);
}

TEST(ForestCascade, FilterKeepsGeometryAndMatchesTheLibrary)
{
  const auto & p = SharedPhantoms();
  auto         o = SmallOptions(2);
  o.forest.numTrees = 1;
  o.forest.maxDepth = 6;
  o.folds = 3;
  // Labels of the size phantoms on random intensities: what is learnt does not matter here, only that
  // the filter computes the bank's channels and runs the stages as the library does.
  const std::vector<std::string>           bank = { "intensity", "gaussian:1" };
  std::vector<ForestLabelledImage>         banked;
  std::vector<const ForestLabelledImage *> pointers;
  for (int i = 0; i < 3; ++i)
  {
    const auto volume = canopy::testing::MakeRandomVolume<float>(kNx, kNy, kNz, 0.0, 1.0, 300 + i);
    banked.push_back({ MakeForestImage<3>(volume, bank, 1), p.train[i].labels });
  }
  for (const auto & b : banked)
    pointers.push_back(&b);
  auto cascade = std::make_shared<ForestCascade>(TrainForestCascade(pointers, 3, o));
  cascade->filterBank = bank;

  const auto input = canopy::testing::MakeRandomVolume<float>(kNx, kNy, kNz, 0.0, 1.0, 777);
  using Labels = itk::Image<std::int32_t, 3>;
  auto filter = itk::ForestCascadeClassificationImageFilter<itk::Image<float, 3>, Labels>::New();
  filter->SetInput(input);
  filter->SetCascade(cascade);
  filter->SetBackend("cpu");
  filter->Update();
  const Labels * out = filter->GetOutput();
  EXPECT_EQ(out->GetOrigin(), input->GetOrigin());
  EXPECT_EQ(out->GetSpacing(), input->GetSpacing());
  EXPECT_EQ(out->GetDirection(), input->GetDirection());
  EXPECT_EQ(out->GetLargestPossibleRegion(), input->GetLargestPossibleRegion());
  // Where the time went: the channels, each stage's forest and the context steps between stages.
  const auto & times = filter->GetPredictionTimes();
  EXPECT_GT(times.channelsSeconds, 0.0);
  ASSERT_GE(cascade->stages.size(), 2u);
  ASSERT_EQ(times.forestSeconds.size(), cascade->stages.size());
  ASSERT_EQ(times.contextSeconds.size(), cascade->stages.size() - 1);
  for (const double t : times.forestSeconds)
    EXPECT_GT(t, 0.0);
  for (const double t : times.contextSeconds)
    EXPECT_GT(t, 0.0);

  ForestDensePredictionOptions options;
  options.backend = "cpu";
  const auto expected =
    ArgMaxLabels(PredictForestCascade(*cascade, MakeForestImage<3>(input, cascade->filterBank, 1), options), 3);
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), out->GetBufferPointer()));

  // Probabilities: one component per class, summing to 1.
  using Probabilities = itk::VectorImage<float, 3>;
  auto soft = itk::ForestCascadeClassificationImageFilter<itk::Image<float, 3>, Probabilities>::New();
  soft->SetInput(input);
  soft->SetCascade(cascade);
  soft->SetBackend("cpu");
  soft->Update();
  ASSERT_EQ(soft->GetOutput()->GetNumberOfComponentsPerPixel(), 3u);
  const float * q = soft->GetOutput()->GetBufferPointer();
  EXPECT_NEAR(q[0] + q[1] + q[2], 1.0f, 1e-5f);

  // A one-stage cascade is the plain forest filter.
  auto single = std::make_shared<ForestCascade>();
  single->filterBank = cascade->filterBank;
  single->stages = { cascade->stages[0] };
  auto forest = std::make_shared<ForestModel>(cascade->stages[0]);
  forest->filterBank = cascade->filterBank;
  auto plain = itk::RandomForestClassificationImageFilter<itk::Image<float, 3>, Labels>::New();
  plain->SetInput(input);
  plain->SetModel(forest);
  plain->SetBackend("cpu");
  plain->Update();
  filter->SetCascade(single);
  filter->Update();
  const std::size_t n = std::size_t(kNx) * kNy * kNz;
  EXPECT_TRUE(std::equal(plain->GetOutput()->GetBufferPointer(),
                         plain->GetOutput()->GetBufferPointer() + n,
                         filter->GetOutput()->GetBufferPointer()));
}

// Pose channels (issue 13): the cascade records its reference structure, its filter needs the input's
// frame and then predicts as the library does on the channels computed in that frame.
TEST(ForestCascade, PoseChannelsNeedTheInputsFrame)
{
  const auto & p = SharedPhantoms();
  auto         o = SmallOptions(2);
  o.forest.numTrees = 1;
  o.forest.maxDepth = 5;
  o.folds = 2;
  ReferenceFrame frame;
  frame.center[0] = 4.0;
  frame.halfSize[1] = 6.0;
  frame.axes[0][0] = frame.axes[1][1] = 0.0;
  frame.axes[0][1] = frame.axes[1][0] = 1.0; // a frame with x and y swapped (z flipped: right-handed)
  frame.axes[2][2] = -1.0;
  const std::vector<std::string>           bank = { "intensity", "pose:0", "pose:1", "pose:2" };
  std::vector<ForestLabelledImage>         banked;
  std::vector<const ForestLabelledImage *> pointers;
  for (int i = 0; i < 2; ++i)
  {
    const auto volume = canopy::testing::MakeRandomVolume<float>(kNx, kNy, kNz, 0.0, 1.0, 400 + i);
    banked.push_back({ MakeForestImage<3>(volume, bank, 1, {}, &frame), p.train[i].labels });
  }
  for (const auto & b : banked)
    pointers.push_back(&b);
  auto cascade = std::make_shared<ForestCascade>(TrainForestCascade(pointers, 3, o));
  cascade->filterBank = bank;
  cascade->reference = { "hippocampus", "label 1" };
  const auto text = ForestCascadeToJsonString(*cascade);
  const auto back = ForestCascadeFromJsonString(text, "c.json");
  EXPECT_EQ(back.reference.structure, "hippocampus");
  EXPECT_EQ(back.reference.training, "label 1");
  auto withoutReference = *cascade;
  withoutReference.reference = {};
  EXPECT_THROW(ForestCascadeFromJsonString(ForestCascadeToJsonString(withoutReference), "c.json"), canopy::Error);

  const auto input = canopy::testing::MakeRandomVolume<float>(kNx, kNy, kNz, 0.0, 1.0, 778);
  using Labels = itk::Image<std::int32_t, 3>;
  auto filter = itk::ForestCascadeClassificationImageFilter<itk::Image<float, 3>, Labels>::New();
  filter->SetInput(input);
  filter->SetCascade(cascade);
  filter->SetBackend("cpu");
  try
  {
    filter->Update();
    FAIL() << "no error without the reference frame";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.what()).find("structure 'hippocampus'"), std::string::npos) << e.what();
  }
  filter->SetReferenceFrame(frame);
  filter->Update();
  ForestDensePredictionOptions options;
  options.backend = "cpu";
  const auto expected = ArgMaxLabels(
    PredictForestCascade(*cascade, MakeForestImage<3>(input, cascade->filterBank, 1, {}, &frame), options), 3);
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), filter->GetOutput()->GetBufferPointer()));
}

// Intensity normalisation (ForestCascade::normalization): kept in the file (version 3, which earlier
// readers refuse), taken from a plain forest file, and applied by the filter before the bank, so a scan of
// twice the gain is labelled as the scan itself.
TEST(ForestCascade, NormalizationIsKeptAndAppliedBeforeTheBank)
{
  const auto & p = SharedPhantoms();
  auto         o = SmallOptions(2);
  o.forest.numTrees = 2;
  o.forest.maxDepth = 6;
  const std::vector<std::string>           bank = { "intensity", "gaussian:1" };
  const IntensityNormalization             percentile;
  std::vector<ForestLabelledImage>         banked;
  std::vector<const ForestLabelledImage *> pointers;
  for (int i = 0; i < 3; ++i)
  {
    const auto volume = canopy::testing::MakeRandomVolume<float>(kNx, kNy, kNz, 0.0, 1.0, 400 + i);
    banked.push_back({ MakeForestImage<3>(volume, bank, 1, {}, nullptr, percentile), p.train[i].labels });
  }
  for (const auto & b : banked)
    pointers.push_back(&b);
  auto cascade = std::make_shared<ForestCascade>(TrainForestCascade(pointers, 3, o));
  cascade->filterBank = bank;
  cascade->normalization = percentile;

  const auto doc = nlohmann::json::parse(ForestCascadeToJsonString(*cascade));
  EXPECT_EQ(doc["version"], 3);
  EXPECT_EQ(doc["normalization"]["method"], "percentile");
  const auto back = ForestCascadeFromJsonString(doc.dump(), "round trip");
  ASSERT_TRUE(back.normalization.has_value());
  EXPECT_EQ(ForestCascadeToJsonString(back), doc.dump());
  auto inStage = doc;
  inStage["stages"][1]["normalization"] = doc["normalization"];
  EXPECT_THROW(ForestCascadeFromJsonString(inStage.dump(), "m.json"), canopy::Error);
  auto none = *cascade;
  none.normalization.reset();
  EXPECT_EQ(nlohmann::json::parse(ForestCascadeToJsonString(none))["version"], 1);
  ForestModel forest = cascade->stages[0]; // a plain forest file: its own field
  forest.filterBank = bank;
  forest.normalization = percentile;
  const std::string path = canopy::testing::OutputPath("normalized-forest.json");
  WriteForestModelJson(forest, path);
  ASSERT_TRUE(ReadForestOrCascadeJson(path).normalization.has_value());

  // Whole numbers, so twice the values normalise to the same floats.
  auto              input = canopy::testing::MakeRandomVolume<float>(kNx, kNy, kNz, 0.0, 1.0, 778);
  auto              brighter = canopy::testing::MakeRandomVolume<float>(kNx, kNy, kNz, 0.0, 1.0, 778);
  const std::size_t n = std::size_t(kNx) * kNy * kNz;
  for (std::size_t i = 0; i < n; ++i)
  {
    input->GetBufferPointer()[i] = std::round(1000.0f * input->GetBufferPointer()[i]);
    brighter->GetBufferPointer()[i] = 2.0f * input->GetBufferPointer()[i];
  }
  using Labels = itk::Image<std::int32_t, 3>;
  auto label = [&cascade](const itk::Image<float, 3> * image)
  {
    auto filter = itk::ForestCascadeClassificationImageFilter<itk::Image<float, 3>, Labels>::New();
    filter->SetInput(image);
    filter->SetCascade(cascade);
    filter->SetBackend("cpu");
    filter->Update();
    return Labels::Pointer(filter->GetOutput());
  };
  const auto                   labels = label(input);
  ForestDensePredictionOptions options;
  options.backend = "cpu";
  const auto expected = ArgMaxLabels(
    PredictForestCascade(*cascade, MakeForestImage<3>(input, bank, 1, {}, nullptr, percentile), options), 3);
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), labels->GetBufferPointer()));
  const auto brighterLabels = label(brighter);
  EXPECT_TRUE(
    std::equal(labels->GetBufferPointer(), labels->GetBufferPointer() + n, brighterLabels->GetBufferPointer()));
}

TEST(ForestCascade, BadOptionsAreNamed)
{
  const auto & p = SharedPhantoms();
  auto         o = SmallOptions(0);
  EXPECT_THROW(TrainForestCascade(p.trainPointers, 3, o), canopy::Error);
  o = SmallOptions(2);
  o.folds = 7; // more folds than the 6 training images
  try
  {
    TrainForestCascade(p.trainPointers, 3, o);
    ADD_FAILURE();
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.what()).find("--context-folds 7"), std::string::npos) << e.what();
  }
}
} // namespace
