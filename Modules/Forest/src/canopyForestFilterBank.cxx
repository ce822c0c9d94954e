#include "canopyForestFilterBank.h"

#include "canopy/Errors.h"
#include "canopy/FilterBank.h"

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
  if (name == "zero")
  {
    c.kind = Kind::Zero;
    return c;
  }
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
  if (kind == "pose")
  {
    const std::string axis = colon == std::string::npos ? "" : name.substr(colon + 1);
    if (axis != "0" && axis != "1" && axis != "2")
    {
      CANOPY_THROW(context << ": filter-bank channel '" << name
                           << "' needs the reference pose's axis: pose:0, pose:1 or pose:2");
    }
    c.kind = Kind::ReferencePosition;
    c.axis = axis[0] - '0';
    return c;
  }
  if (kind == "gaussian")
    c.kind = Kind::Gaussian;
  else if (kind == "gradient")
    c.kind = Kind::GradientMagnitude;
  else if (kind == "log")
    c.kind = Kind::LaplacianOfGaussian;
  else if (kind == "closing")
    c.kind = Kind::Closing;
  else if (kind == "tophat")
    c.kind = Kind::BlackTopHat;
  else
  {
    CANOPY_THROW(context << ": unknown filter-bank channel '" << name
                         << "' (expected intensity, gaussian:S, gradient:S, log:S, closing:R, tophat:R, "
                            "position[:x|y|z], pose[:0|1|2] or zero)");
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
    CANOPY_THROW(context << ": filter-bank channel '" << name << "' needs a "
                         << (c.kind == Kind::Closing || c.kind == Kind::BlackTopHat ? "radius" : "sigma")
                         << " > 0 in mm, e.g. " << kind << ":1.5");
  }
  return c;
}

std::string
ForestFilterChannel::Name() const
{
  if (kind == Kind::Intensity)
    return "intensity";
  if (kind == Kind::Zero)
    return "zero";
  if (kind == Kind::Position)
    return std::string("position:") + char('x' + axis);
  if (kind == Kind::ReferencePosition)
    return std::string("pose:") + char('0' + axis);
  std::ostringstream s;
  s << (kind == Kind::Gaussian            ? "gaussian:"
        : kind == Kind::GradientMagnitude ? "gradient:"
        : kind == Kind::Closing           ? "closing:"
        : kind == Kind::BlackTopHat       ? "tophat:"
                                          : "log:")
    << sigma;
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
    if (item == "pose")
    {
      for (const char * axis : { "pose:0", "pose:1", "pose:2" })
        bank.push_back(axis);
      continue;
    }
    bank.push_back(ForestFilterChannel::Parse(item, context).Name());
  }
  return bank;
}

bool
ForestBankNeedsReference(const std::vector<std::string> & bank)
{
  return std::any_of(
    bank.begin(),
    bank.end(),
    [](const std::string & name)
    { return ForestFilterChannel::Parse(name, "filter bank").kind == ForestFilterChannel::Kind::ReferencePosition; });
}

template<unsigned int D>
std::vector<std::vector<float>>
ComputeForestFilterBank(const itk::Image<float, D> *     component,
                        const std::vector<std::string> & bank,
                        const ResolvedBackend &          backend,
                        int                              threads,
                        const ReferenceFrame *           reference)
{
  const auto     size = component->GetBufferedRegion().GetSize();
  FilterBankGrid grid;
  grid.dimension = int(D);
  grid.nx = int(size[0]);
  grid.ny = int(size[1]);
  grid.nz = D == 3 ? int(size[2]) : 1;
  for (unsigned d = 0; d < D; ++d)
  {
    grid.spacing[d] = component->GetSpacing()[d];
    grid.origin[d] = component->GetOrigin()[d];
    for (unsigned e = 0; e < D; ++e)
      grid.direction[d][e] = component->GetDirection()[d][e];
  }
  grid.reference = reference;
  std::vector<FilterBankChannelSpec> specs;
  for (const auto & name : bank)
  {
    const auto c = ForestFilterChannel::Parse(name, "filter bank");
    if (c.kind == ForestFilterChannel::Kind::ReferencePosition && (D != 3 || reference == nullptr))
    {
      CANOPY_THROW("filter bank: channel '" << name
                                            << (D != 3 ? "' is for 3D volumes (a reference pose is 3D)"
                                                       : "' needs the volume's reference pose (none given)"));
    }
    // The recursive filters need at least 4 pixels along every axis they run on.
    const bool filtered =
      c.kind != ForestFilterChannel::Kind::Intensity && c.kind != ForestFilterChannel::Kind::Position &&
      c.kind != ForestFilterChannel::Kind::ReferencePosition && c.kind != ForestFilterChannel::Kind::Zero;
    if (filtered && *std::min_element(size.begin(), size.end()) < 4)
    {
      CANOPY_THROW("filter bank: channel '" << name << "' needs an image of at least 4 pixels per axis, got " << size);
    }
    specs.push_back(c); // the kernels' part of the parsed channel
  }
  std::vector<std::vector<float>> channels(bank.size(), std::vector<float>(grid.Voxels()));
  std::vector<float *>            outputs;
  for (auto & channel : channels)
    outputs.push_back(channel.data());
  ComputeFilterBank(component->GetBufferPointer(), grid, specs, outputs, backend, threads);
  return channels;
}

template std::vector<std::vector<float>>
ComputeForestFilterBank<2>(const itk::Image<float, 2> *,
                           const std::vector<std::string> &,
                           const ResolvedBackend &,
                           int,
                           const ReferenceFrame *);
template std::vector<std::vector<float>>
ComputeForestFilterBank<3>(const itk::Image<float, 3> *,
                           const std::vector<std::string> &,
                           const ResolvedBackend &,
                           int,
                           const ReferenceFrame *);

} // namespace canopy
