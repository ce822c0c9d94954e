#include "canopyForestFilterBank.h"

#include "canopy/Errors.h"
#include "itkGradientMagnitudeRecursiveGaussianImageFilter.h"
#include "itkLaplacianRecursiveGaussianImageFilter.h"
#include "itkSmoothingRecursiveGaussianImageFilter.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace canopy
{

ForestFilterChannel
ForestFilterChannel::Parse(const std::string & name, const std::string & context)
{
  ForestFilterChannel c;
  if (name == "intensity")
    return c;
  const auto        colon = name.find(':');
  const std::string kind = name.substr(0, colon);
  if (kind == "gaussian")
    c.kind = Kind::Gaussian;
  else if (kind == "gradient")
    c.kind = Kind::GradientMagnitude;
  else if (kind == "log")
    c.kind = Kind::LaplacianOfGaussian;
  else
  {
    CANOPY_THROW(context << ": unknown filter-bank channel '" << name
                         << "' (expected intensity, gaussian:S, gradient:S or log:S)");
  }
  std::size_t used = 0;
  try
  {
    c.sigma = colon == std::string::npos ? 0.0 : std::stod(name.substr(colon + 1), &used);
  }
  catch (const std::exception &)
  {
    used = 0;
  }
  if (colon == std::string::npos || used != name.size() - colon - 1 || !(c.sigma > 0.0) || !std::isfinite(c.sigma))
  {
    CANOPY_THROW(context << ": filter-bank channel '" << name << "' needs a sigma > 0 in mm, e.g. " << kind << ":1.5");
  }
  return c;
}

std::string
ForestFilterChannel::Name() const
{
  if (kind == Kind::Intensity)
    return "intensity";
  std::ostringstream s;
  s << (kind == Kind::Gaussian ? "gaussian:" : kind == Kind::GradientMagnitude ? "gradient:" : "log:") << sigma;
  return s.str();
}

std::vector<std::string>
ParseForestFilterBank(const std::string & text, const std::string & context)
{
  std::vector<std::string> bank;
  std::stringstream        in(text);
  std::string              item;
  while (std::getline(in, item, ','))
  {
    if (item.empty())
    {
      CANOPY_THROW(context << ": empty channel name in '" << text << "'");
    }
    bank.push_back(ForestFilterChannel::Parse(item, context).Name());
  }
  return bank;
}

namespace
{
template<typename TFilter, unsigned int D>
std::vector<float>
Run(typename TFilter::Pointer filter, const itk::Image<float, D> * component)
{
  filter->SetInput(component);
  filter->Update();
  const auto * out = filter->GetOutput();
  return std::vector<float>(out->GetBufferPointer(),
                            out->GetBufferPointer() + out->GetBufferedRegion().GetNumberOfPixels());
}
} // namespace

template<unsigned int D>
std::vector<std::vector<float>>
ComputeForestFilterBank(const itk::Image<float, D> * component, const std::vector<std::string> & bank)
{
  using ImageType = itk::Image<float, D>;
  const auto                      size = component->GetBufferedRegion().GetSize();
  std::vector<std::vector<float>> channels;
  for (const auto & name : bank)
  {
    const auto c = ForestFilterChannel::Parse(name, "filter bank");
    if (c.kind == ForestFilterChannel::Kind::Intensity)
    {
      channels.emplace_back(component->GetBufferPointer(),
                            component->GetBufferPointer() + component->GetBufferedRegion().GetNumberOfPixels());
      continue;
    }
    // The recursive filters need at least 4 pixels along every axis they run on.
    if (*std::min_element(size.begin(), size.end()) < 4)
    {
      CANOPY_THROW("filter bank: channel '" << name << "' needs an image of at least 4 pixels per axis, got " << size);
    }
    if (c.kind == ForestFilterChannel::Kind::Gaussian)
    {
      auto f = itk::SmoothingRecursiveGaussianImageFilter<ImageType, ImageType>::New();
      f->SetSigma(c.sigma);
      channels.push_back(Run<itk::SmoothingRecursiveGaussianImageFilter<ImageType, ImageType>>(f, component));
    }
    else if (c.kind == ForestFilterChannel::Kind::GradientMagnitude)
    {
      using F = itk::GradientMagnitudeRecursiveGaussianImageFilter<ImageType, ImageType>;
      auto f = F::New();
      f->SetSigma(c.sigma);
      channels.push_back(Run<F>(f, component));
    }
    else
    {
      using F = itk::LaplacianRecursiveGaussianImageFilter<ImageType, ImageType>;
      auto f = F::New();
      f->SetSigma(c.sigma);
      channels.push_back(Run<F>(f, component));
    }
  }
  return channels;
}

template std::vector<std::vector<float>>
ComputeForestFilterBank<2>(const itk::Image<float, 2> *, const std::vector<std::string> &);
template std::vector<std::vector<float>>
ComputeForestFilterBank<3>(const itk::Image<float, 3> *, const std::vector<std::string> &);

} // namespace canopy
