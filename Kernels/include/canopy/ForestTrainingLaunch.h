// Forest training on the GPU (CURFIL §5): the math both backends share, so CPU and GPU grow the same
// forest for a seed, and the plain-data launchers of the per-level kernels (ForestTraining.cu).
//  - threshold picks: counter-based (no generator state), so either side can draw them anywhere;
//  - mirrored features for flipped sample pairs (CURFIL §5.3);
//  - split scores from integer class counts with a log2 built from + - * / only, so host and device
//    round identically (libm and CUDA's log2 may differ in the last bit, which would flip near-ties).
// No ITK or CUDA types here.
#pragma once

#include "canopy/ForestFeature.h"
#include "canopy/IntegralVolume.h" // StreamHandle

#include <cstdint>

namespace canopy
{

constexpr int kForestPickAttempts = 9; // draws per threshold before giving up on NaN responses
constexpr int kForestGpuMaxClasses = 256; // per-thread class arrays of the best-split kernel (AAL: 117)
constexpr int kForestGpuMaxThresholds = 64;

CANOPY_HD std::uint64_t
          ForestMix(std::uint64_t x)
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/** Which of a node's `count` samples threshold j of feature f takes at attempt a (counter-based). */
CANOPY_HD std::int64_t
          ForestThresholdPick(std::uint64_t nodeSeed, int f, int j, int a, std::int64_t count)
{
  const std::uint64_t counter = (static_cast<std::uint64_t>(f) * kForestGpuMaxThresholds * 4 + j) * 16 + a;
  return static_cast<std::int64_t>(ForestMix(nodeSeed ^ ForestMix(counter)) % static_cast<std::uint64_t>(count));
}

/** Where random feature candidates come from (ForestRandomFeature). */
struct ForestFeatureSampling
{
  int  numChannels = 1;
  bool planar = true; // 2D: z offset 0 and z size 1
  int  maxOffset = 16, maxBoxSize = 8;
};

/** An integer in [low, high] from 64 random bits, by multiply-shift (no division, same everywhere). */
CANOPY_HD int
ForestUniformInt(std::uint64_t bits, int low, int high)
{
  return low + static_cast<int>(((bits >> 32) * static_cast<std::uint64_t>(high - low + 1)) >> 32);
}

/** Feature candidate f of a node: counter-based, so the GPU draws a level's candidates in parallel
 * and the host redraws only the chosen one. */
CANOPY_HD ForestFeature
ForestRandomFeature(std::uint64_t nodeSeed, int f, const ForestFeatureSampling & s)
{
  const std::uint64_t base = ForestMix(nodeSeed ^ 0x5eed0f3a7e5ull);
  ForestFeature       out{};
  int                 draw = 0;
  auto                next = [&](int low, int high)
  { return ForestUniformInt(ForestMix(base ^ (static_cast<std::uint64_t>(f) * 16 + draw++)), low, high); };
  for (int b = 0; b < 2; ++b)
  {
    out.channel[b] = static_cast<std::uint8_t>(next(0, s.numChannels - 1));
    for (int a = 0; a < 3; ++a)
    {
      const bool flat = a == 2 && s.planar;
      out.offset[b][a] = static_cast<std::int16_t>(flat ? 0 : next(-s.maxOffset, s.maxOffset));
      out.size[b][a] = static_cast<std::uint8_t>(flat ? 1 : next(1, s.maxBoxSize));
    }
  }
  return out;
}

/** The feature seen from the horizontally mirrored image: x offsets negated; even box widths shift
 * by one so the box covers exactly the mirrored voxels (unscaled; with a scale, the mirrored
 * rounding is CURFIL-like but not bit-exact to a flipped image). */
CANOPY_HD ForestFeature
ForestMirrorFeature(ForestFeature f)
{
  for (int b = 0; b < 2; ++b)
    f.offset[b][0] = static_cast<std::int16_t>(-f.offset[b][0] + (f.size[b][0] % 2 == 0 ? 1 : 0));
  return f;
}

/** log2(x) for x > 0 from frexp and an atanh series: identical bits on host and device (no libm,
 * no fused multiply-add: the .cu is built with --fmad=false). Error below 1e-15 relative. */
CANOPY_HD double
ForestLog2(double x)
{
  int    e = 0;
  double m = frexp(x, &e); // x = m 2^e, m in [0.5, 1)
  if (m < 0.70710678118654752)
  {
    m = m * 2.0;
    e = e - 1;
  }
  const double t = (m - 1.0) / (m + 1.0), t2 = t * t; // |t| <= 0.1716
  double       s = 1.0 / 25.0;
  for (int k = 11; k >= 0; --k)
    s = 1.0 / (2 * k + 1) + t2 * s;
  return e + 2.0 * t * s * 1.4426950408889634074; // 1 / ln 2
}

/** Entropy (bits) of weighted counts w[c] * counts[c]; the total weight in `sum`. */
CANOPY_HD double
ForestEntropy(const std::uint32_t * counts, const double * w, int C, double & sum)
{
  sum = 0.0;
  for (int c = 0; c < C; ++c)
    sum += w[c] * counts[c];
  double h = 0.0;
  if (sum > 0.0)
  {
    for (int c = 0; c < C; ++c)
    {
      if (counts[c] == 0) // p = 0 adds nothing; skipping it leaves every bit as it was
        continue;
      const double p = w[c] * counts[c] / sum;
      h -= p > 0.0 ? p * ForestLog2(p) : 0.0;
    }
  }
  return h;
}

/** Score of a split with class counts left[c] and right[c], given the parent's entropy hp and
 * weight wp (ForestEntropy of left + right): information gain, or normalised gain
 * 2 IG / (H(parent) + H(split)); -inf for an empty side. */
CANOPY_HD double
ForestSplitScoreGiven(const std::uint32_t * left,
                      const std::uint32_t * right,
                      const double *        w,
                      int                   C,
                      double                hp,
                      double                wp,
                      bool                  normalized)
{
  double       wl = 0, wr = 0;
  const double hl = ForestEntropy(left, w, C, wl), hr = ForestEntropy(right, w, C, wr);
  if (!(wl > 0.0) || !(wr > 0.0))
    return -1.0 / 0.0;
  const double gain = hp - (wl * hl + wr * hr) / wp;
  if (!normalized)
    return gain;
  const double pl = wl / wp, pr = wr / wp;
  const double hs = -(pl * ForestLog2(pl) + pr * ForestLog2(pr));
  return hp + hs > 0.0 ? 2.0 * gain / (hp + hs) : 0.0;
}

/** ForestSplitScoreGiven with the parent (left + right, written to `parent`) computed here. */
CANOPY_HD double
ForestSplitScoreOf(const std::uint32_t * left,
                   const std::uint32_t * right,
                   std::uint32_t *       parent,
                   const double *        w,
                   int                   C,
                   bool                  normalized)
{
  for (int c = 0; c < C; ++c)
    parent[c] = left[c] + right[c];
  double       wp = 0;
  const double hp = ForestEntropy(parent, w, C, wp);
  return ForestSplitScoreGiven(left, right, w, C, hp, wp, normalized);
}

/** Where one process's samples sit in a node's sample order, for distributed training
 * (Modules/Forest/src/canopyForestShards.h): the node's samples over all processes, its originals
 * over all processes, and this process's first original, originals, first mirror and mirrors. */
struct ForestShardPlacement
{
  std::int64_t total = 0, originals = 0, ownFirst = 0, ownOriginals = 0, ownFirstMirror = 0, ownMirrors = 0;
};

/** The local position (in this process's share of the node) of the node's global position p, or -1
 * when another process holds it: originals of every process in rank order, then their mirrors. */
CANOPY_HD std::int64_t
          ForestShardLocalPosition(const ForestShardPlacement & s, std::int64_t p)
{
  if (p < s.originals)
  {
    const std::int64_t q = p - s.ownFirst;
    return q >= 0 && q < s.ownOriginals ? q : -1;
  }
  const std::int64_t q = p - s.originals - s.ownFirstMirror;
  return q >= 0 && q < s.ownMirrors ? s.ownOriginals + q : -1;
}

namespace cuda
{
/** One (sample, level position) of a slice: where to evaluate and what it counts as. */
struct ForestPairRecord
{
  std::int32_t x, y, z;
  std::int32_t node; // within the node batch
  std::int16_t slot; // image cache slot
  std::uint8_t label;
  std::uint8_t mirrored; // 1: evaluate mirrored features (flipped pair)
};

/** A run of a slice's records of one node, for the histogram kernel (positions within the slice). */
struct ForestSegment
{
  std::int32_t node, begin, end;
};

/** Device pointers of one node batch of a level. Thresholds, state, histograms, best: per batch node
 * nb, feature f (F per node), threshold j (T). */
struct ForestBatchView
{
  int                   numNodes = 0, numFeatures = 0, numThresholds = 0, numClasses = 0;
  ForestFeature *       features = nullptr; // numNodes * F, drawn by LaunchForestFeatures
  ForestFeatureSampling sampling;
  const std::int64_t *  nodeBegin = nullptr; // numNodes + 1, positions relative to the batch
  const std::uint64_t * nodeSeeds = nullptr; // numNodes
  float *               thresholds = nullptr;
  std::uint8_t *        pickState = nullptr;  // next attempt; 255: resolved
  std::uint32_t *       histograms = nullptr; // [nb][f][bin 0..T+1][c]; bin T + 1: NaN
  const double *        classWeights = nullptr;
  double *              bestScore = nullptr; // numNodes
  std::int32_t *        bestIndex = nullptr; // f * T + j
  float *               bestTheta = nullptr; // numNodes: the best split's threshold
  std::uint8_t *        right = nullptr;     // per batch position: sample goes right
  // Distributed training: per node where this process's samples sit (null: one process), and the
  // picked responses' bits, summed over processes (only the holder of a pick writes non-zero).
  const ForestShardPlacement * shards = nullptr;
  std::uint32_t *              pickBits = nullptr; // numNodes * F * T
};

/** The records of positions [begin, end) of the batch, and the image views of the cache slots. */
struct ForestSliceView
{
  const ForestPairRecord * records = nullptr;
  std::int64_t             begin = 0, end = 0;
  const ForestImagesView * slots = nullptr;
  const ForestSegment *    segments = nullptr;
  std::int64_t             numSegments = 0;
};

/** Draws every node's F feature candidates (ForestRandomFeature with nodeSeeds). */
void
LaunchForestFeatures(const ForestBatchView & batch, StreamHandle stream);
/** Resolves the threshold picks that fall into the slice; unresolved ones wait for their slice.
 * `unresolved` (device int) is incremented per candidate still waiting after this slice. */
void
LaunchForestThresholdPicks(const ForestBatchView & batch,
                           const ForestSliceView & slice,
                           int *                   unresolved,
                           StreamHandle            stream);
/** Distributed picks, attempt `attempt` of the candidates still drawing (pickState == attempt): the
 * process holding the drawn sample of the node's global order (batch.shards) writes the response's
 * bits to pickBits (zeroed by the caller); the caller then sums pickBits over the processes. */
void
LaunchForestShardedPicks(const ForestBatchView & batch,
                         const ForestSliceView & slice,
                         int                     attempt,
                         StreamHandle            stream);
/** After the sum: a non-NaN pick becomes the threshold (+0 for -0); a NaN draws again (pickState
 * attempt + 1), or gives 0 after the last attempt. `unresolved` (device int) counts those drawing again. */
void
LaunchForestShardedResolve(const ForestBatchView & batch, int attempt, int * unresolved, StreamHandle stream);
/** Sorts each candidate's thresholds ascending. */
void
LaunchForestSortThresholds(const ForestBatchView & batch, StreamHandle stream);
/** Adds the slice's samples to the class histograms (shared-memory atomics, integer counts). */
void
LaunchForestHistograms(const ForestBatchView & batch, const ForestSliceView & slice, StreamHandle stream);
/** Scores every (f, j) of each node and keeps the best (ties: lowest f * T + j). */
void
LaunchForestBestSplits(const ForestBatchView & batch, bool normalized, StreamHandle stream);
/** right[pos] for the slice's samples of nodes with a positive best score. */
void
LaunchForestPartition(const ForestBatchView & batch, const ForestSliceView & slice, StreamHandle stream);
} // namespace cuda

} // namespace canopy
