// Breadth-first forest training (CURFIL Algorithm 1, level by level as in Sharp §4). Randomness comes
// from generators seeded by (seed, tree) and (seed, tree, node), so results do not depend on threads.
#include "canopyForestTraining.h"

#include "canopy/Errors.h"
#include "canopy/ForestTrainingLaunch.h"
#include "canopyForestShards.h"
#include "canopyForestTrainingGPU.h"
#include "ParallelFor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>

namespace canopy
{
namespace
{

std::uint64_t
SplitMix(std::uint64_t x)
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t
SeedOf(std::uint64_t seed, std::uint64_t tree, std::uint64_t node)
{
  return SplitMix(SplitMix(SplitMix(seed) ^ tree) ^ (node + 0x1234567ull));
}

void
CheckInputs(const ForestTrainingSet & set, const ForestTrainingOptions & o)
{
  const bool sharded = o.shards != nullptr; // a shard may hold no samples; the union must hold some
  auto require = [](bool ok, const char * what) {
    if (!ok)
      CANOPY_THROW("TrainForest: " << what);
  };
  require(o.numTrees >= 1 && o.numTrees <= kForestMaxTrees, "numTrees must be in [1, 64]");
  require(o.maxDepth >= 0 && o.maxDepth <= 60, "maxDepth must be in [0, 60]");
  require(o.minSamplesToSplit >= 2, "minSamplesToSplit must be at least 2");
  require(o.featureCandidates >= 1 && o.thresholdCandidates >= 1, "feature and threshold candidates must be >= 1");
  require(o.maxOffset >= 0 && o.maxOffset <= kForestMaxOffset, "maxOffset must be in [0, 32767]");
  require(o.maxBoxSize >= 1 && o.maxBoxSize <= kForestMaxBoxSize, "maxBoxSize must be in [1, 255]");
  require(o.baggingFraction > 0.0 && o.baggingFraction <= 1.0, "baggingFraction must be in (0, 1]");
  require(!o.flipPairs || o.maxOffset < kForestMaxOffset, "flipPairs needs maxOffset below 32767 (mirrored offsets)");
  require(!o.flipPairs || set.samples.size() < (std::size_t{ 1 } << 30), "flipPairs allows at most 2^30 samples");
  require(set.numClasses >= 1, "the training set needs numClasses >= 1");
  require(!set.images.empty() && (sharded || !set.samples.empty()), "the training set has no images or no samples");
  for (const auto & image : set.images)
  {
    require(image.numChannels == set.images[0].numChannels && image.numChannels >= 1 && image.numChannels <= 256,
            "every image needs the same number (1 to 256) of channels");
    require((image.scale != nullptr) == (set.images[0].scale != nullptr), "either every image has a scale or none");
  }
  for (std::size_t i = 0; i < set.samples.size(); ++i)
  {
    const ForestSample & s = set.samples[i];
    if (s.image < 0 || s.image >= static_cast<int>(set.images.size()) || s.label < 0 || s.label >= set.numClasses)
      CANOPY_THROW("TrainForest: sample " << i << " has image " << s.image << " and label " << s.label << " (images: "
                                          << set.images.size() << ", classes: " << set.numClasses << ")");
    const ForestImagesView & v = set.images[s.image];
    if (s.x < 0 || s.y < 0 || s.z < 0 || s.x >= v.nx || s.y >= v.ny || s.z >= v.nz)
      CANOPY_THROW("TrainForest: sample " << i << " at (" << s.x << ", " << s.y << ", " << s.z
                                          << ") lies outside its image");
  }
}

struct OpenNode
{
  int                       index; // in the tree's nodes
  int                       depth;
  std::vector<std::int32_t> samples;
};

class TreeBuilder
{
public:
  TreeBuilder(const ForestTrainingSet & set, const ForestTrainingOptions & o, const std::vector<double> & weights,
              int dimension, int tree, ForestSplitSearchGPU * gpu, ForestTrainingStats * stats,
              const detail::ForestShards & shards)
    : m_Set(set)
    , m_Options(o)
    , m_Weights(weights)
    , m_Dimension(dimension)
    , m_Tree(tree)
    , m_Gpu(gpu)
    , m_Stats(stats)
    , m_Shards(shards)
  {}

