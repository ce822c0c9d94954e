#ifndef itkPBTClassificationImageFilter_hxx
#define itkPBTClassificationImageFilter_hxx

#include "itkPBTClassificationImageFilter.h"

#include "canopyPBTClassification.h"
#include "itkCastImageFilter.h"

namespace itk
{

template <typename TInputImage>
void
PBTClassificationImageFilter<TInputImage>::GenerateInputRequestedRegion()
{
  Superclass::GenerateInputRequestedRegion();
  if (auto * input = const_cast<InputImageType *>(this->GetInput()))
  {
    input->SetRequestedRegionToLargestPossibleRegion();
  }
}

template <typename TInputImage>
void
PBTClassificationImageFilter<TInputImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  Superclass::EnlargeOutputRequestedRegion(output);
  output->SetRequestedRegionToLargestPossibleRegion();
}

template <typename TInputImage>
void
PBTClassificationImageFilter<TInputImage>::GenerateData()
{
  if (!m_Model)
  {
    itkExceptionMacro("PBTClassificationImageFilter: no model set (SetModel)");
  }
  const auto size = this->GetInput()->GetLargestPossibleRegion().GetSize();
  if (size[0] == 0 || size[1] == 0 || size[2] == 0)
  {
    itkExceptionMacro("PBTClassificationImageFilter: the input image is empty (size " << size << ")");
  }
  using CastType = CastImageFilter<InputImageType, OutputImageType>;
  auto cast = CastType::New();
  cast->SetInput(this->GetInput());
  cast->Update();

  const auto backend = canopy::ResolveBackend(canopy::BackendRequest::Parse(m_Backend));
  m_BackendUsed = backend.Describe();
  canopy::PBTEvaluationOptions options;
  options.probabilistic = m_Probabilistic;
  options.cpuThreads = static_cast<int>(this->GetNumberOfWorkUnits());
  options.maxDeviceBytes = m_MaximumDeviceBytes;
  auto result = canopy::ClassifyVolume(cast->GetOutput(), *m_Model, backend, options,
                                       [this](double f) { this->UpdateProgress(static_cast<float>(f)); });
  this->GraftOutput(result);
}

template <typename TInputImage>
void
PBTClassificationImageFilter<TInputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Model: " << (m_Model ? "set" : "(none)") << std::endl;
  os << indent << "Backend: " << m_Backend << std::endl;
  os << indent << "BackendUsed: " << m_BackendUsed << std::endl;
  os << indent << "Probabilistic: " << m_Probabilistic << std::endl;
  os << indent << "MaximumDeviceBytes: " << m_MaximumDeviceBytes << std::endl;
}

} // namespace itk

#endif
