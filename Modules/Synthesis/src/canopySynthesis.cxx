#include "canopySynthesis.h"

#include "canopy/Errors.h"
#include "canopy/PortableRandom.h"

#include "itkDiscreteGaussianImageFilter.h"
#include "itkMultiThreaderBase.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

namespace canopy
{
namespace
{
using ImageType = itk::Image<float, 3>;
using LabelMap = itk::Image<unsigned short, 3>;

double
PriorField(const nlohmann::json & cls,
           const char *           prior,
           const char *           field,
           const std::string &    source,
           std::size_t            index)
{
  const auto where = [&] { return source + ": classes[" + std::to_string(index) + "]." + prior + "." + field; };
  if (!cls.contains(prior) || !cls.at(prior).is_object() || !cls.at(prior).contains(field) ||
      !cls.at(prior).at(field).is_number())
    CANOPY_THROW(where() << ": missing or not a number");
  const double value = cls.at(prior).at(field).get<double>();
  if (!std::isfinite(value) || (std::string(field) == "std" && value < 0))
    CANOPY_THROW(where() << ": must be finite" << (std::string(field) == "std" ? " and >= 0" : "") << ", got "
                         << value);
  return value;
}

void
ValidateOptions(const SynthesisOptions & o)
{
  const std::pair<const char *, double> ranges[] = { { "minBlurSigmaMm", o.minBlurSigmaMm },
                                                     { "maxBlurSigmaMm", o.maxBlurSigmaMm },
                                                     { "maxBiasFieldStd", o.maxBiasFieldStd },
                                                     { "maxNoiseSigma", o.maxNoiseSigma },
                                                     { "contrastSpread", o.contrastSpread } };
  for (const auto & [name, value] : ranges)
    if (!(std::isfinite(value) && value >= 0.0))
      CANOPY_THROW("SynthesizeImage: option " << name << " must be finite and >= 0, got " << value);
  if (o.minBlurSigmaMm > o.maxBlurSigmaMm)
    CANOPY_THROW("SynthesizeImage: minBlurSigmaMm " << o.minBlurSigmaMm << " exceeds maxBlurSigmaMm "
                                                    << o.maxBlurSigmaMm);
  if (o.biasGridSize < 2 || o.biasGridSize > 64)
    CANOPY_THROW("SynthesizeImage: option biasGridSize must be in [2, 64], got " << o.biasGridSize);
}

// Every random number apart from the transform's and the per-voxel ones, in a fixed order.
struct Draws
{
  std::vector<double>   mean, sigma; // per class, in the priors' order
  std::array<double, 3> blurSigmaMm{};
  double                biasStd = 0;
  std::vector<double>   biasGrid; // biasGridSize^3, x fastest
  double                noiseSigma = 0;
  std::uint64_t         voxelSeed = 0, noiseSeed = 0;
};

Draws
DrawParameters(const SynthesisPriors & priors, const SynthesisOptions & o)
{
  std::mt19937_64 rng(SplitMix64(o.seed ^ 0x5EEDF00DCAFEull)); // independent of the transform's generator
  Draws           d;
  for (const auto & c : priors.classes)
  {
    d.mean.push_back(std::max(0.0, c.meanMean + o.contrastSpread * c.meanStd * StandardNormal(rng)));
    d.sigma.push_back(std::max(0.0, c.stdMean + c.stdStd * StandardNormal(rng)));
  }
  for (auto & s : d.blurSigmaMm)
    s = o.minBlurSigmaMm + (o.maxBlurSigmaMm - o.minBlurSigmaMm) * UniformUnit(rng);
  d.biasStd = o.maxBiasFieldStd * UniformUnit(rng);
  d.biasGrid.resize(static_cast<std::size_t>(o.biasGridSize) * o.biasGridSize * o.biasGridSize);
  for (auto & b : d.biasGrid)
    b = d.biasStd * StandardNormal(rng);
  d.noiseSigma = o.maxNoiseSigma * UniformUnit(rng);
  d.voxelSeed = rng();
  d.noiseSeed = rng();
  return d;
}

// Calls body(z, rng) for every z-slice in parallel, rng seeded from (seed, z) alone.
template<typename TBody>
void
ForEachSlice(itk::SizeValueType nz, std::uint64_t seed, TBody && body)
{
  auto threader = itk::MultiThreaderBase::New();
  threader->ParallelizeArray(
    0,
    nz,
    [&](itk::SizeValueType z)
    {
      std::mt19937_64 rng(SplitMix64(seed ^ SplitMix64(z)));
      body(z, rng);
    },
    nullptr);
}

// Trilinear interpolation of the bias grid (its corners on the volume's corner voxels).
double
BiasAt(const Draws & d, int n, const double u[3])
{
  int    i0[3];
  double t[3];
  for (int a = 0; a < 3; ++a)
  {
    const double q = u[a] * (n - 1);
    i0[a] = std::min(n - 2, static_cast<int>(q));
    t[a] = q - i0[a];
  }
  double value = 0;
  for (int c = 0; c < 8; ++c)
  {
    double      w = 1;
    std::size_t index = 0, stride = 1;
    for (int a = 0; a < 3; ++a)
    {
      const int bit = (c >> a) & 1;
      w *= bit ? t[a] : 1 - t[a];
      index += (i0[a] + bit) * stride;
      stride *= n;
    }
    value += w * d.biasGrid[index];
  }
  return value;
}

nlohmann::json
OptionsJson(const SynthesisOptions & o)
{
  return { { "maxRotationDegrees", o.maxRotationDegrees },
           { "maxTranslationMm", o.maxTranslationMm },
           { "maxScale", o.maxScale },
           { "minBlurSigmaMm", o.minBlurSigmaMm },
           { "maxBlurSigmaMm", o.maxBlurSigmaMm },
           { "maxBiasFieldStd", o.maxBiasFieldStd },
           { "biasGridSize", o.biasGridSize },
           { "maxNoiseSigma", o.maxNoiseSigma },
           { "contrastSpread", o.contrastSpread },
           { "seed", o.seed } };
}

} // namespace

SynthesisPriors
ParseSynthesisPriors(const nlohmann::json & document, const std::string & source)
{
  if (!document.is_object() || !document.contains("classes") || !document.at("classes").is_array() ||
      document.at("classes").empty())
    CANOPY_THROW(source << ": expected an object with a non-empty \"classes\" array");
  SynthesisPriors priors;
  std::set<int>   seen;
  const auto &    classes = document.at("classes");
  for (std::size_t i = 0; i < classes.size(); ++i)
  {
    const auto & c = classes[i];
    if (!c.is_object() || !c.contains("labels") || !c.at("labels").is_array() || c.at("labels").empty())
      CANOPY_THROW(source << ": classes[" << i << "].labels: missing or not a non-empty array");
    SynthesisClass cls;
    cls.id = c.contains("class") && c.at("class").is_number_integer() ? c.at("class").get<int>() : static_cast<int>(i);
    for (const auto & label : c.at("labels"))
    {
      if (!label.is_number_integer() || label.get<long long>() < 0 || label.get<long long>() > 65535)
        CANOPY_THROW(source << ": classes[" << i << "].labels: " << label.dump() << " is not a label in [0, 65535]");
      const int value = label.get<int>();
      if (!seen.insert(value).second)
        CANOPY_THROW(source << ": classes[" << i << "].labels: label " << value << " is in two classes");
      cls.labels.push_back(value);
    }
    cls.meanMean = PriorField(c, "intensity_mean_prior", "mean", source, i);
    cls.meanStd = PriorField(c, "intensity_mean_prior", "std", source, i);
    cls.stdMean = PriorField(c, "intensity_std_prior", "mean", source, i);
    cls.stdStd = PriorField(c, "intensity_std_prior", "std", source, i);
    priors.classes.push_back(std::move(cls));
  }
  return priors;
}

SynthesisPriors
ReadSynthesisPriors(const std::string & path)
{
  std::ifstream in(path);
  if (!in)
    CANOPY_THROW(path << ": cannot open the priors file");
  nlohmann::json document;
  try
  {
    in >> document;
  }
  catch (const nlohmann::json::exception & e)
  {
    CANOPY_THROW(path << ": not valid JSON (" << e.what() << ")");
  }
  return ParseSynthesisPriors(document, path);
}

SynthesizedPair
SynthesizeImage(const LabelMap * labels, const SynthesisPriors & priors, const SynthesisOptions & options)
{
  if (!labels || !labels->GetBufferPointer())
    CANOPY_THROW("SynthesizeImage: the label map is null or has no pixel buffer");
  if (priors.classes.empty())
    CANOPY_THROW("SynthesizeImage: the priors have no class");
  ValidateOptions(options);
  AugmentationOptions geometry;
  geometry.maxRotationDegrees = options.maxRotationDegrees;
  geometry.maxTranslationMm = options.maxTranslationMm;
  geometry.maxScale = options.maxScale;
  geometry.seed = options.seed;
  const auto  transform = DrawSimilarityTransform(labels, geometry); // validates the geometric ranges
  const Draws d = DrawParameters(priors, options);

  // Label -> class index, for every label value the map may hold (-1: no class).
  std::vector<int> classOf(65536, -1);
  for (std::size_t c = 0; c < priors.classes.size(); ++c)
    for (int label : priors.classes[c].labels)
      classOf[label] = static_cast<int>(c);
  if (classOf[0] < 0)
    CANOPY_THROW("SynthesizeImage: the priors give label 0 no class (it is the background, and what the "
                 "transform brings in from outside the map)");
  // Checked on the input map: a label the transform happens to move out is still a gap in the priors.
  const std::size_t voxels = labels->GetLargestPossibleRegion().GetNumberOfPixels();
  std::set<int>     missing;
  for (std::size_t i = 0; i < voxels; ++i)
    if (classOf[labels->GetBufferPointer()[i]] < 0)
      missing.insert(labels->GetBufferPointer()[i]);
  if (!missing.empty())
  {
    std::string list;
    for (int m : missing)
      list += (list.empty() ? "" : ", ") + std::to_string(m);
    CANOPY_THROW("SynthesizeImage: label(s) " << list << " of the label map belong to no class of the priors");
  }

  SynthesizedPair result;
  result.label = ResampleLabelMap(labels, transform.transform);

  // 2. Gaussian mixture draw, slice by slice with per-slice generators.
  const unsigned short * in = result.label->GetBufferPointer();
  auto                   image = ImageType::New();
  image->CopyInformation(result.label);
  image->SetRegions(result.label->GetLargestPossibleRegion());
  image->Allocate();
  const auto size = image->GetLargestPossibleRegion().GetSize();
  const auto plane = static_cast<std::size_t>(size[0]) * size[1];
  float *    out = image->GetBufferPointer();
  ForEachSlice(size[2],
               d.voxelSeed,
               [&](itk::SizeValueType z, std::mt19937_64 & rng)
               {
                 for (std::size_t i = z * plane; i < (z + 1) * plane; ++i)
                 {
                   const int c = classOf[in[i]];
                   out[i] = static_cast<float>(std::max(0.0, d.mean[c] + d.sigma[c] * StandardNormal(rng)));
                 }
               });

  // 3. Blur.
  ImageType::Pointer blurred = image;
  if (d.blurSigmaMm[0] > 0 || d.blurSigmaMm[1] > 0 || d.blurSigmaMm[2] > 0)
  {
    auto                       gaussian = itk::DiscreteGaussianImageFilter<ImageType, ImageType>::New();
    itk::FixedArray<double, 3> variance;
    for (unsigned a = 0; a < 3; ++a)
      variance[a] = d.blurSigmaMm[a] * d.blurSigmaMm[a];
    gaussian->SetInput(image);
    gaussian->SetVariance(variance);
    gaussian->SetUseImageSpacing(true);
    gaussian->SetMaximumKernelWidth(64);
    gaussian->Update();
    blurred = gaussian->GetOutput();
    blurred->DisconnectPipeline();
  }

  // 4-5. Bias field and noise.
  float * v = blurred->GetBufferPointer();
  auto    unit = [](itk::SizeValueType i, itk::SizeValueType n)
  { return n > 1 ? static_cast<double>(i) / static_cast<double>(n - 1) : 0.0; };
  ForEachSlice(size[2],
               d.noiseSeed,
               [&](itk::SizeValueType z, std::mt19937_64 & rng)
               {
                 for (itk::SizeValueType y = 0; y < size[1]; ++y)
                   for (itk::SizeValueType x = 0; x < size[0]; ++x)
                   {
                     const double u[3] = { unit(x, size[0]), unit(y, size[1]), unit(z, size[2]) };
                     float &      p = v[z * plane + y * size[0] + x];
                     double       value = p * std::exp(BiasAt(d, options.biasGridSize, u));
                     value += d.noiseSigma * StandardNormal(rng); // drawn even when sigma is 0: same stream either way
                     p = static_cast<float>(std::max(0.0, value));
                   }
               });
  result.image = blurred;

  nlohmann::json classes = nlohmann::json::array();
  for (std::size_t c = 0; c < priors.classes.size(); ++c)
    classes.push_back({ { "class", priors.classes[c].id },
                        { "labels", priors.classes[c].labels },
                        { "mean", d.mean[c] },
                        { "sigma", d.sigma[c] } });
  result.parameters = { { "seed", options.seed },
                        { "options", OptionsJson(options) },
                        { "transform", transform.parameters },
                        { "classes", classes },
                        { "blurSigmaMm", d.blurSigmaMm },
                        { "bias",
                          { { "std", d.biasStd }, { "gridSize", options.biasGridSize }, { "grid", d.biasGrid } } },
                        { "noiseSigma", d.noiseSigma } };
  return result;
}

} // namespace canopy