  /** Grows the tree; nodes get tree-local left indices and distribution indices from `firstDistribution`. */
  void Grow(std::vector<ForestNode> & nodes, std::vector<float> & distributions)
  {
    std::mt19937_64   rng(SeedOf(m_Options.seed, m_Tree, ~0ull));
    const std::size_t bag =
      std::max<std::size_t>(1, std::llround(m_Options.baggingFraction * m_Shards.GlobalSamples()));
    std::vector<std::int32_t> all = m_Shards.LocalBag(rng, bag); // this process's share, ascending
    if (m_Options.flipPairs) // each sample's mirror follows the originals (index + N)
    {
      const auto        n = static_cast<std::int32_t>(m_Set.samples.size());
      const std::size_t originals = all.size();
      for (std::size_t i = 0; i < originals; ++i)
        all.push_back(all[i] + n);
    }

    nodes.assign(1, ForestNode{});
    std::vector<OpenNode> level;
    level.push_back(OpenNode{ 0, 0, std::move(all) });
    while (!level.empty())
    {
      std::vector<OpenNode> next;
      std::vector<int>      splitting; // positions in `level` of the nodes searched for a split
      std::vector<const std::vector<std::int32_t> *> samples;
      for (const OpenNode & node : level)
        samples.push_back(&node.samples);
      // class counts over all processes: the same stops and leaves everywhere
      const detail::ForestLevelCounts counts(
        m_Shards, m_Set.numClasses, samples, [this](std::int32_t s) { return Label(s); }, m_Options.threads);
      for (std::size_t i = 0; i < level.size(); ++i)
      {
        if (CanSplit(level[i], counts, static_cast<int>(i)))
          splitting.push_back(static_cast<int>(i));
        else
          MakeLeaf(nodes[level[i].index], counts.Classes(static_cast<int>(i)), distributions);
      }
      if (!splitting.empty())
        SplitLevel(level, splitting, counts, nodes, distributions, next);
      level = std::move(next);
    }
  }

private:
  int Label(std::int32_t s) const // a mirror (s >= N) has its original's label
  {
    const auto n = static_cast<std::int32_t>(m_Set.samples.size());
    return m_Set.samples[s >= n ? s - n : s].label;
  }

  bool CanSplit(const OpenNode & node, const detail::ForestLevelCounts & counts, int i) const
  {
    if (node.depth >= m_Options.maxDepth || counts.Total(i) < m_Options.minSamplesToSplit)
      return false;
    int present = 0;
    for (int c = 0; c < m_Set.numClasses; ++c)
      present += counts.Classes(i)[c] > 0;
    return present > 1; // else pure
  }

  /** The leaf's distribution from the node's class counts (integers, so the same on every process). */
  void MakeLeaf(ForestNode & node, const std::int64_t * classCounts, std::vector<float> & distributions)
  {
    const int           C = m_Set.numClasses;
    std::vector<double> mass(C, 0.0);
    double              total = 0.0;
    for (int c = 0; c < C; ++c)
    {
      mass[c] = static_cast<double>(classCounts[c]) * m_Weights[c];
      total += mass[c];
    }
    node = ForestNode{};
    node.left = -1 - static_cast<std::int32_t>(distributions.size() / C);
    for (int c = 0; c < C; ++c)
      distributions.push_back(total > 0.0 ? static_cast<float>(mass[c] / total) : 1.0f / C);
  }

  ForestFeatureSampling Sampling() const
  {
    return ForestFeatureSampling{ m_Set.images[0].numChannels, m_Dimension == 2, m_Options.maxOffset,
                                  m_Options.maxBoxSize };
  }

