// LabelsAtForegroundThreshold: the operating point of a forest's labels.
#include "canopyForestLabels.h"

#include "canopy/Errors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdint>
#include <random>
#include <vector>

namespace
{
using canopy::LabelsAtForegroundThreshold;

std::vector<float>
RandomDistributions(std::size_t voxels, int classes, unsigned seed)
{
  std::mt19937                          random(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float>                    p(voxels * classes);
  for (std::size_t v = 0; v < voxels; ++v)
  {
    float sum = 0.0f;
    for (int c = 0; c < classes; ++c)
      sum += p[v * classes + c] = u(random);
    for (int c = 0; c < classes; ++c)
      p[v * classes + c] /= sum;
  }
  return p;
}

TEST(ForestLabels, TwoClassesAreForegroundFromTheThresholdOn)
{
  const std::vector<float> p = { 1.0f, 0.0f, 0.4f, 0.6f, 0.3f, 0.7f, 0.25f, 0.75f, 0.0f, 1.0f };
  std::vector<std::int32_t> labels(5, -1);
  LabelsAtForegroundThreshold(p.data(), 5, 2, 0.7, labels.data());
  EXPECT_EQ(labels, (std::vector<std::int32_t>{ 0, 0, 1, 1, 1 })); // p(1) = 0.7 is foreground
  LabelsAtForegroundThreshold(p.data(), 5, 2, 0.5, labels.data());
  EXPECT_EQ(labels, (std::vector<std::int32_t>{ 0, 1, 1, 1, 1 }));
  LabelsAtForegroundThreshold(p.data(), 5, 2, 0.99, labels.data());
  EXPECT_EQ(labels, (std::vector<std::int32_t>{ 0, 0, 0, 0, 1 }));
}

TEST(ForestLabels, HalfIsArgMaxForTwoClasses)
{
  const std::size_t n = 5000;
  const auto        p = RandomDistributions(n, 2, 3);
  std::vector<std::int32_t> labels(n);
  LabelsAtForegroundThreshold(p.data(), n, 2, 0.5, labels.data());
  for (std::size_t v = 0; v < n; ++v)
    if (p[2 * v] != p[2 * v + 1]) // exact ties: argmax takes class 0, the threshold class 1
      ASSERT_EQ(labels[v], p[2 * v + 1] > p[2 * v] ? 1 : 0) << "voxel " << v;
}

TEST(ForestLabels, SeveralClassesTakeTheMostProbableForegroundClass)
{
  const std::size_t n = 4000;
  const int         classes = 4;
  const auto        p = RandomDistributions(n, classes, 7);
  for (double threshold : { 0.2, 0.5, 0.8 })
  {
    std::vector<std::int32_t> labels(n);
    LabelsAtForegroundThreshold(p.data(), n, classes, threshold, labels.data());
    std::size_t foreground = 0;
    for (std::size_t v = 0; v < n; ++v)
    {
      const float * q = p.data() + v * classes;
      const bool    isForeground = 1.0 - q[0] >= threshold - 1e-6;
      if (std::abs(1.0 - q[0] - threshold) < 1e-6)
        continue; // rounding at the threshold itself decides either way
      if (!isForeground)
      {
        ASSERT_EQ(labels[v], 0) << "voxel " << v << " at threshold " << threshold;
        continue;
      }
      ++foreground;
      const int best = int(std::max_element(q + 1, q + classes) - q);
      ASSERT_EQ(labels[v], best) << "voxel " << v << " at threshold " << threshold;
    }
    EXPECT_GT(foreground, 0u);
    EXPECT_LT(foreground, n);
  }
}

TEST(ForestLabels, RefusesThresholdsOutsideTheOpenUnitIntervalAndSingleClasses)
{
  const std::vector<float>  p = { 0.5f, 0.5f };
  std::vector<std::int32_t> labels(1);
  for (double bad : { 0.0, 1.0, -0.2, 1.5, std::numeric_limits<double>::quiet_NaN() })
    EXPECT_THROW(LabelsAtForegroundThreshold(p.data(), 1, 2, bad, labels.data()), canopy::Error) << bad;
  EXPECT_THROW(LabelsAtForegroundThreshold(p.data(), 2, 1, 0.5, labels.data()), canopy::Error);
}
} // namespace
