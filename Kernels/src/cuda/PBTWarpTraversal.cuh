// Warp-synchronous PBT traversal (device only; PBTEvaluation.h, PBTTraversal::WarpSynchronous): each
// thread runs Algorithm 2 on its own stack, in its own order and with its own arithmetic (so its
// posterior is PbtPosteriorStack's, bit for bit), but the warp chooses which node is expanded next:
// the lowest-numbered node on top of any thread's stack, expanded by every thread holding it. The
// threads then evaluate the same weak learners together: one learner, feature and table row read per
// warp, no divergence on the feature type, and gathers that coalesce when the threads' samples lie
// close together (neighbouring voxels, or a vertex's displacements along its normal). With nodes
// numbered in preorder (PBTNodesInPreorder) each node is expanded at most once per warp. Shared by
// the dense Haar kernel (PBTEvaluation.cu) and the hypothesis kernels (PBTHypotheses.cu).
#pragma once

#include "canopy/PBTFlat.h"

#include <climits>

namespace canopy::cuda
{

/** The minimum of `value` over the full warp: one instruction from sm_80 on; a shuffle butterfly on
 * sm_75 (T4), which has no __reduce_min_sync. Integer min: both give the same answer. */
__device__ __forceinline__ int
WarpMin(int value)
{
#if __CUDA_ARCH__ >= 800
  return __reduce_min_sync(0xffffffffu, value);
#else
  for (int offset = 16; offset > 0; offset >>= 1)
  {
    value = min(value, __shfl_xor_sync(0xffffffffu, value, offset));
  }
  return value;
#endif
}

/** p(+1 | x) of this thread by Algorithm 2, the warp choosing the node expanded next. Every thread of
 * the warp must call it (inactive ones with active = false: they only take part in the vote). Groups
 * of fewer lanes choosing their own nodes expand more nodes per warp and gather no fewer lines
 * (canopyBenchmarkBoundary's replay), so the whole warp decides. */
template<int kMaxStack, typename TResponseOf>
__device__ __forceinline__ float
PbtPosteriorWarpSynchronous(const PBTView & tree, TResponseOf & responseOf, bool active)
{
  PBTStackEntry stack[kMaxStack];
  int           size = active ? 1 : 0;
  stack[0] = PBTStackEntry{ 0, 1.0f };
  float total = 0.0f;
  while (true)
  {
    const int top = size > 0 ? stack[size - 1].node : INT_MAX;
    const int next = WarpMin(top);
    if (next == INT_MAX)
    {
      break;
    }
    if (top == next)
    {
      const PBTStackEntry entry = stack[--size];
      const PBTNodeFlat   node = tree.nodes[entry.node];
      if (IsLeaf(node))
      {
        total += entry.weight * node.empiricalPositive;
      }
      else
      {
        const float p = StrongClassifierProbability(tree, node, responseOf);
        PbtExpandNode(tree,
                      node,
                      entry.weight,
                      p,
                      total,
                      [&](int child, float w) {
                        stack[size++] = PBTStackEntry{ child, w };
                      });
      }
    }
  }
  return total;
}

} // namespace canopy::cuda