  void SplitLevel(std::vector<OpenNode> & level, const std::vector<int> & splitting,
                  const detail::ForestLevelCounts & counts, std::vector<ForestNode> & nodes,
                  std::vector<float> & distributions, std::vector<OpenNode> & next)
  {
    const int             F = m_Options.featureCandidates, T = m_Options.thresholdCandidates;
    ForestLevelCandidates c;
    c.numNodes = static_cast<int>(splitting.size());
    c.numFeatures = F;
    c.numThresholds = T;
    c.nodeBegin.push_back(0);
    std::vector<std::uint64_t> seeds; // features and threshold picks are counter-based in these
    for (int position : splitting)
    {
      const OpenNode & node = level[position];
      seeds.push_back(SeedOf(m_Options.seed, m_Tree, static_cast<std::uint64_t>(node.index)));
      c.sampleOrder.insert(c.sampleOrder.end(), node.samples.begin(), node.samples.end());
      c.nodeBegin.push_back(static_cast<std::int64_t>(c.sampleOrder.size()));
    }
    if (m_Stats)
    {
      ++m_Stats->levels;
      m_Stats->evaluations += static_cast<std::int64_t>(c.sampleOrder.size()) * F;
    }
    ForestLevelSplits splits;
    if (m_Gpu && m_Shards.Distributed())
    {
      std::vector<ForestShardPlacement> placement;
      for (int position : splitting)
        placement.push_back(counts.Placement(position));
      m_Gpu->Search(c, seeds, splits, &placement);
    }
    else if (m_Gpu)
      m_Gpu->Search(c, seeds, splits);
    else
      SearchCPU(c, seeds, counts, splitting, splits);

    std::vector<int> parents; // split nodes, in order; next[2k], next[2k + 1] are parent k's children
    for (int n = 0; n < c.numNodes; ++n)
    {
      OpenNode & node = level[splitting[n]];
      if (splits.feature[n] < 0) // no split separates anything
      {
        MakeLeaf(nodes[node.index], counts.Classes(splitting[n]), distributions);
        continue;
      }
      ForestNode & split = nodes[node.index];
      split.feature = ForestRandomFeature(seeds[n], splits.feature[n], Sampling());
      split.threshold[0] = -std::numeric_limits<float>::infinity();
      split.threshold[1] = splits.theta[n];
      split.left = static_cast<std::int32_t>(nodes.size());
      const std::int32_t leftIndex = split.left;
      nodes.resize(nodes.size() + 2); // `split` may dangle from here on
      parents.push_back(n);
      next.push_back(OpenNode{ leftIndex, node.depth + 1, {} });
      next.push_back(OpenNode{ leftIndex + 1, node.depth + 1, {} });
    }
    // The children's samples, in the parent's order, filled in parallel (the host's share of a level).
    detail::ParallelForChunks(static_cast<std::int64_t>(parents.size()), m_Options.threads,
                              [&](std::int64_t begin, std::int64_t end) {
                                for (std::int64_t k = begin; k < end; ++k)
                                {
                                  const int          n = parents[k];
                                  const OpenNode &   node = level[splitting[n]];
                                  const std::int64_t first = c.nodeBegin[n], count = c.nodeBegin[n + 1] - first;
                                  OpenNode &         left = next[2 * k];
                                  OpenNode &         right = next[2 * k + 1];
                                  std::int64_t       toRight = 0;
                                  for (std::int64_t i = 0; i < count; ++i)
                                    toRight += splits.right[first + i];
                                  left.samples.reserve(count - toRight);
                                  right.samples.reserve(toRight);
                                  for (std::int64_t i = 0; i < count; ++i)
                                    (splits.right[first + i] ? right : left).samples.push_back(node.samples[i]);
                                }
                              });
  }

