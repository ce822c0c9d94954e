#include "canopy/IntensityNormalization.h"

#include "canopy/Errors.h"
#include "canopy/JsonField.h"
#include "canopy/PyramidMath.h"

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
      CANOPY_THROW(where << ": \"normalization\": a \"window\" normalization needs numbers windowLow < windowHigh");
    }
    n.method = "window";
    n.windowLow = in["windowLow"].get<double>();
    n.windowHigh = in["windowHigh"].get<double>();
    return n;
  }
  if (!in.is_object() || method != "percentile" || !in.contains("lowPercentile") || !in.contains("highPercentile") ||
      !in["lowPercentile"].is_number() || !in["highPercentile"].is_number())
  {
    CANOPY_THROW(where << ": \"normalization\" must be {\"method\": \"percentile\", \"lowPercentile\": x, "
                          "\"highPercentile\": y} or {\"method\": \"window\", \"windowLow\": a, \"windowHigh\": b}");
  }
  n.lowPercentile = in["lowPercentile"].get<double>();
  n.highPercentile = in["highPercentile"].get<double>();
  if (!(n.lowPercentile >= 0.0 && n.lowPercentile < n.highPercentile && n.highPercentile <= 100.0))
  {
    CANOPY_THROW(where << ": \"normalization\": percentiles must satisfy 0 <= low < high <= 100");
  }
  return n;
}

std::array<double, 2>
NormalizeIntensities(float * v, std::int64_t n, const IntensityNormalization & normalization)
{
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

} // namespace canopy
