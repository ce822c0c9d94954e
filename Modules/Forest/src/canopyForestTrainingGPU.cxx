// The GPU split search of a tree level (CURFIL §5.2): the level's nodes are taken in batches whose
// histograms fit the memory budget; a batch's samples are walked in slices that fit the budget and
// whose images fit the image cache (least recently used images evicted). Per batch: threshold picks
// (repeated walks only if a NaN retry points into an earlier slice), histograms, best split per
// node, partition. Device buffers only grow, so levels and trees reuse them.
#include "canopyForestTrainingGPU.h"

#include "ParallelFor.h"
#include "canopy/Errors.h"
#include "canopy/ForestTrainingLaunch.h"
#include "canopyConfigure.h"

#if CANOPY_USE_CUDA
#include "canopy/cuda/DeviceBuffer.h"
#endif

#include <algorithm>
#include <string>

namespace canopy
{

#if CANOPY_USE_CUDA
namespace
{
constexpr int kSegmentLength = 2048; // samples of one node per histogram block

template<typename T>
void
Grow(cuda::DeviceBuffer<T> & buffer, std::size_t count, const char * what)
{
  if (buffer.size() < count)
    buffer.Allocate(std::max<std::size_t>(count, buffer.size() + buffer.size() / 2), what);
}

/** Page-locked host memory that only grows: slice records go up at full bus speed. */
template<typename T>
class PinnedArray
{
public:
  ~PinnedArray() { cudaFreeHost(m_Data); }
  void Resize(std::size_t count)
  {
    if (count > m_Capacity)
    {
      cudaFreeHost(m_Data);
      m_Data = nullptr;
      m_Capacity = std::max(count, m_Capacity + m_Capacity / 2);
      CANOPY_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void **>(&m_Data), m_Capacity * sizeof(T)));
    }
    m_Size = count;
  }
  T &         operator[](std::size_t i) { return m_Data[i]; }
  T *         data() { return m_Data; }
  std::size_t size() const { return m_Size; }

private:
  T *         m_Data = nullptr;
  std::size_t m_Size = 0, m_Capacity = 0;
};

struct Slice
{
  std::int64_t     begin, end; // batch positions
  std::vector<int> images;
};
} // namespace

struct ForestSplitSearchGPU::Impl
{
  const ForestTrainingSet &     set;
  const ForestTrainingOptions & options;
  ForestTrainingStats           localStats;
  ForestTrainingStats &         stats;
  int                           device;
  cuda::ScopedDevice            scope;
  cuda::Stream                  stream;

  // Image cache: `slots` equal slots of slotDoubles sums (+ slotFloats scale).
  int                                  slots = 0;
  std::size_t                          slotDoubles = 0, slotFloats = 0;
  cuda::DeviceBuffer<double>           cacheSums;
  cuda::DeviceBuffer<float>            cacheScale;
  cuda::DeviceBuffer<ForestImagesView> slotViews;
  std::vector<ForestImagesView>        hostViews;
  std::vector<int>                     slotImage, imageSlot;
  std::vector<std::int64_t>            slotUse;
  std::int64_t                         clock = 0;

  ForestFeatureSampling sampling;
  std::int64_t          sliceSamples = 0;
  int                   batchNodes = 0;

  cuda::DeviceBuffer<double>                 weights;
  cuda::DeviceBuffer<ForestFeature>          features;
  cuda::DeviceBuffer<std::int64_t>           nodeBegin;
  cuda::DeviceBuffer<std::uint64_t>          seeds;
  cuda::DeviceBuffer<float>                  thresholds, bestTheta;
  cuda::DeviceBuffer<std::uint8_t>           pickState, right;
  cuda::DeviceBuffer<std::uint32_t>          histograms;
  cuda::DeviceBuffer<double>                 bestScore;
  cuda::DeviceBuffer<std::int32_t>           bestIndex;
  cuda::DeviceBuffer<cuda::ForestPairRecord> records;
  cuda::DeviceBuffer<cuda::ForestSegment>    segments;
  cuda::DeviceBuffer<int>                    unresolved;
  cuda::DeviceBuffer<ForestShardPlacement>   shardPlacement; // distributed training only
  cuda::DeviceBuffer<std::uint32_t>          pickBits;
  std::vector<std::uint32_t>                 hostSum;
  PinnedArray<cuda::ForestPairRecord>        hostRecords;
  std::vector<cuda::ForestSegment>           hostSegments;
  cudaEvent_t                                events[5] = {};

