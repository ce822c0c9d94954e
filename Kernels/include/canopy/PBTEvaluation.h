// Dense evaluation of a probabilistic boosting tree with Haar features: the posterior p(+1|x) at every
// voxel of a block, by Algorithm 2 (PbtPosteriorStack, PBTFlat.h). CPU reference and CUDA launcher
// compute the same function through the same headers; only the memory each reads from differs.
#pragma once

#include "canopy/HaarEvaluation.h"
#include "canopy/IntegralVolume.h"
#include "canopy/PBTFlat.h"

#include <cstdint>
#include <vector>

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

/** The nodes renumbered in preorder (node, left subtree, right subtree: the order PbtPosteriorStack
 * visits them), children remapped; the root stays 0 and learners are untouched. The tree must be
 * valid. Warp-synchronous GPU evaluation visits each node once per warp only in this numbering. */
std::vector<PBTNodeFlat>
PBTNodesInPreorder(const PBTNodeFlat * nodes, int numNodes);

/** A weak learner with its feature's cuboid count, for one 16-byte and one 8-byte load. */
struct alignas(16) PBTPackedLearner
{
  int   feature;
  int   numBins;
  float lo;
  float invBinWidth;
  int   tableOffset;
  int   numCuboids;
  int   unused[2];
};

/** One cuboid of a resolved feature in 16 bytes (one load): offsets as int16. */
struct alignas(16) PBTPackedCuboid
{
  std::int16_t lo[3];
  std::int16_t hi[3];
  float        weightPerVoxel;
};

/** learners[i] with features[learners[i].feature].numCuboids. */
std::vector<PBTPackedLearner>
PackPBTLearners(const PBTWeakLearnerFlat * learners, int numLearners, const HaarFeatureVoxels * features,
                int numFeatures);

/** kMaxHaarCuboids entries per feature (unused ones zero). Throws canopy::Error naming the feature when
 * an offset does not fit int16 (such features need the unpacked kernel). */
std::vector<PBTPackedCuboid>
PackHaarCuboids(const HaarFeatureVoxels * features, int numFeatures);

namespace cuda
{
/** Where the kernel keeps the tree while it runs (features always through the read-only cache). */
enum class PBTTreePlacement : int
{
  Global = 0,     // nodes, learners, tables and features in global memory
  SharedNodes = 1 // nodes and weak learners staged in shared memory when they fit; else as Global
};

/** How the threads of a warp walk the tree. Measured on an H200 (docs/BENCHMARKS.md), Independent was
 * faster for both a trained tree (threads of a warp mostly share their path, so they already read the
 * same features together) and a random one (paths differ, and the warp-synchronous union is long). */
enum class PBTTraversal : int
{
  /** Each step the warp expands the lowest-numbered node on top of any of its threads' stacks, with
   * every thread holding that node: threads evaluate the same weak learners together (coalesced
   * integral-volume reads, no divergence). Each thread still follows PbtPosteriorStack's order and
   * arithmetic exactly; with preorder numbering (PBTNodesInPreorder) a warp visits each node once. */
  WarpSynchronous = 0,
  /** Every thread runs PbtPosteriorStack on its own (the paper's Fig. 2). */
  Independent = 1
};

struct PBTLaunchOptions
{
  PBTTreePlacement placement = PBTTreePlacement::Global;
  PBTTraversal     traversal = PBTTraversal::Independent;
  /** The grouped kernel (Independent traversal, tree in global memory, no corners, a table of at most
   * INT_MAX entries; otherwise the fields below are ignored): each thread takes voxelsPerThread
   * (1, 2 or 4) consecutive z-planes of its (x, y), expands the lowest-numbered node on top of any of
   * their stacks for every voxel holding it (with preorder numbering each node once), so voxels whose
   * paths agree share each learner, feature and table-row read; box sums use 32-bit indices and all
   * tree reads go through the read-only cache. Each voxel keeps PbtPosteriorStack's order and
   * arithmetic exactly. voxelsPerThread = 1 without compactIndexing is the Fig. 2 kernel. Defaults:
   * the fastest on an H200 on both the trained and the random tree (docs/BENCHMARKS.md, "PBT"); more
   * voxels per thread won only on the trained tree, by at most 1.5%, and lost 17-39% on the random.
   * The packed layout (below) gained a further 4% (trained) to 25% (random). */
  int  voxelsPerThread = 1;
  bool compactIndexing = true; // the grouped kernel also with one voxel per thread
  /** 0: the compiler's register count; otherwise __launch_bounds__ asks for this many resident
   * 128-thread blocks per multiprocessor (0, 6 or 8 are built: 6 caps registers at 80, 8 at 64). */
  int minBlocksPerMultiprocessor = 0;
  /** Device copies of PackPBTLearners / PackHaarCuboids for this tree and feature bank: the grouped
   * kernel (also with voxelsPerThread = 1) then reads those instead of tree.learners and features. */
  const PBTPackedLearner * packedLearners = nullptr;
  const PBTPackedCuboid *  packedCuboids = nullptr;
};

/** Device pointers throughout: tree.nodes/learners/tables, volume.sums, features, corners, out. One
 * thread per voxel of `block` (per voxelsPerThread voxels in the grouped kernel), out[p] as in
 * EvaluatePBTDenseCPU; numLearners is the length of tree.learners. `corners` (may be null) holds
 * MakeHaarFeatureCorners(volume, features[f]) for every feature: it depends on the
 * volume's nx and ny only, so one array serves every z-slab of a volume. Enqueued on `stream`, no
 * synchronisation. */
void
LaunchPBTDense(const PBTView & tree, int numLearners, const IntegralVolumeView & volume,
               const HaarFeatureVoxels * features, const HaarFeatureCorners * corners, const VoxelBlock & block,
               float * out, StreamHandle stream, const PBTLaunchOptions & options = {});
} // namespace cuda

} // namespace canopy
