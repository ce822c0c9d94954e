// The floor of steerable hypothesis scoring (issues 9 and 10, "Speed"): what one hypothesis costs by
// the code, counted on the CPU with the traversal the kernels run (PbtPosteriorOfHypothesis's
// PbtPosteriorStack over the family's Prepare/Response). Each weak learner evaluated reads its record
// (20 B), its feature (5 B), the 8 voxels of one trilinear sample (8 x 16 B) and one table entry (4 B):
// 157 B, of which 128 B are gathers from the pyramid; each expanded node reads its record (28 B). The
// arithmetic per learner is about 130 operations (grid point 21, sample index 15, trilinear 84, the
// feature value <= 10; atan2 and log more). A benchmark divides these by its measured time to report
// the load and operation rates the kernel reaches.
#pragma once

#include "canopy/PBTHypotheses.h"

#include <algorithm>
#include <cstdint>

namespace canopy::bench
{

constexpr double kSteerableBytesPerLearner =
  sizeof(PBTWeakLearnerFlat) + sizeof(SteerableFeature) + 8 * sizeof(SteerableVoxel) + sizeof(float);
constexpr double kSteerableOpsPerLearner = 130.0;

struct HypothesisWork
{
  double learnersPerHypothesis = 0.0; // weak learners evaluated, mean over the sample
  double nodesPerHypothesis = 0.0;    // inner nodes expanded
  double bytesPerHypothesis = 0.0;    // learners x 157 B + nodes x 28 B
  double opsPerHypothesis = 0.0;      // learners x 130
};

/** Counts over up to `sample` hypotheses spread evenly over [0, count). `tree` and the family's data
 * must be host pointers. */
template<typename TFeatureFunc>
HypothesisWork
CountHypothesisWork(const PBTView &                           tree,
                    const TFeatureFunc &                      func,
                    const typename TFeatureFunc::Hypothesis * hypotheses,
                    std::int64_t                              count,
                    std::int64_t                              sample = 4000)
{
  HypothesisWork     work;
  const std::int64_t n = std::min(count, sample);
  if (n <= 0)
    return work;
  std::int64_t learners = 0;
  for (std::int64_t s = 0; s < n; ++s)
  {
    const auto prepared = func.Prepare(hypotheses[s * count / n]);
    auto       responseOf = [&](int f)
    {
      ++learners;
      return func.Response(prepared, f);
    };
    PbtPosteriorStack<kPBTHypothesisStack>(tree, responseOf);
  }
  // Inner nodes expanded = learners / learners per node when every node has the same count (the
  // benchmarks' random trees); otherwise the mean learners per inner node of the tree.
  std::int64_t inner = 0, innerLearners = 0;
  for (int i = 0; i < tree.numNodes; ++i)
    if (!IsLeaf(tree.nodes[i]))
    {
      ++inner;
      innerLearners += tree.nodes[i].numLearners;
    }
  const double perNode = inner > 0 ? double(innerLearners) / inner : 1.0;
  work.learnersPerHypothesis = double(learners) / n;
  work.nodesPerHypothesis = perNode > 0 ? work.learnersPerHypothesis / perNode : 0.0;
  work.bytesPerHypothesis =
    work.learnersPerHypothesis * kSteerableBytesPerLearner + work.nodesPerHypothesis * sizeof(PBTNodeFlat);
  work.opsPerHypothesis = work.learnersPerHypothesis * kSteerableOpsPerLearner;
  return work;
}

} // namespace canopy::bench