  Impl(const ForestTrainingSet &     s,
       const ForestTrainingOptions & o,
       const std::vector<double> &   classWeights,
       int                           d,
       ForestTrainingStats *         st)
    : set(s)
    , options(o)
    , stats(st ? *st : localStats)
    , device(d < 0 ? 0 : d)
    , scope(device)
  {
    const int   C = set.numClasses, F = o.featureCandidates, T = o.thresholdCandidates;
    std::string why;
    if (!Supports(set, o, &why))
      CANOPY_THROW("TrainForest (cuda): " << why << "; use backend cpu");
    stats.usedGpu = true;
    sampling.numChannels = set.images[0].numChannels;
    sampling.planar =
      std::all_of(set.images.begin(), set.images.end(), [](const ForestImagesView & v) { return v.nz == 1; });
    sampling.maxOffset = o.maxOffset;
    sampling.maxBoxSize = o.maxBoxSize;
    for (const auto & v : set.images)
    {
      slotDoubles = std::max<std::size_t>(slotDoubles, static_cast<std::size_t>(v.channelStride) * v.numChannels);
      if (v.scale)
        slotFloats = std::max<std::size_t>(slotFloats, static_cast<std::size_t>(v.nx) * v.ny * v.nz);
    }
    std::size_t freeBytes = 0, totalBytes = 0;
    CANOPY_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    const std::size_t budget = o.gpuMemoryBudget ? o.gpuMemoryBudget : freeBytes / 2;
    const std::size_t slotBytes = slotDoubles * sizeof(double) + slotFloats * sizeof(float);
    const int         images = static_cast<int>(set.images.size());
    slots = o.gpuImageCacheImages > 0 ? std::min(o.gpuImageCacheImages, images)
                                      : static_cast<int>(std::clamp<std::size_t>(budget / 2 / slotBytes, 1, images));
    const std::size_t cacheBytes = slots * slotBytes;
    const std::size_t rest = budget > cacheBytes ? budget - cacheBytes : 0;
    sliceSamples =
      o.gpuSliceSamples > 0
        ? o.gpuSliceSamples
        : std::clamp<std::int64_t>(rest / 4 / sizeof(cuda::ForestPairRecord), 4096, std::int64_t{ 1 } << 24);
    const std::size_t perNode = std::size_t(F) * ((T + 2) * C * 4 + T * 5 + sizeof(ForestFeature)) + 32;
    const std::size_t histogramBytes = rest > rest / 4 ? rest - rest / 4 : 0;
    batchNodes = static_cast<int>(std::clamp<std::size_t>(histogramBytes / perNode, 1, 1 << 20));
    if (o.shards) // the processes batch nodes alike (their reductions pair up): the smallest batch
    {
      std::int64_t most = -std::int64_t(batchNodes);
      o.shards->MaxInPlace(&most, 1);
      batchNodes = static_cast<int>(-most);
      // scattered scores cut a batch into equal parts: full batches then need no padding, which
      // would go past the budget (a level's last, smaller batch pads within it)
      const int processes = o.shards->Size();
      if (processes > 1 && o.gpuScatterScores && batchNodes >= processes)
        batchNodes -= batchNodes % processes;
    }
    stats.cacheSlots = slots;

    cacheSums.Allocate(slots * slotDoubles, "forest image cache");
    if (slotFloats)
      cacheScale.Allocate(slots * slotFloats, "forest scale cache");
    slotViews.Allocate(slots, "forest cache views");
    hostViews.assign(slots, ForestImagesView{});
    slotImage.assign(slots, -1);
    slotUse.assign(slots, -1);
    imageSlot.assign(images, -1);
    weights.Allocate(C, "class weights");
    weights.CopyFromHost(classWeights.data(), C, stream.get());
    unresolved.Allocate(1, "unresolved picks");
    for (auto & e : events)
      CANOPY_CUDA_CHECK(cudaEventCreate(&e));
    if (slots == images) // everything fits: upload once, and slices need not track images
    {
      Slice all{ 0, 0, {} };
      for (int i = 0; i < images; ++i)
        all.images.push_back(i);
      Cache(all);
    }
  }