  /** The CPU split search: responses -> thresholds -> histograms -> scores -> best per node. */
  void SearchCPU(ForestLevelCandidates & c, const std::vector<std::uint64_t> & seeds,
                 const detail::ForestLevelCounts & counts, const std::vector<int> & splitting,
                 ForestLevelSplits & out) const
  {
    const int F = c.numFeatures, T = c.numThresholds;
    c.features.resize(static_cast<std::size_t>(c.numNodes) * F);
    detail::ParallelForChunks(static_cast<std::int64_t>(c.features.size()), m_Options.threads,
                              [&](std::int64_t begin, std::int64_t end) {
                                for (std::int64_t k = begin; k < end; ++k)
                                  c.features[k] = ForestRandomFeature(seeds[k / F], static_cast<int>(k % F), Sampling());
                              });
    std::vector<float> responses;
    ComputeForestLevelResponsesCPU(m_Set, c, responses, m_Options.threads);
    if (m_Shards.Distributed())
      detail::PickForestThresholdsSharded(c, seeds, responses, counts, splitting, *m_Shards.Comm(), m_Options.threads);
    else
      PickForestThresholdsCPU(c, seeds, responses);
    std::vector<std::uint32_t> histograms;
    AccumulateForestHistogramsCPU(m_Set, c, responses, histograms, m_Options.threads);
    if (m_Shards.Distributed()) // integer counts: the sum is exact in any order
      m_Shards.Comm()->SumInPlace(histograms.data(), histograms.size());
    std::vector<double> scores;
    ScoreForestSplitsCPU(c, m_Set.numClasses, histograms, m_Weights, m_Options.score, scores, m_Options.threads);

    out.feature.assign(c.numNodes, -1);
    out.theta.assign(c.numNodes, 0.0f);
    out.right.assign(c.sampleOrder.size(), 0);
    for (int n = 0; n < c.numNodes; ++n)
    {
      const std::int64_t first = c.nodeBegin[n], count = c.nodeBegin[n + 1] - first;
      const double *     s = scores.data() + static_cast<std::size_t>(n) * F * T;
      std::int64_t       best = 0;
      for (std::int64_t i = 1; i < static_cast<std::int64_t>(F) * T; ++i)
        if (s[i] > s[best])
          best = i;
      if (!(s[best] > 0.0))
        continue;
      const int     f = static_cast<int>(best / T);
      const float * r = responses.data() + first * F + f * count;
      out.feature[n] = f;
      out.theta[n] = c.thresholds[(static_cast<std::size_t>(n) * F + f) * T + best % T];
      for (std::int64_t i = 0; i < count; ++i)
        out.right[first + i] = ForestTest(r[i], -std::numeric_limits<float>::infinity(), out.theta[n]);
    }
  }

