// PBT posteriors at hypotheses on the GPU for any feature family (PBTHypotheses.h): one thread per
// hypothesis runs PbtPosteriorOfHypothesis, the function the CPU reference runs, with its bounded
// stack in local memory (Birkbeck et al. Fig. 2). Tree and feature data are read-only for the launch.
// Compiled with --fmad=false (Kernels/CMakeLists.txt): a contracted multiply-add could move a
// probability across a branch threshold and the GPU would descend differently from the CPU.
//
// The tree and the family are __grid_constant__: the family is read through references (its pyramid
// levels indexed by each feature's level), which without it makes the compiler copy the whole family
// (four level views, ~300 bytes) into every thread's local memory.
#include "canopy/CudaCheck.h"
#include "canopy/PBTHypotheses.h"

#include <cuda_runtime.h>

namespace canopy::cuda
{
namespace
{

constexpr int kThreads = 128;

template<typename TFeatureFunc>
__global__ void
__launch_bounds__(kThreads) PBTHypothesesKernel(const __grid_constant__ PBTView      tree,
                                                const __grid_constant__ TFeatureFunc func,
                                                const typename TFeatureFunc::Hypothesis * __restrict__ hypotheses,
                                                std::int64_t count,
                                                float * __restrict__ out)
{
  const std::int64_t h = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
  if (h >= count)
  {
    return;
  }
  const typename TFeatureFunc::Hypothesis hypothesis = hypotheses[h];
  out[h] = PbtPosteriorOfHypothesis(tree, func, hypothesis);
}

template<typename TFeatureFunc>
__global__ void
__launch_bounds__(kThreads) PBTHypothesisRangeKernel(const __grid_constant__ PBTView      tree,
                                                     const __grid_constant__ TFeatureFunc func,
                                                     std::int64_t                         count,
                                                     float * __restrict__ out)
{
  const std::int64_t h = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
  if (h >= count)
  {
    return;
  }
  out[h] = PbtPosteriorOfHypothesis(tree, func, h);
}

} // namespace

template<typename TFeatureFunc>
void
LaunchPBTAtHypothesisRange(const PBTView &      tree,
                           const TFeatureFunc & func,
                           std::int64_t         count,
                           float *              out,
                           StreamHandle         stream)
{
  if (count <= 0)
  {
    return;
  }
  const auto blocks = static_cast<unsigned int>((count + kThreads - 1) / kThreads);
  PBTHypothesisRangeKernel<TFeatureFunc><<<blocks, kThreads, 0, stream>>>(tree, func, count, out);
  CANOPY_CUDA_CHECK_LAUNCH(PBTHypothesisRangeKernel);
}

template void
LaunchPBTAtHypothesisRange<PoseProductFeatureFunc>(const PBTView &,
                                                   const PoseProductFeatureFunc &,
                                                   std::int64_t,
                                                   float *,
                                                   StreamHandle);

template<typename TFeatureFunc>
void
LaunchPBTAtHypotheses(const PBTView &                           tree,
                      const TFeatureFunc &                      func,
                      const typename TFeatureFunc::Hypothesis * hypotheses,
                      std::int64_t                              count,
                      float *                                   out,
                      StreamHandle                              stream)
{
  if (count <= 0)
  {
    return;
  }
  const auto blocks = static_cast<unsigned int>((count + kThreads - 1) / kThreads);
  PBTHypothesesKernel<TFeatureFunc><<<blocks, kThreads, 0, stream>>>(tree, func, hypotheses, count, out);
  CANOPY_CUDA_CHECK_LAUNCH(PBTHypothesesKernel);
}

template void
LaunchPBTAtHypotheses<HaarFeatureFunc>(const PBTView &,
                                       const HaarFeatureFunc &,
                                       const VoxelIndex3 *,
                                       std::int64_t,
                                       float *,
                                       StreamHandle);
template void
LaunchPBTAtHypotheses<SteerableFeatureFunc>(const PBTView &,
                                            const SteerableFeatureFunc &,
                                            const SteerablePose *,
                                            std::int64_t,
                                            float *,
                                            StreamHandle);

template void
LaunchPBTAtHypotheses<BoundaryFeatureFunc>(const PBTView &,
                                           const BoundaryFeatureFunc &,
                                           const BoundaryHypothesis *,
                                           std::int64_t,
                                           float *,
                                           StreamHandle);

} // namespace canopy::cuda