  ~Impl()
  {
    for (auto & e : events)
      cudaEventDestroy(e);
  }

  /** Makes the slice's images resident, evicting the least recently used slots not in the slice. */
  void Cache(const Slice & slice)
  {
    const std::int64_t stamp = ++clock;
    for (int image : slice.images)
      if (imageSlot[image] >= 0)
        slotUse[imageSlot[image]] = stamp;
    bool changed = false;
    for (int image : slice.images)
    {
      if (imageSlot[image] >= 0)
        continue;
      int victim = 0;
      for (int s = 1; s < slots; ++s)
        if (slotUse[s] < slotUse[victim])
          victim = s;
      if (slotImage[victim] >= 0)
        imageSlot[slotImage[victim]] = -1;
      const ForestImagesView & v = set.images[image];
      double *                 sums = cacheSums.data() + victim * slotDoubles;
      CANOPY_CUDA_CHECK(cudaMemcpyAsync(
        sums, v.sums, sizeof(double) * v.channelStride * v.numChannels, cudaMemcpyHostToDevice, stream.get()));
      ForestImagesView d = v;
      d.sums = sums;
      if (v.scale)
      {
        d.scale = cacheScale.data() + victim * slotFloats;
        CANOPY_CUDA_CHECK(cudaMemcpyAsync(const_cast<float *>(d.scale),
                                          v.scale,
                                          sizeof(float) * v.nx * v.ny * v.nz,
                                          cudaMemcpyHostToDevice,
                                          stream.get()));
      }
      hostViews[victim] = d;
      slotImage[victim] = image;
      imageSlot[image] = victim;
      slotUse[victim] = stamp;
      ++stats.imageUploads;
      changed = true;
    }
    if (changed) // pageable copies are staged before cudaMemcpyAsync returns, so hostViews may change after
      slotViews.CopyFromHost(hostViews.data(), slots, stream.get());
  }

