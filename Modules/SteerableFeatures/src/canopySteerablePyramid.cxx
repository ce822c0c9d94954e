#include "canopySteerablePyramid.h"

#include "canopy/Errors.h"
#include "canopy/SteerableEvaluation.h"

#include "itkDiscreteGaussianImageFilter.h"
#include "itkGaussianOperator.h"
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
SmoothAndResample(const ImageType * image, const SteerablePyramid::LevelPlan & plan)
{
  if (plan.sameAsInput)
  {
    auto copy = ImageType::New();
    copy->Graft(image);
    return copy;
  }
  ImageType::ConstPointer source = image;
  if (plan.smooth)
  {
    auto gaussian = itk::DiscreteGaussianImageFilter<ImageType, ImageType>::New();
    gaussian->SetInput(image);
    gaussian->SetVariance(plan.variance.data());
    gaussian->SetUseImageSpacing(true);
    gaussian->SetMaximumKernelWidth(SteerablePyramid::kGaussianMaximumKernelWidth);
    gaussian->Update();
    source = gaussian->GetOutput();
  }
  auto resample = itk::ResampleImageFilter<ImageType, ImageType>::New();
  resample->SetInput(source);
  resample->SetInterpolator(itk::LinearInterpolateImageFunction<ImageType, double>::New());
  resample->SetOutputParametersFromImage(plan.grid);
  // Upsampled levels put their outer centres up to half an input voxel beyond the last input centre.
  resample->SetExtrapolator(itk::NearestNeighborExtrapolateImageFunction<ImageType, double>::New());
  resample->Update();
  ImageType::Pointer out = resample->GetOutput();
  out->DisconnectPipeline();
  return out;
}

} // namespace

