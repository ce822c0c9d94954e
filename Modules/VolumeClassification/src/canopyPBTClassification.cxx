#include "canopyPBTClassification.h"

#include "canopyPBTVolumeTraining.h"

#include <chrono>

namespace canopy
{

FloatVolume::Pointer
ClassifyVolume(const FloatVolume * image, const PBTModelFile & model, const ResolvedBackend & backend,
               const PBTEvaluationOptions & options, const std::function<void(double)> & progress,
               PBTClassificationTimings * timings)
{
  using Clock = std::chrono::steady_clock;
  PBTClassificationTimings local;
  PBTClassificationTimings & t = timings ? *timings : local;
  auto report = [&progress](double f) {
    if (progress)
      progress(f);
  };
  auto start = Clock::now();
  auto prepared = PrepareVolume(image, model.workingSpacing, model.normalization);
  const auto size = prepared->GetLargestPossibleRegion().GetSize();
  for (int d = 0; d < 3; ++d)
    t.workingSize[d] = static_cast<int>(size[d]);
  t.prepareSeconds = std::chrono::duration<double>(Clock::now() - start).count();
  report(0.1);

  start = Clock::now();
  auto probability = FloatVolume::New();
  probability->CopyInformation(prepared);
  probability->SetRegions(prepared->GetLargestPossibleRegion());
  probability->Allocate();
  PBTVolumeEvaluator evaluator(model.tree, backend, options);
  evaluator.Evaluate(prepared->GetBufferPointer(), int(size[0]), int(size[1]), int(size[2]),
                     probability->GetBufferPointer(), [&report](double f) { report(0.1 + 0.8 * f); });
  t.slabs = evaluator.GetNumberOfSlabsUsed();
  t.evaluateSeconds = std::chrono::duration<double>(Clock::now() - start).count();

  start = Clock::now();
  auto result = ResampleLike(probability, image, 0.0f);
  t.resampleSeconds = std::chrono::duration<double>(Clock::now() - start).count();
  report(1.0);
  return result;
}

} // namespace canopy