  /** Caches the slice's images and uploads its records and segments. */
  cuda::ForestSliceView Prepare(const Slice & slice, const ForestLevelCandidates & level, int n0, std::int64_t p0)
  {
    stream.Synchronize(); // the previous slice's records may still be on their way up
    Cache(slice);
    const auto n = static_cast<std::int32_t>(set.samples.size());
    hostRecords.Resize(slice.end - slice.begin);
    const std::int64_t * nodes = level.nodeBegin.data();
    // Records in parallel (the host's share of every level); each chunk finds its first node.
    detail::ParallelForChunks(slice.end - slice.begin,
                              options.threads,
                              [&](std::int64_t begin, std::int64_t end)
                              {
                                std::int32_t node = static_cast<std::int32_t>(
                                  std::upper_bound(nodes + n0, nodes + level.numNodes + 1, p0 + slice.begin + begin) -
                                  nodes - 1);
                                for (std::int64_t i = begin; i < end; ++i)
                                {
                                  const std::int64_t p = slice.begin + i;
                                  while (nodes[node + 1] <= p0 + p)
                                    ++node;
                                  const std::int32_t     index = level.sampleOrder[p0 + p];
                                  const bool             mirrored = index >= n;
                                  const ForestSample &   s = set.samples[mirrored ? index - n : index];
                                  cuda::ForestPairRecord r;
                                  r.x = s.x;
                                  r.y = s.y;
                                  r.z = s.z;
                                  r.node = node - n0;
                                  r.slot = static_cast<std::int16_t>(imageSlot[s.image]);
                                  r.label = static_cast<std::uint8_t>(s.label);
                                  r.mirrored = mirrored;
                                  hostRecords[i] = r;
                                }
                              });
    // Segments: each node's part of the slice, cut every kSegmentLength samples.
    hostSegments.clear();
    std::int32_t node =
      static_cast<std::int32_t>(std::upper_bound(nodes + n0, nodes + level.numNodes + 1, p0 + slice.begin) - nodes - 1);
    for (; node < level.numNodes && nodes[node] < p0 + slice.end; ++node)
    {
      const std::int64_t from = std::max(nodes[node] - p0, slice.begin) - slice.begin;
      const std::int64_t to = std::min(nodes[node + 1] - p0, slice.end) - slice.begin;
      for (std::int64_t at = from; at < to; at += kSegmentLength)
        hostSegments.push_back(
          cuda::ForestSegment{ node - n0,
                               static_cast<std::int32_t>(at),
                               static_cast<std::int32_t>(std::min<std::int64_t>(to, at + kSegmentLength)) });
    }
    Grow(records, hostRecords.size(), "forest slice records");
    Grow(segments, hostSegments.size(), "forest slice segments");
    records.CopyFromHost(hostRecords.data(), hostRecords.size(), stream.get());
    segments.CopyFromHost(hostSegments.data(), hostSegments.size(), stream.get());
    ++stats.slices;
    cuda::ForestSliceView v;
    v.records = records.data();
    v.begin = slice.begin;
    v.end = slice.end;
    v.slots = slotViews.data();
    v.segments = segments.data();
    v.numSegments = static_cast<std::int64_t>(hostSegments.size());
    return v;
  }

  /** Slices of batch positions [0, p1 - p0): at most sliceSamples samples and `slots` images each. */
  std::vector<Slice> SlicesOf(const ForestLevelCandidates & level, std::int64_t p0, std::int64_t p1)
  {
    const auto         n = static_cast<std::int32_t>(set.samples.size());
    std::vector<Slice> out;
    if (slots == static_cast<int>(set.images.size())) // all resident: cut by size alone
    {
      for (std::int64_t p = 0; p < p1 - p0; p += sliceSamples)
        out.push_back(Slice{ p, std::min(p1 - p0, p + sliceSamples), {} });
      return out;
    }
    std::vector<int> seen(set.images.size(), -1);
    for (std::int64_t p = p0; p < p1; ++p)
    {
      const std::int32_t index = level.sampleOrder[p];
      const int          image = set.samples[index >= n ? index - n : index].image;
      const bool         fresh = out.empty() || seen[image] != static_cast<int>(out.size()) - 1;
      if (out.empty() || out.back().end - out.back().begin >= sliceSamples ||
          (fresh && static_cast<int>(out.back().images.size()) >= slots))
        out.push_back(Slice{ p - p0, p - p0, {} });
      if (seen[image] != static_cast<int>(out.size()) - 1)
      {
        seen[image] = static_cast<int>(out.size()) - 1;
        out.back().images.push_back(image);
      }
      out.back().end = p - p0 + 1;
    }
    return out;
  }

  /** Sums a device array over the processes: NCCL where the collective has it, else through the host. */
  void SumOverProcesses(std::uint32_t * data, std::size_t count)
  {
    cudaStream_t s = stream.get();
    if (options.shards->SumDeviceInPlace(data, count, s))
      return;
    hostSum.resize(count);
    CANOPY_CUDA_CHECK(cudaMemcpyAsync(hostSum.data(), data, count * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, s));
    stream.Synchronize();
    options.shards->SumInPlace(hostSum.data(), count);
    CANOPY_CUDA_CHECK(cudaMemcpyAsync(data, hostSum.data(), count * sizeof(std::uint32_t), cudaMemcpyHostToDevice, s));
    stream.Synchronize(); // hostSum is reused
  }

