// TopScoreKey's order (the device's top-k) equals TopScoresCPU's on scores with many ties, NaN, +-0
// and infinities; and TopScoresCPU's own rules.
#include "canopy/TopScores.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace
{
using namespace canopy;

std::vector<float>
TrickyScores(std::size_t n, std::uint64_t seed)
{
  std::mt19937_64    rng(seed);
  std::vector<float> v(n);
  const float        specials[] = { std::numeric_limits<float>::quiet_NaN(),
                                    -std::numeric_limits<float>::quiet_NaN(),
                                    std::numeric_limits<float>::infinity(),
                                    -std::numeric_limits<float>::infinity(),
                                    0.0f,
                                    -0.0f,
                                    1.0f,
                                    std::numeric_limits<float>::denorm_min(),
                                    -std::numeric_limits<float>::denorm_min() };
  for (auto & x : v)
  {
    const auto r = rng() % 10;
    // Few distinct values: many ties; plus the specials.
    x = r < 5 ? float(int(rng() % 7) - 3) * 0.25f : (r < 8 ? specials[rng() % 9] : float(rng() % 1000) / 999.0f);
  }
  return v;
}

TEST(TopScores, KeyOrderEqualsCpuOrder)
{
  for (std::uint64_t seed = 1; seed <= 20; ++seed)
  {
    const auto                 v = TrickyScores(500 + 37 * seed, seed);
    std::vector<std::uint64_t> keys(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
      keys[i] = TopScoreKey(v[i], std::uint32_t(i));
    std::sort(keys.begin(), keys.end());
    for (std::int64_t k : { std::int64_t(0), std::int64_t(1), std::int64_t(100), std::int64_t(v.size()) })
    {
      const auto cpu = TopScoresCPU(v.data(), std::int64_t(v.size()), k);
      ASSERT_EQ(cpu.size(), std::size_t(k));
      for (std::int64_t r = 0; r < k; ++r)
        ASSERT_EQ(cpu[r], std::int64_t(keys[r] & 0xFFFFFFFFu)) << "seed " << seed << " rank " << r;
    }
  }
}

TEST(TopScores, CpuRules)
{
  const float                     nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float>        v = { 0.5f, nan, 0.9f, 0.5f, -0.0f, 0.0f, nan, 0.9f };
  const auto                      order = TopScoresCPU(v.data(), std::int64_t(v.size()), 100); // k clamped
  const std::vector<std::int64_t> expected = { 2, 7, 0, 3, 4, 5, 1, 6 };
  EXPECT_EQ(order, expected);
  EXPECT_TRUE(TopScoresCPU(v.data(), std::int64_t(v.size()), -3).empty());
}

} // namespace
