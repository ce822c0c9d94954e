// Per-level forest training kernels (CURFIL §5): threshold picks, class histograms with
// shared-memory atomics, split scores with the best split per node, and the partition of samples.
// Responses come from ForestResponseAt, the CPU's function; compiled with --fmad=false so they and
// the scores round as on the CPU. Integer histograms make the atomics order-independent.
#include "canopy/CudaCheck.h"
#include "canopy/ForestTrainingLaunch.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace canopy::cuda
{
namespace
{

constexpr int kThreads = 256;
constexpr int kHistogramSharedBytes = 32 * 1024;

__device__ __forceinline__ float
PairResponse(const ForestSliceView & slice, const ForestPairRecord & p, const ForestFeature & f)
{
  const ForestImagesView & image = slice.slots[p.slot];
  return ForestResponseAt(image, p.mirrored ? ForestMirrorFeature(f) : f, p.x, p.y, p.z);
}

__global__ void
ThresholdPickKernel(ForestBatchView batch, ForestSliceView slice, int * unresolved)
{
  const int          F = batch.numFeatures, T = batch.numThresholds;
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= std::int64_t(batch.numNodes) * F * T || batch.pickState[i] == 255)
    return;
  // A pick outside this slice waits; `unresolved` (last slice only) counts candidates left waiting.
  const int           nb = static_cast<int>(i / (F * T));
  const int           f = static_cast<int>(i / T % F);
  const int           j = static_cast<int>(i % T);
  const std::int64_t  first = batch.nodeBegin[nb], count = batch.nodeBegin[nb + 1] - first;
  const ForestFeature feature = batch.features[std::int64_t(nb) * F + f];
  for (int a = batch.pickState[i]; a < kForestPickAttempts; ++a)
  {
    const std::int64_t pos = first + ForestThresholdPick(batch.nodeSeeds[nb], f, j, a, count);
    if (pos < slice.begin || pos >= slice.end)
    {
      batch.pickState[i] = static_cast<std::uint8_t>(a);
      if (unresolved)
        atomicAdd(unresolved, 1);
      return;
    }
    const float r = PairResponse(slice, slice.records[pos - slice.begin], feature);
    if (!isnan(r))
    {
      batch.thresholds[i] = r + 0.0f; // -0 -> +0, so sorting cannot depend on the sort
      batch.pickState[i] = 255;
      return;
    }
  }
  batch.thresholds[i] = 0.0f;
  batch.pickState[i] = 255;
}

__global__ void
ShardedPickKernel(ForestBatchView batch, ForestSliceView slice, int attempt)
{
  const int          F = batch.numFeatures, T = batch.numThresholds;
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= std::int64_t(batch.numNodes) * F * T || batch.pickState[i] != attempt)
    return;
  const int nb = static_cast<int>(i / (F * T)), f = static_cast<int>(i / T % F), j = static_cast<int>(i % T);
  const ForestShardPlacement & shard = batch.shards[nb];
  const std::int64_t           local =
    ForestShardLocalPosition(shard, ForestThresholdPick(batch.nodeSeeds[nb], f, j, attempt, shard.total));
  const std::int64_t pos = local < 0 ? -1 : batch.nodeBegin[nb] + local;
  if (pos < slice.begin || pos >= slice.end) // another process's sample, or another slice's
    return;
  const float r = PairResponse(slice, slice.records[pos - slice.begin], batch.features[std::int64_t(nb) * F + f]);
  batch.pickBits[i] = __float_as_uint(r);
}

__global__ void
ShardedResolveKernel(ForestBatchView batch, int attempt, int * unresolved)
{
  const std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= std::int64_t(batch.numNodes) * batch.numFeatures * batch.numThresholds || batch.pickState[i] != attempt)
    return;
  const float r = __uint_as_float(batch.pickBits[i]);
  if (!isnan(r))
  {
    batch.thresholds[i] = r + 0.0f; // -0 -> +0, as ThresholdPickKernel
    batch.pickState[i] = 255;
  }
  else if (attempt + 1 < kForestPickAttempts)
  {
    batch.pickState[i] = static_cast<std::uint8_t>(attempt + 1);
    atomicAdd(unresolved, 1);
  }
  else
  {
    batch.thresholds[i] = 0.0f;
    batch.pickState[i] = 255;
  }
}

