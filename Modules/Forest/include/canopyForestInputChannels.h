// The channels a forest reads from an ITK image: every component as float, through the filter bank
// when there is one (canopyForestFilterBank.h), integrated into a ForestImage. Shared by the forest
// filters (plain and auto-context cascade), so prediction computes exactly the channels training did.
#pragma once

#include "canopy/Errors.h"
#include "canopy/IntensityNormalization.h"
#include "canopyForestFilterBank.h"
#include "canopyForestImage.h"
#include "itkDefaultConvertPixelTraits.h"
#include "itkImage.h"
#include "itkImageRegionConstIterator.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace canopy
{

/** Channels of `input` (scalar image or VectorImage, whole largest region) for a model reading
 * `expectedChannels` channels through `bank`, the bank computed on `filterBackend`; throws
 * canopy::Error prefixed by `who` when the component count does not give that many channels.
 * threads <= 0: ITK's default. `reference`: the image's reference pose (for pose channels).
 * `reserveChannels`: room for more tables (ForestImage::FromChannels). `normalization`: each component's
 * intensities mapped before the bank (ForestModel::normalization), over the whole image; `mappedRanges`
 * (may be null) receives per component the intensities mapped to 0 and 1 (empty without a normalization). */
template<typename TInputImage>
ForestImage
MakeForestInputChannels(const TInputImage *                           input,
                        const std::vector<std::string> &              bank,
                        int                                           expectedChannels,
                        const std::string &                           who,
                        int                                           threads = 0,
                        const ResolvedBackend &                       filterBackend = {},
                        const ReferenceFrame *                        reference = nullptr,
                        int                                           reserveChannels = 0,
                        const std::optional<IntensityNormalization> & normalization = std::nullopt,
                        std::vector<std::array<double, 2>> *          mappedRanges = nullptr)
{
  constexpr unsigned int D = TInputImage::ImageDimension;
  const auto             region = input->GetLargestPossibleRegion();
  const auto             size = region.GetSize();
  const int              components = int(input->GetNumberOfComponentsPerPixel());
  const int              perComponent = bank.empty() ? 1 : int(bank.size());
  if (components * perComponent != expectedChannels)
  {
    CANOPY_THROW(who << ": the model reads " << expectedChannels << " channels, the input's " << components
                     << " component(s) give " << components * perComponent);
  }
  using FloatImage = itk::Image<float, D>;
  using Traits = itk::DefaultConvertPixelTraits<typename TInputImage::PixelType>;
  std::vector<std::vector<float>> channels;
  if (mappedRanges)
    mappedRanges->clear();
  for (int c = 0; c < components; ++c)
  {
    auto component = FloatImage::New();
    component->CopyInformation(input);
    component->SetRegions(region);
    component->Allocate();
    float * out = component->GetBufferPointer();
    for (itk::ImageRegionConstIterator<TInputImage> it(input, region); !it.IsAtEnd(); ++it)
    {
      *out++ = static_cast<float>(Traits::GetNthComponent(c, it.Get()));
    }
    if (normalization)
    {
      const auto range =
        NormalizeIntensities(component->GetBufferPointer(), out - component->GetBufferPointer(), *normalization);
      if (mappedRanges)
        mappedRanges->push_back(range);
    }
    if (bank.empty())
    {
      channels.emplace_back(component->GetBufferPointer(), out);
      continue;
    }
    for (auto & channel : ComputeForestFilterBank<D>(component, bank, filterBackend, threads, reference))
      channels.push_back(std::move(channel));
  }
  std::vector<const float *> pointers;
  for (const auto & channel : channels)
    pointers.push_back(channel.data());
  const int nz = D == 3 ? int(size[D - 1]) : 1;
  return ForestImage::FromChannels(pointers, int(size[0]), int(size[1]), nz, nullptr, threads, reserveChannels);
}

} // namespace canopy
