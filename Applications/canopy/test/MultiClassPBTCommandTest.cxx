// `canopy train-pbt --labels 1,2 --auto-context 2` and `canopy segment` end to end (issue 13): one
// model file of two classes and two stages, a label map with both classes, a graph cut per class with
// --lambda, and a clear refusal of the outputs a multi-class model does not write.
#include "canopyTesting.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

namespace
{
namespace fs = std::filesystem;
using Float = itk::Image<float, 3>;
using Mask = itk::Image<unsigned char, 3>;
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

Mask::Pointer
ReadMask(const std::string & path)
{
  auto reader = itk::ImageFileReader<Mask>::New();
  reader->SetFileName(path);
  reader->Update();
  return reader->GetOutput();
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
} // namespace
