#ifndef itkForestCascadeClassificationImageFilter_hxx
#define itkForestCascadeClassificationImageFilter_hxx

#include "canopy/Elapsed.h"
#include "canopy/Errors.h"
#include "canopyForestInputChannels.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace itk
{

template<typename TInputImage, typename TOutputImage>
void
ForestCascadeClassificationImageFilter<TInputImage, TOutputImage>::CheckSetUp() const
{
  if (!m_Cascade)
  {
    CANOPY_THROW("ForestCascadeClassificationImageFilter: no cascade set");
  }
  m_Cascade->Validate("ForestCascadeClassificationImageFilter");
  if (m_Cascade->Dimension() != int(ImageDimension))
  {
    CANOPY_THROW("ForestCascadeClassificationImageFilter: a " << m_Cascade->Dimension() << "D cascade cannot label a "
                                                              << ImageDimension << "D image");
  }
  if (m_Cascade->stages.front().usesScale)
  {
    CANOPY_THROW("ForestCascadeClassificationImageFilter: models with a scale channel are not supported here");
  }
  if (canopy::ForestBankNeedsReference(m_Cascade->filterBank) && !m_ReferenceFrame)
  {
    CANOPY_THROW(
      "ForestCascadeClassificationImageFilter: the model's pose channels need the input's reference pose (structure '"
      << m_Cascade->reference.structure << "'); none set (SetReferenceFrame)");
  }
}

template<typename TInputImage, typename TOutputImage>
void
ForestCascadeClassificationImageFilter<TInputImage, TOutputImage>::GenerateOutputInformation()
{
  Superclass::GenerateOutputInformation();
  CheckSetUp();
  if constexpr (DistributionOutput)
  {
    this->GetOutput()->SetNumberOfComponentsPerPixel(m_Cascade->NumberOfClasses());
  }
}

template<typename TInputImage, typename TOutputImage>
void
ForestCascadeClassificationImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion()
{
  Superclass::GenerateInputRequestedRegion();
  if (auto * input = const_cast<TInputImage *>(this->GetInput()))
  {
    input->SetRequestedRegionToLargestPossibleRegion(); // features and later stages reach anywhere
  }
}

template<typename TInputImage, typename TOutputImage>
void
ForestCascadeClassificationImageFilter<TInputImage, TOutputImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  Superclass::EnlargeOutputRequestedRegion(output);
  output->SetRequestedRegionToLargestPossibleRegion();
}

template<typename TInputImage, typename TOutputImage>
void
ForestCascadeClassificationImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  CheckSetUp();
  const auto start = std::chrono::steady_clock::now();
  // Room for the later stages' maps in the image's own tables: the cascade appends them there.
  const int appended = m_Cascade->stages.size() > 1 ? m_Cascade->ContextChannelsPerStage() : 0;
  auto      image = canopy::MakeForestInputChannels(this->GetInput(),
                                               m_Cascade->filterBank,
                                               m_Cascade->ImageChannels(),
                                               "ForestCascadeClassificationImageFilter",
                                               int(this->GetNumberOfWorkUnits()),
                                               canopy::ResolveBackend(canopy::BackendRequest::Parse(m_Backend)),
                                               m_ReferenceFrame ? &*m_ReferenceFrame : nullptr,
                                               appended,
                                               m_Cascade->normalization,
                                               &m_NormalizationRanges);
  m_PredictionTimes.channelsSeconds = canopy::SecondsSince(start);
  this->UpdateProgress(0.1f);
  canopy::ForestDensePredictionOptions options;
  options.backend = m_Backend;
  options.threads = int(this->GetNumberOfWorkUnits());
  options.maxDeviceBytes = m_MaximumDeviceBytes;
  options.progress = [this](double f) { this->UpdateProgress(float(0.1 + 0.9 * f)); };
  const auto distribution =
    canopy::PredictForestCascade(*m_Cascade, std::move(image), options, &m_BackendUsed, &m_PredictionTimes);

  TOutputImage * output = this->GetOutput();
  output->SetBufferedRegion(output->GetRequestedRegion());
  output->Allocate();
  auto * buffer = output->GetBufferPointer(); // VectorImage: components of a pixel together, as ours
  using Internal = typename TOutputImage::InternalPixelType;
  if constexpr (DistributionOutput)
  {
    std::transform(distribution.begin(), distribution.end(), buffer, [](float v) { return static_cast<Internal>(v); });
  }
  else
  {
    const auto labels = canopy::ArgMaxLabels(distribution, m_Cascade->NumberOfClasses());
    std::transform(labels.begin(), labels.end(), buffer, [](std::int32_t v) { return static_cast<Internal>(v); });
  }
}

template<typename TInputImage, typename TOutputImage>
void
ForestCascadeClassificationImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Backend: " << m_Backend << " (used: " << m_BackendUsed << ")\n";
  if (m_Cascade)
  {
    os << indent << "Cascade: " << m_Cascade->stages.size() << " stages, " << m_Cascade->NumberOfClasses()
       << " classes, " << m_Cascade->ImageChannels() << " image channels\n";
  }
}

} // namespace itk

#endif
