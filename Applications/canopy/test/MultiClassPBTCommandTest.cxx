// `canopy train-pbt --labels 1,2 --auto-context 2` and `canopy segment` end to end (issue 13): one
// model file of two classes and two stages, a label map with both classes, a graph cut per class with
// --lambda, and a clear refusal of the outputs a multi-class model does not write; segment
// --class-probabilities (every class's map in predict-forest --mode distribution's layout): the maps sum
// to 1, their argmax is the label map, they keep the input's grid, a batch writes the same, bad uses fail.
#include "canopyTesting.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkVectorImage.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <utility>
#include <vector>

#include <unistd.h>

namespace
{
namespace fs = std::filesystem;
using Float = itk::Image<float, 3>;
using Mask = itk::Image<unsigned char, 3>;
using Classes = itk::VectorImage<float, 3>;
using canopy::testing::CommandRun;

CommandRun
Canopy(const std::string & arguments, const std::string & name)
{
  return canopy::testing::RunCommand(CANOPY_EXECUTABLE, arguments, name);
}

template<typename TImage>
typename TImage::Pointer
Make()
{
  auto                        image = TImage::New();
  typename TImage::RegionType region;
  region.SetSize({ { 30, 26, 22 } });
  image->SetRegions(region);
  image->Allocate(true);
  return image;
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

/** A bright ball (class 1) and a dimmer one (class 2) on a dark, noisy background. */
void
WritePhantom(int seed, const std::string & image, const std::string & label)
{
  std::mt19937                    rng(seed);
  std::normal_distribution<float> noise(0.0f, 6.0f);
  auto                            volume = Make<Float>();
  auto                            labels = Make<Mask>();
  const double                    a[3] = { 9.0 + seed % 3, 12.0, 11.0 }, b[3] = { 20.0, 13.0 + seed % 2, 10.0 };
  for (int z = 0; z < 22; ++z)
    for (int y = 0; y < 26; ++y)
      for (int x = 0; x < 30; ++x)
      {
        const std::size_t i = (std::size_t(z) * 26 + y) * 30 + x;
        float             v = 20.0f;
        if (std::hypot(x - a[0], y - a[1], z - a[2]) <= 4.0)
        {
          v = 100.0f;
          labels->GetBufferPointer()[i] = 1;
        }
        else if (std::hypot(x - b[0], y - b[1], z - b[2]) <= 4.0)
        {
          v = 60.0f;
          labels->GetBufferPointer()[i] = 2;
        }
        volume->GetBufferPointer()[i] = v + noise(rng);
      }
  Write(volume.GetPointer(), image);
  Write(labels.GetPointer(), label);
}

template<typename TImage>
typename TImage::Pointer
Read(const std::string & path)
{
  auto reader = itk::ImageFileReader<TImage>::New();
  reader->SetFileName(path);
  reader->Update();
  return reader->GetOutput();
}

Mask::Pointer
ReadMask(const std::string & path)
{
  return Read<Mask>(path);
}

double
Dice(const Mask * a, const Mask * b, int label)
{
  std::int64_t both = 0, sum = 0;
  for (itk::SizeValueType i = 0; i < a->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
  {
    const bool x = a->GetBufferPointer()[i] == label, y = b->GetBufferPointer()[i] == label;
    both += x && y;
    sum += x + y;
  }
  return sum ? 2.0 * both / sum : 1.0;
}

TEST(MultiClassPBTCommand, TrainsBothClassesInOneFileAndSegmentsThemTogether)
{
  const std::string dir = canopy::testing::OutputPath("multi-class-pbt-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string pairs;
  for (int k = 0; k < 5; ++k)
  {
    const std::string image = dir + "/case" + std::to_string(k) + ".nii.gz";
    const std::string label = dir + "/case" + std::to_string(k) + "-label.nii.gz";
    WritePhantom(k + 1, image, label);
    if (k < 4)
      pairs += " --image " + image + " --label " + label;
  }
  const std::string model = dir + "/model.json";
  const CommandRun  train =
    Canopy("train-pbt" + pairs + " --labels 1,2 --auto-context 2 --context-folds 2 --out " + model +
             " --spacing 1 --box-mm 10 --features 150 --depth 2 --learners 6 --candidates 40 --min-samples 50"
             " --positives 100 --negatives 200 --near-boundary-mm 4 --device cpu --quiet",
           "train");
  ASSERT_EQ(train.status, 0) << train.err;
  const auto doc = nlohmann::json::parse(std::ifstream(model));
  EXPECT_EQ(doc["kind"], "pbt-classes");
  EXPECT_EQ(doc["version"], 3);
  EXPECT_EQ(doc["labels"], nlohmann::json({ 1, 2 }));
  EXPECT_EQ(doc["stages"].size(), 2u);

  const std::string input = dir + "/case4.nii.gz", truth = dir + "/case4-label.nii.gz";
  for (const std::string lambda : { "", " --lambda 0.3" })
  {
    const std::string labels = dir + "/labels" + (lambda.empty() ? "" : "-cut") + ".nii.gz";
    const CommandRun  run = Canopy("segment --model " + model + " --input " + input + " --output " + labels + lambda +
                                    " --device cpu --quiet",
                                  "segment");
    ASSERT_EQ(run.status, 0) << run.err;
    const auto result = ReadMask(labels), reference = ReadMask(truth);
    EXPECT_GT(Dice(result, reference, 1), 0.7) << lambda;
    EXPECT_GT(Dice(result, reference, 2), 0.7) << lambda;
  }
  const CommandRun mesh = Canopy("segment --model " + model + " --input " + input + " --output " + dir +
                                   "/never.nii.gz --mesh " + dir + "/never.vtk --device cpu --quiet",
                                 "mesh");
  EXPECT_NE(mesh.status, 0);
  EXPECT_NE(mesh.err.find("holds 2 classes"), std::string::npos) << mesh.err;
  EXPECT_FALSE(fs::exists(dir + "/never.nii.gz"));
}

/** Trains a one-stage model of classes 1 and 2 on phantoms 1-4 in `dir`; returns its path. */
std::string
TrainPhantomModel(const std::string & dir, const std::string & options)
{
  std::string pairs;
  for (int k = 0; k < 4; ++k)
  {
    const std::string image = dir + "/case" + std::to_string(k) + ".nii.gz";
    const std::string label = dir + "/case" + std::to_string(k) + "-label.nii.gz";
    WritePhantom(k + 1, image, label);
    pairs += " --image " + image + " --label " + label;
  }
  const std::string model = dir + "/model.json";
  const CommandRun  train = Canopy("train-pbt" + pairs + options + " --out " + model +
                                    " --spacing 1 --box-mm 10 --features 150 --depth 2 --learners 6 --candidates 40"
                                     " --min-samples 50 --positives 100 --negatives 200 --near-boundary-mm 4"
                                     " --device cpu --quiet",
                                  "train");
  EXPECT_EQ(train.status, 0) << train.err;
  return model;
}

TEST(MultiClassPBTCommand, ClassProbabilitiesSumToOneDecideTheLabelsAndKeepTheGrid)
{
  const std::string dir = canopy::testing::OutputPath("class-probabilities-" + std::to_string(::getpid()));
  fs::create_directories(dir + "/inputs");
  const std::string model = TrainPhantomModel(dir, " --labels 1,2 --auto-context 2 --context-folds 2");
  // The test volume on a grid of its own: origin, spacing and a flipped direction.
  const std::string input = dir + "/inputs/test.nii.gz", truth = dir + "/test-label.nii.gz";
  WritePhantom(5, input, truth);
  auto         image = Read<Float>(input);
  const double origin[3] = { -12.5, 3.0, 40.0 }, spacing[3] = { 1.0, 1.1, 0.9 };
  image->SetOrigin(origin);
  image->SetSpacing(spacing);
  Float::DirectionType direction;
  direction.SetIdentity();
  direction(0, 0) = direction(1, 1) = -1.0;
  image->SetDirection(direction);
  Write(image.GetPointer(), input);

  const std::string labels = dir + "/labels.nii.gz", maps = dir + "/classes.nii.gz";
  const CommandRun  run = Canopy("segment --model " + model + " --input " + input + " --output " + labels +
                                  " --class-probabilities " + maps + " --device cpu --quiet",
                                "segment");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto classes = Read<Classes>(maps);
  const auto decided = ReadMask(labels);
  ASSERT_EQ(classes->GetNumberOfComponentsPerPixel(), 3u);
  EXPECT_EQ(classes->GetLargestPossibleRegion().GetSize(), image->GetLargestPossibleRegion().GetSize());
  for (int i = 0; i < 3; ++i)
  {
    EXPECT_NEAR(classes->GetOrigin()[i], image->GetOrigin()[i], 1e-5);
    EXPECT_NEAR(classes->GetSpacing()[i], image->GetSpacing()[i], 1e-5);
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(classes->GetDirection()(i, j), image->GetDirection()(i, j), 1e-6);
  }
  const std::size_t n = classes->GetLargestPossibleRegion().GetNumberOfPixels();
  std::size_t       disagree = 0, notSummingToOne = 0, outOfRange = 0, labelled[3] = {};
  for (std::size_t i = 0; i < n; ++i)
  {
    const float * p = classes->GetBufferPointer() + 3 * i;
    notSummingToOne += std::abs(p[0] + p[1] + p[2] - 1.0f) > 1e-5f;
    for (int c = 0; c < 3; ++c)
      outOfRange += !(p[c] >= 0.0f && p[c] <= 1.0f);
    // argmax: a class over the background on ties, class 1 over class 2
    const int best = p[1] >= p[2] ? 1 : 2;
    const int argmax = p[best] >= p[0] ? best : 0;
    disagree += argmax != decided->GetBufferPointer()[i];
    ++labelled[decided->GetBufferPointer()[i] % 3];
  }
  EXPECT_EQ(notSummingToOne, 0u);
  EXPECT_EQ(outOfRange, 0u);
  EXPECT_EQ(disagree, 0u);
  EXPECT_GT(labelled[1], 100u); // both classes are there: the check above is not vacuous
  EXPECT_GT(labelled[2], 100u);
  EXPECT_GT(Dice(decided, ReadMask(truth), 1), 0.7);

  // A batch writes the same maps, named as the label maps.
  const CommandRun batch = Canopy("segment --model " + model + " --inputs " + dir + "/inputs --output-dir " + dir +
                                    "/batch --class-probabilities-dir " + dir + "/batch-classes --device cpu --quiet",
                                  "batch");
  ASSERT_EQ(batch.status, 0) << batch.err;
  const auto again = Read<Classes>(dir + "/batch-classes/test.nii.gz");
  ASSERT_EQ(again->GetNumberOfComponentsPerPixel(), 3u);
  EXPECT_TRUE(std::equal(again->GetBufferPointer(), again->GetBufferPointer() + 3 * n, classes->GetBufferPointer()));

  // Bad uses fail before anything is written.
  const std::string never = dir + "/never.nii.gz";
  for (const auto & [arguments, message] : std::vector<std::pair<std::string, std::string>>{
         { " --input " + input + " --output " + never + " --class-probabilities " + dir + "/classes.vtk",
           "--class-probabilities" },
         { " --input " + input + " --output " + never + " --class-probabilities " + never, "--class-probabilities" },
         { " --inputs " + dir + "/inputs --output-dir " + dir + "/b2 --class-probabilities " + dir + "/c.nii.gz",
           "--class-probabilities-dir" },
         { " --input " + input + " --output " + never + " --class-probabilities-dir " + dir + "/c2", "for a batch" },
         { " --inputs " + dir + "/inputs --output-dir " + dir + "/b3 --class-probabilities-dir " + dir + "/b3",
           "--output-dir" } })
  {
    fs::create_directories(dir + "/b3");
    const CommandRun bad = Canopy("segment --model " + model + arguments + " --device cpu --quiet", "bad");
    EXPECT_NE(bad.status, 0) << arguments;
    EXPECT_NE(bad.err.find(message), std::string::npos) << arguments << ": " << bad.err;
    EXPECT_FALSE(fs::exists(never)) << arguments;
    EXPECT_FALSE(fs::exists(dir + "/b3/test.nii.gz")) << arguments;
  }
}

TEST(MultiClassPBTCommand, ABinaryModelsClassProbabilitiesAreOneMinusPAndP)
{
  const std::string dir = canopy::testing::OutputPath("binary-class-probabilities-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string model = TrainPhantomModel(dir, " --positive-label 1");
  const std::string input = dir + "/test.nii.gz";
  WritePhantom(5, input, dir + "/test-label.nii.gz");
  const CommandRun run =
    Canopy("segment --model " + model + " --input " + input + " --output " + dir + "/labels.nii.gz --probability " +
             dir + "/p.nii.gz --class-probabilities " + dir + "/classes.nii.gz --device cpu --quiet",
           "segment");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto classes = Read<Classes>(dir + "/classes.nii.gz");
  const auto p = Read<Float>(dir + "/p.nii.gz");
  ASSERT_EQ(classes->GetNumberOfComponentsPerPixel(), 2u);
  const std::size_t n = p->GetLargestPossibleRegion().GetNumberOfPixels();
  std::size_t       wrong = 0;
  for (std::size_t i = 0; i < n; ++i)
  {
    const float * c = classes->GetBufferPointer() + 2 * i;
    wrong += c[1] != p->GetBufferPointer()[i] || std::abs(c[0] + c[1] - 1.0f) > 1e-6f;
  }
  EXPECT_EQ(wrong, 0u);
}
} // namespace
