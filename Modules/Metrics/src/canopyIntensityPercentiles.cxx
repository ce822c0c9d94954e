#include "canopyIntensityPercentiles.h"

#include "canopy/Errors.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace canopy
{

IntensityPercentiles
ComputeIntensityPercentiles(const itk::Image<float, 3> * image, double lowPercent, double highPercent)
{
  if (!image || !image->GetBufferPointer())
    CANOPY_THROW("ComputeIntensityPercentiles: image is null or has no pixel buffer");
  for (double p : { lowPercent, highPercent })
    if (!(p >= 0.0 && p <= 100.0))
      CANOPY_THROW("ComputeIntensityPercentiles: percentile " << p << " is outside [0, 100]");
  const std::size_t  n = image->GetLargestPossibleRegion().GetNumberOfPixels();
  const float *      p = image->GetBufferPointer();
  std::vector<float> values;
  values.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    if (std::isfinite(p[i]))
      values.push_back(p[i]);
  if (values.empty())
    CANOPY_THROW("ComputeIntensityPercentiles: the image has no finite voxel");

  auto rank = [&](double percent) {
    const auto k = static_cast<std::size_t>(std::floor(percent / 100.0 * static_cast<double>(values.size() - 1)));
    std::nth_element(values.begin(), values.begin() + k, values.end());
    return static_cast<double>(values[k]);
  };
  IntensityPercentiles result;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  result.minimum = *lo;
  result.maximum = *hi;
  result.low = rank(lowPercent);
  result.high = rank(highPercent);
  return result;
}

} // namespace canopy
