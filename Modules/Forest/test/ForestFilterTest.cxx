// itk::RandomForestClassificationImageFilter on 2D and 3D multi-class phantoms: all four output modes
// and their consistency, geometry, VectorImage (multi-channel) input, filter-bank channels against
// ITK's filters, cpu vs auto, model round trip with a filter bank, sampling and cross-validation.
#include "ForestFilterSupport.h"
#include "canopy/Errors.h"
#include "canopy/ForestPrediction.h"
#include "canopyForestFilterBank.h"
#include "canopyForestModel.h"
#include "itkGradientMagnitudeRecursiveGaussianImageFilter.h"
#include "itkLaplacianRecursiveGaussianImageFilter.h"
#include "itkRandomForestClassificationImageFilter.h"
#include "itkSmoothingRecursiveGaussianImageFilter.h"

#include <gtest/gtest.h>

#include <cmath>

namespace
{
using namespace canopy;
using canopy::testing::ForestPhantom;

template<unsigned int D>
std::shared_ptr<ForestModel>
TrainOnPhantoms(const std::vector<std::string> & bank, int samples = 600)
{
  std::vector<ForestLabelledImage> images;
  for (int i = 0; i < 3; ++i)
  {
    ForestPhantom<D> p(D == 3 ? 24 : 64, 10 + i);
    images.push_back({ MakeForestImage<D>(p.image, bank, 1), p.labels });
  }
  std::vector<const ForestLabelledImage *> pointers;
  for (const auto & i : images)
    pointers.push_back(&i);
  ForestSamplingOptions sampling;
  sampling.samplesPerImage = samples;
  auto model = std::make_shared<ForestModel>(
    TrainForest(MakeForestTrainingSet(pointers, 3, sampling), canopy::testing::PhantomTrainingOptions(D)));
  model->filterBank = bank;
  return model;
}

template<typename TOut, typename TIn>
typename TOut::Pointer
Classify(const TIn *                        input,
         std::shared_ptr<const ForestModel> model,
         ForestOutputMode                   mode,
         const std::string &                backend = "cpu")
{
  auto filter = itk::RandomForestClassificationImageFilter<TIn, TOut>::New();
  filter->SetInput(input);
  filter->SetModel(model);
  filter->SetMode(mode);
  filter->SetBackend(backend);
  filter->Update();
  return filter->GetOutput();
}

template<typename T>
class ForestFilterDimension : public ::testing::Test
{
};
using Dimensions = ::testing::Types<std::integral_constant<unsigned, 2>, std::integral_constant<unsigned, 3>>;
TYPED_TEST_SUITE(ForestFilterDimension, Dimensions);

TYPED_TEST(ForestFilterDimension, AllModesAreConsistentAccurateAndKeepGeometry)
{
  constexpr unsigned D = TypeParam::value;
  using ImageType = itk::Image<float, D>;
  using LabelImage = itk::Image<std::uint8_t, D>;
  using IndexImage = itk::Image<std::int32_t, D>;
  using VectorFloat = itk::VectorImage<float, D>;
  using VectorIndex = itk::VectorImage<std::int32_t, D>;
  const auto        model = TrainOnPhantoms<D>({ "intensity", "gaussian:1" });
  ForestPhantom<D>  test(D == 3 ? 24 : 64, 99);
  const ImageType * in = test.image;

  auto labels = Classify<LabelImage>(in, model, ForestOutputMode::ArgMax);
  auto dist = Classify<VectorFloat>(in, model, ForestOutputMode::Distribution);
  auto leaves = Classify<VectorIndex>(in, model, ForestOutputMode::ForestLeaves);
  auto first = Classify<IndexImage>(in, model, ForestOutputMode::TreeLeaf);

  for (const itk::ImageBase<D> * out : { static_cast<const itk::ImageBase<D> *>(labels.GetPointer()),
                                         static_cast<const itk::ImageBase<D> *>(dist.GetPointer()),
                                         static_cast<const itk::ImageBase<D> *>(leaves.GetPointer()),
                                         static_cast<const itk::ImageBase<D> *>(first.GetPointer()) })
  {
    EXPECT_EQ(out->GetLargestPossibleRegion(), in->GetLargestPossibleRegion());
    EXPECT_EQ(out->GetOrigin(), in->GetOrigin());
    EXPECT_EQ(out->GetSpacing(), in->GetSpacing());
    EXPECT_EQ(out->GetDirection(), in->GetDirection());
  }
  ASSERT_EQ(dist->GetNumberOfComponentsPerPixel(), 3u);
  ASSERT_EQ(int(leaves->GetNumberOfComponentsPerPixel()), model->NumberOfTrees());

  const std::size_t n = in->GetBufferedRegion().GetNumberOfPixels();
  std::size_t       right = 0;
  for (std::size_t i = 0; i < n; ++i)
  {
    const float * p = dist->GetBufferPointer() + 3 * i;
    EXPECT_NEAR(p[0] + p[1] + p[2], 1.0f, 1e-5f);
    const int best = int(std::max_element(p, p + 3) - p);
    ASSERT_EQ(int(labels->GetBufferPointer()[i]), best) << "voxel " << i;
    ASSERT_EQ(leaves->GetBufferPointer()[i * model->NumberOfTrees()], first->GetBufferPointer()[i]);
    for (int t = 0; t < model->NumberOfTrees(); ++t)
    {
      const int leaf = leaves->GetBufferPointer()[i * model->NumberOfTrees() + t];
      ASSERT_TRUE(leaf >= 0 && leaf < model->TreeSize(t) && ForestIsLeaf(model->nodes[model->treeRoots[t] + leaf]));
    }
    right += labels->GetBufferPointer()[i] == test.labels[i];
  }
  // Held-out phantom: background alone is ~75% (2D) / ~90% (3D); balanced sampling costs some
  // background at the blobs' edges, a working forest still labels nearly 90% or more.
  EXPECT_GT(double(right) / n, 0.88);
}

TYPED_TEST(ForestFilterDimension, CpuAndAutoAreIdentical)
{
  constexpr unsigned D = TypeParam::value;
  const auto         model = TrainOnPhantoms<D>({ "intensity", "gradient:1", "log:1.5" });
  ForestPhantom<D>   test(D == 3 ? 20 : 48, 5);
  auto               cpu =
    Classify<itk::VectorImage<float, D>>(test.image.GetPointer(), model, ForestOutputMode::Distribution, "cpu");
  auto any =
    Classify<itk::VectorImage<float, D>>(test.image.GetPointer(), model, ForestOutputMode::Distribution, "auto");
  const std::size_t n = cpu->GetBufferedRegion().GetNumberOfPixels() * 3;
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_NEAR(cpu->GetBufferPointer()[i], any->GetBufferPointer()[i], 1e-6f) << i;
}

TYPED_TEST(ForestFilterDimension, FilterBankEqualsItkFilters)
{
  constexpr unsigned D = TypeParam::value;
  using ImageType = itk::Image<float, D>;
  ForestPhantom<D> p(D == 3 ? 16 : 40, 8);
  const auto       bank = ParseForestFilterBank("intensity,gaussian:1.5,gradient:1,log:2", "--channels");
  const auto       channels = ComputeForestFilterBank<D>(p.image, bank);
  ASSERT_EQ(channels.size(), 4u);
  auto smooth = itk::SmoothingRecursiveGaussianImageFilter<ImageType, ImageType>::New();
  smooth->SetSigma(1.5);
  auto grad = itk::GradientMagnitudeRecursiveGaussianImageFilter<ImageType, ImageType>::New();
  grad->SetSigma(1.0);
  auto log = itk::LaplacianRecursiveGaussianImageFilter<ImageType, ImageType>::New();
  log->SetSigma(2.0);
  const ImageType * refs[4] = { p.image.GetPointer(), nullptr, nullptr, nullptr };
  smooth->SetInput(p.image);
  grad->SetInput(p.image);
  log->SetInput(p.image);
  smooth->Update();
  grad->Update();
  log->Update();
  refs[1] = smooth->GetOutput();
  refs[2] = grad->GetOutput();
  refs[3] = log->GetOutput();
  const std::size_t n = p.image->GetBufferedRegion().GetNumberOfPixels();
  for (int c = 0; c < 4; ++c)
  {
    ASSERT_EQ(channels[c].size(), n);
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(channels[c][i], refs[c]->GetBufferPointer()[i]) << bank[c] << " voxel " << i;
  }
  // Not the identity: smoothing lowers the noise's spread.
  double varIn = 0.0, varSmooth = 0.0;
  for (std::size_t i = 1; i < n; ++i)
  {
    varIn += std::pow(channels[0][i] - channels[0][i - 1], 2);
    varSmooth += std::pow(channels[1][i] - channels[1][i - 1], 2);
  }
  EXPECT_LT(varSmooth, 0.5 * varIn);
}

TEST(ForestFilter, VectorImageInputMatchesDirectPrediction)
{
  // Two channels; the class is visible in the second only, so the forest must read it.
  ForestPhantom<2> p(48, 21);
  auto             vec = itk::VectorImage<float, 2>::New();
  vec->CopyInformation(p.image);
  vec->SetRegions(p.image->GetLargestPossibleRegion());
  vec->SetNumberOfComponentsPerPixel(2);
  vec->Allocate();
  const std::size_t  n = p.labels.size();
  std::vector<float> c0(n), c1(n);
  std::mt19937_64    rng(4);
  for (std::size_t i = 0; i < n; ++i)
  {
    c0[i] = float(rng() % 100);
    c1[i] = p.image->GetBufferPointer()[i];
    vec->GetBufferPointer()[2 * i] = c0[i];
    vec->GetBufferPointer()[2 * i + 1] = c1[i];
  }
  ForestLabelledImage   train{ ForestImage::FromChannels({ c0.data(), c1.data() }, 48, 48, 1, nullptr, 1), p.labels };
  ForestSamplingOptions sampling;
  auto                  model = std::make_shared<ForestModel>(
    TrainForest(MakeForestTrainingSet({ &train }, 3, sampling), canopy::testing::PhantomTrainingOptions(2)));
  ASSERT_EQ(model->numChannels, 2);
  bool readsSecond = false;
  for (const auto & node : model->nodes)
    readsSecond |= !ForestIsLeaf(node) && (node.feature.channel[0] == 1 || node.feature.channel[1] == 1);
  EXPECT_TRUE(readsSecond);

  auto        out = Classify<itk::Image<std::int32_t, 2>>(vec.GetPointer(), model, ForestOutputMode::ArgMax);
  const auto  direct = PredictForestLabelsCPU(*model, train.image);
  std::size_t right = 0;
  for (std::size_t i = 0; i < n; ++i)
  {
    ASSERT_EQ(out->GetBufferPointer()[i], direct[i]);
    right += direct[i] == p.labels[i];
  }
  EXPECT_GT(double(right) / n, 0.9);
}

TEST(ForestFilter, ClearErrors)
{
  ForestPhantom<2> p(32, 1);
  const auto       model = TrainOnPhantoms<2>({ "intensity", "gaussian:1" }, 200);
  // Mode against the output type.
  EXPECT_THROW((Classify<itk::Image<std::uint8_t, 2>>(p.image.GetPointer(), model, ForestOutputMode::Distribution)),
               canopy::Error);
  EXPECT_THROW((Classify<itk::VectorImage<float, 2>>(p.image.GetPointer(), model, ForestOutputMode::ArgMax)),
               canopy::Error);
  // A 2D model on a 3D image.
  ForestPhantom<3> v(12, 1);
  EXPECT_THROW((Classify<itk::Image<std::uint8_t, 3>>(v.image.GetPointer(), model, ForestOutputMode::ArgMax)),
               canopy::Error);
  // Channel count: the model's bank gives 2 channels per component; a model without bank and 2
  // channels cannot read a scalar image.
  auto noBank = std::make_shared<ForestModel>(*model);
  noBank->filterBank.clear();
  try
  {
    Classify<itk::Image<std::uint8_t, 2>>(p.image.GetPointer(), noBank, ForestOutputMode::ArgMax);
    FAIL() << "no error";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.what()).find("reads 2 channels"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ParseForestFilterBank("intensity,blur:2", "--channels"), canopy::Error);
  EXPECT_THROW(ParseForestFilterBank("gaussian:0", "--channels"), canopy::Error);
  EXPECT_THROW(ParseForestFilterBank("gaussian:1x", "--channels"), canopy::Error);
  EXPECT_THROW(ParseForestFilterBank("log", "--channels"), canopy::Error);
}

TEST(ForestFilter, PositionChannelsScaleTheIndexToTheImage)
{
  EXPECT_EQ(ParseForestFilterBank("intensity,position", "--channels"),
            (std::vector<std::string>{ "intensity", "position:x", "position:y", "position:z" }));
  EXPECT_EQ(ParseForestFilterBank("position:y", "--channels"), std::vector<std::string>{ "position:y" });
  EXPECT_THROW(ParseForestFilterBank("position:w", "--channels"), canopy::Error);
  EXPECT_THROW(ParseForestFilterBank("position:", "--channels"), canopy::Error);

  auto volume = itk::Image<float, 3>::New();
  volume->SetRegions(itk::Image<float, 3>::SizeType{ { 5, 3, 1 } });
  volume->Allocate();
  volume->FillBuffer(7.0f);
  const auto channels = ComputeForestFilterBank<3>(volume, { "position:x", "position:y", "position:z" });
  ASSERT_EQ(channels.size(), 3u);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x)
    {
      const std::size_t i = std::size_t(y) * 5 + x;
      EXPECT_FLOAT_EQ(channels[0][i], x / 4.0f);
      EXPECT_FLOAT_EQ(channels[1][i], y / 2.0f);
      EXPECT_FLOAT_EQ(channels[2][i], 0.0f); // an axis of one voxel
    }
  auto image = itk::Image<float, 2>::New();
  image->SetRegions(itk::Image<float, 2>::SizeType{ { 4, 2 } });
  image->Allocate();
  const auto planar = ComputeForestFilterBank<2>(image, { "position:y", "position:z" });
  EXPECT_EQ(planar[0], (std::vector<float>{ 0, 0, 0, 0, 1, 1, 1, 1 }));
  EXPECT_EQ(planar[1], std::vector<float>(8, 0.0f)); // no z in 2D
}

