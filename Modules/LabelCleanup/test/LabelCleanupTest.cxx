// Largest component and hole filling per label, 3D and 2D, 6- and 26-connectivity, and the option text.
#include "canopyLabelCleanup.h"

#include "canopy/Errors.h"

#include <gtest/gtest.h>

#include <vector>

namespace
{
using namespace canopy;

constexpr int kN = 12;

std::size_t
At(int x, int y, int z)
{
  return (std::size_t(z) * kN + y) * kN + x;
}

/** Label 1: a 4^3 cube with a one-voxel hole at its centre, plus a stray voxel; label 2: two cubes of
 * 2^3 and 3^3 touching label 1 nowhere. */
std::vector<std::int32_t>
Scene()
{
  std::vector<std::int32_t> l(std::size_t(kN) * kN * kN, 0);
  for (int z = 1; z < 6; ++z)
    for (int y = 1; y < 6; ++y)
      for (int x = 1; x < 6; ++x)
        l[At(x, y, z)] = 1;
  l[At(3, 3, 3)] = 0; // the hole
  l[At(9, 1, 1)] = 1; // stray voxel of label 1
  for (int z = 8; z < 10; ++z)
    for (int y = 8; y < 10; ++y)
      for (int x = 8; x < 10; ++x)
        l[At(x, y, z)] = 2;
  for (int z = 7; z < 10; ++z)
    for (int y = 1; y < 4; ++y)
      for (int x = 1; x < 4; ++x)
        l[At(x, y, z)] = 2;
  return l;
}

std::size_t
Count(const std::vector<std::int32_t> & l, std::int32_t value)
{
  return std::size_t(std::count(l.begin(), l.end(), value));
}

TEST(LabelCleanup, LargestComponentPerLabel)
{
  auto l = Scene();
  CleanUpLabels(l.data(), kN, kN, kN, 3, LabelCleanupOptions::Parse("largest", "--postprocess"));
  EXPECT_EQ(l[At(9, 1, 1)], 0);
  EXPECT_EQ(Count(l, 1), 5u * 5 * 5 - 1);
  EXPECT_EQ(Count(l, 2), 27u); // the 3^3 cube; the 2^3 one is gone
  EXPECT_EQ(l[At(8, 8, 8)], 0);
  EXPECT_EQ(l[At(3, 3, 3)], 0); // holes stay without fill
}

TEST(LabelCleanup, FillHolesOnlyIntoBackground)
{
  auto l = Scene();
  l[At(3, 3, 2)] = 2; // a voxel of another label inside label 1 stays what it is
  CleanUpLabels(l.data(), kN, kN, kN, 3, LabelCleanupOptions::Parse("fill", "--postprocess"));
  EXPECT_EQ(l[At(3, 3, 3)], 1);
  EXPECT_EQ(l[At(3, 3, 2)], 2);
  EXPECT_EQ(l[At(9, 1, 1)], 1); // no component removal asked for
}

TEST(LabelCleanup, ConnectivityDecidesWhatTouches)
{
  // Two voxels of label 1 meeting at a corner only: one component under 26-connectivity, two under 6.
  std::vector<std::int32_t> l(std::size_t(kN) * kN * kN, 0);
  l[At(2, 2, 2)] = l[At(3, 3, 3)] = l[At(4, 4, 4)] = 1;
  l[At(8, 8, 8)] = l[At(8, 8, 9)] = 1;
  auto six = l, full = l;
  CleanUpLabels(six.data(), kN, kN, kN, 3, LabelCleanupOptions::Parse("largest", "p"));
  CleanUpLabels(full.data(), kN, kN, kN, 3, LabelCleanupOptions::Parse("largest,full", "p"));
  EXPECT_EQ(Count(six, 1), 2u);  // the face-connected pair wins
  EXPECT_EQ(Count(full, 1), 3u); // the diagonal chain wins
}

TEST(LabelCleanup, PlanarImages)
{
  // A ring of label 3 in a 7x7 image: its inside is a hole in 2D.
  std::vector<std::int32_t> l(49, 0);
  for (int i = 1; i < 6; ++i)
    l[7 * 1 + i] = l[7 * 5 + i] = l[7 * i + 1] = l[7 * i + 5] = 3;
  CleanUpLabels(l.data(), 7, 7, 1, 2, LabelCleanupOptions::Parse("fill", "p"));
  EXPECT_EQ(Count(l, 3), 25u);
  EXPECT_THROW(CleanUpLabels(l.data(), 7, 7, 2, 2, LabelCleanupOptions::Parse("fill", "p")), canopy::Error);
}

TEST(LabelCleanup, OptionText)
{
  EXPECT_FALSE(LabelCleanupOptions::Parse("none", "p").Any());
  EXPECT_FALSE(LabelCleanupOptions::Parse("", "p").Any());
  EXPECT_EQ(LabelCleanupOptions::Parse("fill,largest", "p").Describe(), "largest,fill");
  try
  {
    LabelCleanupOptions::Parse("largest,smooth", "--postprocess");
    ADD_FAILURE();
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.what()).find("--postprocess: 'smooth'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(LabelCleanupOptions::Parse("full", "p"), canopy::Error);
}
} // namespace
