#include "canopy/TopScores.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace canopy
{

std::vector<int64_t>
TopScoresCPU(const float * scores, int64_t count, int64_t k)
{
  std::vector<int64_t> order(static_cast<std::size_t>(std::max<int64_t>(0, count)));
  std::iota(order.begin(), order.end(), 0);
  k = std::clamp<int64_t>(k, 0, static_cast<int64_t>(order.size()));
  // The comparison TopScoreKey encodes, written out (indices may exceed 32 bits here).
  auto better = [scores](int64_t a, int64_t b)
  {
    const float x = scores[a], y = scores[b];
    const bool  nx = std::isnan(x), ny = std::isnan(y);
    if (nx != ny)
      return ny; // a number beats NaN
    if (!nx && x != y)
      return x > y;
    return a < b;
  };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), better);
  order.resize(static_cast<std::size_t>(k));
  return order;
}

} // namespace canopy
