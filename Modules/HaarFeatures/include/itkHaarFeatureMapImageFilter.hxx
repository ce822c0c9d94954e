#ifndef itkHaarFeatureMapImageFilter_hxx
#define itkHaarFeatureMapImageFilter_hxx

#include "itkHaarFeatureMapImageFilter.h"

#include "canopy/HaarResponseEngine.h"
#include "canopyHaarFeatureBank.h"
#include "itkProgressReporter.h"

namespace itk
{

template <typename TInputImage>
void
HaarFeatureMapImageFilter<TInputImage>::GenerateOutputInformation()
{
  Superclass::GenerateOutputInformation();
  if (m_FeatureBank.empty())
  {
    itkExceptionMacro("HaarFeatureMapImageFilter: the feature bank is empty; call SetFeatureBank first");
  }
  this->GetOutput()->SetNumberOfComponentsPerPixel(static_cast<unsigned int>(m_FeatureBank.size()));
}

template <typename TInputImage>
void
HaarFeatureMapImageFilter<TInputImage>::GenerateInputRequestedRegion()
{
  Superclass::GenerateInputRequestedRegion();
  if (auto * input = const_cast<InputImageType *>(this->GetInput()))
  {
    input->SetRequestedRegionToLargestPossibleRegion();
  }
}

template <typename TInputImage>
void
HaarFeatureMapImageFilter<TInputImage>::EnlargeOutputRequestedRegion(DataObject * output)
{
  Superclass::EnlargeOutputRequestedRegion(output);
  output->SetRequestedRegionToLargestPossibleRegion();
}

template <typename TInputImage>
void
HaarFeatureMapImageFilter<TInputImage>::GenerateData()
{
  const InputImageType * input = this->GetInput();
  OutputImageType *      output = this->GetOutput();
  const auto             size = input->GetLargestPossibleRegion().GetSize();
  if (size[0] == 0 || size[1] == 0 || size[2] == 0)
  {
    itkExceptionMacro("HaarFeatureMapImageFilter: the input image is empty (size " << size << ")");
  }
  output->SetBufferedRegion(output->GetRequestedRegion());
  output->Allocate();

  const int nx = static_cast<int>(size[0]), ny = static_cast<int>(size[1]), nz = static_cast<int>(size[2]);
  const auto backend = canopy::ResolveBackend(canopy::BackendRequest::Parse(m_Backend));
  m_BackendUsed = backend.Describe();
  canopy::HaarResponseEngine engine(backend, static_cast<int>(this->GetNumberOfWorkUnits()));
  engine.SetVolumeFromVoxels(input->GetBufferPointer(), nx, ny, nz);
  const auto resolved = canopy::ResolveHaarBank(m_FeatureBank, m_SampleBoxSize);
  engine.SetFeatures(resolved.data(), static_cast<int>(resolved.size()));

  // One z-slab at a time so progress advances and host staging stays bounded.
  const int        slabPlanes = std::max(1, (1 << 20) / std::max(1, nx * ny));
  ProgressReporter progress(this, 0, static_cast<SizeValueType>((nz + slabPlanes - 1) / slabPlanes));
  const auto       components = static_cast<std::int64_t>(m_FeatureBank.size());
  float *          values = output->GetBufferPointer();
  for (int z = 0; z < nz; z += slabPlanes)
  {
    const canopy::VoxelBlock block{ 0, 0, z, nx, ny, std::min(slabPlanes, nz - z) };
    const std::int64_t       offset = static_cast<std::int64_t>(z) * nx * ny * components;
    engine.EvaluateDense(block, canopy::ResponseLayout{ values + offset, 1, components });
    progress.CompletedPixel();
  }
}

template <typename TInputImage>
void
HaarFeatureMapImageFilter<TInputImage>::PrintSelf(std::ostream & os, Indent indent) const
{
  Superclass::PrintSelf(os, indent);
  os << indent << "FeatureBank: " << m_FeatureBank.size() << " features" << std::endl;
  os << indent << "SampleBoxSize: [" << m_SampleBoxSize[0] << ", " << m_SampleBoxSize[1] << ", " << m_SampleBoxSize[2]
     << "]" << std::endl;
  os << indent << "Backend: " << m_Backend << std::endl;
  os << indent << "BackendUsed: " << m_BackendUsed << std::endl;
}

} // namespace itk

#endif
