// Region-difference features against a brute-force sum over the voxels of each box.
#include "ForestTestSupport.h"
#include "canopyTesting.h"

#include <cmath>

namespace
{
using namespace canopy;

/** Mean of channel c over the box clipped to the image, by visiting voxels; NaN when empty. */
double
BruteMean(const canopy::testing::RandomForestInput & in, const ForestFeature & f, int b, int x, int y, int z, float s)
{
  const int q[3] = { x, y, z }, n[3] = { in.image.nx, in.image.ny, in.image.nz };
  int       lo[3], hi[3];
  for (int a = 0; a < 3; ++a)
  {
    const int w = std::max(1, int(std::floor(f.size[b][a] * s + 0.5f)));
    const int centre = q[a] + int(std::floor(f.offset[b][a] * s + 0.5f));
    lo[a] = std::max(0, centre - w / 2);
    hi[a] = std::min(n[a], centre - w / 2 + w);
  }
  double sum = 0;
  long   count = 0;
  for (int k = lo[2]; k < hi[2]; ++k)
    for (int j = lo[1]; j < hi[1]; ++j)
      for (int i = lo[0]; i < hi[0]; ++i, ++count)
        sum += in.channels[f.channel[b]][(std::size_t(k) * n[1] + j) * n[0] + i];
  return count ? sum / count : std::nan("");
}

void
CompareWithBruteForce(int nx, int ny, int nz, int channels, bool scaled, std::uint64_t seed)
{
  const canopy::testing::RandomForestInput in(nx, ny, nz, channels, scaled, seed);
  const ForestImagesView           view = in.image.View();
  std::mt19937_64                  rng(seed + 1);
  auto uniform = [&](int lo, int hi) { return lo + int(rng() % std::uint64_t(hi - lo + 1)); };
  int  nanCount = 0, outsideCount = 0;
  const int n[3] = { nx, ny, nz };
  for (int trial = 0; trial < 3000; ++trial)
  {
    ForestFeature f{};
    const bool    far = trial % 5 == 0; // some offsets up to twice the image, so boxes lie wholly outside
    for (int b = 0; b < 2; ++b)
    {
      f.channel[b] = std::uint8_t(uniform(0, channels - 1));
      for (int a = 0; a < 3; ++a)
      {
        const bool flat = a == 2 && nz == 1;
        const int reach = far ? 2 * n[a] : n[a] / 3;
        f.offset[b][a] = std::int16_t(flat ? 0 : uniform(-reach, reach));
        f.size[b][a] = std::uint8_t(flat ? 1 : uniform(1, 9));
      }
    }
    const int   x = uniform(0, nx - 1), y = uniform(0, ny - 1), z = uniform(0, nz - 1);
    const float s = ForestScaleAt(view, x, y, z);
    const float got = ForestResponseAt(view, f, x, y, z);
    const bool  undefinedScale = !(s > 0.0f);
    const double expected =
      undefinedScale ? std::nan("") : BruteMean(in, f, 0, x, y, z, s) - BruteMean(in, f, 1, x, y, z, s);
    if (std::isnan(expected))
    {
      ++nanCount;
      outsideCount += !undefinedScale;
      EXPECT_TRUE(std::isnan(got)) << "trial " << trial << ": expected NaN, got " << got;
      EXPECT_FALSE(ForestTest(got, -INFINITY, INFINITY)) << "NaN must test false";
      continue;
    }
    EXPECT_NEAR(got, expected, 1e-4 * (1.0 + std::abs(expected))) << "trial " << trial << " at " << x << "," << y << ","
                                                                     << z << " scale " << s;
    if (nz == 1) // the planar sum must equal the generic one bit for bit
    {
      EXPECT_EQ(ForestResponse<true>(view, f, x, y, 0, s), ForestResponse<false>(view, f, x, y, 0, s));
    }
  }
  EXPECT_GT(outsideCount, 50) << "the trials must include boxes wholly outside the image";
  EXPECT_LT(nanCount, 2500) << "most trials must be defined";
}

TEST(ForestFeature, MatchesBruteForce3DMultiChannel) { CompareWithBruteForce(23, 17, 11, 3, false, 1); }
TEST(ForestFeature, MatchesBruteForce2DMultiChannel) { CompareWithBruteForce(41, 29, 1, 4, false, 2); }
TEST(ForestFeature, MatchesBruteForceWithScale3D) { CompareWithBruteForce(19, 21, 13, 2, true, 3); }
TEST(ForestFeature, MatchesBruteForceWithScale2D) { CompareWithBruteForce(37, 31, 1, 2, true, 4); }

TEST(ForestFeature, TwoSidedTest)
{
  EXPECT_TRUE(ForestTest(0.0f, -INFINITY, 1.0f));
  EXPECT_FALSE(ForestTest(1.0f, -INFINITY, 1.0f)); // theta1 excluded
  EXPECT_TRUE(ForestTest(-1.0f, -1.0f, 1.0f));     // theta0 included
  EXPECT_FALSE(ForestTest(-1.5f, -1.0f, 1.0f));
  EXPECT_FALSE(ForestTest(std::nanf(""), -INFINITY, INFINITY));
}

TEST(ForestFeature, NonFiniteScaleIsUndefined)
{
  const canopy::testing::RandomForestInput in(8, 8, 1, 1, false, 5);
  ForestFeature                    f{};
  f.size[0][0] = f.size[0][1] = f.size[0][2] = f.size[1][0] = f.size[1][1] = f.size[1][2] = 1;
  for (float s : { std::nanf(""), 0.0f, -1.0f, INFINITY })
  {
    EXPECT_TRUE(std::isnan(ForestResponse<true>(in.image.View(), f, 3, 3, 0, s))) << "scale " << s;
  }
  EXPECT_FALSE(std::isnan(ForestResponse<true>(in.image.View(), f, 3, 3, 0, 1e30f))) << "huge scale stays defined";
}

} // namespace
