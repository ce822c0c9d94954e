#include "canopyOverlapMetrics.h"

#include "canopy/Errors.h"
#include "canopyImageGrid.h"

#include "itkBinaryThresholdImageFilter.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace canopy
{

OverlapMetrics
ComputeOverlap(const itk::Image<unsigned char, 3> * test, const itk::Image<unsigned char, 3> * reference)
{
  RequireSameGrid(test, reference, "ComputeOverlap", "test mask", "reference mask");
  const std::int64_t    n = static_cast<std::int64_t>(test->GetLargestPossibleRegion().GetNumberOfPixels());
  const unsigned char * t = test->GetBufferPointer();
  const unsigned char * r = reference->GetBufferPointer();
  if (n > 0 && (!t || !r))
    CANOPY_THROW("ComputeOverlap: test or reference mask has no pixel buffer (not allocated or not updated)");

  OverlapMetrics m;
  for (std::int64_t i = 0; i < n; ++i)
  {
    const bool inT = t[i] != 0, inR = r[i] != 0;
    m.truePositives += inT && inR;
    m.falsePositives += inT && !inR;
    m.falseNegatives += !inT && inR;
  }
  const auto   spacing = test->GetSpacing();
  const double voxelMm3 = spacing[0] * spacing[1] * spacing[2];
  const auto   countT = m.truePositives + m.falsePositives, countR = m.truePositives + m.falseNegatives;
  m.volumeTestMm3 = static_cast<double>(countT) * voxelMm3;
  m.volumeReferenceMm3 = static_cast<double>(countR) * voxelMm3;

  const auto unionCount = m.truePositives + m.falsePositives + m.falseNegatives;
  if (unionCount == 0) // both empty: they agree perfectly
  {
    m.dice = m.jaccard = 1.0;
    m.volumeDifferencePercent = 0.0;
    return m;
  }
  m.dice = 2.0 * m.truePositives / static_cast<double>(countT + countR);
  m.jaccard = m.truePositives / static_cast<double>(unionCount);
  m.volumeDifferencePercent = countR == 0 ? std::numeric_limits<double>::infinity()
                                          : 100.0 * static_cast<double>(countT - countR) / static_cast<double>(countR);
  return m;
}

nlohmann::json
ToJson(const OverlapMetrics & m)
{
  auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return nlohmann::json{ { "dice", finite(m.dice) },
                         { "jaccard", finite(m.jaccard) },
                         { "volumeTestMm3", finite(m.volumeTestMm3) },
                         { "volumeReferenceMm3", finite(m.volumeReferenceMm3) },
                         { "volumeDifferencePercent", finite(m.volumeDifferencePercent) },
                         { "truePositives", m.truePositives },
                         { "falsePositives", m.falsePositives },
                         { "falseNegatives", m.falseNegatives } };
}

itk::Image<unsigned char, 3>::Pointer
ThresholdToMask(const itk::Image<float, 3> * image, float threshold)
{
  if (!image)
    CANOPY_THROW("ThresholdToMask: image is null");
  if (!std::isfinite(threshold))
    CANOPY_THROW("ThresholdToMask: threshold must be finite, got " << threshold);
  using FilterType = itk::BinaryThresholdImageFilter<itk::Image<float, 3>, itk::Image<unsigned char, 3>>;
  auto filter = FilterType::New();
  filter->SetInput(image);
  filter->SetLowerThreshold(threshold);
  filter->SetUpperThreshold(std::numeric_limits<float>::infinity());
  filter->SetInsideValue(1);
  filter->SetOutsideValue(0);
  filter->Update();
  itk::Image<unsigned char, 3>::Pointer mask = filter->GetOutput();
  mask->DisconnectPipeline();
  return mask;
}

} // namespace canopy
