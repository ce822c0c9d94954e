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
#include <set>
#include <vector>

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

/** What the GPU schedules of a steerable hypothesis list cost, per warp of 32 consecutive hypotheses,
 * counted on the CPU by replaying each lane's traversal (PbtExpandNode, the step every kernel runs).
 * Lanes form groups of G consecutive lanes; each iteration, every group expands the lowest-numbered
 * node on top of any of its lanes' stacks, with every lane of the group holding it (preorder
 * numbering: each node once per group). G = 1 is the independent kernel (Fig. 2: iteration k expands
 * every lane's k-th popped node), G = 32 the warp-synchronous one. Iteration k runs the largest
 * learner count among the groups' k-th nodes; learner step i gathers the 8 corners of every lane
 * whose group's node has an i-th learner. A gather instruction costs the L1 one pass (wavefront) per
 * distinct 128-byte line its lanes touch; each trilinear sample is 8 such instructions (one per
 * corner). These counts are what a kernel's memory pipeline and issue slots must process,
 * independent of any timing. */
struct WarpScheduleWork
{
  static constexpr int kGroups = 6;                // G = 1, 2, 4, 8, 16, 32
  double               warps = 0;                  // warps replayed
  double               learnerSteps[kGroups] = {}; // per warp
  double               gatherLines[kGroups] = {};  // per warp: distinct lines summed over learner steps and corners
  double typesPerStep[kGroups] = {};       // mean distinct feature types (SteerableValue branches) per learner step
  double samplesPerHypothesis = 0;         // trilinear samples (= weak learners evaluated)
  double distinctSamplesPerHypothesis = 0; // distinct (level, grid point) among them
};

/** Replays up to `sampleWarps` warps spread evenly over the list. `tree` must be numbered in preorder
 * (PBTNodesInPreorder) and, like the family's data, in host memory. Steerable families only (Prepared
 * is a pose; the family has pyramid, grid and features). */
template<typename TFeatureFunc>
WarpScheduleWork
CountWarpSchedules(const PBTView &                           tree,
                   const TFeatureFunc &                      func,
                   const typename TFeatureFunc::Hypothesis * hypotheses,
                   std::int64_t                              count,
                   std::int64_t                              sampleWarps = 256)
{
  WarpScheduleWork   work;
  const std::int64_t totalWarps = (count + 31) / 32;
  const std::int64_t n = std::min(totalWarps, sampleWarps);
  if (n <= 0)
    return work;
  std::int64_t lanesSeen = 0, samples = 0, distinct = 0;
  for (std::int64_t s = 0; s < n; ++s)
  {
    const std::int64_t                           warp = s * totalWarps / n;
    const std::int64_t                           first = warp * 32, last = std::min(count, first + 32);
    const int                                    lanes = int(last - first);
    std::vector<typename TFeatureFunc::Prepared> prepared;
    std::vector<std::vector<int>>                popped(lanes); // node ids in the order each lane pops them
    for (int lane = 0; lane < lanes; ++lane)
    {
      prepared.push_back(func.Prepare(hypotheses[first + lane]));
      std::set<int> keys;
      auto          responseOf = [&](int f)
      {
        const SteerableFeature & feature = func.features[f];
        keys.insert((((feature.level << 8) | feature.z) << 8 | feature.y) << 8 | feature.x);
        ++samples;
        return func.Response(prepared.back(), f);
      };
      PBTStackEntry stack[kPBTHypothesisStack];
      int           size = 1;
      stack[0] = PBTStackEntry{ 0, 1.0f };
      float total = 0.0f;
      while (size > 0)
      {
        const PBTStackEntry entry = stack[--size];
        const PBTNodeFlat   node = tree.nodes[entry.node];
        popped[lane].push_back(entry.node);
        if (IsLeaf(node))
          continue;
        const float p = StrongClassifierProbability(tree, node, responseOf);
        PbtExpandNode(tree, node, entry.weight, p, total, [&](int child, float w) { stack[size++] = { child, w }; });
      }
      distinct += std::int64_t(keys.size());
      ++lanesSeen;
    }
    // The 128-byte line of corner c of learner `learner`'s sample for a lane (levels are separate buffers).
    auto lineOf = [&](int lane, int learner, int c)
    {
      const SteerableFeature & feature = func.features[tree.learners[learner].feature];
      float                    p[3];
      SteerableSamplePoint(prepared[lane], func.grid, feature, p);
      const SteerableCell cell = SteerableSampleCell(func.pyramid.levels[feature.level], p);
      const std::int64_t  at = cell.index + ((c & 1) ? cell.sx : 0) + ((c & 2) ? cell.sy : 0) + ((c & 4) ? cell.sz : 0);
      return (std::int64_t(feature.level) << 40) | (at * std::int64_t(sizeof(SteerableVoxel)) / 128);
    };
    for (int g = 0; g < WarpScheduleWork::kGroups; ++g)
    {
      const int group = 1 << g;
      // Per group of lanes: the nodes it expands, in order (G = 1: the lane's own pops).
      std::vector<std::vector<int>> sequence;
      for (int begin = 0; begin < lanes; begin += group)
      {
        std::set<int> nodes;
        for (int lane = begin; lane < std::min(lanes, begin + group); ++lane)
          nodes.insert(popped[lane].begin(), popped[lane].end());
        sequence.emplace_back(nodes.begin(), nodes.end());
        if (group == 1)
          sequence.back() = popped[begin];
      }
      std::size_t longest = 0;
      for (const auto & list : sequence)
        longest = std::max(longest, list.size());
      for (std::size_t k = 0; k < longest; ++k)
      {
        std::vector<std::pair<int, int>> holders; // (lane, node) pairs expanding an inner node now
        int                              most = 0;
        for (std::size_t q = 0; q < sequence.size(); ++q)
        {
          if (k >= sequence[q].size() || IsLeaf(tree.nodes[sequence[q][k]]))
            continue;
          const int node = sequence[q][k];
          most = std::max(most, tree.nodes[node].numLearners);
          for (int lane = int(q) * group; lane < std::min(lanes, int(q + 1) * group); ++lane)
            if (std::find(popped[lane].begin(), popped[lane].end(), node) != popped[lane].end())
              holders.push_back({ lane, node });
        }
        work.learnerSteps[g] += most;
        for (int i = 0; i < most; ++i)
        {
          std::set<int> types;
          for (const auto & [lane, node] : holders)
            if (i < tree.nodes[node].numLearners)
              types.insert(func.features[tree.learners[tree.nodes[node].firstLearner + i].feature].type);
          work.typesPerStep[g] += double(types.size());
        }
        for (int i = 0; i < most; ++i)
          for (int c = 0; c < 8; ++c)
          {
            std::set<std::int64_t> touched;
            for (const auto & [lane, node] : holders)
              if (i < tree.nodes[node].numLearners)
                touched.insert(lineOf(lane, tree.nodes[node].firstLearner + i, c));
            work.gatherLines[g] += double(touched.size());
          }
      }
    }
  }
  work.warps = double(n);
  for (int g = 0; g < WarpScheduleWork::kGroups; ++g)
  {
    work.learnerSteps[g] /= n;
    work.typesPerStep[g] /= std::max(1.0, work.learnerSteps[g] * n); // learnerSteps is per warp by now
    work.gatherLines[g] /= n;
  }
  work.samplesPerHypothesis = double(samples) / double(lanesSeen);
  work.distinctSamplesPerHypothesis = double(distinct) / double(lanesSeen);
  return work;
}

} // namespace canopy::bench
