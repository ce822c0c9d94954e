#include "canopyForestShards.h"

#include "ParallelFor.h"
#include "canopy/Errors.h"
#include "canopy/ForestTrainingLaunch.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace canopy::detail
{

ForestShards::ForestShards(Collective * comm, std::int64_t localSamples)
  : m_Comm(comm)
  , m_Local(localSamples)
  , m_Global(localSamples)
{
  if (!comm)
    return;
  m_Rank = comm->Rank();
  m_Size = comm->Size();
  std::vector<std::int64_t> counts(m_Size, 0);
  counts[m_Rank] = localSamples;
  comm->SumInPlace(counts.data(), counts.size());
  m_First = 0;
  for (int r = 0; r < m_Rank; ++r)
    m_First += counts[r];
  m_Global = 0;
  for (auto c : counts)
    m_Global += c;
  if (m_Global > std::numeric_limits<std::int32_t>::max())
    CANOPY_THROW("TrainForest: " << m_Global << " samples over all processes; at most 2^31 - 1");
}

std::vector<std::int32_t>
ForestShards::LocalBag(std::mt19937_64 & rng, std::size_t bagSize) const
{
  std::vector<std::int32_t> all(static_cast<std::size_t>(m_Global));
  for (std::size_t i = 0; i < all.size(); ++i)
    all[i] = static_cast<std::int32_t>(i);
  for (std::size_t i = 0; i < bagSize; ++i) // partial Fisher-Yates
    std::swap(all[i], all[i + rng() % (all.size() - i)]);
  all.resize(bagSize);
  std::vector<std::int32_t> local;
  for (std::int32_t g : all)
    if (g >= m_First && g < m_First + m_Local)
      local.push_back(static_cast<std::int32_t>(g - m_First));
  std::sort(local.begin(), local.end()); // sample order = data order, for cache locality
  return local;
}

void
ForestLevelCounts::Finish(const ForestShards & shards, std::vector<std::int64_t> & parts)
{
  const std::size_t N = m_C > 0 ? m_Classes.size() / m_C : 0, S = static_cast<std::size_t>(shards.Size());
  const int         rank = shards.Rank();
  m_Placement.assign(N, ForestShardPlacement{});
  for (std::size_t n = 0; n < N; ++n)
  {
    const std::int64_t *   p = parts.data() + n * S * 2;
    ForestShardPlacement & s = m_Placement[n];
    for (std::size_t r = 0; r < S; ++r)
    {
      s.originals += p[2 * r];
      s.total += p[2 * r] + p[2 * r + 1];
      if (static_cast<int>(r) < rank)
      {
        s.ownFirst += p[2 * r];
        s.ownFirstMirror += p[2 * r + 1];
      }
    }
    s.ownOriginals = p[2 * rank];
    s.ownMirrors = p[2 * rank + 1];
  }
}

void
PickForestThresholdsSharded(ForestLevelCandidates &            c,
                            const std::vector<std::uint64_t> & seeds,
                            const std::vector<float> &         responses,
                            const ForestLevelCounts &          counts,
                            const std::vector<int> &           countsNode,
                            Collective &                       comm,
                            int                                threads)
{
  const int F = c.numFeatures, T = c.numThresholds;
  c.thresholds.assign(static_cast<std::size_t>(c.numNodes) * F * T, 0.0f);
  std::vector<std::int64_t> pending(c.thresholds.size()); // (n * F + f) * T + j, still drawing
  for (std::size_t k = 0; k < pending.size(); ++k)
    pending[k] = static_cast<std::int64_t>(k);
  std::vector<std::uint32_t> bits;
  for (int a = 0; a < kForestPickAttempts && !pending.empty(); ++a)
  {
    bits.assign(pending.size(), 0u);
    ParallelForChunks(static_cast<std::int64_t>(pending.size()),
                      threads,
                      [&](std::int64_t begin, std::int64_t end)
                      {
                        for (std::int64_t i = begin; i < end; ++i)
                        {
                          const std::int64_t k = pending[i];
                          const int n = static_cast<int>(k / (std::int64_t(F) * T)), f = static_cast<int>(k / T % F),
                                    j = static_cast<int>(k % T);
                          const int          node = countsNode[n];
                          const std::int64_t local =
                            counts.LocalPosition(node, ForestThresholdPick(seeds[n], f, j, a, counts.Total(node)));
                          if (local < 0)
                            continue;
                          const std::int64_t first = c.nodeBegin[n], count = c.nodeBegin[n + 1] - first;
                          std::memcpy(&bits[i], responses.data() + first * F + f * count + local, sizeof(float));
                        }
                      });
    comm.BitwiseOrInPlace(bits.data(), bits.size());
    std::size_t waiting = 0;
    for (std::size_t i = 0; i < pending.size(); ++i)
    {
      float value;
      std::memcpy(&value, &bits[i], sizeof(float));
      if (!std::isnan(value))
        c.thresholds[pending[i]] = value + 0.0f; // -0 -> +0: the order is then unique
      else
        pending[waiting++] = pending[i]; // drawn again; 0 when every draw is NaN
    }
    pending.resize(waiting);
  }
  for (std::size_t k = 0; k < c.thresholds.size(); k += T)
    std::sort(c.thresholds.begin() + k, c.thresholds.begin() + k + T);
}

} // namespace canopy::detail
