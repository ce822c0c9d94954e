// Distributed auto-context training (train-forest --auto-context K --distributed): processes holding
// consecutive shares of the training images, ranks simulated by threads, each train the cascade one
// process trains on all the images, bit for bit: stage forests and out-of-fold forests over the shards,
// folds drawn over all the images, focus sampling from each process's own maps. Also a process whose
// images all fall in one fold (it holds no sample of that fold's forest).
#include "ForestCascadeTestSupport.h"
#include "canopyShares.h"
#include "canopyThreadCollective.h"

#include "canopy/Errors.h"

#include <gtest/gtest.h>

namespace
{

void
ExpectSameCascadeAsOneProcess(const ForestCascadeOptions & o, int ranks)
{
  const Phantoms &                      p = SharedPhantoms();
  std::vector<ForestCascadeStageReport> oneReport;
  const ForestCascade                   one = TrainForestCascade(p.trainPointers, 3, o, p.testPointers, &oneReport);
  const std::string                     expected = ForestCascadeToJsonString(one);

  std::vector<std::string>                           cascades(ranks);
  std::vector<std::vector<ForestCascadeStageReport>> reports(ranks);
  RunThreadCollective(ranks,
                      [&](Collective & c)
                      {
                        const ShareRange     share = ContiguousShare(p.trainPointers.size(), c.Rank(), c.Size());
                        ForestCascadeOptions mine = o;
                        mine.forest.shards = &c;
                        mine.firstImage = share.begin;
                        mine.totalImages = p.trainPointers.size();
                        const std::vector<const ForestLabelledImage *> images(p.trainPointers.begin() + share.begin,
                                                                              p.trainPointers.begin() + share.end);
                        // the held-out images are rank 0's alone, as train-forest reads them
                        const auto test = c.Rank() == 0 ? p.testPointers : std::vector<const ForestLabelledImage *>{};
                        cascades[c.Rank()] =
                          ForestCascadeToJsonString(TrainForestCascade(images, 3, mine, test, &reports[c.Rank()]));
                      });
  for (int r = 0; r < ranks; ++r)
    EXPECT_EQ(cascades[r], expected) << "rank " << r << " of " << ranks;
  for (std::size_t k = 0; k < oneReport.size(); ++k)
  {
    std::size_t samples = 0;
    for (int r = 0; r < ranks; ++r)
      samples += reports[r][k].samples;
    EXPECT_EQ(samples, oneReport[k].samples) << "stage " << k << ": the shards' samples are the one set's";
    EXPECT_EQ(reports[0][k].heldOutDice, oneReport[k].heldOutDice) << "stage " << k;
  }
}

TEST(ForestCascadeDistributed, SameCascadeAsOneProcess)
{
  ForestCascadeOptions o = SmallOptions(2);
  ExpectSameCascadeAsOneProcess(o, 2);
}

TEST(ForestCascadeDistributed, ProcessWithoutSamplesOfAFoldAndFocusSampling)
{
  // 6 images over 4 ranks (2, 2, 1, 1) in 3 folds: a one-image rank holds no sample of its fold's forest
  ForestCascadeOptions o = SmallOptions(2);
  o.sampling.focusShare = 0.3;
  o.focusBand = 1;
  ExpectSameCascadeAsOneProcess(o, 4);
}

TEST(ForestCascadeDistributed, ShareWithoutShardsIsRefused)
{
  const Phantoms &     p = SharedPhantoms();
  ForestCascadeOptions o = SmallOptions(2);
  o.firstImage = 0;
  o.totalImages = 12; // a share of 12 images, but no collective to train with the others
  EXPECT_THROW(TrainForestCascade(p.trainPointers, 3, o), canopy::Error);
}

} // namespace