  const ForestTrainingSet &     m_Set;
  const ForestTrainingOptions & m_Options;
  const std::vector<double> &   m_Weights;
  int                           m_Dimension;
  int                           m_Tree;
  ForestSplitSearchGPU *        m_Gpu;
  ForestTrainingStats *         m_Stats;
  const detail::ForestShards &  m_Shards;
};

} // namespace

void
PickForestThresholdsCPU(ForestLevelCandidates & c, const std::vector<std::uint64_t> & seeds,
                        const std::vector<float> & responses)
{
  const int F = c.numFeatures, T = c.numThresholds;
  c.thresholds.resize(static_cast<std::size_t>(c.numNodes) * F * T);
  for (int n = 0; n < c.numNodes; ++n)
  {
    const std::int64_t first = c.nodeBegin[n], count = c.nodeBegin[n + 1] - first;
    for (int f = 0; f < F; ++f)
    {
      const float * r = responses.data() + first * F + f * count;
      float *       theta = c.thresholds.data() + (static_cast<std::size_t>(n) * F + f) * T;
      for (int j = 0; j < T; ++j)
      {
        float value = ForestNaN();
        for (int a = 0; a < kForestPickAttempts && std::isnan(value); ++a)
          value = r[ForestThresholdPick(seeds[n], f, j, a, count)];
        theta[j] = std::isnan(value) ? 0.0f : value + 0.0f; // -0 -> +0: the order is then unique
      }
      std::sort(theta, theta + T);
    }
  }
}

ForestModel
TrainForest(const ForestTrainingSet & set, const ForestTrainingOptions & options, ForestTrainingStats * stats)
{
  CheckInputs(set, options);
  if (stats)
    *stats = ForestTrainingStats{};
  // Collective from here on: every process of options.shards passes each reduction in the same order.
  const detail::ForestShards shards(options.shards, static_cast<std::int64_t>(set.samples.size()));
  if (shards.GlobalSamples() == 0)
    CANOPY_THROW("TrainForest: no process of the " << shards.Size() << " holds a sample");
  ForestModel model;
  model.dimension = 2;
  for (const auto & image : set.images)
    model.dimension = image.nz > 1 ? 3 : model.dimension;
  model.numChannels = set.images[0].numChannels;
  model.numClasses = set.numClasses;
  model.usesScale = set.images[0].scale != nullptr;
  if (shards.Distributed()) // the shape of the model, agreed: each maximum and minus each minimum
  {
    std::int64_t agreed[8] = { model.dimension,   -model.dimension,   model.numChannels, -model.numChannels,
                               model.numClasses,  -model.numClasses,  model.usesScale,   -model.usesScale };
    shards.Comm()->MaxInPlace(agreed, 8);
    if (agreed[2] != -agreed[3] || agreed[4] != -agreed[5] || agreed[6] != -agreed[7])
      CANOPY_THROW("TrainForest: the processes' shards differ in channels (" << -agreed[3] << " to " << agreed[2]
                                                                             << "), classes or scale channels");
    model.dimension = static_cast<int>(agreed[0]); // 3 when any process has a volume
  }

  std::vector<double> weights(set.numClasses, 1.0);
  if (options.balanceClasses)
  {
    std::vector<std::int64_t> counts(set.numClasses, 0);
    for (const auto & s : set.samples)
      ++counts[s.label];
    if (shards.Distributed())
      shards.Comm()->SumInPlace(counts.data(), counts.size());
    for (int c = 0; c < set.numClasses; ++c)
      weights[c] = counts[c] > 0 ? double(shards.GlobalSamples()) / (set.numClasses * double(counts[c])) : 0.0;
  }
  std::unique_ptr<ForestSplitSearchGPU> gpu;
  const ResolvedBackend                 backend = ResolveBackend(options.backend);
  // auto keeps to the CPU for problems over the GPU's limits; an explicit cuda request throws there
  bool useGpu = backend.useCuda &&
                (options.backend.kind != BackendKind::Auto || ForestSplitSearchGPU::Supports(set, options));
  if (shards.Distributed()) // every process searches the same way, or none on the GPU
  {
    const bool everywhere = shards.Comm()->AllTrue(useGpu);
    if (useGpu && !everywhere && options.backend.kind != BackendKind::Auto)
      CANOPY_THROW("TrainForest (cuda): another process of the " << shards.Size() << " cannot search on its GPU");
    useGpu = everywhere;
  }
  if (useGpu)
    gpu = std::make_unique<ForestSplitSearchGPU>(set, options, weights, backend.deviceIndex, stats);
  int firstTree = 0;
  if (options.finishedTrees)
  {
    const ForestModel & done = *options.finishedTrees;
    if (done.NumberOfTrees() > options.numTrees || done.dimension != model.dimension ||
        done.numChannels != model.numChannels || done.numClasses != model.numClasses ||
        done.usesScale != model.usesScale)
      CANOPY_THROW("TrainForest: the finished trees ("
                   << done.NumberOfTrees() << " trees, " << done.dimension << "D, " << done.numChannels << " channels, "
                   << done.numClasses << " classes) do not fit this forest (" << options.numTrees << " trees, "
                   << model.dimension << "D, " << model.numChannels << " channels, " << model.numClasses
                   << " classes)");
    model.nodes = done.nodes;
    model.treeRoots = done.treeRoots;
    model.distributions = done.distributions;
    firstTree = done.NumberOfTrees();
  }
  for (int t = firstTree; t < options.numTrees; ++t)
  {
    std::vector<ForestNode> nodes;
    TreeBuilder(set, options, weights, model.dimension, t, gpu.get(), stats, shards).Grow(nodes, model.distributions);
    const std::int32_t root = static_cast<std::int32_t>(model.nodes.size());
    model.treeRoots.push_back(root);
    for (ForestNode n : nodes)
    {
      n.left += ForestIsLeaf(n) ? 0 : root;
      model.nodes.push_back(n);
    }
    if (options.afterTree)
      options.afterTree(model);
  }
  model.Validate("TrainForest");
  return model;
}

} // namespace canopy
