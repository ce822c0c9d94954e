// Intensity normalisation of a forest's input (ForestModel::normalization): the model file's field and
// versions, training and prediction computing the same channels, and what it is for: a model that reads
// a scan of another gain and offset as it read its training images.
#include "ForestFilterSupport.h"
#include "canopy/Errors.h"
#include "canopyForestInputChannels.h"
#include "canopyForestModel.h"
#include "itkRandomForestClassificationImageFilter.h"
#include "itkVectorImage.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace
{
using namespace canopy;
using canopy::testing::ForestPhantom;
using Image = itk::Image<float, 3>;
using LabelImage = itk::Image<unsigned char, 3>;

const std::vector<std::string> kBank{ "intensity", "gaussian:1", "gradient:1" };

/** A phantom with whole-number intensities, so that 2 v + 100 is exact in float (and so are the
 * percentiles of it, and their difference): the normalised channels of both are then equal bit for bit. */
ForestPhantom<3>
WholeNumberPhantom(std::uint64_t seed)
{
  ForestPhantom<3> p(24, seed);
  float *          v = p.image->GetBufferPointer();
  for (std::size_t i = 0; i < p.labels.size(); ++i)
    v[i] = std::round(v[i]);
  return p;
}

Image::Pointer
GainAndOffset(const Image * image, float gain, float offset)
{
  auto out = Image::New();
  out->CopyInformation(image);
  out->SetRegions(image->GetBufferedRegion());
  out->Allocate();
  const std::size_t n = image->GetBufferedRegion().GetNumberOfPixels();
  for (std::size_t i = 0; i < n; ++i)
    out->GetBufferPointer()[i] = gain * image->GetBufferPointer()[i] + offset;
  return out;
}

std::shared_ptr<ForestModel>
Train(const std::optional<IntensityNormalization> & normalization)
{
  std::vector<ForestLabelledImage> images;
  for (int i = 0; i < 3; ++i)
  {
    const auto p = WholeNumberPhantom(20 + i);
    images.push_back({ MakeForestImage<3>(p.image, kBank, 1, {}, nullptr, normalization), p.labels });
  }
  std::vector<const ForestLabelledImage *> pointers;
  for (const auto & i : images)
    pointers.push_back(&i);
  ForestSamplingOptions sampling;
  sampling.samplesPerImage = 600;
  auto model = std::make_shared<ForestModel>(
    TrainForest(MakeForestTrainingSet(pointers, 3, sampling), canopy::testing::PhantomTrainingOptions(3)));
  model->filterBank = kBank;
  model->normalization = normalization;
  return model;
}

LabelImage::Pointer
Label(const Image * image, std::shared_ptr<const ForestModel> model)
{
  auto filter = itk::RandomForestClassificationImageFilter<Image, LabelImage>::New();
  filter->SetInput(image);
  filter->SetModel(model);
  filter->SetMode(ForestOutputMode::ArgMax);
  filter->SetBackend("cpu");
  filter->Update();
  return filter->GetOutput();
}

std::size_t
DifferingVoxels(const LabelImage * a, const LabelImage * b)
{
  std::size_t       differ = 0;
  const std::size_t n = a->GetBufferedRegion().GetNumberOfPixels();
  for (std::size_t i = 0; i < n; ++i)
    differ += a->GetBufferPointer()[i] != b->GetBufferPointer()[i];
  return differ;
}

IntensityNormalization
Percentile()
{
  return IntensityNormalization{};
}

IntensityNormalization
Window(double low, double high)
{
  IntensityNormalization n;
  n.method = "window";
  n.windowLow = low;
  n.windowHigh = high;
  return n;
}

TEST(ForestNormalization, AnotherGainAndOffsetGiveTheSameLabels)
{
  const auto test = WholeNumberPhantom(7);
  const auto brighter = GainAndOffset(test.image, 2.0f, 100.0f); // background 10 -> 120, above class 1's 100
  const auto normalized = Train(Percentile());
  const auto labels = Label(test.image, normalized);
  EXPECT_EQ(DifferingVoxels(labels, Label(brighter, normalized)), 0u);
  std::size_t correct = 0;
  for (std::size_t i = 0; i < test.labels.size(); ++i)
    correct += labels->GetBufferPointer()[i] == test.labels[i];
  EXPECT_GT(double(correct) / test.labels.size(), 0.95);
  // The same forest on the raw intensities: the brighter scan is read as another image.
  const auto raw = Train(std::nullopt);
  const auto rawLabels = Label(test.image, raw);
  EXPECT_GT(DifferingVoxels(rawLabels, Label(brighter, raw)), test.labels.size() / 10);
}

TEST(ForestNormalization, TrainingAndPredictionComputeTheSameChannels)
{
  const auto p = WholeNumberPhantom(3);
  for (const auto & normalization : { Percentile(), Window(20.0, 90.0) })
  {
    const ForestImage trained = MakeForestImage<3>(p.image, kBank, 1, {}, nullptr, normalization);
    const ForestImage predicted =
      MakeForestInputChannels(p.image.GetPointer(), kBank, 3, "test", 1, {}, nullptr, 0, normalization);
    EXPECT_EQ(trained.sums, predicted.sums) << normalization.method;
    EXPECT_NE(trained.sums, MakeForestImage<3>(p.image, kBank, 1).sums) << normalization.method;
  }
  // Each component of a vector image is mapped by its own percentiles: a component at twice the gain
  // gives the same channels as the other.
  auto       vector = itk::VectorImage<float, 3>::New();
  const auto doubled = GainAndOffset(p.image, 2.0f, 0.0f);
  vector->CopyInformation(p.image);
  vector->SetRegions(p.image->GetBufferedRegion());
  vector->SetNumberOfComponentsPerPixel(2);
  vector->Allocate();
  float * interleaved = vector->GetPixelContainer()->GetBufferPointer();
  for (std::size_t i = 0; i < p.labels.size(); ++i)
  {
    interleaved[2 * i] = p.image->GetBufferPointer()[i];
    interleaved[2 * i + 1] = doubled->GetBufferPointer()[i];
  }
  const ForestImage both =
    MakeForestInputChannels(vector.GetPointer(), kBank, 6, "test", 1, {}, nullptr, 0, Percentile());
  const std::size_t half = both.sums.size() / 2;
  EXPECT_TRUE(std::equal(both.sums.begin(), both.sums.begin() + half, both.sums.begin() + half));
}

TEST(ForestNormalization, ModelFileKeepsItAsVersion2AndRefusesBadValues)
{
  auto       model = Train(Window(-100.0, 400.0));
  const auto text = ForestModelToJsonString(*model);
  const auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["version"], 2); // readers before the field stop at version 1 instead of ignoring it
  EXPECT_EQ(doc["normalization"]["method"], "window");
  const auto back = ForestModelFromJsonString(text, "round trip");
  ASSERT_TRUE(back.normalization.has_value());
  EXPECT_EQ(back.normalization->method, "window");
  EXPECT_EQ(back.normalization->windowLow, -100.0);
  EXPECT_EQ(back.normalization->windowHigh, 400.0);
  EXPECT_EQ(ForestModelToJsonString(back), text);

  model->normalization = Percentile();
  const auto percentile = ForestModelFromJsonString(ForestModelToJsonString(*model), "percentile");
  ASSERT_TRUE(percentile.normalization.has_value());
  EXPECT_EQ(percentile.normalization->method, "percentile");
  EXPECT_EQ(percentile.normalization->lowPercentile, 1.0);
  EXPECT_EQ(percentile.normalization->highPercentile, 99.0);

  // None: no field, version 1 (what earlier readers read), and a file without it reads as none.
  model->normalization.reset();
  const auto plain = nlohmann::json::parse(ForestModelToJsonString(*model));
  EXPECT_EQ(plain["version"], 1);
  EXPECT_FALSE(plain.contains("normalization"));
  EXPECT_FALSE(ForestModelFromJsonString(plain.dump(), "plain").normalization.has_value());

  // Bad values are refused, naming the field.
  for (const char * bad : { R"({"method": "gamma"})",
                            R"({"method": "window", "windowLow": 5, "windowHigh": 5})",
                            R"({"method": "percentile", "lowPercentile": 60, "highPercentile": 40})",
                            R"("percentile")" })
  {
    auto edited = doc;
    edited["normalization"] = nlohmann::json::parse(bad);
    try
    {
      ForestModelFromJsonString(edited.dump(), "m.json");
      ADD_FAILURE() << bad << " was accepted";
    }
    catch (const canopy::Error & e)
    {
      EXPECT_NE(std::string(e.what()).find("m.json: \"normalization\""), std::string::npos) << e.what();
    }
  }
}

} // namespace
