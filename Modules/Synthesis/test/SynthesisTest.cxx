// canopy::SynthesizeImage on a synthetic label phantom: class intensities follow the priors, the seed
// decides everything (thread count does not), the grid is kept, and image and labels stay aligned
// with the drawn transform.
#include "canopySynthesis.h"

#include "canopy/Errors.h"
#include "canopyTesting.h"

#include "itkMultiThreaderBase.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>

namespace
{
using namespace canopy;
using LabelMap = itk::Image<unsigned short, 3>;

// Nested shells about the centre: 2 (bright core), 43 (dark shell), 4 (dark, the other half of the
// shell), 0 outside; on MakeVolume's anisotropic, flipped grid.
LabelMap::Pointer
Phantom(int n = 40)
{
  auto             labels = canopy::testing::MakeVolume<unsigned short>(n, n, n);
  unsigned short * p = labels->GetBufferPointer();
  const double     c = 0.5 * (n - 1);
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x)
      {
        const double r = std::sqrt((x - c) * (x - c) + (y - c) * (y - c) + (z - c) * (z - c)) / c;
        *p++ = r < 0.4 ? 2 : (r < 0.7 ? (x < c ? 4 : 43) : 0);
      }
  return labels;
}

SynthesisPriors
Priors(double meanStd = 10.0, double stdMean = 10.0)
{
  const char * json = R"({"classes": [
    {"class": 0, "labels": [0], "intensity_mean_prior": {"mean": 7, "std": 1}, "intensity_std_prior": {"mean": 2, "std": 0}},
    {"class": 1, "labels": [4, 43], "intensity_mean_prior": {"mean": 45, "std": 10}, "intensity_std_prior": {"mean": 10, "std": 0}},
    {"class": 2, "labels": [2], "intensity_mean_prior": {"mean": 160, "std": 10}, "intensity_std_prior": {"mean": 10, "std": 0}}]})";
  auto         priors = ParseSynthesisPriors(nlohmann::json::parse(json), "test priors");
  for (auto & c : priors.classes)
  {
    c.meanStd = c.id == 0 ? c.meanStd : meanStd;
    c.stdMean = stdMean;
  }
  return priors;
}

SynthesisOptions
Plain(std::uint64_t seed) // the mixture alone: no transform, blur, bias or noise
{
  SynthesisOptions o;
  o.maxRotationDegrees = o.maxTranslationMm = o.maxScale = 0;
  o.minBlurSigmaMm = o.maxBlurSigmaMm = 0;
  o.maxBiasFieldStd = 0;
  o.maxNoiseSigma = 0;
  o.seed = seed;
  return o;
}