TEST(ForestFilter, FilterBankModelRoundTripsAndOldFilesRead)
{
  const auto model = TrainOnPhantoms<2>({ "intensity", "gradient:1.5" }, 200);
  const auto text = ForestModelToJsonString(*model);
  const auto back = ForestModelFromJsonString(text, "round trip");
  EXPECT_EQ(back.filterBank, model->filterBank);
  EXPECT_EQ(ForestModelToJsonString(back), text);
  // Without the field (files written before it existed): an empty bank.
  auto plain = *model;
  plain.filterBank.clear();
  const auto plainText = ForestModelToJsonString(plain);
  EXPECT_EQ(plainText.find("filterBank"), std::string::npos);
  EXPECT_TRUE(ForestModelFromJsonString(plainText, "old").filterBank.empty());
  // A bank that does not divide the channels, or a bad entry, is rejected.
  std::string bad = text;
  bad.replace(bad.find("\"filterBank\""), 12, "\"filterBank\":[\"intensity\",\"log:1\",\"gaussian:2\"],\"x\"");
  EXPECT_THROW(ForestModelFromJsonString(bad, "bad"), canopy::Error);
  std::string notStrings = text;
  notStrings.replace(notStrings.find("\"filterBank\""), 12, "\"filterBank\":[1,2],\"x\"");
  EXPECT_THROW(ForestModelFromJsonString(notStrings, "bad"), canopy::Error);
}

