// Focus sampling of auto-context cascades (issue 13: the sulci that colin27's brain masks fill): a
// later stage draws a share of its samples from the earlier stage's out-of-fold mistakes and the voxels
// around them. The focus against a brute-force reference, the sampler's shares, and the cascade.
#include "ForestCascadeTestSupport.h"
#include "canopyForestCascade.h"

#include "canopy/Errors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace
{
using namespace canopy;

/** The focus by its definition: a voxel is in it when a mistake lies within `band` (Chebyshev). */
std::vector<std::uint8_t>
BruteForceFocus(const std::vector<std::int32_t> & labels,
                const std::vector<std::int32_t> & predicted,
                int                               numClasses,
                int                               nx,
                int                               ny,
                int                               nz,
                int                               band)
{
  const auto mistake = [&](std::size_t v)
  { return labels[v] >= 0 && labels[v] < numClasses && predicted[v] != labels[v]; };
  const int                 bz = nz == 1 ? 0 : band;
  std::vector<std::uint8_t> focus(labels.size(), 0);
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
        for (int c = std::max(0, z - bz); c <= std::min(nz - 1, z + bz); ++c)
          for (int b = std::max(0, y - band); b <= std::min(ny - 1, y + band); ++b)
            for (int a = std::max(0, x - band); a <= std::min(nx - 1, x + band); ++a)
              if (mistake((std::size_t(c) * ny + b) * nx + a))
                focus[(std::size_t(z) * ny + y) * nx + x] = 1;
  return focus;
}

TEST(ForestCascadeFocus, MistakesAndTheirNeighbours)
{
  for (const int nz : { 1, 7 })
  {
    const int                        nx = 13, ny = 9, numClasses = 3;
    const std::size_t                voxels = std::size_t(nx) * ny * nz;
    std::mt19937                     rng(5 + nz);
    std::vector<std::int32_t>        labels(voxels), predicted(voxels);
    std::vector<float>               distribution(voxels * numClasses);
    std::uniform_real_distribution<> u(0.0, 1.0);
    for (std::size_t v = 0; v < voxels; ++v)
    {
      labels[v] = u(rng) < 0.05 ? -1 : int(u(rng) * numClasses); // some unlabelled voxels: never mistakes
      float * p = &distribution[v * numClasses];
      for (int c = 0; c < numClasses; ++c)
        p[c] = float(u(rng));
      predicted[v] = u(rng) < 0.9 ? std::max(labels[v], 0) : int(u(rng) * numClasses); // few mistakes
      p[predicted[v]] = 2.0f;                                                          // the argmax
    }
    for (const int band : { 0, 1, 2 })
      EXPECT_EQ(StageMistakeFocus(labels, distribution, numClasses, nx, ny, nz, band),
                BruteForceFocus(labels, predicted, numClasses, nx, ny, nz, band))
        << "nz " << nz << ", band " << band;
  }
  EXPECT_THROW(StageMistakeFocus({ 0, 1 }, { 0.5f, 0.5f }, 2, 2, 1, 1, 1), canopy::Error); // too few probabilities
  EXPECT_THROW(StageMistakeFocus({ 0 }, { 0.5f, 0.5f }, 2, 1, 1, 1, -1), canopy::Error);   // negative band
}

TEST(ForestCascadeFocus, SamplingDrawsItsShareFromTheFocus)
{
  ForestLabelledImage im = SizePhantom(7);
  const std::size_t   voxels = im.labels.size();
  im.focus.assign(voxels, 0);
  std::mt19937 rng(3);
  for (std::size_t v = 0; v < voxels; ++v) // a tenth of the voxels, and every small ball (a rare class)
    im.focus[v] = rng() % 10 == 0 || im.labels[v] == 2;
  const auto band = LabelBoundaryBand(im.labels, kNx, kNy, kNz, 1);

  ForestSamplingOptions o;
  o.samplesPerImage = 1000;
  o.balanced = false;
  o.boundaryShare = 0.5;
  o.boundaryBand = 1;
  o.focusShare = 0.4;
  std::vector<ForestSample> samples;
  SampleForestVoxels(im, 0, 3, o, samples);
  ASSERT_EQ(samples.size(), 1000u);
  int inFocus = 0, inBandOnly = 0;
  for (const auto & s : samples)
  {
    const std::size_t v = (std::size_t(s.z) * kNy + s.y) * kNx + s.x;
    inFocus += im.focus[v];
    inBandOnly += !im.focus[v] && band[v];
  }
  EXPECT_EQ(inFocus, 400);    // the focus share of the quota
  EXPECT_EQ(inBandOnly, 300); // the band share of the rest, focus excepted

  // Balanced: the focus part is balanced too.
  o.balanced = true;
  samples.clear();
  SampleForestVoxels(im, 0, 3, o, samples);
  int focusByClass[3] = { 0, 0, 0 };
  for (const auto & s : samples)
    focusByClass[s.label] += im.focus[(std::size_t(s.z) * kNy + s.y) * kNx + s.x];
  EXPECT_EQ(focusByClass[0], 133);
  EXPECT_EQ(focusByClass[1], 133);
  EXPECT_EQ(focusByClass[2], 133);

  // Uniform focus: the focus part keeps the classes as the focus holds them, the rest stays balanced.
  o.focusUniform = true;
  samples.clear();
  SampleForestVoxels(im, 0, 3, o, samples);
  std::size_t focusVoxels = 0, smallInFocus = 0;
  for (std::size_t v = 0; v < voxels; ++v)
  {
    focusVoxels += im.focus[v];
    smallInFocus += im.focus[v] && im.labels[v] == 2;
  }
  int focusSamples = 0, smallFocusSamples = 0, outsideByClass[3] = { 0, 0, 0 };
  for (const auto & s : samples)
  {
    const bool f = im.focus[(std::size_t(s.z) * kNy + s.y) * kNx + s.x];
    focusSamples += f;
    smallFocusSamples += f && s.label == 2;
    outsideByClass[s.label] += !f;
  }
  EXPECT_EQ(focusSamples, 400);
  EXPECT_NEAR(double(smallFocusSamples) / focusSamples, double(smallInFocus) / focusVoxels, 0.08);
  // Balanced outside the focus (which holds every small ball): band and rest, 150 + 150 per class.
  EXPECT_EQ(outsideByClass[0], 300);
  EXPECT_EQ(outsideByClass[1], 300);
  EXPECT_EQ(outsideByClass[2], 0);
  o.focusUniform = false;

  // No focus (share 0, or an image without a mask): the draws of the sampler without one.
  const auto draws = [&](const ForestLabelledImage & image, double share)
  {
    ForestSamplingOptions plain = o;
    plain.focusShare = share;
    std::vector<ForestSample> out;
    SampleForestVoxels(image, 0, 3, plain, out);
    std::vector<std::int64_t> where;
    for (const auto & s : out)
      where.push_back((std::int64_t(s.z) * kNy + s.y) * kNx + s.x);
    return where;
  };
  ForestLabelledImage noMask{ im.image, im.labels };
  EXPECT_EQ(draws(im, 0.0), draws(noMask, 0.0));
  EXPECT_EQ(draws(noMask, 0.4), draws(noMask, 0.0));

  o.focusShare = 1.5;
  EXPECT_THROW(SampleForestVoxels(im, 0, 3, o, samples), canopy::Error);
  o.focusShare = 0.4;
  im.focus.pop_back();
  EXPECT_THROW(SampleForestVoxels(im, 0, 3, o, samples), canopy::Error);
}

TEST(ForestCascadeFocus, LaterStagesTrainOnTheEarlierMistakes)
{
  const auto &                          p = SharedPhantoms();
  auto                                  plain = SmallOptions(2), focused = SmallOptions(2);
  std::vector<ForestCascadeStageReport> plainReport, focusedReport;
  focused.sampling.focusShare = 0.5;
  focused.focusBand = 1;
  const auto a = TrainForestCascade(p.trainPointers, 3, plain, p.testPointers, &plainReport);
  const auto b = TrainForestCascade(p.trainPointers, 3, focused, p.testPointers, &focusedReport);
  // Stage 1 has no earlier mistakes: the same forest; stage 2 learns from other voxels.
  EXPECT_EQ(ForestModelToJsonString(a.stages[0]), ForestModelToJsonString(b.stages[0]));
  EXPECT_NE(ForestModelToJsonString(a.stages[1]), ForestModelToJsonString(b.stages[1]));
  EXPECT_GT(focusedReport[1].samples,
            6 * 1500u / 2); // a part short of voxels (few mistakes of a class) gives all it has
  EXPECT_LE(focusedReport[1].samples, 6 * 1500u);
  const auto meanDice = [](const ForestCascadeStageReport & r) { return 0.5 * (r.heldOutDice[1] + r.heldOutDice[2]); };
  std::cout << "held-out Dice (big, small mean): stage 1 " << meanDice(plainReport[0]) << ", stage 2 plain "
            << meanDice(plainReport[1]) << ", focused " << meanDice(focusedReport[1]) << '\n';
  EXPECT_GT(meanDice(focusedReport[1]), meanDice(focusedReport[0]) + 0.05); // the maps still help

  focused.focusBand = -1;
  EXPECT_THROW(TrainForestCascade(p.trainPointers, 3, focused), canopy::Error);
}
} // namespace
