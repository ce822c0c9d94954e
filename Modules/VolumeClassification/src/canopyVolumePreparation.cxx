#include "canopyVolumePreparation.h"

#include "canopy/Errors.h"
#include "canopyImageGrid.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkNearestNeighborInterpolateImageFunction.h"
#include "itkResampleImageFilter.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace canopy
{

std::array<double, 2>
NormalizeIntensities(FloatVolume * volume, const IntensityNormalization & normalization)
{
  return NormalizeIntensities(volume->GetBufferPointer(),
                              static_cast<std::int64_t>(volume->GetBufferedRegion().GetNumberOfPixels()),
                              normalization);
}

namespace
{
template<typename TImage, typename TInterpolator>
typename TImage::Pointer
ResampleOnto(const TImage * volume, const itk::ImageBase<3> * reference, typename TImage::PixelType outside)
{
  using Filter = itk::ResampleImageFilter<TImage, TImage>;
  auto filter = Filter::New();
  filter->SetInput(volume);
  filter->SetInterpolator(TInterpolator::New());
  filter->SetOutputParametersFromImage(reference);
  filter->SetDefaultPixelValue(outside);
  filter->Update();
  return filter->GetOutput();
}
} // namespace

void
CheckWorkingGrid(const FloatVolume * volume, const std::array<double, 3> & spacing, const std::string & where)
{
  const auto region = volume->GetLargestPossibleRegion();
  double     voxels = 1.0;
  double     size[3];
  for (unsigned d = 0; d < 3; ++d)
  {
    if (!(spacing[d] > 0.0) || !std::isfinite(spacing[d]))
    {
      CANOPY_THROW(where << ": working spacing must be positive and finite, got " << spacing[d] << " on axis " << d);
    }
    size[d] = std::max(1.0, std::round(region.GetSize(d) * volume->GetSpacing()[d] / spacing[d]));
    voxels *= size[d];
  }
  if (!(voxels <= kMaxWorkingVoxels))
  {
    CANOPY_THROW(where << ": working spacing " << spacing[0] << " x " << spacing[1] << " x " << spacing[2]
                       << " mm makes a working grid of " << size[0] << " x " << size[1] << " x " << size[2]
                       << " voxels for this volume (at most " << kMaxWorkingVoxels << " voxels)");
  }
}

FloatVolume::Pointer
ResampleToSpacing(const FloatVolume * volume, const std::array<double, 3> & spacing)
{
  CheckWorkingGrid(volume, spacing, "ResampleToSpacing");
  const auto               region = volume->GetLargestPossibleRegion();
  auto                     grid = FloatVolume::New(); // geometry only
  FloatVolume::SpacingType newSpacing;
  FloatVolume::SizeType    newSize;
  for (unsigned d = 0; d < 3; ++d)
  {
    if (!(spacing[d] > 0.0) || !std::isfinite(spacing[d]))
    {
      CANOPY_THROW("working spacing must be positive and finite, got " << spacing[d] << " on axis " << d);
    }
    const double extent = region.GetSize(d) * volume->GetSpacing()[d];
    newSpacing[d] = spacing[d];
    newSize[d] = std::max<itk::SizeValueType>(1, static_cast<itk::SizeValueType>(std::lround(extent / spacing[d])));
  }
  // Keep the physical centre: the first new voxel centre sits half a new voxel inside the old extent.
  FloatVolume::PointType          origin;
  itk::ContinuousIndex<double, 3> firstCorner;
  for (unsigned d = 0; d < 3; ++d)
  {
    firstCorner[d] = region.GetIndex(d) - 0.5 + 0.5 * newSpacing[d] / volume->GetSpacing()[d];
  }
  volume->TransformContinuousIndexToPhysicalPoint(firstCorner, origin);
  FloatVolume::RegionType newRegion;
  newRegion.SetSize(newSize);
  grid->SetRegions(newRegion);
  grid->SetSpacing(newSpacing);
  grid->SetOrigin(origin);
  grid->SetDirection(volume->GetDirection());
  return ResampleOnto<FloatVolume, itk::LinearInterpolateImageFunction<FloatVolume, double>>(volume, grid, 0.0f);
}

MaskVolume::Pointer
ResampleMaskLike(const MaskVolume * mask, const itk::ImageBase<3> * reference)
{
  return ResampleOnto<MaskVolume, itk::NearestNeighborInterpolateImageFunction<MaskVolume, double>>(mask, reference, 0);
}

FloatVolume::Pointer
ResampleLike(const FloatVolume * volume, const itk::ImageBase<3> * reference, float outsideValue)
{
  return ResampleOnto<FloatVolume, itk::LinearInterpolateImageFunction<FloatVolume, double>>(
    volume, reference, outsideValue);
}

bool
SameGrid(const itk::ImageBase<3> * a, const itk::ImageBase<3> * b)
{
  return DescribeGridMismatch(a, b).empty();
}

} // namespace canopy