__global__ void
FeatureKernel(ForestBatchView batch)
{
  const std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (k >= std::int64_t(batch.numNodes) * batch.numFeatures)
    return;
  const int nb = static_cast<int>(k / batch.numFeatures), f = static_cast<int>(k % batch.numFeatures);
  batch.features[k] = ForestRandomFeature(batch.nodeSeeds[nb], f, batch.sampling);
}

__global__ void
SortThresholdsKernel(ForestBatchView batch)
{
  const int          T = batch.numThresholds;
  const std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (k >= std::int64_t(batch.numNodes) * batch.numFeatures)
    return;
  float * t = batch.thresholds + k * T;
  for (int a = 1; a < T; ++a)
  {
    const float v = t[a];
    int         b = a - 1;
    for (; b >= 0 && t[b] > v; --b)
      t[b + 1] = t[b];
    t[b + 1] = v;
  }
}

/** Block (segment, feature chunk): every (feature of the chunk, sample of the segment) pair adds one
 * count to its bin in shared memory; the block then adds its non-zero bins to the global histogram.
 * A segment shorter than a quarter of a feature's bins (deep levels) skips the shared copy, whose
 * clearing and flushing would outweigh its counts, and adds to the global bins directly. */
__global__ void
__launch_bounds__(kThreads) HistogramKernel(ForestBatchView batch, ForestSliceView slice, int chunk)
{
  extern __shared__ std::uint32_t shared[];
  const int                       F = batch.numFeatures, T = batch.numThresholds, C = batch.numClasses;
  const int                       binsPerFeature = (T + 2) * C;
  const ForestSegment             segment = slice.segments[blockIdx.x];
  const int                       f0 = blockIdx.y * chunk, features = min(chunk, F - f0);
  std::uint32_t *                 bins = shared;
  float *                         theta = reinterpret_cast<float *>(shared + chunk * binsPerFeature);
  ForestFeature *                 feature = reinterpret_cast<ForestFeature *>(theta + chunk * T);
  const std::int64_t              k0 = std::int64_t(segment.node) * F + f0;
  const int                       length = segment.end - segment.begin;
  const bool                      direct = length * 4 < binsPerFeature;
  std::uint32_t *                 out = batch.histograms + k0 * binsPerFeature;
  if (direct)
    bins = out;
  else
    for (int i = threadIdx.x; i < features * binsPerFeature; i += blockDim.x)
      bins[i] = 0;
  for (int i = threadIdx.x; i < features * T; i += blockDim.x)
    theta[i] = batch.thresholds[k0 * T + i];
  for (int i = threadIdx.x; i < features; i += blockDim.x)
    feature[i] = batch.features[k0 + i];
  __syncthreads();
  for (int item = threadIdx.x; item < features * length; item += blockDim.x)
  {
    const int                fl = item / length;
    const ForestPairRecord & p = slice.records[segment.begin + item % length];
    const float              r = PairResponse(slice, p, feature[fl]);
    int                      b = T + 1;
    if (!isnan(r))
    {
      b = 0;
      for (int j = 0; j < T; ++j)
        b += theta[fl * T + j] <= r;
    }
    atomicAdd(&bins[fl * binsPerFeature + b * C + p.label], 1u);
  }
  if (direct)
    return;
  __syncthreads();
  for (int i = threadIdx.x; i < features * binsPerFeature; i += blockDim.x)
    if (bins[i] != 0)
      atomicAdd(&out[i], bins[i]);
}

/** Block per node: each thread scores its features' thresholds in index order; a block reduction
 * keeps the highest score, ties to the lowest index (as the CPU's first-maximum scan). MaxClasses
 * sizes each thread's class arrays (local memory): the launch picks the smallest that holds C, so
 * the common few-class forests do not pay for atlases' hundred-odd labels. */
