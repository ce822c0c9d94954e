#include "canopyAugmentation.h"

#include "canopy/Errors.h"
#include "canopy/PortableRandom.h"
#include "canopyImageGrid.h"
#include "canopyIntensityPercentiles.h"

#include "itkLinearInterpolateImageFunction.h"
#include "itkMultiThreaderBase.h"
#include "itkNearestNeighborInterpolateImageFunction.h"
#include "itkResampleImageFilter.h"
#include "itkSimilarity3DTransform.h"

#include <array>
#include <cmath>
#include <random>

namespace canopy
{
namespace
{

using ImageType = itk::Image<float, 3>;
using LabelType = itk::Image<unsigned char, 3>;
using TransformType = itk::Similarity3DTransform<double>;
constexpr double kPi = 3.14159265358979323846;

double
Symmetric(std::mt19937_64 & rng, double max)
{
  return (2.0 * UniformUnit(rng) - 1.0) * max;
}
void
ValidateOptions(const AugmentationOptions & o)
{
  const std::pair<const char *, double> ranges[] = {
    { "maxRotationDegrees", o.maxRotationDegrees }, { "maxTranslationMm", o.maxTranslationMm },
    { "maxScale", o.maxScale },                     { "maxGainLog", o.maxGainLog },
    { "maxOffsetFraction", o.maxOffsetFraction },   { "maxGammaLog", o.maxGammaLog },
    { "maxBiasField", o.maxBiasField },             { "noiseSigmaFraction", o.noiseSigmaFraction }
  };
  for (const auto & [name, value] : ranges)
    if (!(std::isfinite(value) && value >= 0.0))
      CANOPY_THROW("AugmentVolume: option " << name << " must be finite and >= 0, got " << value);
  if (o.maxRotationDegrees > 180.0)
    CANOPY_THROW("AugmentVolume: option maxRotationDegrees must be <= 180, got " << o.maxRotationDegrees);
  if (o.maxScale >= 1.0)
    CANOPY_THROW("AugmentVolume: option maxScale must be < 1 (scale in [1-max, 1+max]), got " << o.maxScale);
  if (o.maxBiasField >= 1.0)
    CANOPY_THROW("AugmentVolume: option maxBiasField must be < 1 (the field must stay positive), got "
                 << o.maxBiasField);
}

nlohmann::json
ToJson(const AugmentationOptions & o)
{
  return { { "maxRotationDegrees", o.maxRotationDegrees }, { "maxTranslationMm", o.maxTranslationMm },
           { "maxScale", o.maxScale },                     { "maxGainLog", o.maxGainLog },
           { "maxOffsetFraction", o.maxOffsetFraction },   { "maxGammaLog", o.maxGammaLog },
           { "maxBiasField", o.maxBiasField },             { "noiseSigmaFraction", o.noiseSigmaFraction },
           { "seed", o.seed } };
}

// All random numbers of one augmentation, drawn in a fixed order from one generator.
struct Draws
{
  std::array<double, 3> rotationDegrees{}, translationMm{};
  double                scale = 1, gain = 1, offsetFraction = 0, gamma = 1, biasAmplitude = 0;
  std::array<double, 9> biasCoefficients{};
  std::uint64_t         noiseSeed = 0;
};

Draws
DrawParameters(const AugmentationOptions & o)
{
  std::mt19937_64 rng(o.seed);
  Draws           d;
  for (auto & a : d.rotationDegrees)
    a = Symmetric(rng, o.maxRotationDegrees);
  for (auto & t : d.translationMm)
    t = Symmetric(rng, o.maxTranslationMm);
  d.scale = 1.0 + Symmetric(rng, o.maxScale);
  d.gain = std::exp(Symmetric(rng, o.maxGainLog));
  d.offsetFraction = Symmetric(rng, o.maxOffsetFraction);
  d.gamma = std::exp(Symmetric(rng, o.maxGammaLog));
  d.biasAmplitude = UniformUnit(rng) * o.maxBiasField;
  double sumAbs = 0;
  for (auto & c : d.biasCoefficients)
  {
    c = Symmetric(rng, 1.0);
    sumAbs += std::abs(c);
  }
  for (auto & c : d.biasCoefficients) // sum |c_k| = amplitude bounds |bias - 1| since |t_k| <= 1
    c = sumAbs > 0 ? c * d.biasAmplitude / sumAbs : 0.0;
  d.noiseSeed = rng();
  return d;
}

TransformType::Pointer
MakeTransform(const itk::ImageBase<3> * image, const Draws & d)
{
  const auto                       region = image->GetLargestPossibleRegion();
  itk::ContinuousIndex<double, 3> centreIndex;
  for (unsigned int k = 0; k < 3; ++k)
    centreIndex[k] = region.GetIndex()[k] + 0.5 * (static_cast<double>(region.GetSize()[k]) - 1.0);
  TransformType::InputPointType centre;
  image->TransformContinuousIndexToPhysicalPoint(centreIndex, centre);

  TransformType::VersorType rx, ry, rz;
  rx.SetRotationAroundX(d.rotationDegrees[0] * kPi / 180.0);
  ry.SetRotationAroundY(d.rotationDegrees[1] * kPi / 180.0);
  rz.SetRotationAroundZ(d.rotationDegrees[2] * kPi / 180.0);
  // As a matrix, R = Rz Ry Rx (x first); built from the matrices so the order is unambiguous.
  const auto rotation = rz.GetMatrix() * ry.GetMatrix() * rx.GetMatrix();
  TransformType::VersorType versor;
  versor.Set(rotation);

  auto transform = TransformType::New();
  transform->SetCenter(centre);
  transform->SetRotation(versor);
  transform->SetScale(d.scale);
  TransformType::OutputVectorType translation;
  for (unsigned int k = 0; k < 3; ++k)
    translation[k] = d.translationMm[k];
  transform->SetTranslation(translation);
  return transform;
}

template <typename TImage, typename TInterpolator>
typename TImage::Pointer
Resample(const TImage * input, const TransformType * transform, typename TImage::PixelType outside)
{
  auto filter = itk::ResampleImageFilter<TImage, TImage, double>::New();
  filter->SetInput(input);
  filter->SetTransform(transform);
  filter->SetInterpolator(TInterpolator::New());
  filter->SetDefaultPixelValue(outside);
  filter->UseReferenceImageOn();
  filter->SetReferenceImage(input);
  filter->Update();
  typename TImage::Pointer output = filter->GetOutput();
  output->DisconnectPipeline();
  return output;
}

nlohmann::json
TransformJson(const TransformType * transform, const Draws & d)
{
  nlohmann::json matrix = nlohmann::json::array();
  for (unsigned int r = 0; r < 3; ++r)
    matrix.push_back({ transform->GetMatrix()[r][0], transform->GetMatrix()[r][1], transform->GetMatrix()[r][2] });
  auto vec = [](const auto & v) { return nlohmann::json{ v[0], v[1], v[2] }; };
  std::vector<double> parameters(transform->GetParameters().begin(), transform->GetParameters().end());
  std::vector<double> fixed(transform->GetFixedParameters().begin(), transform->GetFixedParameters().end());
  return { { "type", "Similarity3DTransform" },
           { "mapsOutputToInput", true },
           { "rotationDegreesXYZ", d.rotationDegrees },
           { "rotationOrder", "R = Rz Ry Rx" },
           { "translationMm", d.translationMm },
           { "scale", d.scale },
           { "centerMm", vec(transform->GetCenter()) },
           { "matrix", matrix },
           { "offsetMm", vec(transform->GetOffset()) },
           { "itkParameters", parameters },
           { "itkFixedParameters", fixed } };
}

// The intensity changes, in place, slice by slice in parallel; see the header for the formula.
void
ApplyIntensity(ImageType * image, const Draws & d, double p1, double range, double noiseSigma)
{
  const auto   size = image->GetLargestPossibleRegion().GetSize();
  const auto   nx = size[0], ny = size[1], nz = size[2];
  float *      buffer = image->GetBufferPointer();
  const double offset = d.offsetFraction * range;
  auto         unit = [](itk::SizeValueType i, itk::SizeValueType n) {
    return n > 1 ? 2.0 * static_cast<double>(i) / static_cast<double>(n - 1) - 1.0 : 0.0;
  };
  const auto & c = d.biasCoefficients;

  auto slice = [&](itk::SizeValueType z) {
    std::mt19937_64 rng(SplitMix64(d.noiseSeed ^ SplitMix64(z)));
    const double    w = unit(z, nz);
    float *         p = buffer + z * nx * ny;
    for (itk::SizeValueType y = 0; y < ny; ++y)
    {
      const double v = unit(y, ny);
      for (itk::SizeValueType x = 0; x < nx; ++x, ++p)
      {
        const double u = unit(x, nx);
        const double bias = 1.0 + c[0] * u + c[1] * v + c[2] * w + c[3] * u * u + c[4] * v * v + c[5] * w * w +
                            c[6] * u * v + c[7] * u * w + c[8] * v * w;
        const double n = (*p - p1) / range;
        const double shaped = std::copysign(std::pow(std::abs(n), d.gamma), n);
        double       out = p1 + range * shaped * d.gain * bias + offset;
        if (noiseSigma > 0)
          out += noiseSigma * StandardNormal(rng);
        *p = static_cast<float>(out);
      }
    }
  };
  auto threader = itk::MultiThreaderBase::New();
  threader->ParallelizeArray(0, nz, slice, nullptr);
}

} // namespace

SimilarityDraw
DrawSimilarityTransform(const itk::ImageBase<3> * grid, const AugmentationOptions & options)
{
  if (!grid)
    CANOPY_THROW("DrawSimilarityTransform: grid is null");
  ValidateOptions(options);
  const Draws    d = DrawParameters(options);
  SimilarityDraw draw;
  draw.transform = MakeTransform(grid, d);
  draw.parameters = TransformJson(draw.transform, d);
  return draw;
}

itk::Image<unsigned short, 3>::Pointer
ResampleLabelMap(const itk::Image<unsigned short, 3> * labels, const TransformType * transform)
{
  using LabelMap = itk::Image<unsigned short, 3>;
  if (!labels || !labels->GetBufferPointer() || !transform)
    CANOPY_THROW("ResampleLabelMap: label map or transform is null");
  return Resample<LabelMap, itk::NearestNeighborInterpolateImageFunction<LabelMap, double>>(labels, transform, 0);
}

AugmentedPair
AugmentVolume(const itk::Image<float, 3> * image, const itk::Image<unsigned char, 3> * label,
              const AugmentationOptions & options)
{
  if (!image || !image->GetBufferPointer())
    CANOPY_THROW("AugmentVolume: image is null or has no pixel buffer");
  if (label)
  {
    RequireSameGrid(image, label, "AugmentVolume", "image", "label");
    if (!label->GetBufferPointer())
      CANOPY_THROW("AugmentVolume: label has no pixel buffer");
  }
  ValidateOptions(options);

  const Draws  d = DrawParameters(options);
  const auto   stats = ComputeIntensityPercentiles(image, 1.0, 99.0);
  const double range = stats.high > stats.low ? stats.high - stats.low : 1.0;
  const double noiseSigma = options.noiseSigmaFraction * range;
  const auto   transform = MakeTransform(image, d);

  AugmentedPair result;
  result.image = Resample<ImageType, itk::LinearInterpolateImageFunction<ImageType, double>>(
    image, transform, static_cast<float>(stats.minimum));
  if (label)
    result.label =
      Resample<LabelType, itk::NearestNeighborInterpolateImageFunction<LabelType, double>>(label, transform, 0);
  ApplyIntensity(result.image, d, stats.low, range, noiseSigma);

  result.parameters = {
    { "seed", options.seed },
    { "options", ToJson(options) },
    { "transform", TransformJson(transform, d) },
    { "intensity",
      { { "p1", stats.low },
        { "p99", stats.high },
        { "range", range },
        { "outsideValue", stats.minimum },
        { "gain", d.gain },
        { "offset", d.offsetFraction * range },
        { "gamma", d.gamma },
        { "biasAmplitude", d.biasAmplitude },
        { "biasTerms", { "u", "v", "w", "u^2", "v^2", "w^2", "uv", "uw", "vw" } },
        { "biasCoefficients", d.biasCoefficients },
        { "noiseSigma", noiseSigma },
        { "noiseSeed", d.noiseSeed } } }
  };
  return result;
}

} // namespace canopy
