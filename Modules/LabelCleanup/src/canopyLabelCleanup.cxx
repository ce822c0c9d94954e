#include "canopyLabelCleanup.h"

#include "canopy/Errors.h"
#include "itkBinaryFillholeImageFilter.h"
#include "itkConnectedComponentImageFilter.h"
#include "itkImage.h"
#include "itkRelabelComponentImageFilter.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace canopy
{

LabelCleanupOptions
LabelCleanupOptions::Parse(const std::string & text, const std::string & parameter)
{
  LabelCleanupOptions options;
  if (text.empty() || text == "none")
    return options;
  std::stringstream in(text);
  std::string       item;
  while (std::getline(in, item, ','))
  {
    if (item == "largest")
      options.largestComponent = true;
    else if (item == "fill")
      options.fillHoles = true;
    else if (item == "full")
      options.fullyConnected = true;
    else
    {
      CANOPY_THROW(parameter << ": '" << item << "' in '" << text
                             << "' is not a post-processing step (none, or a list of largest, fill, full)");
    }
  }
  if (options.fullyConnected && !options.Any())
  {
    CANOPY_THROW(parameter << ": 'full' (26-connectivity) needs largest or fill beside it");
  }
  return options;
}

std::string
LabelCleanupOptions::Describe() const
{
  std::string s;
  if (largestComponent)
    s += "largest";
  if (fillHoles)
    s += std::string(s.empty() ? "" : ",") + "fill";
  if (fullyConnected)
    s += ",full";
  return s.empty() ? "none" : s;
}

namespace
{
template<unsigned int D>
void
CleanUp(std::int32_t * labels, const itk::Size<D> & size, const LabelCleanupOptions & options)
{
  using Mask = itk::Image<std::uint8_t, D>;
  using Components = itk::Image<std::uint32_t, D>;
  std::size_t n = 1;
  for (unsigned d = 0; d < D; ++d)
    n *= size[d];
  const std::set<std::int32_t> present(labels, labels + n);
  auto                         mask = Mask::New();
  mask->SetRegions(size);
  mask->Allocate();
  std::uint8_t * m = mask->GetBufferPointer();
  for (const std::int32_t label : present)
  {
    if (label < 1)
      continue;
    if (options.largestComponent)
    {
      std::transform(labels, labels + n, m, [label](std::int32_t l) { return std::uint8_t(l == label); });
      mask->Modified();
      auto components = itk::ConnectedComponentImageFilter<Mask, Components>::New();
      components->SetInput(mask);
      components->SetFullyConnected(options.fullyConnected);
      auto bySize = itk::RelabelComponentImageFilter<Components, Components>::New(); // 1 = the largest
      bySize->SetInput(components->GetOutput());
      bySize->Update();
      const std::uint32_t * c = bySize->GetOutput()->GetBufferPointer();
      for (std::size_t i = 0; i < n; ++i)
        if (labels[i] == label && c[i] != 1)
          labels[i] = 0;
    }
    if (options.fillHoles)
    {
      std::transform(labels, labels + n, m, [label](std::int32_t l) { return std::uint8_t(l == label); });
      mask->Modified();
      auto fill = itk::BinaryFillholeImageFilter<Mask>::New();
      fill->SetInput(mask);
      fill->SetForegroundValue(1);
      fill->SetFullyConnected(options.fullyConnected);
      fill->Update();
      const std::uint8_t * f = fill->GetOutput()->GetBufferPointer();
      for (std::size_t i = 0; i < n; ++i)
        if (labels[i] == 0 && f[i]) // only background: other labels inside stay
          labels[i] = label;
    }
  }
}
} // namespace

void
CleanUpLabels(std::int32_t * labels, int nx, int ny, int nz, int dimension, const LabelCleanupOptions & options)
{
  if (!options.Any())
    return;
  if (nx < 1 || ny < 1 || nz < 1 || (dimension == 2 && nz != 1) || (dimension != 2 && dimension != 3))
  {
    CANOPY_THROW("label post-processing: a " << dimension << "D image of " << nx << "x" << ny << "x" << nz);
  }
  if (dimension == 2)
    CleanUp<2>(labels, itk::Size<2>{ { std::size_t(nx), std::size_t(ny) } }, options);
  else
    CleanUp<3>(labels, itk::Size<3>{ { std::size_t(nx), std::size_t(ny), std::size_t(nz) } }, options);
}

} // namespace canopy
