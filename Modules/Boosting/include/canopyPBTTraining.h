// Training a probabilistic boosting tree (Tu 2005) with an AdaBoost strong classifier per node
// (Birkbeck et al. Sec. 2.1), on a matrix of precomputed feature responses, plus the recursive
// reference evaluation (Algorithm 1) and evaluation of a whole response matrix.
#pragma once

#include "canopyPBTModel.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace canopy
{

class Collective; // canopy/Collective.h

/** Stump: discrete AdaBoost on thresholds; Histogram: real AdaBoost on binned responses. */
enum class WeakLearnerKind
{
  Stump,
  Histogram
};

struct PBTTrainingOptions
{
  int             maxDepth = 6;            // levels below the root (0: the root is a leaf)
  int             minSamplesToSplit = 100; // a node whose effective sample count (Σw)²/Σw² is below becomes a leaf
  double          purityStop = 0.995;      // leaf when q_N(+1) >= purityStop or <= 1 - purityStop
  int             weakLearnersPerNode = 40;
  int             featureCandidatesPerRound = 200; // random subset of features tried per boosting round (0 = all)
  WeakLearnerKind kind = WeakLearnerKind::Histogram;
  int             histogramBins = 64; // 2..256; also the threshold grid of stumps
  double histogramSmoothing = 0.1;    // real AdaBoost's delta = histogramSmoothing / histogramBins (weights sum to 1)
  double earlyStopError = 0.0;        // stop adding learners once the strong classifier's weighted error <= this
  double softBand = 0.1;              // samples with |q - 0.5| <= softBand go to both children (Tu 2005)
  float  epsilon1 = 1e-6f;            // stored in the model for evaluation
  float  epsilon2 = 0.1f;
  std::uint64_t seed = 1;
  int           threads = 0; // <= 0: ITK's global default
  /** Null: one process. Else this process holds a shard of the samples (the global sample list cut
   * into consecutive pieces in rank order) and trains together with the other processes of
   * `shards`, which all call TrainPBT with the same options: every sum over samples is an exact
   * integer reduction (canopy/ExactSum.h), so every process returns the model one process grows on
   * the concatenated samples, bit for bit. */
  Collective * shards = nullptr;
};

/** Feature-major responses: values[f * numSamples + s]. */
struct ResponseMatrix
{
  int                numFeatures = 0;
  std::int64_t       numSamples = 0;
  std::vector<float> values;

  float at(int f, std::int64_t s) const
  {
    return values[static_cast<std::size_t>(f) * static_cast<std::size_t>(numSamples) + static_cast<std::size_t>(s)];
  }
};

/** fraction in [0, 1]; stage names the current step. */
using TrainingProgress = std::function<void(double fraction, const std::string & stage)>;

/** Trains on labels (+1 / -1, one per sample) and optional per-sample weights (empty = uniform; zero
 * weights drop a sample). Returns a PBTModel whose learners index features 0..numFeatures-1 of the
 * matrix, nodes in breadth-first order; the caller fills model.features / sampleBox and calls
 * CompactFeatures(). Deterministic for a given seed, independent of the thread count. Throws
 * canopy::Error on inconsistent sizes, labels, weights or options. */
PBTModel
TrainPBT(const ResponseMatrix &           responses,
         const std::vector<std::int8_t> & labels,
         const std::vector<float> &       weights,
         const PBTTrainingOptions &       options,
         const TrainingProgress &         progress = {});

namespace detail
{
template<typename TResponseOf>
float
PbtPosteriorRecursiveAt(const PBTView & tree, int index, TResponseOf & responseOf)
{
  const PBTNodeFlat & node = tree.nodes[index];
  if (IsLeaf(node))
  {
    return node.empiricalPositive;
  }
  // A missing child is a leaf carrying its parent's empirical distribution (as in PbtPosteriorStack).
  auto posterior = [&](int child)
  { return child >= 0 ? PbtPosteriorRecursiveAt(tree, child, responseOf) : node.empiricalPositive; };
  const float p = StrongClassifierProbability(tree, node, responseOf);
  if (p > 1.0f - tree.epsilon1)
  {
    return posterior(node.right);
  }
  if (p < tree.epsilon1)
  {
    return posterior(node.left);
  }
  if (p > 0.5f + tree.epsilon2)
  {
    return (1.0f - p) * ChildEmpirical(tree, node.left, node) + p * posterior(node.right);
  }
  if (p < 0.5f - tree.epsilon2)
  {
    return (1.0f - p) * posterior(node.left) + p * ChildEmpirical(tree, node.right, node);
  }
  return (1.0f - p) * posterior(node.left) + p * posterior(node.right);
}
} // namespace detail

/** Algorithm 1 (recursive reference of PbtPosteriorStack). The tree must be validated (depth <=
 * kPBTMaxDepth, acyclic), which bounds the recursion. responseOf(featureIndex) -> float. */
template<typename TResponseOf>
float
PbtPosteriorRecursive(const PBTView & tree, TResponseOf & responseOf)
{
  return detail::PbtPosteriorRecursiveAt(tree, 0, responseOf);
}

/** Posterior of every sample of a matrix (stack-based, Algorithm 2); the learners' feature indices
 * index the matrix's features. The tree structure is validated first (canopy::Error on a bad tree
 * or a feature index outside the matrix). */
std::vector<float>
EvaluatePBTOnMatrix(const PBTModel & model, const ResponseMatrix & responses, int threads = 0);

} // namespace canopy
