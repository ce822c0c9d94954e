// Multi-class and auto-context PBT models on the GPU: dense evaluation of multi-channel Haar features
// (channels stacked along z, canopyHaarChannels.h) runs the same kernels as one channel, so the CUDA
// posteriors of every stage, and the joint decision, equal the CPU's; also in z-slabs.
#include "PBTCascadeTestSupport.h"
#include "canopyTesting.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace
{
void
ExpectSamePosteriors(const std::vector<FloatVolume::Pointer> & cpu, const std::vector<FloatVolume::Pointer> & gpu)
{
  ASSERT_EQ(cpu.size(), gpu.size());
  for (std::size_t c = 0; c < cpu.size(); ++c)
  {
    const auto n = cpu[c]->GetLargestPossibleRegion().GetNumberOfPixels();
    ASSERT_EQ(n, gpu[c]->GetLargestPossibleRegion().GetNumberOfPixels());
    for (itk::SizeValueType i = 0; i < n; ++i)
    {
      const float a = cpu[c]->GetBufferPointer()[i], b = gpu[c]->GetBufferPointer()[i];
      ASSERT_FALSE(std::isnan(b)) << "class " << c << ", voxel " << i;
      ASSERT_LE(std::abs(a - b), 1e-5f) << "class " << c << ", voxel " << i;
    }
  }
}

TEST(PBTCascadeCuda, MultiChannelPosteriorsAndJointDecisionEqualCpu)
{
  CANOPY_REQUIRE_GPU();
  const auto &         p = SharedPBTPhantoms();
  const PBTClassModel  model = TrainPBTCascade(p.train, SmallCascadeOptions(2));
  const auto           cpu = ResolveBackend(BackendRequest::Parse("cpu"));
  const auto           gpu = ResolveBackend(BackendRequest::Parse("cuda"));
  const auto           prepared = PrepareVolume(p.test[0].image, model.workingSpacing, model.normalization);
  PBTEvaluationOptions options;
  for (int stages : { 1, 2 })
  {
    const auto onCpu = PredictPBTCascadePrepared(model, prepared, cpu, options, stages);
    const auto onGpu = PredictPBTCascadePrepared(model, prepared, gpu, options, stages);
    ExpectSamePosteriors(onCpu, onGpu);
    const auto   a = JointLabels(onCpu, model.labels), b = JointLabels(onGpu, model.labels);
    const auto   n = a->GetLargestPossibleRegion().GetNumberOfPixels();
    std::int64_t differ = 0;
    for (itk::SizeValueType i = 0; i < n; ++i)
    {
      // Decisions within the posteriors' tolerance of a tie may go either way.
      float sum = 0.0f, best = 0.0f, second = 0.0f;
      for (const auto & map : onCpu)
      {
        const float q = map->GetBufferPointer()[i];
        sum += q;
        second = std::max(second, std::min(best, q));
        best = std::max(best, q);
      }
      const bool nearTie = std::abs(best - (1.0f - sum)) < 1e-4f || best - second < 1e-4f;
      differ += !nearTie && a->GetBufferPointer()[i] != b->GetBufferPointer()[i];
    }
    EXPECT_EQ(differ, 0) << "stages " << stages;
  }
  // In z-slabs (a device budget far below the stack): the whole-volume result.
  PBTEvaluationOptions slabbed;
  slabbed.maxDeviceBytes = 2200000; // about 1.8 MB for one plane with its margins, 2.6 MB for all
  ExpectSamePosteriors(PredictPBTCascadePrepared(model, prepared, cpu, options),
                       PredictPBTCascadePrepared(model, prepared, gpu, slabbed));
}
} // namespace
