// A probabilistic boosting tree evaluated at a list of hypotheses, for any feature family (Birkbeck
// et al. Fig. 2: pbt_evaluate_tree<feature_func>). The traversal is PbtPosteriorStack (PBTFlat.h),
// the one the dense Haar evaluation runs too; a feature family only says how to compute the response
// of feature f at a hypothesis. A family is a plain-data functor, copied by value into the kernel:
//
//   struct MyFeatureFunc
//   {
//     using Hypothesis = ...;                                          // plain data
//     using Prepared = ...;                                            // what every response reads
//     CANOPY_HD Prepared Prepare(const Hypothesis & h) const;          // once per hypothesis
//     CANOPY_HD float Response(const Prepared & p, int f) const;       // response of feature f
//     CANOPY_HD float operator()(const Hypothesis & h, int f) const;   // Response(Prepare(h), f)
//   };
//
// Prepare runs once per hypothesis, before the traversal, not once per weak learner: what depends on
// the hypothesis alone (the boundary family's displaced vertex frame, read from a per-vertex array)
// is computed and loaded once and kept in registers. Response(Prepare(h), f) is bit for bit what
// operator()(h, f) returns, so scores do not depend on where the work is done.
//
// Families today: Haar features at voxels (position detection, voxel classification) and steerable
// features at poses (orientation and scale hypotheses; later mesh boundaries with the vertex frame
// as the pose: BoundaryFeatureFunc). A new family is a functor here plus one instantiation line in PBTHypothesesCPU.cxx
// and one in cuda/PBTHypotheses.cu.
#pragma once

#include "canopy/HaarFeature.h"
#include "canopy/IntegralVolume.h"
#include "canopy/PBTFlat.h"
#include "canopy/SteerableFeature.h"

#include <cstdint>

namespace canopy
{

/** Stack entries per hypothesis; models are limited to depth kPBTMaxDepth = 30 (PBTModel::Validate). */
constexpr int kPBTHypothesisStack = 32;

/** Haar features at voxels of an integral volume (the family of the voxel classifier). */
struct HaarFeatureFunc
{
  using Hypothesis = VoxelIndex3;
  using Prepared = VoxelIndex3;
  IntegralVolumeView        volume;
  const HaarFeatureVoxels * features = nullptr;

  CANOPY_HD Prepared Prepare(const VoxelIndex3 & p) const { return p; }
  CANOPY_HD float    Response(const VoxelIndex3 & p, int f) const
  {
    return static_cast<float>(HaarResponse(volume, features[f], p.x, p.y, p.z));
  }
  CANOPY_HD float operator()(const VoxelIndex3 & p, int f) const { return Response(p, f); }
};

/** Steerable features (Table 1) at pose hypotheses, on a pyramid. */
struct SteerableFeatureFunc
{
  using Hypothesis = SteerablePose;
  using Prepared = SteerablePose;
  SteerablePyramidView     pyramid;
  SteerableGrid            grid;
  const SteerableFeature * features = nullptr;

  CANOPY_HD Prepared Prepare(const SteerablePose & pose) const { return pose; }
  CANOPY_HD float    Response(const SteerablePose & pose, int f) const
  {
    return SteerableResponse(pyramid, grid, pose, features[f]);
  }
  CANOPY_HD float operator()(const SteerablePose & pose, int f) const { return Response(pose, f); }
};

/** A candidate boundary position (issue 10 part 2): vertex `vertex` of a mesh moved by offsetMm along
 * its frame's first axis, the vertex normal. */
struct BoundaryHypothesis
{
  std::int32_t vertex;
  float        offsetMm;
};

/** A vertex frame moved by offsetMm along its first axis (d, the normal): the pose whose steerable
 * features a boundary PBT reads. Training builds its poses with this too, so training responses and
 * scores sample the same points. */
CANOPY_HD SteerablePose
DisplacedBoundaryFrame(const SteerablePose & frame, float offsetMm)
{
  SteerablePose pose = frame;
  for (int k = 0; k < 3; ++k)
  {
    pose.center[k] = frame.center[k] + offsetMm * frame.axes[0][k];
  }
  return pose;
}

/** Steerable features at displaced vertex frames (mesh boundary detection, Birkbeck §4.3): one frame
 * per vertex (normal as the first axis), hypotheses name a vertex and an offset, so all vertices x
 * displacements are scored in one launch without a pose per hypothesis. */
struct BoundaryFeatureFunc
{
  using Hypothesis = BoundaryHypothesis;
  using Prepared = SteerablePose; // the displaced frame: loaded and moved once per hypothesis
  SteerablePyramidView     pyramid;
  SteerableGrid            grid;
  const SteerableFeature * features = nullptr;
  const SteerablePose *    frames = nullptr; // one per vertex