  /** After a reduce-scatter: this process scores its part of the batch's nodes (the summed histograms
   * at its offset), then every process gathers every part's best splits. */
  void ScoreOwnNodesAndGather(const cuda::ForestBatchView & b, int perRank, bool normalized)
  {
    cudaStream_t          s = stream.get();
    const int             first = options.shards->Rank() * perRank;
    const std::int64_t    F = b.numFeatures, T = b.numThresholds, C = b.numClasses;
    cuda::ForestBatchView mine = b;
    mine.numNodes = std::max(0, std::min(perRank, b.numNodes - first));
    mine.histograms += first * F * (T + 2) * C;
    mine.thresholds += first * F * T;
    mine.bestScore += first;
    mine.bestIndex += first;
    mine.bestTheta += first;
    cuda::LaunchForestBestSplits(mine, normalized, s);
    const bool gathered = options.shards->AllGatherDeviceInPlace(bestScore.data(), perRank * sizeof(double), s) &&
                          options.shards->AllGatherDeviceInPlace(bestIndex.data(), perRank * sizeof(std::int32_t), s) &&
                          options.shards->AllGatherDeviceInPlace(bestTheta.data(), perRank * sizeof(float), s);
    if (!gathered) // a collective with a device reduce-scatter has a device all-gather
      CANOPY_THROW("TrainForest (cuda): the processes' collective reduce-scattered but cannot all-gather");
  }

