#ifndef itkRandomForestClassificationImageFilter_hxx
#define itkRandomForestClassificationImageFilter_hxx

#include "canopy/Elapsed.h"
#include "canopy/Errors.h"
#include "canopyForestDensePrediction.h"
#include "canopyForestInputChannels.h"

#include <algorithm>
#include <chrono>

namespace itk
{

template<typename TInputImage, typename TOutputImage>
void
RandomForestClassificationImageFilter<TInputImage, TOutputImage>::CheckSetUp() const
{
  if (!m_Model)
  {
    CANOPY_THROW("RandomForestClassificationImageFilter: no model set");
  }
  const bool vectorMode = m_Mode == OutputMode::Distribution || m_Mode == OutputMode::ForestLeaves;
  if (vectorMode != VectorOutput)
  {
    CANOPY_THROW("RandomForestClassificationImageFilter: output mode "
                 << (vectorMode ? "Distribution/ForestLeaves needs a VectorImage output"
                                : "ArgMax/TreeLeaf needs a scalar output image"));
  }
  if (int(m_Model->dimension) != int(ImageDimension))
  {
    CANOPY_THROW("RandomForestClassificationImageFilter: a " << m_Model->dimension << "D model cannot label a "
                                                             << ImageDimension << "D image");
  }
  if (m_Model->usesScale)
  {
    CANOPY_THROW("RandomForestClassificationImageFilter: models with a scale channel are not supported here");
  }
  if (canopy::ForestBankNeedsReference(m_Model->filterBank) && !m_ReferenceFrame)
  {
    CANOPY_THROW(
      "RandomForestClassificationImageFilter: the model's pose channels need the input's reference pose (structure '"
      << m_Model->reference.structure << "'); none set (SetReferenceFrame)");
  }
}

template<typename TInputImage, typename TOutputImage>
void
RandomForestClassificationImageFilter<TInputImage, TOutputImage>::GenerateOutputInformation()
{
  Superclass::GenerateOutputInformation();
  CheckSetUp();
  if constexpr (VectorOutput)
  {
    this->GetOutput()->SetNumberOfComponentsPerPixel(canopy::ForestComponents(m_Model->View(), m_Mode));
  }
}

template<typename TInputImage, typename TOutputImage>
void
RandomForestClassificationImageFilter<TInputImage, TOutputImage>::GenerateInputRequestedRegion()
{
  Superclass::GenerateInputRequestedRegion();
  if (auto * input = const_cast<TInputImage *>(this->GetInput()))
  {
    input->SetRequestedRegionToLargestPossibleRegion(); // features reach beyond any output region
  }
}

template<typename TInputImage, typename TOutputImage>
void
RandomForestClassificationImageFilter<TInputImage, TOutputImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  Superclass::EnlargeOutputRequestedRegion(output);
  output->SetRequestedRegionToLargestPossibleRegion();
}

template<typename TInputImage, typename TOutputImage>
void
RandomForestClassificationImageFilter<TInputImage, TOutputImage>::GenerateData()
{
  CheckSetUp();
  const TInputImage * input = this->GetInput();
  const auto          region = input->GetLargestPossibleRegion();
  this->UpdateProgress(0.1f);
  m_PredictionTimes = {};
  auto start = std::chrono::steady_clock::now();
  // The filter bank runs where the forest does (ITK's default threads on the CPU, as before).
  const auto image = canopy::MakeForestInputChannels(input,
                                                     m_Model->filterBank,
                                                     m_Model->numChannels,
                                                     "RandomForestClassificationImageFilter",
                                                     0,
                                                     canopy::ResolveBackend(canopy::BackendRequest::Parse(m_Backend)),
                                                     m_ReferenceFrame ? &*m_ReferenceFrame : nullptr,
                                                     0,
                                                     m_Model->normalization,
                                                     &m_NormalizationRanges);
  m_PredictionTimes.channelsSeconds = canopy::SecondsSince(start);
  this->UpdateProgress(0.2f);

  canopy::ForestDensePredictionOptions options;
  options.mode = m_Mode;
  options.backend = m_Backend;
  options.threads = int(this->GetNumberOfWorkUnits());
  options.maxDeviceBytes = m_MaximumDeviceBytes;
  options.maxSlabPlanes = m_MaximumSlabPlanes;
  options.progress = [this](double f) { this->UpdateProgress(float(0.2 + 0.8 * f)); };
  const std::size_t         n = region.GetNumberOfPixels();
  const int                 perVoxel = canopy::ForestComponents(m_Model->View(), m_Mode);
  std::vector<float>        distribution(m_Mode == OutputMode::Distribution ? n * perVoxel : 0);
  std::vector<std::int32_t> index(m_Mode == OutputMode::Distribution ? 0 : n * perVoxel);
  start = std::chrono::steady_clock::now();
  const auto result = canopy::PredictForestDense(*m_Model, image, options, distribution.data(), index.data());
  m_PredictionTimes.forestSeconds.push_back(canopy::SecondsSince(start));
  m_BackendUsed = result.backendUsed;
  m_NumberOfSlabsUsed = result.slabs;

  TOutputImage * output = this->GetOutput();
  output->SetBufferedRegion(output->GetRequestedRegion());
  output->Allocate();
  auto * buffer = output->GetBufferPointer(); // VectorImage: components of a pixel together, as ours
  using Internal = typename TOutputImage::InternalPixelType;
  if (m_Mode == OutputMode::Distribution)
    std::transform(distribution.begin(), distribution.end(), buffer, [](float v) { return static_cast<Internal>(v); });
  else
    std::transform(index.begin(), index.end(), buffer, [](std::int32_t v) { return static_cast<Internal>(v); });
}

template<typename TInputImage, typename TOutputImage>
void
RandomForestClassificationImageFilter<TInputImage, TOutputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Mode: " << int(m_Mode) << '\n';
  os << indent << "Backend: " << m_Backend << " (used: " << m_BackendUsed << ", slabs " << m_NumberOfSlabsUsed << ")\n";
  os << indent << "MaximumDeviceBytes: " << m_MaximumDeviceBytes << ", MaximumSlabPlanes: " << m_MaximumSlabPlanes
     << '\n';
  if (m_Model)
  {
    os << indent << "Model: " << m_Model->NumberOfTrees() << " trees, depth " << m_Model->Depth() << ", "
       << m_Model->numClasses << " classes, " << m_Model->numChannels << " channels\n";
  }
}

} // namespace itk

#endif
