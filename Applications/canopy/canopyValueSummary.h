// Mean, median, worst and best of per-volume values (Dice, volume differences, seconds) as the run
// reports of train-forest and msd-experiment give them.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace canopy::app
{
/** {"mean", "median", "worst" (the smallest), "best", "n"} of the values that are not NaN (a Dice of a
 * class absent from both label maps); null when none is. */
inline nlohmann::json
ValueSummary(std::vector<double> values)
{
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }), values.end());
  if (values.empty())
    return nullptr;
  std::sort(values.begin(), values.end());
  double sum = 0.0;
  for (double v : values)
    sum += v;
  const std::size_t n = values.size();
  const double      median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  return {
    { "mean", sum / n }, { "median", median }, { "worst", values.front() }, { "best", values.back() }, { "n", n }
  };
}
} // namespace canopy::app