  void Search(const ForestLevelCandidates &             level,
              const std::vector<std::uint64_t> &        nodeSeeds,
              ForestLevelSplits &                       out,
              const std::vector<ForestShardPlacement> * shards)
  {
    cuda::ScopedDevice here(device);
    const int          F = level.numFeatures, T = level.numThresholds, C = set.numClasses;
    const bool         normalized = options.score == ForestSplitScore::NormalizedInformationGain;
    out.feature.assign(level.numNodes, -1);
    out.theta.assign(level.numNodes, 0.0f);
    out.right.assign(level.sampleOrder.size(), 0);
    std::vector<double>       hostScore;
    std::vector<std::int32_t> hostIndex;
    std::vector<std::int64_t> hostBegin;
    const int                 processes = shards ? options.shards->Size() : 1;
    for (int n0 = 0; n0 < level.numNodes; n0 += batchNodes)
    {
      const int          n1 = std::min(level.numNodes, n0 + batchNodes), nb = n1 - n0;
      // Scattered scores: the batch's nodes cut into `processes` equal parts (the last padded).
      const bool         scatter = processes > 1 && options.gpuScatterScores;
      const int          perRank = scatter ? (nb + processes - 1) / processes : nb, padded = perRank * processes;
      const std::int64_t p0 = level.nodeBegin[n0], p1 = level.nodeBegin[n1];
      const std::size_t  candidates = std::size_t(nb) * F;
      ++stats.nodeBatches;
      Grow(features, candidates, "forest candidate features");
      Grow(nodeBegin, nb + 1, "forest node ranges");
      Grow(seeds, nb, "forest node seeds");
      Grow(thresholds, candidates * T, "forest thresholds");
      Grow(pickState, candidates * T, "forest pick state");
      const std::size_t binsPerNode = std::size_t(F) * (T + 2) * C;
      Grow(histograms, std::size_t(padded) * binsPerNode, "forest histograms");
      Grow(bestScore, padded, "forest best scores");
      Grow(bestIndex, padded, "forest best splits");
      Grow(bestTheta, padded, "forest best thresholds");
      Grow(right, std::max<std::int64_t>(p1 - p0, 1), "forest partition");
      hostBegin.resize(nb + 1);
      for (int i = 0; i <= nb; ++i)
        hostBegin[i] = level.nodeBegin[n0 + i] - p0;
      nodeBegin.CopyFromHost(hostBegin.data(), nb + 1, stream.get());
      seeds.CopyFromHost(nodeSeeds.data() + n0, nb, stream.get());
      cudaStream_t s = stream.get();
      CANOPY_CUDA_CHECK(cudaMemsetAsync(pickState.data(), 0, candidates * T, s));
      CANOPY_CUDA_CHECK(cudaMemsetAsync(histograms.data(), 0, padded * binsPerNode * sizeof(std::uint32_t), s));
      CANOPY_CUDA_CHECK(cudaMemsetAsync(right.data(), 0, std::max<std::int64_t>(p1 - p0, 1), s));

      cuda::ForestBatchView b;
      b.numNodes = nb;
      b.numFeatures = F;
      b.numThresholds = T;
      b.numClasses = C;
      b.features = features.data();
      b.sampling = sampling;
      b.nodeBegin = nodeBegin.data();
      b.nodeSeeds = seeds.data();
      b.thresholds = thresholds.data();
      b.pickState = pickState.data();
      b.histograms = histograms.data();
      b.classWeights = weights.data();
      b.bestScore = bestScore.data();
      b.bestIndex = bestIndex.data();
      b.bestTheta = bestTheta.data();
      b.right = right.data();

      const std::vector<Slice> slices = SlicesOf(level, p0, p1);
      const bool               single = slices.size() == 1;
      cuda::ForestSliceView    prepared = single ? Prepare(slices[0], level, n0, p0) : cuda::ForestSliceView{};
      auto slice = [&](std::size_t i) { return single ? prepared : Prepare(slices[i], level, n0, p0); };
      if (shards)
      {
        Grow(shardPlacement, nb, "forest shard placement");
        Grow(pickBits, candidates * T, "forest pick bits");
        shardPlacement.CopyFromHost(shards->data() + n0, nb, s);
        b.shards = shardPlacement.data();
        b.pickBits = pickBits.data();
      }
      CANOPY_CUDA_CHECK(cudaEventRecord(events[0], s));
      cuda::LaunchForestFeatures(b, s);
      // Distributed: one attempt per round over every process's samples, the picked bits summed (only
      // the holder of a pick writes non-zero), NaN picks drawing again, as one process draws.
      for (int a = 0; shards && a < kForestPickAttempts; ++a)
      {
        ++stats.thresholdPasses;
        CANOPY_CUDA_CHECK(cudaMemsetAsync(pickBits.data(), 0, candidates * T * sizeof(std::uint32_t), s));
        for (std::size_t i = 0; i < slices.size(); ++i)
          cuda::LaunchForestShardedPicks(b, slice(i), a, s);
        SumOverProcesses(pickBits.data(), candidates * T);
        CANOPY_CUDA_CHECK(cudaMemsetAsync(unresolved.data(), 0, sizeof(int), s));
        cuda::LaunchForestShardedResolve(b, a, unresolved.data(), s);
        int waiting = 0;
        unresolved.CopyToHost(&waiting, 1, s);
        stream.Synchronize();
        if (waiting == 0) // the same on every process: the summed bits are
          break;
      }
      // Thresholds: a pick whose NaN retry points into an earlier slice needs another walk.
      for (int waiting = shards ? 0 : 1; waiting > 0;)
      {
        ++stats.thresholdPasses;
        CANOPY_CUDA_CHECK(cudaMemsetAsync(unresolved.data(), 0, sizeof(int), s));
        for (std::size_t i = 0; i < slices.size(); ++i)
          cuda::LaunchForestThresholdPicks(b, slice(i), i + 1 == slices.size() ? unresolved.data() : nullptr, s);
        unresolved.CopyToHost(&waiting, 1, s);
        stream.Synchronize();
      }
      cuda::LaunchForestSortThresholds(b, s);
      CANOPY_CUDA_CHECK(cudaEventRecord(events[1], s));
      for (std::size_t i = 0; i < slices.size(); ++i)
        cuda::LaunchForestHistograms(b, slice(i), s);
      // integer counts: the sums are exact in any order
      const bool scattered =
        scatter && options.shards->ReduceScatterDeviceInPlace(histograms.data(), std::size_t(perRank) * binsPerNode, s);
      if (shards && !scattered)
        SumOverProcesses(histograms.data(), candidates * (T + 2) * C);
      CANOPY_CUDA_CHECK(cudaEventRecord(events[2], s));
      if (scattered)
      {
        ++stats.scatteredBatches;
        ScoreOwnNodesAndGather(b, perRank, normalized);
      }
      else
        cuda::LaunchForestBestSplits(b, normalized, s);
      CANOPY_CUDA_CHECK(cudaEventRecord(events[3], s));
      for (std::size_t i = 0; i < slices.size(); ++i)
        cuda::LaunchForestPartition(b, slice(i), s);
      CANOPY_CUDA_CHECK(cudaEventRecord(events[4], s));

      hostScore.resize(nb);
      hostIndex.resize(nb);
      std::vector<float> theta(nb);
      bestScore.CopyToHost(hostScore.data(), nb, s);
      bestIndex.CopyToHost(hostIndex.data(), nb, s);
      bestTheta.CopyToHost(theta.data(), nb, s);
      if (p1 > p0)
        right.CopyToHost(out.right.data() + p0, p1 - p0, s);
      stream.Synchronize();
      double * phase[4] = {
        &stats.gpuPickSeconds, &stats.gpuHistogramSeconds, &stats.gpuScoreSeconds, &stats.gpuPartitionSeconds
      };
      for (int e = 0; e < 4; ++e)
      {
        float ms = 0;
        CANOPY_CUDA_CHECK(cudaEventElapsedTime(&ms, events[e], events[e + 1]));
        *phase[e] += ms / 1000.0;
      }
      for (int i = 0; i < nb; ++i)
        if (hostScore[i] > 0.0)
        {
          out.feature[n0 + i] = hostIndex[i] / T;
          out.theta[n0 + i] = theta[i];
        }
    }
  }
};

