// Flat, read-only layout of a probabilistic boosting tree (Birkbeck et al. Fig. 3) and its evaluation
// (Algorithm 1, recursive; Algorithm 2, stack-based), shared by the CPU reference and CUDA kernels.
// Evaluation is templated on the feature function, so other feature types reuse it unchanged.
#pragma once

#include "canopy/HostDevice.h"

#include <cmath>

namespace canopy
{

/** A weak learner reads one feature response r and returns a real confidence from a table:
 *   h(r) = tables[tableOffset + clamp(floor((r - lo) * invBinWidth), 0, numBins - 1)].
 * Histogram learners (real AdaBoost) use numBins = 64 over their response range; threshold stumps
 * (discrete AdaBoost) use numBins = 2 with lo = threshold - 1, invBinWidth = 1, table {-a, +a} or {+a, -a}. */
struct PBTWeakLearnerFlat
{
  int   feature;     // index into the model's feature bank
  int   numBins;
  float lo;
  float invBinWidth;
  int   tableOffset; // into the tables array
};

/** A node: its AdaBoost strong classifier (learners [firstLearner, firstLearner + numLearners)),
 * the calibration q(+1|x) = 1 / (1 + exp(-(calibrationScale * F(x) + calibrationOffset))) of the
 * summed confidence F, the empirical distribution q_N(+1) of its training samples, and its children
 * (-1 for none; a node is a leaf when both are -1). */
struct PBTNodeFlat
{
  int   firstLearner;
  int   numLearners;
  float calibrationScale;
  float calibrationOffset;
  float empiricalPositive;
  int   left;
  int   right;
};

struct PBTView
{
  const PBTNodeFlat *        nodes = nullptr; // nodes[0] is the root
  const PBTWeakLearnerFlat * learners = nullptr;
  const float *              tables = nullptr;
  int                        numNodes = 0;
  float                      epsilon1 = 1e-6f; // single descent when q > 1 - e1 or q < e1 (0.5: never fuzzy)
  float                      epsilon2 = 0.1f;  // within 0.5 +- e2 both children are descended
};

CANOPY_HD bool
IsLeaf(const PBTNodeFlat & node)
{
  return node.left < 0 && node.right < 0;
}

/** The table bin of a response: kernels that read the table themselves (through the read-only cache)
 * share it with WeakLearnerOutput. */
CANOPY_HD int
WeakLearnerBin(const PBTWeakLearnerFlat & learner, float response)
{
  const float position = (response - learner.lo) * learner.invBinWidth;
  // NaN responses land in bin 0 (comparisons with NaN are false). Clamping before the cast keeps
  // huge or infinite positions defined (an out-of-range float->int cast is UB; x86 gives INT_MIN)
  // and every read in range.
  const float top = static_cast<float>(learner.numBins - 1);
  return position >= 0.0f ? static_cast<int>(position < top ? position : top) : 0;
}

CANOPY_HD float
WeakLearnerOutput(const PBTView & tree, const PBTWeakLearnerFlat & learner, float response)
{
  return tree.tables[learner.tableOffset + WeakLearnerBin(learner, response)];
}

/** The node's calibration of its summed confidence F (learner outputs added in learner order). */
CANOPY_HD float
CalibratedProbability(const PBTNodeFlat & node, float sum)
{
  const float z = node.calibrationScale * sum + node.calibrationOffset;
  return 1.0f / (1.0f + expf(-z));
}

/** q_N(+1 | x): the node's calibrated strong-classifier probability. responseOf(featureIndex) -> float. */
template <typename TResponseOf>
CANOPY_HD float
StrongClassifierProbability(const PBTView & tree, const PBTNodeFlat & node, TResponseOf & responseOf)
{
  float sum = 0.0f;
  for (int i = 0; i < node.numLearners; ++i)
  {
    const PBTWeakLearnerFlat learner = tree.learners[node.firstLearner + i];
    sum += WeakLearnerOutput(tree, learner, responseOf(learner.feature));
  }
  return CalibratedProbability(node, sum);
}

/** Empirical q(+1) of a child; a missing child falls back to its parent's. */
CANOPY_HD float
ChildEmpirical(const PBTView & tree, int child, const PBTNodeFlat & parent)
{
  return child >= 0 ? tree.nodes[child].empiricalPositive : parent.empiricalPositive;
}

struct PBTStackEntry
{
  int   node;
  float weight;
};

/** One expansion of Algorithm 2: inner node `node`, reached with `weight`, whose strong classifier gave
 * p. Children to descend go to push(child, weight); the mass of children not descended (their
 * empirical q, or the parent's for a missing child) is added to `total`. Kernels that schedule the
 * traversal themselves (warp-synchronous GPU evaluation) share this step with PbtPosteriorStack. */
template <typename TPush>
CANOPY_HD void
PbtExpandNode(const PBTView & tree, const PBTNodeFlat & node, float weight, float p, float & total, TPush && push)
{
  // A missing child is replaced by its empirical value: push nothing, add it now.
  auto visit = [&](int child, float w) {
    if (child >= 0)
    {
      push(child, w);
    }
    else
    {
      total += w * node.empiricalPositive;
    }
  };
  if (p > 1.0f - tree.epsilon1)
  {
    visit(node.right, weight);
  }
  else if (p < tree.epsilon1)
  {
    visit(node.left, weight);
  }
  else if (p > 0.5f + tree.epsilon2)
  {
    total += weight * (1.0f - p) * ChildEmpirical(tree, node.left, node);
    visit(node.right, weight * p);
  }
  else if (p < 0.5f - tree.epsilon2)
  {
    total += weight * p * ChildEmpirical(tree, node.right, node);
    visit(node.left, weight * (1.0f - p));
  }
  else
  {
    visit(node.right, weight * p);
    visit(node.left, weight * (1.0f - p));
  }
}

/** Algorithm 2: the posterior p(+1|x) without recursion, with a per-thread stack of kMaxStack entries;
 * probabilityOf(node) gives an inner node's q_N(+1|x) (StrongClassifierProbability, or kernels that
 * compute the same sum with several threads: PBTBoundaryVariants.cu).
 * Depth-first traversal needs at most depth + 1 entries; trees deeper than kMaxStack - 1 are rejected
 * when a model is loaded, so the stack cannot overflow. Missing children count as leaves of the parent.
 * Nodes are visited in preorder (node, left subtree, right subtree). */
template <int kMaxStack, typename TProbabilityOf>
CANOPY_HD float
PbtPosteriorStackWith(const PBTView & tree, TProbabilityOf && probabilityOf)
{
  PBTStackEntry stack[kMaxStack];
  int           size = 1;
  stack[0] = PBTStackEntry{ 0, 1.0f };
  float total = 0.0f;
  while (size > 0)
  {
    const PBTStackEntry entry = stack[--size];
    const PBTNodeFlat   node = tree.nodes[entry.node];
    if (IsLeaf(node))
    {
      total += entry.weight * node.empiricalPositive;
      continue;
    }
    const float p = probabilityOf(node);
    PbtExpandNode(tree, node, entry.weight, p, total, [&](int child, float w) {
      stack[size++] = PBTStackEntry{ child, w };
    });
  }
  return total;
}

/** Algorithm 2 with each inner node's probability from StrongClassifierProbability. */
template <int kMaxStack, typename TResponseOf>
CANOPY_HD float
PbtPosteriorStack(const PBTView & tree, TResponseOf & responseOf)
{
  return PbtPosteriorStackWith<kMaxStack>(
    tree, [&](const PBTNodeFlat & node) { return StrongClassifierProbability(tree, node, responseOf); });
}

} // namespace canopy
