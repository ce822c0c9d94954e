#include "canopyVolumePreparation.h"

#include "canopy/Errors.h"
#include "canopy/JsonField.h"
#include "canopy/PyramidMath.h"
#include "canopyImageGrid.h"
#include "itkLinearInterpolateImageFunction.h"
#include "itkNearestNeighborInterpolateImageFunction.h"
#include "itkResampleImageFilter.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace canopy
{

void
ToJson(const IntensityNormalization & normalization, nlohmann::json & out)
{
  if (normalization.method == "window")
  {
    out = { { "method", "window" },
            { "windowLow", normalization.windowLow },
            { "windowHigh", normalization.windowHigh } };
    return;
  }
  out = { { "method", "percentile" },
          { "lowPercentile", normalization.lowPercentile },
          { "highPercentile", normalization.highPercentile } };
}

IntensityNormalization
IntensityNormalizationFromJson(const nlohmann::json & in, const std::string & where)
{
  IntensityNormalization n;
  const std::string      method = in.is_object() ? OptionalJsonString(in, "method", where + ": \"normalization\"") : "";
  if (method == "window")
  {
    if (!in.contains("windowLow") || !in.contains("windowHigh") || !in["windowLow"].is_number() ||
        !in["windowHigh"].is_number() || !(in["windowLow"].get<double>() < in["windowHigh"].get<double>()))
    {
      CANOPY_THROW(where << ": a \"window\" normalization needs numbers windowLow < windowHigh");
    }
    n.method = "window";
    n.windowLow = in["windowLow"].get<double>();
    n.windowHigh = in["windowHigh"].get<double>();
    return n;
  }
  if (!in.is_object() || method != "percentile" || !in.contains("lowPercentile") || !in.contains("highPercentile") ||
      !in["lowPercentile"].is_number() || !in["highPercentile"].is_number())
  {
    CANOPY_THROW(
      where << ": 'normalization' must be {\"method\": \"percentile\", \"lowPercentile\": x, \"highPercentile\": y}");
  }
  n.lowPercentile = in["lowPercentile"].get<double>();
  n.highPercentile = in["highPercentile"].get<double>();
  if (!(n.lowPercentile >= 0.0 && n.lowPercentile < n.highPercentile && n.highPercentile <= 100.0))
  {
    CANOPY_THROW(where << ": normalization percentiles must satisfy 0 <= low < high <= 100");
  }
  return n;
}

std::array<double, 2>
NormalizeIntensities(FloatVolume * volume, const IntensityNormalization & normalization)
{
  float *            v = volume->GetBufferPointer();
  const std::int64_t n = static_cast<std::int64_t>(volume->GetBufferedRegion().GetNumberOfPixels());
  if (normalization.method == "window")
  {
    const double low = normalization.windowLow, high = normalization.windowHigh;
    if (!(low < high))
    {
      CANOPY_THROW("intensity window: need windowLow < windowHigh, got " << low << " and " << high);
    }
    for (std::int64_t i = 0; i < n; ++i)
    {
      v[i] = NormalizedWindow(v[i], low, high);
    }
    return { low, high };
  }
  // Percentiles from a strided subsample: exact enough and O(n) on large volumes.
  const std::int64_t stride = NormalizationStride(n);
  std::vector<float> finite;
  finite.reserve(static_cast<std::size_t>(n / stride + 1));
  for (std::int64_t i = 0; i < n; i += stride)
  {
    if (std::isfinite(v[i]))
    {
      finite.push_back(v[i]);
    }
  }
  double low = 0.0, high = 0.0;
  if (!finite.empty())
  {
    auto at = [&finite](double percentile)
    {
      const auto k = static_cast<std::size_t>(PercentileRank(percentile, static_cast<std::int64_t>(finite.size())));
      std::nth_element(finite.begin(), finite.begin() + k, finite.end());
      return static_cast<double>(finite[k]);
    };
    low = at(normalization.lowPercentile);
    high = at(normalization.highPercentile);
  }
  const double scale = high > low ? 1.0 / (high - low) : 0.0;
  for (std::int64_t i = 0; i < n; ++i)
  {
    v[i] = NormalizedPercentile(v[i], low, scale);
  }
  return { low, high };
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