ForestSplitSearchGPU::ForestSplitSearchGPU(const ForestTrainingSet &     set,
                                           const ForestTrainingOptions & options,
                                           const std::vector<double> &   classWeights,
                                           int                           device,
                                           ForestTrainingStats *         stats)
  : m_Impl(std::make_unique<Impl>(set, options, classWeights, device, stats))
{
}

void
ForestSplitSearchGPU::Search(const ForestLevelCandidates &             level,
                             const std::vector<std::uint64_t> &        seeds,
                             ForestLevelSplits &                       out,
                             const std::vector<ForestShardPlacement> * shards)
{
  m_Impl->Search(level, seeds, out, shards);
}

#else // CPU-only build

struct ForestSplitSearchGPU::Impl
{
};

ForestSplitSearchGPU::ForestSplitSearchGPU(const ForestTrainingSet &,
                                           const ForestTrainingOptions &,
                                           const std::vector<double> &,
                                           int,
                                           ForestTrainingStats *)
{
  CANOPY_THROW("TrainForest: backend cuda requested, but this build has no CUDA (CANOPY_USE_CUDA=OFF)");
}

void
ForestSplitSearchGPU::Search(const ForestLevelCandidates &,
                             const std::vector<std::uint64_t> &,
                             ForestLevelSplits &,
                             const std::vector<ForestShardPlacement> *)
{
}

#endif

ForestSplitSearchGPU::~ForestSplitSearchGPU() = default;

bool
ForestSplitSearchGPU::Supports(const ForestTrainingSet & set, const ForestTrainingOptions & o, std::string * why)
{
  std::string reason;
  if (set.numClasses > kForestGpuMaxClasses)
    reason = "at most " + std::to_string(kForestGpuMaxClasses) + " classes on the GPU (got " +
             std::to_string(set.numClasses) + ")";
  else if (o.thresholdCandidates > kForestGpuMaxThresholds)
    reason = "at most " + std::to_string(kForestGpuMaxThresholds) + " threshold candidates on the GPU (got " +
             std::to_string(o.thresholdCandidates) + ")";
  else if (set.images.size() > 32767)
    reason = "at most 32767 images on the GPU (got " + std::to_string(set.images.size()) + ")";
  if (why)
    *why = reason;
  return reason.empty();
}

} // namespace canopy
