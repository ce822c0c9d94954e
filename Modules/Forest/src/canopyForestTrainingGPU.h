// The split search of a tree level, as both backends answer it: per node the chosen feature (or none)
// and threshold, per level position whether the sample goes right. The GPU searcher keeps its device
// memory (image cache, batch buffers) across levels and trees of one TrainForest call.
#pragma once

#include "canopy/ForestTrainingLaunch.h"
#include "canopyForestTraining.h"

#include <memory>
#include <string>

namespace canopy
{

struct ForestLevelSplits
{
  std::vector<std::int32_t> feature; // per node: the feature within the node's candidates, -1: no split
  std::vector<float>        theta;   // per node: the one-sided threshold (right when response < theta)
  std::vector<std::uint8_t> right;   // per sampleOrder position
};

/** Candidate thresholds of candidate k = n * F + f: for j < T, the first non-NaN response among the
 * draws ForestThresholdPick(seeds[n], f, j, a, count), a < kForestPickAttempts (0 if none), sorted. */
void
PickForestThresholdsCPU(ForestLevelCandidates &            level,
                        const std::vector<std::uint64_t> & seeds,
                        const std::vector<float> &         responses);

class ForestSplitSearchGPU
{
public:
  /** Throws canopy::Error when the build has no CUDA or the problem exceeds the GPU limits (classes,
   * thresholds). */
  ForestSplitSearchGPU(const ForestTrainingSet &     set,
                       const ForestTrainingOptions & options,
                       const std::vector<double> &   classWeights,
                       int                           device,
                       ForestTrainingStats *         stats);
  ~ForestSplitSearchGPU();

  /** Whether the GPU search handles this problem (classes, thresholds, images within its limits);
   * `why` says what is over. An automatic backend falls back to the CPU when it does not. */
  static bool Supports(const ForestTrainingSet &     set,
                       const ForestTrainingOptions & options,
                       std::string *                 why = nullptr);

  /** `level` without thresholds (the search picks them); seeds per node for the threshold picks.
   * Distributed training (options.shards): `shards` holds per node where this process's samples sit
   * in the node's global order; picks and histograms are then summed over the processes. */
  void Search(const ForestLevelCandidates &             level,
              const std::vector<std::uint64_t> &        seeds,
              ForestLevelSplits &                       out,
              const std::vector<ForestShardPlacement> * shards = nullptr);

private:
  struct Impl;
  std::unique_ptr<Impl> m_Impl;
};

} // namespace canopy