  CANOPY_HD Prepared Prepare(const BoundaryHypothesis & h) const
  {
    return DisplacedBoundaryFrame(frames[h.vertex], h.offsetMm);
  }
  CANOPY_HD float Response(const SteerablePose & pose, int f) const
  {
    return SteerableResponse(pyramid, grid, pose, features[f]);
  }
  CANOPY_HD float operator()(const BoundaryHypothesis & h, int f) const { return Response(Prepare(h), f); }
};

/** Which fields of a PoseProductFeatureFunc hypothesis come from its variant (the rest from its parent). */
enum PoseProductFields : int
{
  kPoseFromVariantAxes = 1,
  kPoseFromVariantScale = 2
};

/** Steerable features at the hypotheses of a marginal-space stage, parents x variants, without a pose
 * list: hypothesis h is parent h / numVariants with, from variant h % numVariants, its axes
 * (kPoseFromVariantAxes: the orientation stage, centres x orientations) and/or its scale
 * (kPoseFromVariantScale: the scale stage, oriented poses x sizes). Prepare assembles the pose from
 * the two float poses, field by field, so it equals the pose the host would have listed. */
struct PoseProductFeatureFunc
{
  using Hypothesis = int64_t; // the hypothesis' index
  using Prepared = SteerablePose;
  SteerablePyramidView     pyramid;
  SteerableGrid            grid;
  const SteerableFeature * features = nullptr;
  const SteerablePose *    parents = nullptr;
  const SteerablePose *    variants = nullptr;
  int64_t                  numVariants = 1;
  int                      fromVariant = 0; // PoseProductFields

  CANOPY_HD Prepared Prepare(int64_t h) const
  {
    const SteerablePose & parent = parents[h / numVariants];
    const SteerablePose & variant = variants[h % numVariants];
    SteerablePose         pose = parent;
    for (int a = 0; a < 3; ++a)
    {
      for (int k = 0; k < 3; ++k)
      {
        pose.axes[a][k] = (fromVariant & kPoseFromVariantAxes) ? variant.axes[a][k] : parent.axes[a][k];
      }
      pose.scale[a] = (fromVariant & kPoseFromVariantScale) ? variant.scale[a] : parent.scale[a];
    }
    return pose;
  }
  CANOPY_HD float Response(const SteerablePose & pose, int f) const
  {
    return SteerableResponse(pyramid, grid, pose, features[f]);
  }
  CANOPY_HD float operator()(int64_t h, int f) const { return Response(Prepare(h), f); }
};

/** The responseOf(f) PbtPosteriorStack asks for: a family bound to one prepared hypothesis. */
template<typename TFeatureFunc>
struct PBTHypothesisResponse
{
  const TFeatureFunc &                  func;
  const typename TFeatureFunc::Prepared prepared;
  CANOPY_HD float                       operator()(int f) const { return func.Response(prepared, f); }
};

/** p(+1 | hypothesis) by Algorithm 2. The tree must be valid and its depth < kPBTHypothesisStack - 1. */
template<typename TFeatureFunc>
CANOPY_HD float
PbtPosteriorOfHypothesis(const PBTView &                           tree,
                         const TFeatureFunc &                      func,
                         const typename TFeatureFunc::Hypothesis & hypothesis)
{
  PBTHypothesisResponse<TFeatureFunc> responseOf{ func, func.Prepare(hypothesis) };
  return PbtPosteriorStack<kPBTHypothesisStack>(tree, responseOf);
}

/** out[h] = p(+1 | hypotheses[h]) for h < count; hypotheses split among `threads` workers (<= 0:
 * ITK's default), each posterior computed by one thread, so results do not depend on the thread
 * count. Host pointers throughout (tree, the family's data, hypotheses, out). */
template<typename TFeatureFunc>
void
EvaluatePBTAtHypothesesCPU(const PBTView &                           tree,
                           const TFeatureFunc &                      func,
                           const typename TFeatureFunc::Hypothesis * hypotheses,
                           std::int64_t                              count,
                           float *                                   out,
                           int                                       threads = 0);

/** out[h] = p(+1 | hypothesis h) for the hypotheses 0..count-1 of a family whose Hypothesis is its
 * index (PoseProductFeatureFunc): nothing to list or upload. Same threading as above. */
template<typename TFeatureFunc>
void
EvaluatePBTAtHypothesisRangeCPU(const PBTView &      tree,
                                const TFeatureFunc & func,
                                std::int64_t         count,
                                float *              out,
                                int                  threads = 0);

namespace cuda
{
/** Device pointers; one thread per hypothesis index. Enqueued on `stream`, no synchronisation. */
template<typename TFeatureFunc>
void
LaunchPBTAtHypothesisRange(const PBTView &      tree,
                           const TFeatureFunc & func,
                           std::int64_t         count,
                           float *              out,
                           StreamHandle         stream);

/** The same on the device, one thread per hypothesis (the paper's Fig. 2 kernel): every pointer
 * (tree.nodes/learners/tables, the family's data, hypotheses, out) is a device pointer. Enqueued on
 * `stream`, no synchronisation. Compiled without FMA contraction, so posteriors round as on the CPU.
 * (A warp-synchronous variant, a warp expanding each node for 32 neighbouring hypotheses, was measured
 * slower on boundary lists, 2.502 against 2.236 ms on the H100, and removed: docs/BENCHMARKS.md.) */
template<typename TFeatureFunc>
void
LaunchPBTAtHypotheses(const PBTView &                           tree,
                      const TFeatureFunc &                      func,
                      const typename TFeatureFunc::Hypothesis * hypotheses,
                      std::int64_t                              count,
                      float *                                   out,
                      StreamHandle                              stream);
} // namespace cuda

} // namespace canopy