TEST(ForestVolumeTraining, BalancedSamplingTakesEqualQuotas)
{
  ForestPhantom<3>      p(20, 2);
  ForestLabelledImage   im{ MakeForestImage<3>(p.image, {}, 1), p.labels };
  ForestSamplingOptions o;
  o.samplesPerImage = 300;
  std::vector<ForestSample> samples;
  SampleForestVoxels(im, 0, 3, o, samples);
  int counts[3] = { 0, 0, 0 };
  for (const auto & s : samples)
  {
    ++counts[s.label];
    ASSERT_EQ(p.labels[(std::size_t(s.z) * 20 + s.y) * 20 + s.x], s.label);
  }
  EXPECT_EQ(counts[0], 100);
  EXPECT_EQ(counts[1], 100);
  EXPECT_EQ(counts[2], 100);
  o.balanced = false;
  samples.clear();
  SampleForestVoxels(im, 0, 3, o, samples);
  EXPECT_EQ(samples.size(), 300u);
  std::fill(counts, counts + 3, 0);
  for (const auto & s : samples)
    ++counts[s.label];
  EXPECT_GT(counts[0], counts[1] + counts[2]); // background dominates the volume
}

TEST(ForestVolumeTraining, BoundarySamplingDrawsItsShareFromTheBand)
{
  ForestPhantom<3>    p(20, 2);
  ForestLabelledImage im{ MakeForestImage<3>(p.image, {}, 1), p.labels };
  const auto          band = LabelBoundaryBand(p.labels, 20, 20, 20, 1);
  // The band by its definition: a voxel whose 3x3x3 box holds two labels.
  for (int z = 0; z < 20; ++z)
    for (int y = 0; y < 20; ++y)
      for (int x = 0; x < 20; ++x)
      {
        bool mixed = false;
        for (int c = std::max(0, z - 1); c <= std::min(19, z + 1); ++c)
          for (int b = std::max(0, y - 1); b <= std::min(19, y + 1); ++b)
            for (int a = std::max(0, x - 1); a <= std::min(19, x + 1); ++a)
              mixed |= p.labels[(std::size_t(c) * 20 + b) * 20 + a] != p.labels[(std::size_t(z) * 20 + y) * 20 + x];
        ASSERT_EQ(band[(std::size_t(z) * 20 + y) * 20 + x], mixed) << x << "," << y << "," << z;
      }
  ForestSamplingOptions o;
  o.samplesPerImage = 300;
  o.balanced = false;
  o.boundaryShare = 0.5;
  o.boundaryBand = 1;
  std::vector<ForestSample> samples;
  SampleForestVoxels(im, 0, 3, o, samples);
  ASSERT_EQ(samples.size(), 300u);
  int inBand = 0;
  for (const auto & s : samples)
    inBand += band[(std::size_t(s.z) * 20 + s.y) * 20 + s.x];
  EXPECT_EQ(inBand, 150);
  // No share: the draws of the plain sampler, whatever the band.
  o.boundaryShare = 0.0;
  std::vector<ForestSample> a, b;
  SampleForestVoxels(im, 0, 3, o, a);
  o.boundaryBand = 4;
  SampleForestVoxels(im, 0, 3, o, b);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k)
    EXPECT_TRUE(a[k].x == b[k].x && a[k].y == b[k].y && a[k].z == b[k].z);
  o.boundaryShare = 1.5;
  EXPECT_THROW(SampleForestVoxels(im, 0, 3, o, samples), canopy::Error);
}

