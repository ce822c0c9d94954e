#ifndef itkPoseDetectionFilter_hxx
#define itkPoseDetectionFilter_hxx

#include "itkPoseDetectionFilter.h"

#include "itkCastImageFilter.h"

namespace itk
{

template<typename TInputImage>
PoseDetectionFilter<TInputImage>::PoseDetectionFilter()
{
  this->SetNumberOfRequiredInputs(1);
  this->SetNumberOfRequiredOutputs(1);
  this->SetNthOutput(0, this->MakeOutput(0));
}

template<typename TInputImage>
void
PoseDetectionFilter<TInputImage>::GenerateData()
{
  if (!m_Model)
  {
    itkExceptionMacro("PoseDetectionFilter: no detector set (SetModel)");
  }
  const auto size = this->GetInput()->GetLargestPossibleRegion().GetSize();
  if (size[0] == 0 || size[1] == 0 || size[2] == 0)
  {
    itkExceptionMacro("PoseDetectionFilter: the input image is empty (size " << size << ")");
  }
  using FloatImage = Image<float, 3>;
  auto cast = CastImageFilter<InputImageType, FloatImage>::New();
  cast->SetInput(this->GetInput());
  cast->Update();

  canopy::DetectionOptions options;
  options.backend = canopy::ResolveBackend(canopy::BackendRequest::Parse(m_Backend));
  options.cpuThreads = static_cast<int>(this->GetNumberOfWorkUnits());
  options.thresholdOverride = m_ThresholdOverride;
  m_BackendUsed = options.backend.Describe();
  canopy::PoseDetector detector(*m_Model, options);
  detector.SetImage(cast->GetOutput(), "PoseDetectionFilter input");
  PosesType poses;
  // In the model's network order (roots first; canopyDetectionNetwork.h); poses in the model's order.
  for (const auto & entry : detector.DetectAll([this](double done) { this->UpdateProgress(static_cast<float>(done)); }))
    poses.push_back(entry.result);
  this->GetPosesOutput()->Set(poses);
}

template<typename TInputImage>
void
PoseDetectionFilter<TInputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Model: " << (m_Model ? std::to_string(m_Model->structures.size()) + " structure(s)" : "(none)")
     << std::endl;
  os << indent << "Backend: " << m_Backend << std::endl;
  os << indent << "BackendUsed: " << m_BackendUsed << std::endl;
  os << indent << "ThresholdOverride: " << m_ThresholdOverride << std::endl;
}

} // namespace itk

#endif
