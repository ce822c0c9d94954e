// Augmentation on synthetic phantoms: reproducibility, identity, label/image correspondence,
// geometry, the intensity formula, errors.
#include "canopyAugmentation.h"
#include "canopyImageGrid.h"
#include "canopyOverlapMetrics.h"
#include "canopyTesting.h"

#include "canopy/Errors.h"

#include "itkImageRegionConstIteratorWithIndex.h"
#include "itkMultiThreaderBase.h"
#include "itkSimilarity3DTransform.h"

#include <cmath>

namespace
{

using ImageType = itk::Image<float, 3>;
using LabelType = itk::Image<unsigned char, 3>;

// An off-centre ellipsoid (100 inside, 10 outside) on an anisotropic, x-flipped grid, and its mask.
struct Phantom
{
  ImageType::Pointer image;
  LabelType::Pointer label;
};
Phantom
MakePhantom(float noise = 0.0f)
{
  const double c[3] = { 26, 18, 11 }, r[3] = { 12, 8, 5 };
  Phantom      p;
  p.image = canopy::testing::MakeEllipsoidPhantom(48, 40, 24, c, r, 100.0f, 10.0f, noise, 7);
  p.label = canopy::ThresholdToMask(canopy::testing::MakeEllipsoidPhantom(48, 40, 24, c, r, 1.0f, 0.0f, 0.0f, 7), 0.5f);
  return p;
}

canopy::AugmentationOptions
NoChange()
{
  canopy::AugmentationOptions o;
  o.maxRotationDegrees = o.maxTranslationMm = o.maxScale = 0;
  o.maxGainLog = o.maxOffsetFraction = o.maxGammaLog = o.maxBiasField = o.noiseSigmaFraction = 0;
  return o;
}

canopy::AugmentationOptions
GeometryOnly()
{
  auto o = NoChange();
  o.maxRotationDegrees = 15;
  o.maxTranslationMm = 5;
  o.maxScale = 0.1;
  return o;
}

template <typename TImage>
bool
SameVoxels(const TImage * a, const TImage * b)
{
  const auto n = a->GetLargestPossibleRegion().GetNumberOfPixels();
  return std::equal(a->GetBufferPointer(), a->GetBufferPointer() + n, b->GetBufferPointer());
}

TEST(Augmentation, SameSeedSameResultOtherSeedOtherResult)
{
  const auto                  p = MakePhantom(3.0f);
  canopy::AugmentationOptions o; // defaults: every change on
  o.seed = 42;
  const auto a = canopy::AugmentVolume(p.image, p.label, o);
  const auto b = canopy::AugmentVolume(p.image, p.label, o);
  EXPECT_TRUE(SameVoxels(a.image.GetPointer(), b.image.GetPointer()));
  EXPECT_TRUE(SameVoxels(a.label.GetPointer(), b.label.GetPointer()));
  EXPECT_EQ(a.parameters, b.parameters);
  EXPECT_EQ(a.parameters.at("seed").get<std::uint64_t>(), 42u);

  // The noise is drawn per slice, so the number of threads does not change the result.
  const auto threads = itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads();
  itk::MultiThreaderBase::SetGlobalDefaultNumberOfThreads(1);
  const auto single = canopy::AugmentVolume(p.image, p.label, o);
  itk::MultiThreaderBase::SetGlobalDefaultNumberOfThreads(std::max(3u, threads));
  const auto several = canopy::AugmentVolume(p.image, p.label, o);
  itk::MultiThreaderBase::SetGlobalDefaultNumberOfThreads(threads);
  EXPECT_TRUE(SameVoxels(single.image.GetPointer(), a.image.GetPointer()));
  EXPECT_TRUE(SameVoxels(several.image.GetPointer(), a.image.GetPointer()));

  o.seed = 43;
  const auto c = canopy::AugmentVolume(p.image, p.label, o);
  EXPECT_FALSE(SameVoxels(a.image.GetPointer(), c.image.GetPointer()));
  EXPECT_FALSE(SameVoxels(a.label.GetPointer(), c.label.GetPointer()));
  EXPECT_NE(a.parameters.at("transform"), c.parameters.at("transform"));
  EXPECT_NE(a.parameters.at("intensity").at("gain"), c.parameters.at("intensity").at("gain"));
}

TEST(Augmentation, NoChangeGivesTheInputBack)
{
  const auto p = MakePhantom(3.0f);
  const auto a = canopy::AugmentVolume(p.image, p.label, NoChange());
  EXPECT_TRUE(SameVoxels(a.label.GetPointer(), p.label.GetPointer()));
  const auto   n = p.image->GetLargestPossibleRegion().GetNumberOfPixels();
  double       worst = 0;
  const float *in = p.image->GetBufferPointer(), *out = a.image->GetBufferPointer();
  for (std::size_t i = 0; i < n; ++i)
    worst = std::max(worst, static_cast<double>(std::abs(in[i] - out[i])));
  EXPECT_LT(worst, 1e-3) << "largest change of a voxel with no augmentation";
}

TEST(Augmentation, GeometryIsPreservedAndLabelMayBeNull)
{
  const auto p = MakePhantom();
  const auto a = canopy::AugmentVolume(p.image, p.label, canopy::AugmentationOptions{});
  EXPECT_EQ(canopy::DescribeGridMismatch(a.image, p.image), "");
  EXPECT_EQ(canopy::DescribeGridMismatch(a.label, p.image), "");
  EXPECT_EQ(a.image->GetLargestPossibleRegion(), p.image->GetLargestPossibleRegion());

  const auto noLabel = canopy::AugmentVolume(p.image, nullptr, canopy::AugmentationOptions{});
  EXPECT_TRUE(noLabel.label.IsNull());
  EXPECT_TRUE(SameVoxels(noLabel.image.GetPointer(), a.image.GetPointer())) << "the label must not change the image";
}

TEST(Augmentation, LabelFollowsTheImage)
{
  const auto p = MakePhantom();
  for (std::uint64_t seed : { 1u, 2u, 3u })
  {
    auto o = GeometryOnly();
    o.seed = seed;
    const auto a = canopy::AugmentVolume(p.image, p.label, o);
    // The bright region of the transformed image is the transformed mask (up to interpolation at the border)...
    const auto bright = canopy::ThresholdToMask(a.image, 55.0f);
    EXPECT_GT(canopy::ComputeOverlap(bright, a.label).dice, 0.95) << "seed " << seed;
    // ...and the transform really moved it.
    EXPECT_LT(canopy::ComputeOverlap(a.label, p.label).dice, 0.95) << "seed " << seed;
  }
}

// Physical centroid of a mask.
itk::Point<double, 3>
Centroid(const LabelType * mask)
{
  itk::Point<double, 3> sum;
  sum.Fill(0);
  double                                  count = 0;
  itk::ImageRegionConstIteratorWithIndex<LabelType> it(mask, mask->GetLargestPossibleRegion());
  for (; !it.IsAtEnd(); ++it)
    if (it.Get())
    {
      itk::Point<double, 3> q;
      mask->TransformIndexToPhysicalPoint(it.GetIndex(), q);
      for (int d = 0; d < 3; ++d)
        sum[d] += q[d];
      ++count;
    }
  for (int d = 0; d < 3; ++d)
    sum[d] /= count;
  return sum;
}

TEST(Augmentation, RecordedTransformIsTheOneApplied)
{
  const auto p = MakePhantom();
  auto       o = GeometryOnly();
  o.seed = 11;
  const auto  a = canopy::AugmentVolume(p.image, p.label, o);
  const auto &t = a.parameters.at("transform");

  // Rebuild the transform from the recorded ITK parameters.
  auto transform = itk::Similarity3DTransform<double>::New();
  const auto params = t.at("itkParameters").get<std::vector<double>>();
  const auto fixed = t.at("itkFixedParameters").get<std::vector<double>>();
  ASSERT_EQ(params.size(), 7u);
  ASSERT_EQ(fixed.size(), 3u);
  itk::Similarity3DTransform<double>::ParametersType pp(7), fp(3);
  std::copy(params.begin(), params.end(), pp.begin());
  std::copy(fixed.begin(), fixed.end(), fp.begin());
  transform->SetFixedParameters(fp);
  transform->SetParameters(pp);
  EXPECT_NEAR(transform->GetScale(), t.at("scale").get<double>(), 1e-12);

  // The transform maps output points to input points: the input centroid is the image of the output's.
  const auto mapped = transform->TransformPoint(Centroid(a.label));
  const auto original = Centroid(p.label);
  EXPECT_LT(mapped.EuclideanDistanceTo(original), 0.5) << "mm";

  // The angles recorded are the rotation applied (R = Rz Ry Rx), within the drawn range.
  for (const double angle : t.at("rotationDegreesXYZ").get<std::vector<double>>())
    EXPECT_LE(std::abs(angle), 15.0);
  for (const double shift : t.at("translationMm").get<std::vector<double>>())
    EXPECT_LE(std::abs(shift), 5.0);
}

// DrawSimilarityTransform is the transform AugmentVolume applies, and ResampleLabelMap moves a 16-bit
// label map as AugmentVolume moves its mask.
TEST(Augmentation, DrawnTransformAndLabelMapResamplingMatchAugmentVolume)
{
  const auto p = MakePhantom();
  auto       o = GeometryOnly();
  o.seed = 5;
  const auto a = canopy::AugmentVolume(p.image, p.label, o);
  const auto draw = canopy::DrawSimilarityTransform(p.image, o);
  EXPECT_EQ(draw.parameters, a.parameters.at("transform"));

  auto wide = itk::Image<unsigned short, 3>::New();
  wide->CopyInformation(p.label);
  wide->SetRegions(p.label->GetLargestPossibleRegion());
  wide->Allocate();
  const std::size_t n = p.label->GetLargestPossibleRegion().GetNumberOfPixels();
  for (std::size_t i = 0; i < n; ++i)
    wide->GetBufferPointer()[i] = p.label->GetBufferPointer()[i] ? 500 : 0; // a label past 255
  const auto moved = canopy::ResampleLabelMap(wide, draw.transform);
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(moved->GetBufferPointer()[i], a.label->GetBufferPointer()[i] ? 500 : 0) << "voxel " << i;
  EXPECT_THROW(canopy::ResampleLabelMap(nullptr, draw.transform), canopy::Error);
}

TEST(Augmentation, IntensityFormula)
{
  const auto p = MakePhantom(3.0f);
  const auto n = p.image->GetLargestPossibleRegion().GetNumberOfPixels();

  auto gain = NoChange();
  gain.maxGainLog = 0.3;
  gain.maxOffsetFraction = 0.1;
  gain.seed = 5;
  const auto   g = canopy::AugmentVolume(p.image, nullptr, gain);
  const auto & gi = g.parameters.at("intensity");
  const double p1 = gi.at("p1"), k = gi.at("gain"), offset = gi.at("offset");
  EXPECT_NE(k, 1.0);
  EXPECT_NE(offset, 0.0);
  for (std::size_t i = 0; i < n; i += 97)
    ASSERT_NEAR(g.image->GetBufferPointer()[i], p1 + (p.image->GetBufferPointer()[i] - p1) * k + offset, 1e-3);

  // Bias only: the recorded polynomial reproduces every voxel, and stays within the drawn amplitude.
  auto bias = NoChange();
  bias.maxBiasField = 0.3;
  bias.seed = 6;
  const auto   b = canopy::AugmentVolume(p.image, nullptr, bias);
  const auto & bi = b.parameters.at("intensity");
  const double amplitude = bi.at("biasAmplitude"), bp1 = bi.at("p1");
  const auto   c = bi.at("biasCoefficients").get<std::vector<double>>();
  ASSERT_EQ(c.size(), 9u);
  EXPECT_GT(amplitude, 0.0);
  double sumAbs = 0, lowest = 10, highest = 0;
  for (double ck : c)
    sumAbs += std::abs(ck);
  EXPECT_NEAR(sumAbs, amplitude, 1e-12);
  const auto size = p.image->GetLargestPossibleRegion().GetSize();
  for (unsigned int z = 0; z < size[2]; ++z)
    for (unsigned int y = 0; y < size[1]; ++y)
      for (unsigned int x = 0; x < size[0]; ++x)
      {
        const double u = 2.0 * x / (size[0] - 1) - 1, v = 2.0 * y / (size[1] - 1) - 1, w = 2.0 * z / (size[2] - 1) - 1;
        const double field = 1 + c[0] * u + c[1] * v + c[2] * w + c[3] * u * u + c[4] * v * v + c[5] * w * w +
                             c[6] * u * v + c[7] * u * w + c[8] * v * w;
        lowest = std::min(lowest, field);
        highest = std::max(highest, field);
        const itk::Index<3> i{ { x, y, z } };
        ASSERT_NEAR(b.image->GetPixel(i), bp1 + (p.image->GetPixel(i) - bp1) * field, 1e-3) << i;
      }
  EXPECT_GE(lowest, 1.0 - amplitude - 1e-12);
  EXPECT_LE(highest, 1.0 + amplitude + 1e-12);
  EXPECT_GT(highest - lowest, 0.5 * amplitude) << "the field varies over the volume";

  // Gamma only: applied on the range normalised by p1 and p99, odd about p1.
  auto gamma = NoChange();
  gamma.maxGammaLog = 0.4;
  gamma.seed = 8;
  const auto   y = canopy::AugmentVolume(p.image, nullptr, gamma);
  const auto & yi = y.parameters.at("intensity");
  const double yp1 = yi.at("p1"), range = yi.at("range"), power = yi.at("gamma");
  EXPECT_NEAR(range, double(yi.at("p99")) - yp1, 1e-9);
  EXPECT_NE(power, 1.0);
  for (std::size_t i = 0; i < n; i += 13)
  {
    const double normalised = (p.image->GetBufferPointer()[i] - yp1) / range;
    const double expected = yp1 + range * std::copysign(std::pow(std::abs(normalised), power), normalised);
    ASSERT_NEAR(y.image->GetBufferPointer()[i], expected, 1e-3);
  }

  // Noise only: the difference has the requested standard deviation.
  auto noise = NoChange();
  noise.noiseSigmaFraction = 0.05;
  const auto   z = canopy::AugmentVolume(p.image, nullptr, noise);
  const double sigma = z.parameters.at("intensity").at("noiseSigma");
  double       sum = 0, sum2 = 0;
  for (std::size_t i = 0; i < n; ++i)
  {
    const double d = z.image->GetBufferPointer()[i] - p.image->GetBufferPointer()[i];
    sum += d;
    sum2 += d * d;
  }
  const double mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
  EXPECT_NEAR(sd, sigma, 0.02 * sigma);
  EXPECT_NEAR(mean, 0.0, 0.02 * sigma);
}

TEST(Augmentation, OutsideIsTheImageMinimum)
{
  auto p = MakePhantom(3.0f);
  auto o = NoChange();
  o.maxTranslationMm = 1000; // moves the volume out of its own field of view (checked below)
  o.seed = 3;
  const auto a = canopy::AugmentVolume(p.image, p.label, o);
  const auto t = a.parameters.at("transform").at("translationMm").get<std::vector<double>>();
  ASSERT_GT(std::max({ std::abs(t[0]), std::abs(t[1]), std::abs(t[2]) }), 200.0) << "pick another seed";
  const float  minimum = *std::min_element(p.image->GetBufferPointer(),
                                          p.image->GetBufferPointer() + p.image->GetLargestPossibleRegion().GetNumberOfPixels());
  const auto   n = p.image->GetLargestPossibleRegion().GetNumberOfPixels();
  for (std::size_t i = 0; i < n; ++i)
  {
    ASSERT_NEAR(a.image->GetBufferPointer()[i], minimum, 1e-3);
    ASSERT_EQ(a.label->GetBufferPointer()[i], 0);
  }
}

TEST(Augmentation, BadInputIsRejected)
{
  const auto p = MakePhantom();
  EXPECT_THROW(canopy::AugmentVolume(nullptr, p.label, {}), canopy::Error);

  auto shifted = canopy::ThresholdToMask(p.image, 55.0f);
  auto origin = shifted->GetOrigin();
  origin[1] += 1.0;
  shifted->SetOrigin(origin);
  try
  {
    canopy::AugmentVolume(p.image, shifted, {});
    ADD_FAILURE() << "no error for a label on another grid";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("origin"), std::string::npos) << e.GetDescription();
  }

  auto expectBad = [&](canopy::AugmentationOptions o, const std::string & name) {
    try
    {
      canopy::AugmentVolume(p.image, p.label, o);
      ADD_FAILURE() << "no error for " << name;
    }
    catch (const canopy::Error & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find(name), std::string::npos) << e.GetDescription();
    }
  };
  canopy::AugmentationOptions o;
  o.maxScale = 1.0;
  expectBad(o, "maxScale");
  o = {};
  o.maxBiasField = -0.1;
  expectBad(o, "maxBiasField");
  o = {};
  o.noiseSigmaFraction = std::nan("");
  expectBad(o, "noiseSigmaFraction");
  o = {};
  o.maxRotationDegrees = 200;
  expectBad(o, "maxRotationDegrees");
}

} // namespace
