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
  if (kind == "position")
  {
    const std::string axis = colon == std::string::npos ? "" : name.substr(colon + 1);
    if (axis != "x" && axis != "y" && axis != "z")
    {
      CANOPY_THROW(context << ": filter-bank channel '" << name
                           << "' needs an axis: position:x, position:y or position:z");
    }
    c.kind = Kind::Position;
    c.axis = axis[0] - 'x';
    return c;
  }
  if (kind == "gaussian")
    c.kind = Kind::Gaussian;
  else if (kind == "gradient")
    c.kind = Kind::GradientMagnitude;
  else if (kind == "log")
    c.kind = Kind::LaplacianOfGaussian;
  else
  {
    CANOPY_THROW(context << ": unknown filter-bank channel '" << name
                         << "' (expected intensity, gaussian:S, gradient:S, log:S or position[:x|y|z])");
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
  if (kind == Kind::Position)
    return std::string("position:") + char('x' + axis);
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
    if (item == "position")
    {
      for (const char * axis : { "position:x", "position:y", "position:z" })
        bank.push_back(axis);
      continue;
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
/** Index along `axis` scaled to [0, 1] over the image (x fastest); 0 where the axis has one voxel or
 * the image has no such axis. */
template<unsigned int D>
std::vector<float>
PositionChannel(const itk::Size<D> & size, int axis)
{
  std::size_t count = 1;
  for (unsigned d = 0; d < D; ++d)
    count *= size[d];
  std::vector<float> channel(count, 0.0f);
  if (axis >= int(D) || size[axis] < 2)
    return channel;
  std::size_t stride = 1;
  for (int d = 0; d < axis; ++d)
    stride *= size[d];
  const double last = double(size[axis] - 1);
  for (std::size_t i = 0; i < count; ++i)
    channel[i] = float(double((i / stride) % size[axis]) / last);
  return channel;
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
    if (c.kind == ForestFilterChannel::Kind::Position)
    {
      channels.push_back(PositionChannel<D>(size, c.axis));
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
