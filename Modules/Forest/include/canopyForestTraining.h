// Training of decision forests on the CPU (CURFIL §5, Sharp §4): each tree is grown breadth-first,
// one level at a time. Per level, every open node draws feature candidates and threshold candidates
// (thresholds are responses of random samples of the node), and the split search is three steps with
// plain-data boundaries, so a GPU version can replace any of them:
//   responses (node, feature, sample) -> class histograms (node, feature, threshold, side, class)
//   -> scores (node, feature, threshold) -> best split per node.
// Results depend on the seed only, never on the number of threads.
#pragma once

#include "canopy/Collective.h"
#include "canopy/Device.h"
#include "canopyForestModel.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace canopy
{

/** A labelled training voxel of image `image` of the training set. */
struct ForestSample
{
  std::int32_t image;
  std::int32_t x, y, z;
  std::int32_t label; // in [0, numClasses)
};

struct ForestTrainingSet
{
  std::vector<ForestImagesView> images; // host views; all with the same channel count and dimension
  std::vector<ForestSample>     samples;
  int                           numClasses = 0;
};

enum class ForestSplitScore
{
  InformationGain,          // H(parent) - weighted mean H(children)
  NormalizedInformationGain // Wehenkel & Pavella: 2 IG / (H(parent) + H(split))
};

struct ForestTrainingOptions
{
  int   numTrees = 3;
  int   maxDepth = 12;           // a lone root has depth 0
  int   minSamplesToSplit = 8;   // nodes with fewer samples (after bagging) become leaves
  int   featureCandidates = 200; // per node
  int   thresholdCandidates = 10;
  int   maxOffset = 16;          // box centres within +-maxOffset voxels of the query (z: 0 in 2D)
  int   maxBoxSize = 8;          // box edges in [1, maxBoxSize] (z: 1 in 2D)
  double baggingFraction = 0.7;  // samples drawn (without replacement) for each tree
  bool  balanceClasses = false;  // weight class c by N / (C * N_c), for unbalanced labels
  ForestSplitScore score = ForestSplitScore::InformationGain;
  std::uint64_t seed = 1;
  int   threads = 0;             // <= 0: ITK's default
  // Horizontally flipped sample pairs (CURFIL §5.3): each bagged sample also counts as its mirror,
  // the sample seen in the x-flipped image (features evaluated mirrored, ForestMirrorFeature).
  bool  flipPairs = false;
  // Where the split search runs: auto = the GPU when usable (same forest as the CPU for a seed).
  BackendRequest backend{};
  // GPU memory limits (CURFIL §5.2); 0 = automatic. The budget bounds histograms and slices; the
  // image cache holds that many images' integral tables (least recently used evicted); a slice
  // holds at most that many samples.
  std::size_t gpuMemoryBudget = 0;
  int         gpuImageCacheImages = 0;
  std::int64_t gpuSliceSamples = 0;
  // Distributed training (docs/DISTRIBUTED.md): when set, this process holds a shard of the samples
  // and trains together with the other processes of `shards`, which all call TrainForest with the
  // same options. The shards are the global sample list cut into consecutive pieces in rank order
  // (rank 0 the first samples); an image's index is local to its process. Every process returns the
  // forest one process would grow from the concatenated samples, bit for bit (integer reductions).
  // The split search runs on the GPU when every process can (picks and histograms summed through
  // Collective::SumDeviceInPlace: NCCL, or host memory), else on the CPU everywhere.
  Collective * shards = nullptr;
  // With shards on several GPUs whose collective has device reduce-scatter (NCCL): each process gets
  // the summed histograms of 1/N of a batch's nodes, scores only those, and the best splits are
  // gathered (half the traffic of summing everything; no process scores every node). Same forest;
  // false sums and scores everything on every process (kept for measuring the difference).
  bool gpuScatterScores = true;
  // Resuming from a per-tree checkpoint (canopy train-forest --checkpoint): the first k trees of this
  // forest, grown earlier from the same set and options; only trees k..numTrees-1 are grown. Trees
  // are seeded per tree and independent, so the result is the forest an uninterrupted run grows.
  const ForestModel * finishedTrees = nullptr;
  // Called after each tree is grown (on every process of `shards`), with the forest so far.
  std::function<void(const ForestModel & treesSoFar)> afterTree;
};

/** What training did, for tests and benchmarks. levels (searched) and evaluations (sample x feature
 * responses binned into histograms) on both backends; the rest on the GPU only. */
struct ForestTrainingStats
{
  bool         usedGpu = false;
  std::int64_t levels = 0, evaluations = 0;
  std::int64_t nodeBatches = 0, slices = 0, imageUploads = 0, thresholdPasses = 0;
  std::int64_t scatteredBatches = 0; // distributed: batches whose nodes each process scored a part of
  int          cacheSlots = 0;
  // Device time per phase (CUDA events): features and threshold picks, histograms, scores, partition.
  double gpuPickSeconds = 0, gpuHistogramSeconds = 0, gpuScoreSeconds = 0, gpuPartitionSeconds = 0;
};

/** Trains a forest; the model's dimension is 2 when every image has nz == 1, else 3. Throws
 * canopy::Error naming the bad option or sample. */
ForestModel
TrainForest(const ForestTrainingSet & set, const ForestTrainingOptions & options,
            ForestTrainingStats * stats = nullptr);

// ---- the split search's steps, exposed for a GPU replacement and for tests ----

/** Candidates of one tree level: node n has features [n * numFeatures, (n + 1) * numFeatures) and
 * feature k has thresholds [k * numThresholds, ...), sorted ascending. Samples of node n are
 * sampleOrder[nodeBegin[n], nodeBegin[n + 1]) (indices into the training set's samples; an index
 * i >= samples.size() is the mirror of sample i - samples.size(), for flipped pairs). */
struct ForestLevelCandidates
{
  int                        numNodes = 0;
  int                        numFeatures = 0;
  int                        numThresholds = 0;
  std::vector<ForestFeature> features;
  std::vector<float>         thresholds;
  std::vector<std::int64_t>  nodeBegin; // numNodes + 1
  std::vector<std::int32_t>  sampleOrder;
};

/** responses[k * nodeSamples + i] for feature k of node n and the node's i-th sample, stored per node
 * at offset nodeBegin[n] * numFeatures: the node's block is numFeatures x nodeSamples. */
void
ComputeForestLevelResponsesCPU(const ForestTrainingSet & set, const ForestLevelCandidates & level,
                               std::vector<float> & responses, int threads);

/** histograms[((k * numThresholds + j) * 2 + side) * numClasses + c]: how many samples of class c go
 * left (side 0: test false, NaN too) or right (side 1: response < threshold j) for candidate k
 * (global: n * numFeatures + f). Integer counts, so a GPU version with atomics gives the same. */
void
AccumulateForestHistogramsCPU(const ForestTrainingSet & set, const ForestLevelCandidates & level,
                              const std::vector<float> & responses, std::vector<std::uint32_t> & histograms,
                              int threads);

/** scores[k * numThresholds + j] from the histograms, class c weighted by classWeights[c]; a split
 * with an empty side scores -inf. */
void
ScoreForestSplitsCPU(const ForestLevelCandidates & level, int numClasses, const std::vector<std::uint32_t> & histograms,
                     const std::vector<double> & classWeights, ForestSplitScore score, std::vector<double> & scores,
                     int threads);

} // namespace canopy
