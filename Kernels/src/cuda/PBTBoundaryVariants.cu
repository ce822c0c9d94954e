// Boundary scoring kernel variants (PBTBoundaryVariants.h): teams of lanes per hypothesis and packed
// learner records. Every variant runs PbtPosteriorStackWith (PBTFlat.h) with a node probability that
// adds the learner outputs in learner order, so posteriors are those of PbtPosteriorOfHypothesis bit
// for bit. Compiled with --fmad=false like PBTHypotheses.cu.
#include "canopy/CudaCheck.h"
#include "canopy/Errors.h"
#include "canopy/PBTBoundaryVariants.h"

#include <cuda_runtime.h>

namespace canopy::cuda
{
namespace
{

constexpr int kThreads = 128;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
constexpr int kMostBlocks = 8; // 1,024 threads per multiprocessor on sm_75
#else
constexpr int kMostBlocks = 12; // 1,536 or 2,048 on the other architectures built
#endif

/** The output of weak learner `index` (into tree.learners) at the prepared frame `pose`. */
template<bool kPacked>
__device__ __forceinline__ float
LearnerOutput(const PBTView &             tree,
              const BoundaryFeatureFunc & func,
              const PBTSteerableLearner * packed,
              const SteerablePose &       pose,
              int                         index)
{
  if constexpr (kPacked)
  {
    const PBTSteerableLearner record = packed[index];
    return WeakLearnerOutput(tree,
                             UnpackSteerableLearner(record),
                             SteerableResponse(func.pyramid, func.grid, pose, UnpackSteerableFeature(record)));
  }
  else
  {
    const PBTWeakLearnerFlat learner = tree.learners[index];
    return WeakLearnerOutput(tree, learner, func.Response(pose, learner.feature));
  }
}

/** kTeam consecutive lanes per hypothesis (hypothesis = thread / kTeam). Each lane of a team keeps the
 * same traversal state; at a node, lane r computes learners r, r + kTeam, ... and every lane adds the
 * team's outputs in learner order (shuffles), so each lane's sum is StrongClassifierProbability's. */
template<int kTeam, bool kPacked, int kMinBlocks>
__global__ void
__launch_bounds__(kThreads, kMinBlocks < kMostBlocks ? kMinBlocks : kMostBlocks)
  BoundaryTeamKernel(const __grid_constant__ PBTView             tree,
                     const __grid_constant__ BoundaryFeatureFunc func,
                     const PBTSteerableLearner * __restrict__ packed,
                     const BoundaryHypothesis * __restrict__ hypotheses,
                     std::int64_t count,
                     float * __restrict__ out)
{
  static_assert(32 % kTeam == 0 && kThreads % kTeam == 0, "teams must tile warps");
  const std::int64_t thread = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x;
  const std::int64_t h = thread / kTeam;
  if (h >= count)
  {
    return; // whole teams leave together: a team's lanes share h
  }
  const int           rank = static_cast<int>(threadIdx.x % kTeam);
  const unsigned int  lane = threadIdx.x % 32;
  const unsigned int  mask = kTeam == 32 ? 0xffffffffu : ((1u << kTeam) - 1u) << (lane - rank);
  const SteerablePose pose = func.Prepare(hypotheses[h]);
  auto                probabilityOf = [&](const PBTNodeFlat & node)
  {
    float sum = 0.0f;
    for (int base = 0; base < node.numLearners; base += kTeam)
    {
      const int   i = base + rank;
      const float mine =
        i < node.numLearners ? LearnerOutput<kPacked>(tree, func, packed, pose, node.firstLearner + i) : 0.0f;
      if constexpr (kTeam == 1)
      {
        sum += mine;
      }
      else
      {
        const int here = node.numLearners - base; // learners of this round: min(kTeam, here)
#pragma unroll
        for (int j = 0; j < kTeam; ++j)
        {
          const float output = __shfl_sync(mask, mine, j, kTeam);
          if (j < here)
          {
            sum += output;
          }
        }
      }
    }
    return CalibratedProbability(node, sum);
  };
  const float posterior = PbtPosteriorStackWith<kPBTHypothesisStack>(tree, probabilityOf);
  if (rank == 0)
  {
    out[h] = posterior;
  }
}

using KernelFunction = void (*)(PBTView,
                                BoundaryFeatureFunc,
                                const PBTSteerableLearner *,
                                const BoundaryHypothesis *,
                                std::int64_t,
                                float *);

/** The built kernels (BuiltBoundaryKernelVariants lists the same set); null for others. */
KernelFunction
KernelOf(const BoundaryKernelVariant & v)
{
#define CANOPY_BOUNDARY_VARIANT(T, P, B)                                                                               \
  if (v.team == T && v.packed == P && v.minBlocks == B)                                                                \
    return BoundaryTeamKernel<T, P, B>;
  CANOPY_BOUNDARY_VARIANT(1, false, 0)
  CANOPY_BOUNDARY_VARIANT(2, false, 0)
  CANOPY_BOUNDARY_VARIANT(4, false, 0)
  CANOPY_BOUNDARY_VARIANT(8, false, 0)
  CANOPY_BOUNDARY_VARIANT(16, false, 0)
  CANOPY_BOUNDARY_VARIANT(1, true, 0)
  CANOPY_BOUNDARY_VARIANT(2, true, 0)
  CANOPY_BOUNDARY_VARIANT(4, true, 0)
  CANOPY_BOUNDARY_VARIANT(8, true, 0)
  CANOPY_BOUNDARY_VARIANT(16, true, 0)
  CANOPY_BOUNDARY_VARIANT(4, true, 8)
  CANOPY_BOUNDARY_VARIANT(4, true, 10)
  CANOPY_BOUNDARY_VARIANT(8, true, 8)
  CANOPY_BOUNDARY_VARIANT(8, true, 10)
#undef CANOPY_BOUNDARY_VARIANT
  return nullptr;
}

KernelFunction
CheckedKernelOf(const BoundaryKernelVariant & v)
{
  const KernelFunction kernel = KernelOf(v);
  if (kernel == nullptr)
  {
    CANOPY_THROW("boundary kernel variant " << v.Name() << " is not built");
  }
  return kernel;
}

} // namespace

KernelResources
BoundaryVariantResources(const BoundaryKernelVariant & variant)
{
  const void *    kernel = variant.baseline ? nullptr : reinterpret_cast<const void *>(CheckedKernelOf(variant));
  KernelResources resources;
  if (kernel == nullptr)
  {
    return resources; // the baseline lives in PBTHypotheses.cu; its figures are in docs/BENCHMARKS.md
  }
  cudaFuncAttributes attributes{};
  CANOPY_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  resources.registers = attributes.numRegs;
  resources.localBytes = static_cast<int>(attributes.localSizeBytes);
  CANOPY_CUDA_CHECK(
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resources.blocksPerMultiprocessor, kernel, kThreads, 0));
  return resources;
}

void
LaunchBoundaryPBTVariant(const BoundaryKernelVariant & variant,
                         const PBTView &               tree,
                         const BoundaryFeatureFunc &   func,
                         const PBTSteerableLearner *   packed,
                         const BoundaryHypothesis *    hypotheses,
                         std::int64_t                  count,
                         float *                       out,
                         StreamHandle                  stream)
{
  if (variant.baseline)
  {
    LaunchPBTAtHypotheses(tree, func, hypotheses, count, out, stream);
    return;
  }
  const KernelFunction kernel = CheckedKernelOf(variant);
  if (variant.packed && packed == nullptr)
  {
    CANOPY_THROW("boundary kernel variant " << variant.Name() << " needs packed learners");
  }
  if (count <= 0)
  {
    return;
  }
  const std::int64_t threads = count * variant.team;
  const auto         blocks = static_cast<unsigned int>((threads + kThreads - 1) / kThreads);
  kernel<<<blocks, kThreads, 0, stream>>>(tree, func, packed, hypotheses, count, out);
  CANOPY_CUDA_CHECK_LAUNCH(BoundaryTeamKernel);
}

} // namespace canopy::cuda
