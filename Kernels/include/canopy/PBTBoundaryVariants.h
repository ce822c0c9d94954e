// Kernel variants of boundary scoring (issue 10's speed goal: 2,402 vertices x 32 displacements in
// <= 2 ms), all computing PbtPosteriorOfHypothesis<BoundaryFeatureFunc> bit for bit, so that one run
// of canopyBenchmarkBoundary (--variants) times them side by side and checks their scores. Two ideas,
// combinable:
//
// - Teams (team = T lanes per hypothesis, T in 1, 2, 4, 8, 16). A boundary list has 76,896
//   hypotheses: 18 warps per H100 multiprocessor, too few to hide the latency of the dependent
//   learner -> feature -> gather -> table chain, and the lanes of a warp expand different numbers of
//   nodes (11 per hypothesis on average), so about half the lane slots idle. A team walks one
//   hypothesis' tree together (every lane keeps the same stack); the T lanes compute the outputs of
//   learners base + 0..T-1 of the node at once and every lane adds them in learner order through
//   shuffles: the sum, and so the posterior, is the sequential one of StrongClassifierProbability.
//   T times the warps, and a warp's rounds are the most of 32 / T hypotheses' rather than 32's. A warp
//   still holds neighbouring displacements of one vertex, which read the same learner at nearby points.
// - Packed learners: a weak learner and its steerable feature in one 16-byte record (one load instead
//   of five 4-byte and five 1-byte loads, and one dependent load less per learner). Across a warp
//   those ten loads touch as many L1 lines as the eight corner gathers (canopyBenchmarkBoundary's team
//   replay; docs/BENCHMARKS.md).
#pragma once

#include "canopy/PBTHypotheses.h"

#include <cstdint>
#include <string>
#include <vector>

namespace canopy
{

/** A weak learner with its steerable feature: lo and invBinWidth as stored, tableOffset in the low
 * 24 bits of `table` and numBins - 1 in its high 8, the feature's x | y << 8 | z << 16 | type << 24
 * (5 bits) | level << 29 (3 bits) in `feature`. */
struct alignas(16) PBTSteerableLearner
{
  float         lo;
  float         invBinWidth;
  std::uint32_t table;
  std::uint32_t feature;
};

CANOPY_HD PBTWeakLearnerFlat
UnpackSteerableLearner(const PBTSteerableLearner & packed)
{
  PBTWeakLearnerFlat learner;
  learner.feature = -1; // the feature travels unpacked (UnpackSteerableFeature)
  learner.numBins = static_cast<int>(packed.table >> 24) + 1;
  learner.lo = packed.lo;
  learner.invBinWidth = packed.invBinWidth;
  learner.tableOffset = static_cast<int>(packed.table & 0xffffffu);
  return learner;
}

CANOPY_HD SteerableFeature
UnpackSteerableFeature(const PBTSteerableLearner & packed)
{
  SteerableFeature f;
  f.x = static_cast<uint8_t>(packed.feature & 0xffu);
  f.y = static_cast<uint8_t>((packed.feature >> 8) & 0xffu);
  f.z = static_cast<uint8_t>((packed.feature >> 16) & 0xffu);
  f.type = static_cast<uint8_t>((packed.feature >> 24) & 0x1fu);
  f.level = static_cast<uint8_t>(packed.feature >> 29);
  return f;
}

/** learners[i] with features[learners[i].feature], or an empty vector when one does not fit (a table
 * offset >= 2^24, more than 256 bins, a type >= 32 or a level >= 8: then only unpacked variants run). */
std::vector<PBTSteerableLearner>
PackSteerableLearners(const PBTWeakLearnerFlat * learners,
                      int                        numLearners,
                      const SteerableFeature *   features,
                      int                        numFeatures);

/** Which boundary kernel runs. The default is the engine's kernel (PBTHypothesesKernel). */
struct BoundaryKernelVariant
{
  bool baseline = true; // cuda::LaunchPBTAtHypotheses, the kernel EvaluateBoundaryPBT runs
  int  team = 1;        // lanes per hypothesis: 1, 2, 4, 8 or 16
  bool packed = false;  // PBTSteerableLearner records
  int  minBlocks = 0;   // __launch_bounds__' resident 128-thread blocks per multiprocessor (0, 8, 10)

  /** "baseline", or "t<team>[p][b<minBlocks>]" (e.g. t4, t8p, t8pb10); throws canopy::Error otherwise. */
  static BoundaryKernelVariant Parse(const std::string & name);
  std::string                  Name() const;
};

/** The kernel SteerableResponseEngine::EvaluateBoundaryPBT runs unless told otherwise: the one line
 * to change when a measurement picks another variant (docs/BENCHMARKS.md, boundary detection). t8pb8:
 * 8 lanes per hypothesis, packed learner records, 8 resident blocks; on the H100 1.372 ms against the
 * baseline's 2.248 ms for 76,896 hypotheses, scores bit for bit the baseline's (2026-11-24). */
constexpr BoundaryKernelVariant kDefaultBoundaryKernel{ false, 8, true, 8 };

/** Every built variant, baseline first. */
std::vector<BoundaryKernelVariant>
BuiltBoundaryKernelVariants();

namespace cuda
{
/** What the device's compiled kernel of a variant uses (cudaFuncGetAttributes) and how many of its
 * 128-thread blocks fit on a multiprocessor. */
struct KernelResources
{
  int registers = 0;
  int localBytes = 0;
  int blocksPerMultiprocessor = 0;
};
KernelResources
BoundaryVariantResources(const BoundaryKernelVariant & variant);

/** out[h] = PbtPosteriorOfHypothesis(tree, func, hypotheses[h]) by the variant's kernel; device
 * pointers throughout; `packed` (device copy of PackSteerableLearners for tree.learners and
 * func.features) is needed by packed variants only. Enqueued on `stream`, no synchronisation. */
void
LaunchBoundaryPBTVariant(const BoundaryKernelVariant & variant,
                         const PBTView &               tree,
                         const BoundaryFeatureFunc &   func,
                         const PBTSteerableLearner *   packed,
                         const BoundaryHypothesis *    hypotheses,
                         std::int64_t                  count,
                         float *                       out,
                         StreamHandle                  stream);
} // namespace cuda

} // namespace canopy
