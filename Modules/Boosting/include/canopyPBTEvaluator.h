// Dense PBT evaluation of whole volumes on the CPU or a GPU: the posterior p(+1|x) at every voxel.
// Host-side dispatch over the kernels of canopy/PBTEvaluation.h; used by the ITK classification
// filter and the command line. Volumes too large for the device are processed in z-slabs.
#pragma once

#include "canopy/Device.h"
#include "canopyPBTModel.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace canopy
{

struct PBTEvaluationOptions
{
  /** false: epsilon1 = 0.5, a single descent per voxel (Birkbeck et al. Table 2, "Tree" row). */
  bool        probabilistic = true;
  int         cpuThreads = 0;     // <= 0: ITK's default number of threads
  std::size_t maxDeviceBytes = 0; // device memory for the volume, its integral volume and the output; 0: 80% of free
  // GPU kernel variants (cuda::PBTLaunchOptions). The defaults were the fastest on an H200 for both a
  // trained and a random depth-6 tree (docs/BENCHMARKS.md, "PBT"); the others stay for measurement.
  /** Stage the tree's nodes and weak learners in shared memory when they fit (persistent grid). */
  bool        treeInSharedMemory = false;
  /** Threads of a warp expand nodes together instead of each on its own (the paper's Fig. 2). */
  bool        warpSynchronous = false;
  /** Read precomputed corner offsets (HaarFeatureCorners) instead of computing clipped boxes. */
  bool        precomputedCorners = false;
  /** Channels of the volumes given to Evaluate (canopyHaarChannels.h): > 1 means `voxels` holds this
   * many channels stacked along z (StackHaarChannels with the stride GetChannelStride gives for nz),
   * the tree's features name their channels, and the output covers channel 0's nz planes. */
  int channels = 1;
};

class PBTVolumeEvaluator
{
public:
  /** Validates the model (canopy::Error naming the problem, before any kernel runs), resolves its
   * features for its sample box and, on CUDA, uploads tree and features. */
  PBTVolumeEvaluator(const PBTModel & model, const ResolvedBackend & backend, const PBTEvaluationOptions & options = {});
  ~PBTVolumeEvaluator();
  PBTVolumeEvaluator(const PBTVolumeEvaluator &) = delete;
  PBTVolumeEvaluator & operator=(const PBTVolumeEvaluator &) = delete;

  /** Posterior p(+1|x) at every voxel of a float volume (x fastest), written to `probability`
   * (nx*ny*nz floats). With options.channels > 1, `voxels` is the stack of the channels of an nx*ny*nz
   * volume (StackHaarChannels, GetChannelStride(nz) planes apart). Builds the integral volume itself (on the device
   * when on CUDA). Volumes too large for maxDeviceBytes are processed in z-slabs with margins covering the features' z
   * extent, giving the whole-volume result. progress(fraction) is called after each slab (CPU: each chunk). Non-finite
   * voxels count as 0 in the integral volume. */
  void
  Evaluate(const float * voxels, int nx, int ny, int nz, float * probability,
           const std::function<void(double)> & progress = {});

  /** The k best voxels of the same posterior map (indices x fastest, best first, in TopScores order:
   * ties by lower index, NaN last; k clamped to [0, voxels]) and their posteriors. On CUDA, when the
   * volume fits one slab, the map is ranked on the device and only the k winners are copied back;
   * otherwise (CPU, slabs) the map is made as Evaluate makes it and ranked on the host (TopScoresCPU). */
  void
  EvaluateBest(const float * voxels, int nx, int ny, int nz, std::int64_t k, std::vector<std::int64_t> & indices,
               std::vector<float> & posteriors);

  const ResolvedBackend &
  GetBackend() const;

  /** Slabs of the last Evaluate (1 on the CPU and when the volume fits). */
  int
  GetNumberOfSlabsUsed() const;

  /** Planes below and above a slab that its features can reach (the slab margins). */
  int
  GetMarginBelow() const;
  int
  GetMarginAbove() const;

  /** Planes between channel starts in the stacks Evaluate reads for volumes of nz planes (nz when
   * options.channels is 1). */
  int GetChannelStride(int nz);

private:
  struct Impl;
  std::unique_ptr<Impl> m_Impl;
};

/** Random, valid PBT models for parity tests and benchmarks (no training involved): a tree of the given
 * depth (full, or with children dropped at random), weak learners on features of a random Haar bank
 * (GenerateRandomHaarBank), histogram or stump tables with values in [-tableScale, tableScale], and
 * bin ranges drawn inside [responseLow, responseHigh]. Same options, same model. */
struct RandomPBTModelOptions
{
  int           depth = 6;
  bool          fullTree = true;    // false: each child exists with probability 0.8
  int           learnersPerNode = 40;
  int           numFeatures = 1000;
  int           numBins = 64;       // histogram learners; a quarter become stumps when mixStumps
  bool          mixStumps = false;
  float         tableScale = 0.3f;
  float         responseLow = -100.0f;
  float         responseHigh = 100.0f;
  std::array<int, 3> sampleBox{ { 15, 15, 15 } };
  std::uint64_t seed = 1;
};

PBTModel
MakeRandomPBTModel(const RandomPBTModelOptions & options);

} // namespace canopy