template<int MaxClasses>
__global__ void
__launch_bounds__(kThreads) BestSplitKernel(ForestBatchView batch, bool normalized)
{
  __shared__ double bestScore[kThreads];
  __shared__ std::int32_t bestIndex[kThreads];
  const int               nb = blockIdx.x, F = batch.numFeatures, T = batch.numThresholds, C = batch.numClasses;
  double                  w[MaxClasses];
  for (int c = 0; c < C; ++c)
    w[c] = batch.classWeights[c];
  double       myScore = -1.0 / 0.0;
  std::int32_t myIndex = 0x7fffffff;
  for (int f = threadIdx.x; f < F; f += blockDim.x)
  {
    const std::uint32_t * bins = batch.histograms + (std::int64_t(nb) * F + f) * (T + 2) * C;
    std::uint32_t         total[MaxClasses], left[MaxClasses], right[MaxClasses];
    for (int c = 0; c < C; ++c)
    {
      total[c] = 0;
      right[c] = 0;
      for (int b = 0; b < T + 2; ++b)
        total[c] += bins[b * C + c];
    }
    double       wp = 0;
    const double hp = ForestEntropy(total, w, C, wp); // the parent: every sample of the node
    for (int j = 0; j < T; ++j)
    {
      for (int c = 0; c < C; ++c)
      {
        right[c] += bins[j * C + c];
        left[c] = total[c] - right[c];
      }
      const double s = ForestSplitScoreGiven(left, right, w, C, hp, wp, normalized);
      if (myIndex == 0x7fffffff || s > myScore) // a thread's indices rise, so ties keep the first
      {
        myScore = s;
        myIndex = f * T + j;
      }
    }
  }
  bestScore[threadIdx.x] = myScore;
  bestIndex[threadIdx.x] = myIndex;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2)
  {
    if (threadIdx.x < half)
    {
      const double os = bestScore[threadIdx.x + half];
      const int    oi = bestIndex[threadIdx.x + half];
      const double ms = bestScore[threadIdx.x];
      const int    mi = bestIndex[threadIdx.x];
      if (os > ms || (os == ms && oi < mi))
      {
        bestScore[threadIdx.x] = os;
        bestIndex[threadIdx.x] = oi;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0)
  {
    batch.bestScore[nb] = bestScore[0];
    batch.bestIndex[nb] = bestIndex[0];
    batch.bestTheta[nb] = batch.thresholds[std::int64_t(nb) * F * T + bestIndex[0]];
  }
}

__global__ void
PartitionKernel(ForestBatchView batch, ForestSliceView slice)
{
  const std::int64_t i = slice.begin + blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (i >= slice.end)
    return;
  const ForestPairRecord & p = slice.records[i - slice.begin];
  if (!(batch.bestScore[p.node] > 0.0))
    return;
  const int   best = batch.bestIndex[p.node], T = batch.numThresholds;
  const float r = PairResponse(slice, p, batch.features[std::int64_t(p.node) * batch.numFeatures + best / T]);
  batch.right[i] = ForestTest(r, -1.0f / 0.0f, batch.bestTheta[p.node]);
}

unsigned int
BlocksFor(std::int64_t n)
{
  return static_cast<unsigned int>((n + kThreads - 1) / kThreads);
}

} // namespace

void
LaunchForestThresholdPicks(const ForestBatchView & batch,
                           const ForestSliceView & slice,
                           int *                   unresolved,
                           StreamHandle            stream)
{
  const std::int64_t n = std::int64_t(batch.numNodes) * batch.numFeatures * batch.numThresholds;
  if (n == 0 || slice.end <= slice.begin)
    return;
  ThresholdPickKernel<<<BlocksFor(n), kThreads, 0, stream>>>(batch, slice, unresolved);
  CANOPY_CUDA_CHECK_LAUNCH(ThresholdPickKernel);
}

