#include "canopySteerablePyramid.h"

#include "canopy/Errors.h"
#include "canopy/SteerableEvaluation.h"

#include "itkDiscreteGaussianImageFilter.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkNearestNeighborExtrapolateImageFunction.h"
#include "itkResampleImageFilter.h"

#include <array>
#include <cmath>

namespace canopy
{
namespace
{
using ImageType = SteerablePyramid::ImageType;

ImageType::Pointer
SmoothAndResample(const ImageType * image, const std::array<double, 3> & target)
{
  const auto spacing = image->GetSpacing();
  const auto size = image->GetLargestPossibleRegion().GetSize();
  bool       same = true;
  for (unsigned a = 0; a < 3; ++a)
    same = same && std::abs(target[a] - spacing[a]) <= 1e-6;
  if (same)
  {
    auto copy = ImageType::New();
    copy->Graft(image);
    return copy;
  }
  ImageType::ConstPointer    source = image;
  itk::FixedArray<double, 3> variance;
  bool                       smooth = false;
  for (unsigned a = 0; a < 3; ++a)
  {
    const double sigma = 0.5 * std::sqrt(std::max(0.0, target[a] * target[a] - spacing[a] * spacing[a]));
    variance[a] = sigma * sigma;
    smooth = smooth || sigma > 0;
  }
  if (smooth)
  {
    auto gaussian = itk::DiscreteGaussianImageFilter<ImageType, ImageType>::New();
    gaussian->SetInput(image);
    gaussian->SetVariance(variance);
    gaussian->SetUseImageSpacing(true);
    gaussian->SetMaximumKernelWidth(64);
    gaussian->Update();
    source = gaussian->GetOutput();
  }
  ImageType::SizeType    outSize;
  ImageType::SpacingType outSpacing;
  itk::Vector<double, 3> shift; // keep the lower edge of the physical box: origin moves by (t - s)/2
  for (unsigned a = 0; a < 3; ++a)
  {
    // floor: the level's box stays inside the input's (up to 1e-9 for round-off in the ratio)
    outSize[a] = std::max<itk::SizeValueType>(
      1, static_cast<itk::SizeValueType>(std::floor(size[a] * spacing[a] / target[a] + 1e-9)));
    outSpacing[a] = target[a];
    shift[a] = 0.5 * (target[a] - spacing[a]);
  }
  auto origin = image->GetOrigin();
  origin += image->GetDirection() * shift;
  auto resample = itk::ResampleImageFilter<ImageType, ImageType>::New();
  resample->SetInput(source);
  resample->SetInterpolator(itk::LinearInterpolateImageFunction<ImageType, double>::New());
  resample->SetSize(outSize);
  resample->SetOutputSpacing(outSpacing);
  resample->SetOutputOrigin(origin);
  resample->SetOutputDirection(image->GetDirection());
  // Upsampled levels put their outer centres up to half an input voxel beyond the last input centre.
  resample->SetExtrapolator(itk::NearestNeighborExtrapolateImageFunction<ImageType, double>::New());
  resample->Update();
  ImageType::Pointer out = resample->GetOutput();
  out->DisconnectPipeline();
  return out;
}

} // namespace

SteerablePyramid
SteerablePyramid::Build(const ImageType * image, const SteerablePyramidOptions & options, int threads)
{
  if (!image || !image->GetBufferPointer())
    CANOPY_THROW("SteerablePyramid: the image is null or has no pixel buffer");
  const bool   byFactor = !options.levelFactors.empty();
  const auto & values = byFactor ? options.levelFactors : options.levelSpacingsMm;
  const char * what = byFactor ? "levelFactors" : "levelSpacingsMm";
  if (values.empty() || values.size() > static_cast<std::size_t>(kMaxSteerableLevels))
    CANOPY_THROW("SteerablePyramid: " << what << " must list 1 to " << kMaxSteerableLevels << " levels, got "
                                      << values.size());
  SteerablePyramid pyramid;
  for (double v : values)
  {
    if (!(std::isfinite(v) && v > 0))
      CANOPY_THROW("SteerablePyramid: " << what << " must be finite and > 0, got " << v);
    std::array<double, 3> target{};
    for (unsigned a = 0; a < 3; ++a)
      target[a] = byFactor ? v * image->GetSpacing()[a] : v;
    pyramid.AddLevel(SmoothAndResample(image, target), threads);
  }
  return pyramid;
}

void
SteerablePyramid::AddLevel(const ImageType * image, int threads)
{
  if (!image || !image->GetBufferPointer())
    CANOPY_THROW("SteerablePyramid: level image is null or has no pixel buffer");
  if (m_Levels.size() >= static_cast<std::size_t>(kMaxSteerableLevels))
    CANOPY_THROW("SteerablePyramid: at most " << kMaxSteerableLevels << " levels");
  const auto size = image->GetLargestPossibleRegion().GetSize();
  Level      level;
  level.image = ImageType::New();
  level.image->Graft(image);
  level.view.nx = static_cast<int>(size[0]);
  level.view.ny = static_cast<int>(size[1]);
  level.view.nz = static_cast<int>(size[2]);
  // index = (direction * spacing)^-1 (p - origin) = spacing^-1 inverseDirection (p - origin), counted
  // from the buffer's first voxel (the region's start index).
  const auto & inverse = image->GetInverseDirection();
  const auto   first = image->TransformIndexToPhysicalPoint<double>(image->GetLargestPossibleRegion().GetIndex());
  for (unsigned r = 0; r < 3; ++r)
  {
    for (unsigned c = 0; c < 3; ++c)
      level.view.worldToIndex[3 * r + c] = static_cast<float>(inverse[r][c] / image->GetSpacing()[r]);
    level.view.origin[r] = static_cast<float>(first[r]);
  }
  level.voxels.resize(static_cast<std::size_t>(size[0]) * size[1] * size[2]);
  ComputeSteerableVoxelsCPU(image->GetBufferPointer(),
                            level.view.nx,
                            level.view.ny,
                            level.view.nz,
                            level.view.worldToIndex,
                            level.voxels.data(),
                            threads);
  m_Levels.push_back(std::move(level));
}

SteerablePyramidView
SteerablePyramid::GetView() const
{
  SteerablePyramidView view;
  view.numLevels = GetNumberOfLevels();
  for (int k = 0; k < view.numLevels; ++k)
  {
    view.levels[k] = m_Levels[k].view;
    view.levels[k].voxels = m_Levels[k].voxels.data();
  }
  return view;
}

} // namespace canopy