SteerablePyramid::LevelPlan
SteerablePyramid::PlanLevel(const ImageType * image, const std::array<double, 3> & target)
{
  const auto spacing = image->GetSpacing();
  const auto size = image->GetLargestPossibleRegion().GetSize();
  LevelPlan  plan;
  plan.sameAsInput = true;
  for (unsigned a = 0; a < 3; ++a)
    plan.sameAsInput = plan.sameAsInput && std::abs(target[a] - spacing[a]) <= 1e-6;
  plan.grid = ImageType::New();
  if (plan.sameAsInput)
  {
    plan.grid->CopyInformation(image);
    plan.grid->SetRegions(image->GetLargestPossibleRegion());
    return plan;
  }
  for (unsigned a = 0; a < 3; ++a)
  {
    const double sigma = 0.5 * std::sqrt(std::max(0.0, target[a] * target[a] - spacing[a] * spacing[a]));
    plan.variance[a] = sigma * sigma;
    plan.smooth = plan.smooth || sigma > 0;
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
  plan.grid->SetRegions(outSize);
  plan.grid->SetSpacing(outSpacing);
  plan.grid->SetOrigin(origin);
  plan.grid->SetDirection(image->GetDirection());
  return plan;
}

std::vector<SteerablePyramid::LevelPlan>
SteerablePyramid::Plan(const ImageType * image, const SteerablePyramidOptions & options)
{
  if (!image)
    CANOPY_THROW("SteerablePyramid: the image is null");
  const bool   byFactor = !options.levelFactors.empty();
  const auto & values = byFactor ? options.levelFactors : options.levelSpacingsMm;
  const char * what = byFactor ? "levelFactors" : "levelSpacingsMm";
  if (values.empty() || values.size() > static_cast<std::size_t>(kMaxSteerableLevels))
    CANOPY_THROW("SteerablePyramid: " << what << " must list 1 to " << kMaxSteerableLevels << " levels, got "
                                      << values.size());
  std::vector<LevelPlan> plans;
  for (double v : values)
  {
    if (!(std::isfinite(v) && v > 0))
      CANOPY_THROW("SteerablePyramid: " << what << " must be finite and > 0, got " << v);
    std::array<double, 3> target{};
    for (unsigned a = 0; a < 3; ++a)
      target[a] = byFactor ? v * image->GetSpacing()[a] : v;
    plans.push_back(PlanLevel(image, target));
  }
  return plans;
}

std::vector<double>
SteerablePyramid::GaussianTaps(double varianceMm2, double spacing, unsigned axis)
{
  itk::GaussianOperator<double, 3> op;
  op.SetDirection(axis);
  op.SetVariance(varianceMm2 / (spacing * spacing)); // UseImageSpacing
  op.SetMaximumKernelWidth(kGaussianMaximumKernelWidth);
  op.SetMaximumError(0.01); // DiscreteGaussianImageFilter's default
  op.CreateDirectional();
  std::vector<double> taps(op.Size());
  for (std::size_t i = 0; i < taps.size(); ++i)
    taps[i] = op[static_cast<unsigned>(i)];
  return taps;
}

ResampleGeometry
SteerablePyramid::ResampleGeometryOf(const itk::ImageBase<3> * in, const itk::ImageBase<3> * out)
{
  // ITK 5.2 keeps these matrices protected: computed as ImageBase::ComputeIndexToPhysicalPointMatrices
  // does (direction x spacing, then vnl's inverse), so the values are ITK's to the bit.
  auto indexToPhysical = [](const itk::ImageBase<3> * image)
  {
    itk::ImageBase<3>::DirectionType scale;
    scale.Fill(0.0);
    for (unsigned i = 0; i < 3; ++i)
      scale[i][i] = image->GetSpacing()[i];
    return itk::ImageBase<3>::DirectionType(image->GetDirection() * scale);
  };
  ResampleGeometry                       g{};
  const itk::ImageBase<3>::DirectionType toPhysical = indexToPhysical(out);
  const itk::ImageBase<3>::DirectionType toIndex(indexToPhysical(in).GetInverse());
  for (unsigned a = 0; a < 3; ++a)
  {
    g.outSize[a] = static_cast<int>(out->GetLargestPossibleRegion().GetSize()[a]);
    g.inSize[a] = static_cast<int>(in->GetLargestPossibleRegion().GetSize()[a]);
    g.outOrigin[a] = out->GetOrigin()[a];
    g.inOrigin[a] = in->GetOrigin()[a];
    for (unsigned b = 0; b < 3; ++b)
    {
      g.outIndexToPhysical[3 * a + b] = toPhysical[a][b];
      g.inPhysicalToIndex[3 * a + b] = toIndex[a][b];
    }
  }
  return g;
}

SteerableLevelView
SteerablePyramid::LevelViewOf(const itk::ImageBase<3> * image)
{
  const auto         size = image->GetLargestPossibleRegion().GetSize();
  SteerableLevelView view;
  view.nx = static_cast<int>(size[0]);
  view.ny = static_cast<int>(size[1]);
  view.nz = static_cast<int>(size[2]);
  // index = (direction * spacing)^-1 (p - origin) = spacing^-1 inverseDirection (p - origin), counted
  // from the buffer's first voxel (the region's start index).
  const auto &          inverse = image->GetInverseDirection();
  itk::Point<double, 3> first;
  image->TransformIndexToPhysicalPoint(image->GetLargestPossibleRegion().GetIndex(), first);
  for (unsigned r = 0; r < 3; ++r)
  {
    for (unsigned c = 0; c < 3; ++c)
      view.worldToIndex[3 * r + c] = static_cast<float>(inverse[r][c] / image->GetSpacing()[r]);
    view.origin[r] = static_cast<float>(first[r]);
  }
  return view;
}

SteerablePyramid
SteerablePyramid::Build(const ImageType * image, const SteerablePyramidOptions & options, int threads)
{
  if (!image || !image->GetBufferPointer())
    CANOPY_THROW("SteerablePyramid: the image is null or has no pixel buffer");
  SteerablePyramid pyramid;
  for (const LevelPlan & plan : Plan(image, options))
    pyramid.AddLevel(SmoothAndResample(image, plan), threads);
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
  level.view = LevelViewOf(image);
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
