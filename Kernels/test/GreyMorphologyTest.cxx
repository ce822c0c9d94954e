// Box maximum / minimum, closing and the filter bank's closing and black top-hat channels against a
// brute-force box scan: random volumes, 2D and 3D, anisotropic radii, radii larger than an axis.
#include "canopy/GreyMorphology.h"
#include "canopy/FilterBank.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <vector>

namespace
{
using namespace canopy;

std::vector<float>
RandomVolume(const BoxGrid & g, std::uint64_t seed)
{
  std::mt19937_64                       rng(seed);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f);
  std::vector<float>                    v(g.Voxels());
  for (auto & x : v)
    x = u(rng);
  return v;
}

std::vector<float>
BruteForceExtremum(const std::vector<float> & in, const BoxGrid & g, bool maximum)
{
  std::vector<float> out(in.size());
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x)
      {
        float best = in[(std::size_t(z) * g.ny + y) * g.nx + x];
        for (int c = std::max(0, z - g.radius[2]); c <= std::min(g.nz - 1, z + g.radius[2]); ++c)
          for (int b = std::max(0, y - g.radius[1]); b <= std::min(g.ny - 1, y + g.radius[1]); ++b)
            for (int a = std::max(0, x - g.radius[0]); a <= std::min(g.nx - 1, x + g.radius[0]); ++a)
            {
              const float v = in[(std::size_t(c) * g.ny + b) * g.nx + a];
              best = maximum ? std::max(best, v) : std::min(best, v);
            }
        out[(std::size_t(z) * g.ny + y) * g.nx + x] = best;
      }
  return out;
}

/** Grids of {nx, ny, nz, radius x, radius y, radius z}. */
std::vector<BoxGrid>
Grids(const std::vector<std::array<int, 6>> & sizes)
{
  std::vector<BoxGrid> grids;
  for (const auto & [nx, ny, nz, rx, ry, rz] : sizes)
  {
    BoxGrid g;
    g.nx = nx;
    g.ny = ny;
    g.nz = nz;
    g.radius[0] = rx;
    g.radius[1] = ry;
    g.radius[2] = rz;
    grids.push_back(g);
  }
  return grids;
}

std::vector<BoxGrid>
TestGrids()
{
  return Grids({ { 13, 11, 9, 1, 1, 1 },
                 { 17, 10, 7, 2, 3, 1 },
                 { 9, 8, 6, 5, 0, 4 },
                 { 23, 19, 1, 3, 2, 0 },
                 { 5, 4, 3, 7, 7, 7 } });
}

TEST(GreyMorphology, BoxExtremaEqualABruteForceScan)
{
  std::uint64_t seed = 3;
  for (const auto & g : TestGrids())
    for (bool maximum : { true, false })
    {
      const auto         in = RandomVolume(g, seed++);
      std::vector<float> out(in.size());
      BoxExtremum(in.data(), out.data(), g, maximum);
      EXPECT_EQ(out, BruteForceExtremum(in, g, maximum))
        << g.nx << "x" << g.ny << "x" << g.nz << " radius " << g.radius[0] << "," << g.radius[1] << "," << g.radius[2]
        << (maximum ? " max" : " min");
      std::vector<float> inPlace = in;
      BoxExtremum(inPlace.data(), inPlace.data(), g, maximum);
      EXPECT_EQ(inPlace, out);
    }
}

TEST(GreyMorphology, ManyBundlesAndThreadsEqualABruteForceScan)
{
  // The y pass splits x into bundles of 1,024 lines and the z pass the xy plane likewise, and every
  // pass splits among threads: grids of several bundles (and a partial one) per pass, on 1 to 4
  // threads, give the brute-force scan's values exactly.
  std::uint64_t seed = 40;
  for (const auto & g : Grids({ { 2100, 5, 3, 1, 2, 1 }, { 70, 33, 6, 2, 1, 2 }, { 1030, 3, 4, 0, 1, 3 } }))
  {
    for (bool maximum : { true, false })
    {
      const auto in = RandomVolume(g, seed++);
      const auto expected = BruteForceExtremum(in, g, maximum);
      for (int threads : { 1, 2, 3, 4 })
      {
        std::vector<float> out(in.size());
        BoxExtremum(in.data(), out.data(), g, maximum, threads);
        EXPECT_EQ(out, expected) << g.nx << "x" << g.ny << "x" << g.nz << (maximum ? " max" : " min") << ", " << threads
                                 << " threads";
      }
    }
  }
}

TEST(GreyMorphology, ClosingFillsANarrowValleyAndKeepsAWideOne)
{
  // Two bright banks (100) with a dark valley (10) of width 2 between them, and a dark region of width
  // 8 beyond: a closing of half-width 1 (box 3) fills the valley and keeps the wide region dark.
  BoxGrid g;
  g.nx = 24;
  g.ny = 5;
  g.nz = 5;
  g.radius[0] = g.radius[1] = g.radius[2] = 1;
  std::vector<float> v(g.Voxels());
  for (std::int64_t i = 0; i < g.Voxels(); ++i)
  {
    const int x = int(i % g.nx);
    v[i] = (x >= 6 && x < 8) || x >= 14 ? 10.0f : 100.0f;
  }
  std::vector<float> closed(v.size());
  GreyClosing(v.data(), closed.data(), g);
  for (std::int64_t i = 0; i < g.Voxels(); ++i)
  {
    const int x = int(i % g.nx);
    EXPECT_GE(closed[i], v[i]);
    if (x >= 6 && x < 8)
      EXPECT_EQ(closed[i], 100.0f) << "x " << x;
    if (x >= 15)
      EXPECT_EQ(closed[i], 10.0f) << "x " << x;
  }
}

TEST(GreyMorphology, FilterBankClosingAndTopHatChannels)
{
  FilterBankGrid grid;
  grid.nx = 12;
  grid.ny = 10;
  grid.nz = 8;
  grid.spacing[0] = 1.0;
  grid.spacing[1] = 0.5; // radius 1 mm: 1 voxel along x and z, 2 along y
  grid.spacing[2] = 1.4;
  BoxGrid box;
  box.nx = grid.nx;
  box.ny = grid.ny;
  box.nz = grid.nz;
  box.radius[0] = 1;
  box.radius[1] = 2;
  box.radius[2] = 1;
  EXPECT_EQ(BoxGridForRadius(grid.nx, grid.ny, grid.nz, 3, grid.spacing, 1.0).radius[1], 2);
  EXPECT_EQ(BoxGridForRadius(grid.nx, grid.ny, 1, 2, grid.spacing, 1.0).radius[2], 0);
  const auto in = RandomVolume(box, 42);
  using Kind = FilterBankChannelSpec::Kind;
  std::vector<FilterBankChannelSpec> specs{ { Kind::Closing, 1.0, 0 }, { Kind::BlackTopHat, 1.0, 0 } };
  std::vector<float>                 closing(in.size()), topHat(in.size());
  ComputeFilterBank(in.data(), grid, specs, { closing.data(), topHat.data() }, ResolvedBackend{});
  const auto expected = BruteForceExtremum(BruteForceExtremum(in, box, true), box, false);
  EXPECT_EQ(closing, expected);
  for (std::size_t i = 0; i < in.size(); ++i)
  {
    ASSERT_EQ(topHat[i], expected[i] - in[i]);
    ASSERT_GE(topHat[i], 0.0f);
  }
  specs[0].sigma = 0.0;
  EXPECT_ANY_THROW(ComputeFilterBank(in.data(), grid, specs, { closing.data(), topHat.data() }, ResolvedBackend{}));
}

} // namespace
