// Auto-context cascades on the GPU: trained and applied with the CUDA forest trainer and predictor,
// the cascade and its probabilities equal the CPU's exactly (each stage is a forest, and CPU and GPU
// forests are equal for a seed; the out-of-fold maps the later stages read are therefore equal too),
// with focus sampling and context channels too.
#include "ForestCascadeTestSupport.h"
#include "canopyShares.h"
#include "canopyTesting.h"
#include "canopyThreadCollective.h"

#include <gtest/gtest.h>

namespace
{
TEST(ForestCascadeCuda, SameCascadeAndProbabilitiesAsCpu)
{
  CANOPY_REQUIRE_GPU();
  const auto & p = SharedPhantoms();
  auto         cpu = SmallOptions(3);
  auto         gpu = cpu;
  gpu.forest.backend = BackendRequest::Parse("cuda");
  gpu.prediction.backend = "cuda";
  std::vector<ForestCascadeStageReport> cpuReport, gpuReport;
  const auto cpuCascade = TrainForestCascade(p.trainPointers, 3, cpu, p.testPointers, &cpuReport);
  const auto gpuCascade = TrainForestCascade(p.trainPointers, 3, gpu, p.testPointers, &gpuReport);
  EXPECT_EQ(ForestCascadeToJsonString(gpuCascade), ForestCascadeToJsonString(cpuCascade));
  for (std::size_t k = 0; k < cpuReport.size(); ++k)
    EXPECT_EQ(gpuReport[k].heldOutDice, cpuReport[k].heldOutDice) << "stage " << k;

  ForestDensePredictionOptions onCpu, onGpu;
  onCpu.backend = "cpu";
  onGpu.backend = "cuda";
  onGpu.maxSlabPlanes = 7; // slabs too
  std::string used;
  const auto  a = PredictForestCascade(cpuCascade, p.test[0].image, onCpu);
  const auto  b = PredictForestCascade(cpuCascade, p.test[0].image, onGpu, &used);
  EXPECT_NE(used.find("cuda"), std::string::npos) << used;
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
  {
    ASSERT_FALSE(std::isnan(b[i])) << i;
    ASSERT_EQ(a[i], b[i]) << "probability " << i;
  }
}

// Focus sampling and context channels (issue 13) are host-side (samples drawn and channels derived on
// the CPU), so the GPU cascade with them equals the CPU's too.
TEST(ForestCascadeCuda, FocusAndContextChannelsAsCpu)
{
  CANOPY_REQUIRE_GPU();
  const auto & p = SharedPhantoms();
  auto         cpu = SmallOptions(2);
  cpu.sampling.focusShare = 0.4;
  cpu.contextChannels = { "tophat:1", "tophat:3" };
  auto gpu = cpu;
  gpu.forest.backend = BackendRequest::Parse("cuda");
  gpu.prediction.backend = "cuda";
  const auto cpuCascade = TrainForestCascade(p.trainPointers, 3, cpu);
  const auto gpuCascade = TrainForestCascade(p.trainPointers, 3, gpu);
  EXPECT_EQ(ForestCascadeToJsonString(gpuCascade), ForestCascadeToJsonString(cpuCascade));
  ForestDensePredictionOptions onCpu, onGpu;
  onCpu.backend = "cpu";
  onGpu.backend = "cuda";
  const auto onCpuResult = PredictForestCascade(cpuCascade, p.test[1].image, onCpu);
  EXPECT_EQ(PredictForestCascade(cpuCascade, p.test[1].image, onGpu), onCpuResult);
  // An image handed over: the maps' tables appended to its own, which the slabs are copied from.
  EXPECT_EQ(PredictForestCascade(cpuCascade, ForestImage(p.test[1].image), onGpu), onCpuResult);
}

// Distributed auto-context on the GPU (train-forest --auto-context --distributed): 4 ranks as threads
// on this one GPU (sums through host memory), 6 images in 3 folds, so the one-image ranks hold no
// sample of their fold's forest; every rank's cascade is the one-process CPU cascade.
TEST(ForestCascadeCuda, DistributedOverRanksOnOneGpuAsCpu)
{
  CANOPY_REQUIRE_GPU();
  const auto & p = SharedPhantoms();
  auto         cpu = SmallOptions(2);
  cpu.sampling.focusShare = 0.3;
  const std::string        expected = ForestCascadeToJsonString(TrainForestCascade(p.trainPointers, 3, cpu));
  const int                ranks = 4;
  std::vector<std::string> cascades(ranks);
  RunThreadCollective(ranks,
                      [&](Collective & c)
                      {
                        const ShareRange share = ContiguousShare(p.trainPointers.size(), c.Rank(), ranks);
                        auto             gpu = cpu;
                        gpu.forest.backend = BackendRequest::Parse("cuda");
                        gpu.prediction.backend = "cuda";
                        gpu.forest.shards = &c;
                        gpu.firstImage = share.begin;
                        gpu.totalImages = p.trainPointers.size();
                        const std::vector<const ForestLabelledImage *> images(p.trainPointers.begin() + share.begin,
                                                                              p.trainPointers.begin() + share.end);
                        cascades[c.Rank()] = ForestCascadeToJsonString(TrainForestCascade(images, 3, gpu));
                      });
  for (int r = 0; r < ranks; ++r)
    EXPECT_EQ(cascades[r], expected) << "rank " << r << " of " << ranks;
}
} // namespace
