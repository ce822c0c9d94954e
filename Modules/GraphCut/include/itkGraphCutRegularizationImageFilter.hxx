#ifndef itkGraphCutRegularizationImageFilter_hxx
#define itkGraphCutRegularizationImageFilter_hxx

#include "itkGraphCutRegularizationImageFilter.h"

#include "itkImageRegionConstIterator.h"
#include "itkImageRegionIterator.h"

#include <vector>

namespace itk
{

template<typename TProbabilityImage, typename TLabelImage>
void
GraphCutRegularizationImageFilter<TProbabilityImage, TLabelImage>::GenerateInputRequestedRegion()
{
  Superclass::GenerateInputRequestedRegion();
  if (auto * input = const_cast<ProbabilityImageType *>(this->GetInput()))
  {
    input->SetRequestedRegionToLargestPossibleRegion();
  }
}

template<typename TProbabilityImage, typename TLabelImage>
void
GraphCutRegularizationImageFilter<TProbabilityImage, TLabelImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  Superclass::EnlargeOutputRequestedRegion(output);
  output->SetRequestedRegionToLargestPossibleRegion(); // a cut is global: no streaming
}

template<typename TProbabilityImage, typename TLabelImage>
void
GraphCutRegularizationImageFilter<TProbabilityImage, TLabelImage>::GenerateData()
{
  const ProbabilityImageType * input = this->GetInput();
  const auto                   region = input->GetLargestPossibleRegion();
  const int                    size[3] = { int(region.GetSize(0)), int(region.GetSize(1)), int(region.GetSize(2)) };
  const auto                   spacing = input->GetSpacing();
  const double                 spacingMm[3] = { spacing[0], spacing[1], spacing[2] };

  // Contiguous float copy (x fastest) for the array layer; any scalar input type is accepted.
  std::vector<float> p(region.GetNumberOfPixels());
  {
    ImageRegionConstIterator<ProbabilityImageType> it(input, region);
    for (std::size_t i = 0; !it.IsAtEnd(); ++it, ++i)
      p[i] = static_cast<float>(it.Get());
  }
  canopy::GridGraphCutParameters parameters;
  parameters.lambda = m_Lambda;
  parameters.neighborhood = static_cast<int>(m_Neighborhood);
  parameters.uncertainLow = m_UncertainLow;
  parameters.uncertainHigh = m_UncertainHigh;
  parameters.margin = static_cast<int>(m_Margin);
  parameters.banded = m_BandedGraph;
  std::vector<std::uint8_t> labels(p.size());
  m_Statistics = canopy::RegularizeProbabilities(p.data(),
                                                 size,
                                                 spacingMm,
                                                 parameters,
                                                 labels.data(),
                                                 [this](double f) { this->UpdateProgress(static_cast<float>(f)); });

  LabelImageType * output = this->GetOutput();
  output->SetBufferedRegion(output->GetRequestedRegion());
  output->Allocate();
  ImageRegionIterator<LabelImageType> out(output, region);
  for (std::size_t i = 0; !out.IsAtEnd(); ++out, ++i)
    out.Set(static_cast<typename LabelImageType::PixelType>(labels[i]));
}

template<typename TProbabilityImage, typename TLabelImage>
void
GraphCutRegularizationImageFilter<TProbabilityImage, TLabelImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Lambda (mm): " << m_Lambda << std::endl;
  os << indent << "Neighborhood: " << m_Neighborhood << std::endl;
  os << indent << "UncertainLow: " << m_UncertainLow << std::endl;
  os << indent << "UncertainHigh: " << m_UncertainHigh << std::endl;
  os << indent << "Margin (voxels): " << m_Margin << std::endl;
  os << indent << "BandedGraph: " << m_BandedGraph << std::endl;
  os << indent << "Statistics: uncertain voxels " << m_Statistics.uncertain << ", nodes " << m_Statistics.nodes
     << ", n-links " << m_Statistics.nLinks << ", arcs " << m_Statistics.arcs << ", graph bytes (estimate) "
     << m_Statistics.graphBytes << ", build " << m_Statistics.buildSeconds << " s, solver "
     << m_Statistics.maxFlowSeconds << " s (set-up " << m_Statistics.solverSetupSeconds << " s), energy "
     << m_Statistics.energy << " mm^3, border cuts " << m_Statistics.borderCuts << std::endl;
}

} // namespace itk

#endif