void
LaunchForestShardedPicks(const ForestBatchView & batch, const ForestSliceView & slice, int attempt, StreamHandle stream)
{
  const std::int64_t n = std::int64_t(batch.numNodes) * batch.numFeatures * batch.numThresholds;
  if (n == 0 || slice.end <= slice.begin)
    return;
  ShardedPickKernel<<<BlocksFor(n), kThreads, 0, stream>>>(batch, slice, attempt);
  CANOPY_CUDA_CHECK_LAUNCH(ShardedPickKernel);
}

void
LaunchForestShardedResolve(const ForestBatchView & batch, int attempt, int * unresolved, StreamHandle stream)
{
  const std::int64_t n = std::int64_t(batch.numNodes) * batch.numFeatures * batch.numThresholds;
  if (n == 0)
    return;
  ShardedResolveKernel<<<BlocksFor(n), kThreads, 0, stream>>>(batch, attempt, unresolved);
  CANOPY_CUDA_CHECK_LAUNCH(ShardedResolveKernel);
}

void
LaunchForestFeatures(const ForestBatchView & batch, StreamHandle stream)
{
  const std::int64_t n = std::int64_t(batch.numNodes) * batch.numFeatures;
  if (n == 0)
    return;
  FeatureKernel<<<BlocksFor(n), kThreads, 0, stream>>>(batch);
  CANOPY_CUDA_CHECK_LAUNCH(FeatureKernel);
}

void
LaunchForestSortThresholds(const ForestBatchView & batch, StreamHandle stream)
{
  const std::int64_t n = std::int64_t(batch.numNodes) * batch.numFeatures;
  if (n == 0)
    return;
  SortThresholdsKernel<<<BlocksFor(n), kThreads, 0, stream>>>(batch);
  CANOPY_CUDA_CHECK_LAUNCH(SortThresholdsKernel);
}

void
LaunchForestHistograms(const ForestBatchView & batch, const ForestSliceView & slice, StreamHandle stream)
{
  if (slice.numSegments == 0)
    return;
  const int         T = batch.numThresholds, C = batch.numClasses;
  const std::size_t perFeature = sizeof(std::uint32_t) * (T + 2) * C + sizeof(float) * T + sizeof(ForestFeature);
  const int         chunk = static_cast<int>(
    std::max<std::size_t>(1, std::min<std::size_t>(batch.numFeatures, kHistogramSharedBytes / perFeature)));
  const std::size_t shared = perFeature * chunk + 16;
  const dim3        grid(static_cast<unsigned int>(slice.numSegments), (batch.numFeatures + chunk - 1) / chunk);
  if (shared > 48 * 1024)
    CANOPY_CUDA_CHECK(cudaFuncSetAttribute(HistogramKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
  HistogramKernel<<<grid, kThreads, shared, stream>>>(batch, slice, chunk);
  CANOPY_CUDA_CHECK_LAUNCH(HistogramKernel);
}

void
LaunchForestBestSplits(const ForestBatchView & batch, bool normalized, StreamHandle stream)
{
  if (batch.numNodes == 0)
    return;
  static_assert(kForestGpuMaxClasses == 256, "the dispatch below covers 1..256 classes");
  if (batch.numClasses <= 16)
    BestSplitKernel<16><<<batch.numNodes, kThreads, 0, stream>>>(batch, normalized);
  else if (batch.numClasses <= 64)
    BestSplitKernel<64><<<batch.numNodes, kThreads, 0, stream>>>(batch, normalized);
  else
    BestSplitKernel<256><<<batch.numNodes, kThreads, 0, stream>>>(batch, normalized);
  CANOPY_CUDA_CHECK_LAUNCH(BestSplitKernel);
}

void
LaunchForestPartition(const ForestBatchView & batch, const ForestSliceView & slice, StreamHandle stream)
{
  if (slice.end <= slice.begin)
    return;
  PartitionKernel<<<BlocksFor(slice.end - slice.begin), kThreads, 0, stream>>>(batch, slice);
  CANOPY_CUDA_CHECK_LAUNCH(PartitionKernel);
}

} // namespace canopy::cuda
