#ifndef itkIntegralVolumeImageFilter_hxx
#define itkIntegralVolumeImageFilter_hxx

#include "itkIntegralVolumeImageFilter.h"

#include "canopy/Device.h"
#include "canopy/Errors.h"
#include "canopy/IntegralVolumeDispatch.h"
#include "itkProgressReporter.h"

#include <cmath>

namespace itk
{

template <typename TInputImage>
IntegralVolumeImageFilter<TInputImage>::IntegralVolumeImageFilter()
{
  this->SetNumberOfRequiredInputs(1);
}

template <typename TInputImage>
void
IntegralVolumeImageFilter<TInputImage>::GenerateOutputInformation()
{
  Superclass::GenerateOutputInformation(); // copies origin, spacing, direction
  const InputImageType * input = this->GetInput();
  OutputImageType *      output = this->GetOutput();
  auto                   region = input->GetLargestPossibleRegion();
  for (unsigned d = 0; d < 3; ++d)
  {
    region.SetIndex(d, region.GetIndex(d) - 1);
    region.SetSize(d, region.GetSize(d) + 1);
  }
  output->SetLargestPossibleRegion(region);
}

template <typename TInputImage>
void
IntegralVolumeImageFilter<TInputImage>::GenerateInputRequestedRegion()
{
  Superclass::GenerateInputRequestedRegion();
  auto * input = const_cast<InputImageType *>(this->GetInput());
  if (input)
  {
    input->SetRequestedRegionToLargestPossibleRegion();
  }
}

template <typename TInputImage>
void
IntegralVolumeImageFilter<TInputImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  Superclass::EnlargeOutputRequestedRegion(output);
  output->SetRequestedRegionToLargestPossibleRegion();
}

template <typename TInputImage>
void
IntegralVolumeImageFilter<TInputImage>::GenerateData()
{
  const InputImageType * input = this->GetInput();
  OutputImageType *      output = this->GetOutput();
  const auto             size = input->GetLargestPossibleRegion().GetSize();
  if (size[0] == 0 || size[1] == 0 || size[2] == 0)
  {
    itkExceptionMacro("IntegralVolumeImageFilter: the input image is empty (size " << size << ")");
  }
  if (input->GetBufferedRegion() != input->GetLargestPossibleRegion())
  {
    itkExceptionMacro("IntegralVolumeImageFilter: the whole input must be buffered");
  }

  ProgressReporter progress(this, 0, 2);
  const InputPixelType * voxels = input->GetBufferPointer();
  const SizeValueType    count = input->GetLargestPossibleRegion().GetNumberOfPixels();
  m_NumberOfNonFiniteVoxels = 0;
  if (!std::numeric_limits<InputPixelType>::is_integer)
  {
    for (SizeValueType i = 0; i < count; ++i)
    {
      m_NumberOfNonFiniteVoxels += std::isfinite(static_cast<double>(voxels[i])) ? 0 : 1;
    }
    if (m_NumberOfNonFiniteVoxels > 0)
    {
      itkWarningMacro(<< m_NumberOfNonFiniteVoxels << " non-finite voxel(s) (NaN/Inf) in the input were read as 0");
    }
  }
  progress.CompletedPixel();

  output->SetBufferedRegion(output->GetRequestedRegion());
  output->Allocate();
  const canopy::ResolvedBackend backend = canopy::ResolveBackend(canopy::BackendRequest::Parse(m_Backend));
  m_BackendUsed = backend.Describe();
  canopy::ComputeIntegralVolume(voxels,
                                static_cast<int>(size[0]),
                                static_cast<int>(size[1]),
                                static_cast<int>(size[2]),
                                output->GetBufferPointer(),
                                backend,
                                static_cast<int>(this->GetNumberOfWorkUnits()));
  progress.CompletedPixel();
}

template <typename TInputImage>
void
IntegralVolumeImageFilter<TInputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "Backend: " << m_Backend << std::endl;
  os << indent << "BackendUsed: " << m_BackendUsed << std::endl;
  os << indent << "NumberOfNonFiniteVoxels: " << m_NumberOfNonFiniteVoxels << std::endl;
}

} // namespace itk

#endif