TEST(ForestVolumeTraining, CrossValidationPrefersTheDeeperForest)
{
  std::vector<ForestLabelledImage> images;
  for (int i = 0; i < 4; ++i)
  {
    ForestPhantom<2> p(40, 30 + i);
    images.push_back({ MakeForestImage<2>(p.image, { "gaussian:1" }, 1), p.labels });
  }
  std::vector<const ForestLabelledImage *> pointers;
  for (const auto & i : images)
    pointers.push_back(&i);
  auto shallow = canopy::testing::PhantomTrainingOptions(2);
  shallow.maxDepth = 1; // one split cannot separate three classes
  auto                  deep = canopy::testing::PhantomTrainingOptions(2);
  ForestSamplingOptions sampling;
  sampling.samplesPerImage = 300;
  const auto results = CrossValidateForest(pointers, 3, sampling, { shallow, deep }, 2, 1);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].foldDice.size(), 2u);
  EXPECT_GT(results[1].meanDice, 0.85);
  EXPECT_LT(results[0].meanDice, results[1].meanDice);
  EXPECT_THROW(CrossValidateForest(pointers, 3, sampling, { deep }, 5, 1), canopy::Error);
}

TEST(ForestLabelScores, DiceAndAccuracies)
{
  const std::int32_t truth[] = { 0, 0, 1, 1, 2, 2, 2, 5 };
  const std::int32_t pred[] = { 0, 1, 1, 1, 2, 2, 0, 0 };
  ForestLabelScores  s(3);
  s.Add(pred, truth, 8); // the last voxel (truth 5) is skipped
  EXPECT_NEAR(s.Dice(0), 2.0 * 1 / (2 + 2), 1e-12);
  EXPECT_NEAR(s.Dice(1), 2.0 * 2 / (2 + 3), 1e-12);
  EXPECT_NEAR(s.Dice(2), 2.0 * 2 / (3 + 2), 1e-12);
  EXPECT_NEAR(s.PixelAccuracy(), 5.0 / 7, 1e-12);
  EXPECT_NEAR(s.MeanClassAccuracy(), (0.5 + 1.0 + 2.0 / 3) / 3, 1e-12);
}

} // namespace