// Mean and standard deviation of the image over the voxels whose label is in `which`.
std::pair<double, double>
LabelStats(const SynthesizedPair & pair, std::initializer_list<int> which)
{
  const float *          v = pair.image->GetBufferPointer();
  const unsigned short * l = pair.label->GetBufferPointer();
  double                 sum = 0, sum2 = 0;
  std::size_t            n = 0;
  for (std::size_t i = 0; i < pair.image->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    for (int w : which)
      if (l[i] == w)
      {
        sum += v[i], sum2 += double(v[i]) * v[i], ++n;
      }
  const double mean = sum / n;
  return { mean, std::sqrt(std::max(0.0, sum2 / n - mean * mean)) };
}

double
DrawnMean(const SynthesizedPair & pair, int classId)
{
  for (const auto & c : pair.parameters.at("classes"))
    if (c.at("class").get<int>() == classId)
      return c.at("mean").get<double>();
  return NAN;
}

TEST(Synthesis, ClassIntensitiesFollowTheirDrawsAndThePriors)
{
  const auto labels = Phantom();
  const auto priors = Priors();
  // Within one image: each class's voxels have the drawn mean and spread (labels 4 and 43 share them).
  const auto pair = SynthesizeImage(labels, priors, Plain(3));
  const auto bright = LabelStats(pair, { 2 });
  const auto dark = LabelStats(pair, { 4, 43 });
  EXPECT_NEAR(bright.first, DrawnMean(pair, 2), 1.0);
  EXPECT_NEAR(bright.second, 10.0, 1.0);
  EXPECT_NEAR(dark.first, DrawnMean(pair, 1), 1.0);
  EXPECT_NEAR(LabelStats(pair, { 4 }).first, LabelStats(pair, { 43 }).first, 1.0);
  // Across seeds: the drawn means are distributed as the priors say (mean 160 and 45, std 10).
  double     sumBright = 0, sumDark = 0, sum2Bright = 0;
  int        below = 0;
  const int  runs = 200;
  const auto small = Phantom(6);
  for (int s = 0; s < runs; ++s)
  {
    const auto   p = SynthesizeImage(small, priors, Plain(100 + s));
    const double b = DrawnMean(p, 2), d = DrawnMean(p, 1);
    sumBright += b, sum2Bright += b * b, sumDark += d;
    below += d < b;
  }
  const double meanBright = sumBright / runs;
  EXPECT_NEAR(meanBright, 160.0, 3.0); // 4 standard errors (10 / sqrt(200) = 0.7)
  EXPECT_NEAR(std::sqrt(sum2Bright / runs - meanBright * meanBright), 10.0, 2.0);
  EXPECT_NEAR(sumDark / runs, 45.0, 3.0);
  EXPECT_EQ(below, runs); // 11 prior standard deviations apart: the dark class is always darker
}

// contrastSpread scales each class mean's deviation from its prior mean, with the same seed's draws: 1 is
// the priors as given (the default), 0 puts every class at its prior mean, 2 doubles every deviation.
TEST(Synthesis, ContrastSpreadScalesTheClassMeansDeviations)
{
  const auto labels = Phantom(6);
  const auto priors = Priors();
  auto       o = Plain(7);
  const auto base = SynthesizeImage(labels, priors, o);
  o.contrastSpread = 0.0;
  const auto flat = SynthesizeImage(labels, priors, o);
  o.contrastSpread = 2.0;
  const auto wide = SynthesizeImage(labels, priors, o);
  EXPECT_EQ(wide.parameters["options"]["contrastSpread"], 2.0);
  for (const int c : { 1, 2 })
  {
    const double prior = c == 1 ? 45.0 : 160.0, drawn = DrawnMean(base, c);
    EXPECT_NE(drawn, prior) << c;
    EXPECT_DOUBLE_EQ(DrawnMean(flat, c), prior) << c;
    EXPECT_NEAR(DrawnMean(wide, c) - prior, 2.0 * (drawn - prior), 1e-9) << c;
  }
  EXPECT_EQ(base.parameters["noiseSigma"], wide.parameters["noiseSigma"]) << "the other draws stay";
  o.contrastSpread = -1.0;
  EXPECT_THROW(SynthesizeImage(labels, priors, o), canopy::Error);
}

TEST(Synthesis, SameSeedSameImageWhateverTheThreads)
{
  const auto       labels = Phantom(24);
  SynthesisOptions o; // every step on
  o.seed = 42;
  const auto before = itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads();
  itk::MultiThreaderBase::SetGlobalDefaultNumberOfThreads(1);
  const auto one = SynthesizeImage(labels, Priors(), o);
  itk::MultiThreaderBase::SetGlobalDefaultNumberOfThreads(4);
  const auto four = SynthesizeImage(labels, Priors(), o);
  itk::MultiThreaderBase::SetGlobalDefaultNumberOfThreads(before);
  const std::size_t n = labels->GetLargestPossibleRegion().GetNumberOfPixels();
  EXPECT_EQ(0, std::memcmp(one.image->GetBufferPointer(), four.image->GetBufferPointer(), n * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(one.label->GetBufferPointer(), four.label->GetBufferPointer(), n * sizeof(unsigned short)));
  EXPECT_EQ(one.parameters, four.parameters);
  o.seed = 43;
  const auto other = SynthesizeImage(labels, Priors(), o);
  EXPECT_NE(0, std::memcmp(one.image->GetBufferPointer(), other.image->GetBufferPointer(), n * sizeof(float)));
}

TEST(Synthesis, KeepsTheLabelMapsGrid)
{
  const auto labels = Phantom(20);
  const auto pair = SynthesizeImage(labels, Priors(), SynthesisOptions{});
  for (const itk::ImageBase<3> * out : { static_cast<const itk::ImageBase<3> *>(pair.image.GetPointer()),
                                         static_cast<const itk::ImageBase<3> *>(pair.label.GetPointer()) })
  {
    EXPECT_EQ(out->GetLargestPossibleRegion(), labels->GetLargestPossibleRegion());
    EXPECT_EQ(out->GetSpacing(), labels->GetSpacing());
    EXPECT_EQ(out->GetOrigin(), labels->GetOrigin());
    EXPECT_EQ(out->GetDirection(), labels->GetDirection());
  }
  const float * v = pair.image->GetBufferPointer();
  for (std::size_t i = 0; i < labels->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    ASSERT_TRUE(std::isfinite(v[i]) && v[i] >= 0.0f) << "voxel " << i << " = " << v[i];
}

// With a large transform and no spread, blur or noise, every voxel's intensity is its transformed
// label's class mean times the bias field: the image is generated from the transformed labels, and
// those are the input labels pulled through the drawn transform (checked voxel by voxel).
TEST(Synthesis, ImageAndLabelsAlignAfterTheTransform)
{
  const auto labels = Phantom(32);
  auto       o = Plain(9);
  o.maxRotationDegrees = 30;
  o.maxTranslationMm = 5;
  o.maxScale = 0.1;
  const auto pair = SynthesizeImage(labels, Priors(10.0, 0.0), o);

  // The transform from the parameters (output point -> input point).
  const auto & t = pair.parameters.at("transform");
  double       m[3][3], offset[3];
  for (int r = 0; r < 3; ++r)
  {
    offset[r] = t.at("offsetMm")[r].get<double>();
    for (int c = 0; c < 3; ++c)
      m[r][c] = t.at("matrix")[r][c].get<double>();
  }
  ASSERT_GT(std::abs(t.at("rotationDegreesXYZ")[0].get<double>()), 0.0);
  std::map<int, double> meanOf{
    { 0, DrawnMean(pair, 0) }, { 2, DrawnMean(pair, 2) }, { 4, DrawnMean(pair, 1) }, { 43, DrawnMean(pair, 1) }
  };
  const auto size = labels->GetLargestPossibleRegion().GetSize();
  int        checked = 0, changed = 0;
  for (itk::IndexValueType z = 0; z < static_cast<itk::IndexValueType>(size[2]); z += 3)
    for (itk::IndexValueType y = 0; y < static_cast<itk::IndexValueType>(size[1]); y += 3)
      for (itk::IndexValueType x = 0; x < static_cast<itk::IndexValueType>(size[0]); x += 3)
      {
        const itk::Index<3> index{ { x, y, z } };
        const int           label = pair.label->GetPixel(index);
        EXPECT_FLOAT_EQ(pair.image->GetPixel(index), static_cast<float>(meanOf[label]));
        itk::Point<double, 3> p, q;
        pair.label->TransformIndexToPhysicalPoint(index, p);
        for (int r = 0; r < 3; ++r)
          q[r] = m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2] + offset[r];
        itk::ContinuousIndex<double, 3> ci;
        labels->TransformPhysicalPointToContinuousIndex(q, ci);
        itk::Index<3> nearest;
        bool          inside = true;
        for (int a = 0; a < 3; ++a)
        {
          nearest[a] = std::lround(ci[a]);
          const double frac = std::abs(ci[a] - std::floor(ci[a]) - 0.5);
          inside = inside && nearest[a] >= 0 && nearest[a] < static_cast<itk::IndexValueType>(size[a]) && frac > 1e-6;
        }
        if (!inside)
          continue; // outside (0 by definition) or a rounding tie
        ++checked;
        EXPECT_EQ(label, labels->GetPixel(nearest)) << "at " << index;
        changed += labels->GetPixel(index) != label;
      }
  EXPECT_GT(checked, 500);
  EXPECT_GT(changed, 20); // the transform moved the labels
}

TEST(Synthesis, BiasFieldIsSmoothAndBounded)
{
  const auto labels = Phantom(24);
  auto       o = Plain(5);
  o.maxBiasFieldStd = 0.3;
  const auto   pair = SynthesizeImage(labels, Priors(10.0, 0.0), o);
  const double std = pair.parameters.at("bias").at("std").get<double>();
  ASSERT_GT(std, 0.0);
  // Intensity / class mean = exp(bias): positive, within the grid's extreme values, and smooth.
  std::map<int, double> meanOf{
    { 0, DrawnMean(pair, 0) }, { 2, DrawnMean(pair, 2) }, { 4, DrawnMean(pair, 1) }, { 43, DrawnMean(pair, 1) }
  };
  double lo = 1e9, hi = -1e9;
  for (double b : pair.parameters.at("bias").at("grid"))
    lo = std::min(lo, b), hi = std::max(hi, b);
  const float *          v = pair.image->GetBufferPointer();
  const unsigned short * l = pair.label->GetBufferPointer();
  for (std::size_t i = 0; i < labels->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
  {
    const double bias = std::log(v[i] / meanOf[l[i]]);
    ASSERT_GE(bias, lo - 1e-5);
    ASSERT_LE(bias, hi + 1e-5);
  }
}

TEST(Synthesis, BadInputsAreClearErrors)
{
  const auto labels = Phantom(8);
  auto       withUnknown = Phantom(8);
  withUnknown->GetBufferPointer()[3] = 77;
  try
  {
    SynthesizeImage(withUnknown, Priors(), SynthesisOptions{});
    FAIL() << "label 77 has no class";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.what()).find("label(s) 77"), std::string::npos) << e.what();
  }
  auto o = Plain(1);
  o.minBlurSigmaMm = 2, o.maxBlurSigmaMm = 1;
  EXPECT_THROW(SynthesizeImage(labels, Priors(), o), canopy::Error);
  o = Plain(1);
  o.maxScale = 1.5;
  EXPECT_THROW(SynthesizeImage(labels, Priors(), o), canopy::Error);
  o = Plain(1);
  o.biasGridSize = 1;
  EXPECT_THROW(SynthesizeImage(labels, Priors(), o), canopy::Error);
  EXPECT_THROW(SynthesizeImage(nullptr, Priors(), Plain(1)), canopy::Error);

  auto parse = [](const char * text) { return ParseSynthesisPriors(nlohmann::json::parse(text), "p.json"); };
  EXPECT_THROW(parse(R"({"classes": []})"), canopy::Error);
  EXPECT_THROW(parse(R"({"classes": [{"labels": [1], "intensity_mean_prior": {"mean": 1, "std": -1},
                                      "intensity_std_prior": {"mean": 1, "std": 1}}]})"),
               canopy::Error);
  EXPECT_THROW(parse(R"({"classes": [{"labels": [1], "intensity_mean_prior": {"mean": 1, "std": 1}}]})"),
               canopy::Error);
  EXPECT_THROW(parse(R"({"classes": [{"labels": [1], "intensity_mean_prior": {"mean": 1, "std": 1},
                                      "intensity_std_prior": {"mean": 1, "std": 1}},
                                     {"labels": [1], "intensity_mean_prior": {"mean": 1, "std": 1},
                                      "intensity_std_prior": {"mean": 1, "std": 1}}]})"),
               canopy::Error);
  EXPECT_THROW(ReadSynthesisPriors("nonexistent-priors.json"), canopy::Error);
}

} // namespace
