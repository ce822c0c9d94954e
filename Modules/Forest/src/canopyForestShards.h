// Distributed forest training (ForestTrainingOptions::shards): where this process's samples sit in the
// global sample order, and the per-level counts that let every process take the decisions one process
// takes on all samples. Without shards the same code runs with one process owning everything.
//
// Global order. The samples of all processes, concatenated in rank order, are the one-process training
// set. A node's samples are, as in one process, the originals in ascending global index followed by
// the flipped mirrors in ascending index; a process's share of a node is a subsequence of that, its
// originals then its mirrors. So position p of a node belongs to the process whose originals (or
// mirrors) cover p, once the per-process counts of the node are known (ForestLevelCounts).
#pragma once

#include "canopy/Collective.h"
#include "canopy/ForestTrainingLaunch.h"
#include "canopyForestTraining.h"

#include <cstdint>
#include <random>
#include <vector>

namespace canopy::detail
{

class ForestShards
{
public:
  /** A collective call: every process passes its own sample count. `comm` may be null (one process). */
  ForestShards(Collective * comm, std::int64_t localSamples);

  bool         Distributed() const { return m_Comm != nullptr; }
  Collective * Comm() const { return m_Comm; }
  int          Rank() const { return m_Rank; }
  int          Size() const { return m_Size; }
  std::int64_t GlobalSamples() const { return m_Global; }
  std::int64_t LocalSamples() const { return m_Local; }

  /** The samples of a tree's bag (a partial Fisher-Yates over all global samples, so one process
   * draws the same bag) that this process holds, as local indices in ascending order. */
  std::vector<std::int32_t> LocalBag(std::mt19937_64 & rng, std::size_t bagSize) const;

private:
  Collective * m_Comm;
  int          m_Rank = 0, m_Size = 1;
  std::int64_t m_Local = 0, m_First = 0, m_Global = 0;
};

/** Per node of a level, summed over processes: class counts (mirrors included), and per process how
 * many originals and mirrors it holds, which places each process's samples in the node's order. */
class ForestLevelCounts
{
public:
  /** A collective call. labelOf(s) gives the label of local sample index s (mirrors included). */
  template<typename LabelOf>
  ForestLevelCounts(const ForestShards &                                   shards,
                    int                                                    numClasses,
                    const std::vector<const std::vector<std::int32_t> *> & nodes,
                    LabelOf                                                labelOf,
                    int                                                    threads);

  std::int64_t                 Total(int node) const { return m_Placement[node].total; }
  const ForestShardPlacement & Placement(int node) const { return m_Placement[node]; }
  const std::int64_t * Classes(int node) const { return m_Classes.data() + static_cast<std::size_t>(node) * m_C; }
  /** Local position in node `node`'s sample list of its global position p, or -1 when another process holds it. */
  std::int64_t LocalPosition(int node, std::int64_t p) const { return ForestShardLocalPosition(m_Placement[node], p); }

private:
  void Finish(const ForestShards & shards, std::vector<std::int64_t> & parts);

  int                               m_C;
  std::vector<std::int64_t>         m_Classes;
  std::vector<ForestShardPlacement> m_Placement;
};

/** Thresholds as PickForestThresholdsCPU picks them over all processes' samples: each round, the
 * process holding a pick's sample contributes the response's bits and the others zero (a bitwise OR
 * is then exactly that response); picks that drew NaN draw again next round, as one process does. */
void
PickForestThresholdsSharded(ForestLevelCandidates &            level,
                            const std::vector<std::uint64_t> & seeds,
                            const std::vector<float> &         responses,
                            const ForestLevelCounts &          counts,
                            const std::vector<int> &           countsNode,
                            Collective &                       comm,
                            int                                threads);

// ---- template ----

template<typename LabelOf>
ForestLevelCounts::ForestLevelCounts(const ForestShards &                                   shards,
                                     int                                                    numClasses,
                                     const std::vector<const std::vector<std::int32_t> *> & nodes,
                                     LabelOf                                                labelOf,
                                     int)
  : m_C(numClasses)
{
  const std::size_t N = nodes.size(), S = static_cast<std::size_t>(shards.Size());
  // one buffer, one reduction: class counts, then (originals, mirrors) per node and process
  std::vector<std::int64_t> all(N * m_C + N * S * 2, 0);
  for (std::size_t n = 0; n < N; ++n)
  {
    std::int64_t * classes = all.data() + n * m_C;
    std::int64_t * mine = all.data() + N * m_C + (n * S + shards.Rank()) * 2;
    for (std::int32_t s : *nodes[n])
    {
      ++classes[labelOf(s)];
      ++mine[s >= shards.LocalSamples() ? 1 : 0];
    }
  }
  if (shards.Distributed())
    shards.Comm()->SumInPlace(all.data(), all.size());
  m_Classes.assign(all.begin(), all.begin() + N * m_C);
  std::vector<std::int64_t> parts(all.begin() + N * m_C, all.end());
  Finish(shards, parts);
}

} // namespace canopy::detail
