// Distributed forest training with ranks simulated by threads (no MPI needed): every rank grows the
// forest one process grows on all samples, bit for bit, for 1 to 4 ranks, 2D and 3D, with flipped
// pairs, class weights and the normalised score; and the collectives themselves.
#include "DistributedTestSupport.h"
#include "canopyForestVolumeTraining.h"
#include "canopyThreadCollective.h"

#include "canopy/Errors.h"

#include <gtest/gtest.h>

namespace
{
using namespace canopy;
using namespace canopy::testing;

void
ExpectSameAsOneProcess(int ranks, int nz, const ForestTrainingOptions & o)
{
  const auto        phantoms = MakeDistributedPhantoms(5, nz);
  const ForestModel single = TrainForest(DistributedSetOf(phantoms, { 0, phantoms.size() }), o);
  ASSERT_GT(single.Depth(), 1);
  std::vector<ForestModel> models(ranks);
  RunThreadCollective(ranks,
                      [&](Collective & c)
                      {
                        ForestTrainingOptions mine = o;
                        mine.shards = &c;
                        models[c.Rank()] = TrainForest(
                          DistributedSetOf(phantoms, ContiguousShare(phantoms.size(), c.Rank(), c.Size())), mine);
                      });
  for (int r = 0; r < ranks; ++r)
    EXPECT_TRUE(SameForest(single, models[r])) << ranks << " ranks, rank " << r << ", nz " << nz;
}

TEST(DistributedForest, SameForestAsOneProcess2D)
{
  for (int ranks : { 1, 2, 3, 5 })
    ExpectSameAsOneProcess(ranks, 1, DistributedOptions());
}

TEST(DistributedForest, SameForestAsOneProcess3D)
{
  auto o = DistributedOptions();
  o.numTrees = 2;
  ExpectSameAsOneProcess(2, 6, o);
}

TEST(DistributedForest, SameForestWithFlipPairsWeightsAndNormalizedScore)
{
  auto o = DistributedOptions();
  o.flipPairs = true;
  o.balanceClasses = true;
  o.score = ForestSplitScore::NormalizedInformationGain;
  o.baggingFraction = 0.5;
  o.minSamplesToSplit = 20;
  for (int ranks : { 2, 4 })
    ExpectSameAsOneProcess(ranks, 1, o);
}

// train-forest --cv --distributed: k-fold cross-validation over shards (each fold's forest over the
// shards, each process scoring its own held-out images, the integer scores summed) gives the
// one-process results exactly; with 4 ranks over 6 images in 3 folds some rank has no image outside
// a fold.
TEST(DistributedForest, CrossValidationAsOneProcess)
{
  const auto                       phantoms = MakeDistributedPhantoms(6, 1);
  std::vector<ForestLabelledImage> items;
  for (const auto & p : phantoms)
    items.push_back({ p->image, std::vector<std::int32_t>(p->labels.begin(), p->labels.end()) });
  std::vector<const ForestLabelledImage *> all;
  for (const auto & item : items)
    all.push_back(&item);
  ForestSamplingOptions sampling;
  sampling.samplesPerImage = 200;
  auto shallow = DistributedOptions();
  shallow.maxDepth = 2;
  const auto deep = DistributedOptions();
  const auto one = CrossValidateForest(all, 3, sampling, { shallow, deep }, 3, 7);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_LT(one[0].meanDice, one[1].meanDice);
  for (int ranks : { 2, 4 })
  {
    std::vector<std::vector<ForestCrossValidationResult>> results(ranks);
    RunThreadCollective(
      ranks,
      [&](Collective & c)
      {
        const ShareRange share = ContiguousShare(all.size(), c.Rank(), ranks);
        auto             grid = std::vector<ForestTrainingOptions>{ shallow, deep };
        for (auto & o : grid)
          o.shards = &c;
        const std::vector<const ForestLabelledImage *> mine(all.begin() + share.begin, all.begin() + share.end);
        results[c.Rank()] = CrossValidateForest(mine, 3, sampling, grid, 3, 7, {}, share.begin, all.size());
      });
    for (int r = 0; r < ranks; ++r)
      for (std::size_t g = 0; g < one.size(); ++g)
      {
        EXPECT_EQ(results[r][g].foldDice, one[g].foldDice) << ranks << " ranks, rank " << r << ", grid point " << g;
        EXPECT_EQ(results[r][g].meanAccuracy, one[g].meanAccuracy) << ranks << " ranks, rank " << r;
        EXPECT_EQ(results[r][g].options.maxDepth, one[g].options.maxDepth);
        EXPECT_EQ(results[r][g].options.shards, nullptr) << "a result outlives the run's processes";
      }
  }
}

TEST(DistributedForest, ThreadsPerRankDoNotMatter)
{
  auto o = DistributedOptions();
  o.threads = 3;
  ExpectSameAsOneProcess(2, 1, o);
}

TEST(DistributedForest, ShardsMustAgreeOnChannels)
{
  const auto phantoms = MakeDistributedPhantoms(2, 1);
  EXPECT_THROW(RunThreadCollective(2,
                                   [&](Collective & c)
                                   {
                                     auto o = DistributedOptions();
                                     o.shards = &c;
                                     auto set = DistributedSetOf(phantoms, ContiguousShare(2, c.Rank(), 2));
                                     set.images[0].numChannels = 1 + c.Rank(); // a different bank per rank
                                     TrainForest(set, o);
                                   }),
               canopy::Error);
}

TEST(DistributedForest, CollectivesOverThreads)
{
  RunThreadCollective(3,
                      [](Collective & c)
                      {
                        std::vector<std::uint32_t> counts{ 1u + c.Rank(), 10u };
                        c.SumInPlace(counts.data(), counts.size());
                        EXPECT_EQ(counts[0], 6u);
                        EXPECT_EQ(counts[1], 30u);
                        std::int64_t most = c.Rank() * 7;
                        c.MaxInPlace(&most, 1);
                        EXPECT_EQ(most, 14);
                        std::uint32_t bits = c.Rank() == 1 ? 0x3f800000u : 0u; // only rank 1 holds the value
                        c.BitwiseOrInPlace(&bits, 1);
                        EXPECT_EQ(bits, 0x3f800000u);
                        int value = c.Rank() == 2 ? 42 : 0;
                        c.Broadcast(&value, sizeof(value), 2);
                        EXPECT_EQ(value, 42);
                        const auto texts = c.GatherToRoot("rank " + std::to_string(c.Rank()), 0);
                        if (c.Rank() == 0)
                          EXPECT_EQ(texts, (std::vector<std::string>{ "rank 0", "rank 1", "rank 2" }));
                        else
                          EXPECT_TRUE(texts.empty());
                        EXPECT_FALSE(c.AllTrue(c.Rank() != 1));
                        EXPECT_GT(c.BytesReduced(), 0);
                      });
}

TEST(DistributedForest, ARankThatThrowsStopsTheOthers)
{
  try
  {
    RunThreadCollective(3,
                        [](Collective & c)
                        {
                          if (c.Rank() == 1)
                            CANOPY_THROW("rank 1 cannot read its volume");
                          std::int64_t x = 1;
                          c.SumInPlace(&x, 1); // would wait forever for rank 1
                        });
    FAIL() << "no exception";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.what()).find("rank 1 cannot read"), std::string::npos) << e.what();
  }
}

TEST(DistributedForest, ContiguousSharesCoverEverythingInOrder)
{
  for (std::size_t count : { 0, 1, 5, 7, 64 })
    for (int size : { 1, 2, 3, 8 })
    {
      std::size_t next = 0;
      for (int r = 0; r < size; ++r)
      {
        const ShareRange s = ContiguousShare(count, r, size);
        EXPECT_EQ(s.begin, next);
        EXPECT_LE(s.end - s.begin, count / size + 1);
        next = s.end;
      }
      EXPECT_EQ(next, count);
    }
}

} // namespace
