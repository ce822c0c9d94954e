// Dense evaluation of a probabilistic boosting tree with Haar features: the posterior p(+1|x) at every
// voxel of a block, by Algorithm 2 (PbtPosteriorStack, PBTFlat.h). CPU reference and CUDA launcher
// compute the same function through the same headers; only the memory each reads from differs.
#pragma once

#include "canopy/HaarEvaluation.h"
#include "canopy/IntegralVolume.h"
#include "canopy/PBTFlat.h"

#include <cstdint>

namespace canopy
{

/** Stack entries per voxel: trees deeper than kPBTEvaluationStack - 2 levels must be rejected
 * beforehand (PBTModel::Validate does, with kPBTMaxDepth = 30 and a stack of 32). */
constexpr int kPBTEvaluationStack = 32;

/** The feature function of the tree: the response of resolved Haar feature f at one voxel. */
struct HaarResponseAt
{
  IntegralVolumeView        volume;
  const HaarFeatureVoxels * features;
  int                       x, y, z;

  CANOPY_HD float operator()(int f) const
  {
    return static_cast<float>(HaarResponse(volume, features[f], x, y, z));
  }
};

/** Counts the calls it forwards: weak-learner evaluations actually performed (one response each). */
template <typename TResponseOf>
struct CountingResponse
{
  TResponseOf    inner;
  std::int64_t * count;
  float          operator()(int f) const
  {
    ++*count;
    return inner(f);
  }
};

/** out[p] = p(+1|x) for the voxels of `block` (volume coordinates; x fastest). threads <= 0: ITK's
 * default. The tree must be valid (PBTModel::Validate) and its depth < kPBTEvaluationStack - 1. */
void
EvaluatePBTDenseCPU(const PBTView & tree, const IntegralVolumeView & volume, const HaarFeatureVoxels * features,
                    const VoxelBlock & block, float * out, int threads = 0);

/** The same evaluation on one thread, counting the weak learners evaluated over the whole block
 * (the numerator of the benchmarks' evaluations per second). */
std::int64_t
CountPBTWeakLearnerEvaluationsCPU(const PBTView & tree, const IntegralVolumeView & volume,
                                  const HaarFeatureVoxels * features, const VoxelBlock & block);

namespace cuda
{
/** Where the kernel keeps the tree while it runs (both read through the read-only data cache). */
enum class PBTTreePlacement : int
{
  Global = 0,    // nodes, learners, tables and features in global memory, const __restrict__
  SharedNodes = 1 // nodes and weak learners copied to shared memory when they fit; else as Global
};

/** Device pointers throughout: tree.nodes/learners/tables, volume.sums, features, out. One thread per
 * voxel of `block`, out[p] as in EvaluatePBTDenseCPU; numLearners is the length of tree.learners.
 * Enqueued on `stream`, no synchronisation. */
void
LaunchPBTDense(const PBTView & tree, int numLearners, const IntegralVolumeView & volume,
               const HaarFeatureVoxels * features, const VoxelBlock & block, float * out, StreamHandle stream,
               PBTTreePlacement placement = PBTTreePlacement::Global);
} // namespace cuda

} // namespace canopy
