// The device's top-k (cuda::LaunchTopScores) against TopScoresCPU: same indices in the same order and
// the same values, on scores with many ties, NaN, +-0 and infinities. Skipped without a GPU.
#include "canopy/TopScores.h"
#include "canopyConfigure.h"
#include "canopyTesting.h"

#if CANOPY_USE_CUDA
#include "canopy/cuda/DeviceBuffer.h"
#endif

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace
{
using namespace canopy;

TEST(TopScoresCuda, MatchesCpuWithTiesAndNaN)
{
  CANOPY_REQUIRE_GPU();
#if CANOPY_USE_CUDA
  std::mt19937_64 rng(3);
  const float     specials[] = { std::numeric_limits<float>::quiet_NaN(),
                                 std::numeric_limits<float>::infinity(),
                                 -std::numeric_limits<float>::infinity(),
                                 0.0f,
                                 -0.0f };
  for (std::int64_t n : { std::int64_t(1), std::int64_t(1000), std::int64_t(85) * 85 * 85 })
  {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto & x : v)
    {
      const auto r = rng() % 10;
      x = r < 5 ? float(int(rng() % 9)) / 8.0f : (r < 7 ? specials[rng() % 5] : float(rng() % 100000) / 99999.0f);
    }
    cuda::Stream              stream;
    cuda::DeviceBuffer<float> scores(v.size(), "scores");
    scores.CopyFromHost(v.data(), v.size(), stream.get());
    for (std::int64_t k : { std::int64_t(1), std::int64_t(100), n })
    {
      if (k > n)
        continue;
      const std::size_t                 bytes = cuda::ScratchBytesForTopScores(n);
      cuda::DeviceBuffer<unsigned char> scratch(bytes, "scratch");
      cuda::DeviceBuffer<std::int64_t>  indices(static_cast<std::size_t>(k), "indices");
      cuda::DeviceBuffer<float>         values(static_cast<std::size_t>(k), "values");
      cuda::LaunchTopScores(scores.data(), n, k, indices.data(), values.data(), scratch.data(), bytes, stream.get());
      std::vector<std::int64_t> gotIndices(static_cast<std::size_t>(k));
      std::vector<float>        gotValues(static_cast<std::size_t>(k));
      indices.CopyToHost(gotIndices.data(), gotIndices.size(), stream.get());
      values.CopyToHost(gotValues.data(), gotValues.size(), stream.get());
      stream.Synchronize();
      const auto expected = TopScoresCPU(v.data(), n, k);
      ASSERT_EQ(gotIndices, expected) << "n " << n << " k " << k;
      for (std::int64_t r = 0; r < k; ++r)
        ASSERT_EQ(std::memcmp(&gotValues[r], &v[expected[r]], sizeof(float)), 0)
          << "rank " << r; // bit for bit, NaN too
    }
  }
#else
  GTEST_SKIP() << "built without CUDA";
#endif
}

} // namespace
