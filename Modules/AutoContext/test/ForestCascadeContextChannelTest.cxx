// Context channels of auto-context cascades (issue 13): channels derived from an earlier stage's class
// maps ("tophat:R", the map's black top-hat) against a brute-force reference, their names, the JSON
// form (version 2 only with them) and a cascade that trains and predicts with them.
#include "ForestCascadeTestSupport.h"
#include "canopyForestCascade.h"

#include "canopy/Errors.h"
#include "canopy/IntegralVolume.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <utility>

namespace
{
using namespace canopy;

/** The black top-hat by its definition: the box minimum of the box maximum, minus the value. */
std::vector<float>
BruteForceTopHat(const std::vector<float> & in, int nx, int ny, int nz, int r)
{
  const int  rz = nz == 1 ? 0 : r;
  const auto extremum = [&](const std::vector<float> & v, bool maximum)
  {
    std::vector<float> out(v.size());
    for (int z = 0; z < nz; ++z)
      for (int y = 0; y < ny; ++y)
        for (int x = 0; x < nx; ++x)
        {
          float e = v[(std::size_t(z) * ny + y) * nx + x];
          for (int c = std::max(0, z - rz); c <= std::min(nz - 1, z + rz); ++c)
            for (int b = std::max(0, y - r); b <= std::min(ny - 1, y + r); ++b)
              for (int a = std::max(0, x - r); a <= std::min(nx - 1, x + r); ++a)
              {
                const float w = v[(std::size_t(c) * ny + b) * nx + a];
                e = maximum ? std::max(e, w) : std::min(e, w);
              }
          out[(std::size_t(z) * ny + y) * nx + x] = e;
        }
    return out;
  };
  auto closed = extremum(extremum(in, true), false);
  for (std::size_t v = 0; v < in.size(); ++v)
    closed[v] -= in[v];
  return closed;
}

TEST(ForestCascadeContext, TopHatChannelsOfEveryMap)
{
  for (const int nz : { 1, 6 })
  {
    const int                             nx = 11, ny = 8, numClasses = 2;
    const std::size_t                     voxels = std::size_t(nx) * ny * nz;
    std::mt19937                          rng(11 + nz);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<float>                    intensity(voxels), distribution(voxels * numClasses);
    std::vector<std::vector<float>>       maps(numClasses, std::vector<float>(voxels));
    for (std::size_t v = 0; v < voxels; ++v)
    {
      intensity[v] = u(rng);
      maps[1][v] = distribution[v * 2 + 1] = u(rng);
      maps[0][v] = distribution[v * 2] = 1.0f - distribution[v * 2 + 1];
    }
    const auto image = ForestImage::FromChannels({ intensity.data() }, nx, ny, nz, nullptr, 1);
    const auto out = AppendProbabilityChannels(image, distribution, numClasses, 1, { "tophat:1", "tophat:2" });
    ASSERT_EQ(out.numChannels, 1 + numClasses * 3);
    // The same channels built by hand: the maps, then per radius one top-hat per class.
    std::vector<std::vector<float>> planes = maps;
    for (const int r : { 1, 2 })
      for (int c = 0; c < numClasses; ++c)
        planes.push_back(BruteForceTopHat(maps[c], nx, ny, nz, r));
    std::vector<const float *> pointers{ intensity.data() };
    for (const auto & p : planes)
      pointers.push_back(p.data());
    const auto expected = ForestImage::FromChannels(pointers, nx, ny, nz, nullptr, 1);
    EXPECT_EQ(out.sums, expected.sums) << "nz " << nz;
    // Without context channels: the maps alone, as before.
    EXPECT_EQ(AppendProbabilityChannels(image, distribution, numClasses, 1).numChannels, 1 + numClasses);
  }
}

TEST(ForestCascadeContext, NamesAreCheckedAndCanonical)
{
  EXPECT_EQ(ParseContextChannels({ "tophat:1", "tophat:32" }, "t"), (std::vector<int>{ 1, 32 }));
  for (const std::string bad : { "tophat:0", "tophat:33", "tophat:02", "tophat:1.5", "tophat:", "closing:2", "tophat" })
    EXPECT_THROW(ParseContextChannels({ bad }, "t"), canopy::Error) << bad;
  EXPECT_THROW(ParseContextChannels({ "tophat:2", "tophat:2" }, "t"), canopy::Error);
}

// From the third stage on, prediction and training rewrite only the appended tables of the images they
// built for the second stage. Prediction must equal building every stage's image afresh, and the trainer's
// held-out scores after the last stage (its held-out images rewritten in place twice) must equal those of
// the prediction.
TEST(ForestCascadeContext, LaterStagesReuseTheImageTablesExactly)
{
  const auto & p = SharedPhantoms();
  auto         o = SmallOptions(4);
  o.forest.numTrees = 2;
  o.contextChannels = { "tophat:1", "tophat:2" };
  std::vector<ForestCascadeStageReport> report;
  const auto                            cascade = TrainForestCascade(p.trainPointers, 3, o, p.testPointers, &report);
  ForestDensePredictionOptions          options;
  options.backend = "cpu";
  options.threads = 2;
  ForestLabelScores scores(3);
  for (const auto * item : p.testPointers)
  {
    std::vector<float> fresh;
    ForestImage        stageImage = item->image;
    for (std::size_t k = 0; k < cascade.stages.size(); ++k)
    {
      if (k > 0)
        stageImage = AppendProbabilityChannels(item->image, fresh, 3, 2, cascade.contextChannels);
      fresh.assign(std::size_t(item->image.nx) * item->image.ny * item->image.nz * 3, 0.0f);
      auto stageOptions = options;
      stageOptions.mode = ForestOutputMode::Distribution;
      PredictForestDense(cascade.stages[k], stageImage, stageOptions, fresh.data(), nullptr);
    }
    EXPECT_EQ(PredictForestCascade(cascade, item->image, options), fresh);
    // Handed over, the image gets the maps' tables after its own, rewritten from the third stage on:
    // without room for them (its tables moved once) and with it (FromChannels' reserveChannels).
    EXPECT_EQ(PredictForestCascade(cascade, ForestImage(item->image), options), fresh);
    ForestImage roomy = item->image;
    roomy.sums.reserve(roomy.sums.size() + std::size_t(cascade.ContextChannelsPerStage()) *
                                             std::size_t(PaddedTableSize(roomy.nx, roomy.ny, roomy.nz)));
    EXPECT_EQ(PredictForestCascade(cascade, std::move(roomy), options), fresh);
    const auto labels = ArgMaxLabels(fresh, 3);
    scores.Add(labels.data(), item->labels.data(), labels.size());
  }
  ASSERT_EQ(report.size(), 4U);
  for (int c = 0; c < 3; ++c)
    EXPECT_DOUBLE_EQ(scores.Dice(c), report[3].heldOutDice[c]) << c;
}

// Training images handed over get each stage's maps in their own tables (rewritten from the third stage
// on) instead of in copies: the same cascade, the same held-out scores, with and without a focus share.
TEST(ForestCascadeContext, TrainingImagesHandedOverGiveTheSameCascade)
{
  const auto & p = SharedPhantoms();
  for (const double focusShare : { 0.0, 0.4 })
  {
    auto o = SmallOptions(3); // the maps appended after stage 1, rewritten after stage 2
    o.forest.numTrees = 2;
    o.contextChannels = { "tophat:1", "tophat:2" };
    o.sampling.focusShare = focusShare;
    std::vector<ForestCascadeStageReport> copied, handed;
    const auto                            expected = TrainForestCascade(p.trainPointers, 3, o, p.testPointers, &copied);
    auto                                  images = p.train;
    const auto cascade = TrainForestCascade(std::move(images), 3, o, p.testPointers, &handed);
    EXPECT_EQ(ForestCascadeToJsonString(cascade), ForestCascadeToJsonString(expected)) << "focus " << focusShare;
    ASSERT_EQ(handed.size(), copied.size());
    for (std::size_t k = 0; k < handed.size(); ++k)
    {
      EXPECT_EQ(handed[k].samples, copied[k].samples) << k;
      EXPECT_EQ(handed[k].heldOutDice, copied[k].heldOutDice) << k;
    }

    // the held-out images handed over too: the maps in their own tables, the same scores and labels
    auto                                  trainImages = p.train;
    auto                                  heldOut = p.test;
    std::vector<ForestCascadeStageReport> both;
    const auto bothCascade = TrainForestCascade(std::move(trainImages), 3, o, heldOut, &both);
    EXPECT_EQ(ForestCascadeToJsonString(bothCascade), ForestCascadeToJsonString(expected)) << "focus " << focusShare;
    ASSERT_EQ(both.size(), copied.size());
    for (std::size_t k = 0; k < both.size(); ++k)
    {
      EXPECT_EQ(both[k].heldOutDice, copied[k].heldOutDice) << k;
      EXPECT_EQ(both[k].heldOutLabels, copied[k].heldOutLabels) << k;
    }
    ASSERT_EQ(heldOut.size(), p.test.size());
    for (std::size_t i = 0; i < heldOut.size(); ++i)
    {
      EXPECT_EQ(heldOut[i].labels, p.test[i].labels) << "the labels stay";
      EXPECT_EQ(heldOut[i].image.numChannels, cascade.stages.back().numChannels) << "the last stage's input";
      EXPECT_TRUE(heldOut[i].focus.empty()) << "no focus for held-out images";
    }
  }
  auto images = p.train;
  auto heldOut = p.test;
  EXPECT_THROW(TrainForestCascade(std::move(images), 3, SmallOptions(2), heldOut, nullptr), canopy::Error)
    << "held-out images taken over need a report";
}

TEST(ForestCascadeContext, ImagesReserveRoomForTheMapsTables)
{
  const int          nx = 9, ny = 7, nz = 5;
  std::vector<float> a(std::size_t(nx) * ny * nz), b(a.size());
  std::iota(a.begin(), a.end(), 0.0f);
  std::iota(b.rbegin(), b.rend(), 0.5f);
  const auto plain = ForestImage::FromChannels({ a.data(), b.data() }, nx, ny, nz, nullptr, 1);
  const auto roomy = ForestImage::FromChannels({ a.data(), b.data() }, nx, ny, nz, nullptr, 1, 6);
  EXPECT_EQ(roomy.sums, plain.sums); // the same tables, with room behind them
  EXPECT_EQ(roomy.numChannels, 2);
  EXPECT_GE(roomy.sums.capacity(), std::size_t(PaddedTableSize(nx, ny, nz)) * 8);
}

TEST(ForestCascadeContext, CascadeTrainsPredictsAndRoundTrips)
{
  const auto & p = SharedPhantoms();
  auto         o = SmallOptions(2);
  o.forest.numTrees = 2;
  o.contextChannels = { "tophat:2" };
  std::vector<ForestCascadeStageReport> report;
  const auto                            cascade = TrainForestCascade(p.trainPointers, 3, o, p.testPointers, &report);
  ASSERT_EQ(cascade.contextChannels, o.contextChannels);
  EXPECT_EQ(cascade.stages[1].numChannels, 1 + 3 * 2);
  // Prediction derives the same channels as training: the held-out labels the trainer scored.
  ForestDensePredictionOptions options;
  options.backend = "cpu";
  options.threads = 2;
  ForestLabelScores scores(3);
  for (const auto * item : p.testPointers)
  {
    const auto labels = ArgMaxLabels(PredictForestCascade(cascade, item->image, options), 3);
    scores.Add(labels.data(), item->labels.data(), labels.size());
  }
  for (int c = 0; c < 3; ++c)
    EXPECT_DOUBLE_EQ(scores.Dice(c), report[1].heldOutDice[c]) << c;

  // JSON: version 2 with context channels, read back to the same cascade; version 1 without.
  const std::string text = ForestCascadeToJsonString(cascade);
  auto              json = nlohmann::json::parse(text);
  EXPECT_EQ(json["version"], 2);
  EXPECT_EQ(json["contextChannels"], nlohmann::json::array({ "tophat:2" }));
  EXPECT_EQ(ForestCascadeToJsonString(ForestCascadeFromJsonString(text, "round trip")), text);
  auto plain = SmallOptions(2);
  plain.forest.numTrees = 1;
  plain.forest.maxDepth = 4;
  const auto plainJson =
    nlohmann::json::parse(ForestCascadeToJsonString(TrainForestCascade(p.trainPointers, 3, plain)));
  EXPECT_EQ(plainJson["version"], 1);
  EXPECT_FALSE(plainJson.contains("contextChannels"));
  // Corrupt: a bad name, a missing channel count, a name where the stages read none.
  auto bad = json;
  bad["contextChannels"] = { "tophat:0" };
  EXPECT_THROW(ForestCascadeFromJsonString(bad.dump(), "bad"), canopy::Error);
  bad["contextChannels"] = { "tophat:2", "tophat:3" };
  EXPECT_THROW(ForestCascadeFromJsonString(bad.dump(), "bad"), canopy::Error);
  bad["contextChannels"] = "tophat:2";
  EXPECT_THROW(ForestCascadeFromJsonString(bad.dump(), "bad"), canopy::Error);
  bad.erase("contextChannels");
  EXPECT_THROW(ForestCascadeFromJsonString(bad.dump(), "bad"), canopy::Error);
  json["version"] = kForestCascadeVersion + 1;
  EXPECT_THROW(ForestCascadeFromJsonString(json.dump(), "newer"), canopy::Error);
}
} // namespace
