#include "canopy/PBTHypotheses.h"

#include "ParallelFor.h"

namespace canopy
{

template<typename TFeatureFunc>
void
EvaluatePBTAtHypothesesCPU(const PBTView &                           tree,
                           const TFeatureFunc &                      func,
                           const typename TFeatureFunc::Hypothesis * hypotheses,
                           std::int64_t                              count,
                           float *                                   out,
                           int                                       threads)
{
  detail::ParallelForChunks(count,
                            threads,
                            [&](std::int64_t begin, std::int64_t end)
                            {
                              for (std::int64_t h = begin; h < end; ++h)
                              {
                                out[h] = PbtPosteriorOfHypothesis(tree, func, hypotheses[h]);
                              }
                            });
}

template<typename TFeatureFunc>
void
EvaluatePBTAtHypothesisRangeCPU(const PBTView & tree, const TFeatureFunc & func, std::int64_t count, float * out, int threads)
{
  detail::ParallelForChunks(count,
                            threads,
                            [&](std::int64_t begin, std::int64_t end)
                            {
                              for (std::int64_t h = begin; h < end; ++h)
                              {
                                out[h] = PbtPosteriorOfHypothesis(tree, func, h);
                              }
                            });
}

template void
EvaluatePBTAtHypothesisRangeCPU<PoseProductFeatureFunc>(const PBTView &,
                                                        const PoseProductFeatureFunc &,
                                                        std::int64_t,
                                                        float *,
                                                        int);

// The feature families (PBTHypotheses.h); cuda/PBTHypotheses.cu instantiates the same list.
template void
EvaluatePBTAtHypothesesCPU<HaarFeatureFunc>(const PBTView &,
                                            const HaarFeatureFunc &,
                                            const VoxelIndex3 *,
                                            std::int64_t,
                                            float *,
                                            int);
template void
EvaluatePBTAtHypothesesCPU<SteerableFeatureFunc>(const PBTView &,
                                                 const SteerableFeatureFunc &,
                                                 const SteerablePose *,
                                                 std::int64_t,
                                                 float *,
                                                 int);

template void
EvaluatePBTAtHypothesesCPU<BoundaryFeatureFunc>(const PBTView &,
                                                const BoundaryFeatureFunc &,
                                                const BoundaryHypothesis *,
                                                std::int64_t,
                                                float *,
                                                int);

} // namespace canopy
