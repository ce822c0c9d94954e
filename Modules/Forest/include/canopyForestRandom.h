// Random forests in the literal sense: random structure, features and distributions, for parity tests
// and benchmarks (no training). Thresholds are responses at random voxels of a given image, so tests
// take both branches about equally often, as trained trees do.
#pragma once

#include "canopyForestModel.h"

namespace canopy
{

struct RandomForestOptions
{
  int    numTrees = 4;
  int    depth = 6;              // every leaf at this depth when leafProbability = 0
  double leafProbability = 0.0;  // chance an inner node below the root becomes a leaf early
  int    numClasses = 3;
  int    numChannels = 1;
  int    dimension = 3;
  bool   usesScale = false;
  int    maxOffset = 12;
  int    maxBoxSize = 6;
  int    distributionPool = 0;   // leaves draw from this many distributions (0: one per leaf)
  double twoSidedFraction = 0.3; // share of nodes with a finite theta0 (Sharp's two-sided test)
  std::uint64_t seed = 1;
};

/** A valid breadth-first forest. `thresholdsFrom` (may be null) supplies responses for thresholds;
 * without it thresholds are uniform in [-1, 1]. */
ForestModel
MakeRandomForest(const RandomForestOptions & options, const ForestImagesView * thresholdsFrom = nullptr);

} // namespace canopy
