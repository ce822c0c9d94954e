// The streaming forest's batch steps as host loops over the same items the CUDA kernels run
// (StreamingForestLaunch.h): the kernels' reference, and an emulation of the device forest that the
// CPU tests compare with the CPU forest.
#include "canopy/StreamingForestGrow.h"
#include "canopy/StreamingForestLaunch.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace canopy::host
{

void
StreamRoute(const HoeffdingTreeShape & s, const StreamForestArrays & f, const StreamBatchArgs & b)
{
  for (int p = 0; p < f.trees; ++p)
    for (int i = 0; i < b.n; ++i)
      StreamRouteItem(s, f, b, p, i);
}

void
StreamSumVotes(const HoeffdingTreeShape & s, const StreamBatchArgs & b)
{
  for (int i = 0; i < b.n; ++i)
    StreamSumVotesItem(s, b, i);
}

void
StreamSortKeys(const StreamBatchArgs & b, std::int64_t count)
{
  std::vector<std::int64_t> index(static_cast<std::size_t>(count));
  std::iota(index.begin(), index.end(), std::int64_t(0));
  std::stable_sort(index.begin(), index.end(), [&](std::int64_t l, std::int64_t r) { return b.keys[l] < b.keys[r]; });
  for (std::int64_t k = 0; k < count; ++k)
  {
    b.sortedKeys[k] = b.keys[index[std::size_t(k)]];
    b.sortedOrder[k] = b.order[index[std::size_t(k)]];
  }
}

void
StreamLearn(const HoeffdingTreeShape & s, const StreamForestArrays & f, const StreamBatchArgs & b, std::int64_t count)
{
  if (StreamLearnIsOrderFree(s))
  {
    // As the device's per-tree blocks do: a tree's pairs counted apart (StreamLearnCounts), then every
    // non-zero count added to the tree's.
    std::vector<std::uint32_t> words;
    for (int p = 0; p < f.trees && std::int64_t(p) * b.n < count; ++p)
    {
      if (!b.info[p].active)
        continue;
      StreamLearnCounts counts;
      counts.slots = b.info[p].slots;
      counts.values = f.maxBranches;
      words.assign(std::size_t(counts.slots) * std::size_t(StreamLearnCounts::PerSlot(s, counts.values)), 0u);
      counts.words = words.data();
      const HoeffdingTreeView tree = StreamTreeView(s, f, p);
      for (int i = 0; i < b.n; ++i)
      {
        const std::uint32_t key = b.keys[std::int64_t(p) * b.n + i];
        if (key != kStreamNoKey)
          StreamLearnPairIntoCounts(
            s, tree, counts, b, p, i, int(key % std::uint32_t(f.slotCapacity)), HoeffdingPlainAdd{});
      }
      for (std::size_t k = 0; k < words.size(); ++k)
        if (words[k] != 0)
          *StreamLearnCountTarget(s, tree, counts, std::int64_t(k)) += words[k];
    }
    return;
  }
  for (std::int64_t e = 0; e < count; ++e)
    for (int j = 0; j <= s.subspaceSize; ++j)
      StreamLearnRunItem(s, f, b, count, e, j);
}

void
StreamSplitChecks(const HoeffdingTreeShape & s,
                  const StreamForestArrays & f,
                  const StreamTreeInfo *     info,
                  int                        gracePeriod,
                  std::int32_t *             splitCount,
                  std::int32_t *             splitOfSlot,
                  HoeffdingSplit *           splits)
{
  *splitCount = 0;
  for (int p = 0; p < f.trees; ++p)
    for (int slot = 0; slot < info[p].slots; ++slot)
    {
      HoeffdingSplit split;
      if (StreamSplitCheckItem(s, f, info, gracePeriod, p, slot, &split))
      {
        splits[*splitCount] = split;
        ++*splitCount;
        splitOfSlot[std::int64_t(p) * f.slotCapacity + slot] = *splitCount;
      }
    }
}

void
StreamApplyUpdates(const HoeffdingTreeShape & s,
                   const StreamForestArrays & f,
                   const StreamNodeWrite *    writes,
                   int                        writeCount,
                   const StreamSlotInit *     inits,
                   const std::int32_t *       subspaces,
                   int                        initCount)
{
  for (int k = 0; k < writeCount; ++k)
    StreamWriteNodeItem(f, writes[k]);
  for (int k = 0; k < initCount; ++k)
    StreamInitSlotItem(s, f, inits[k], subspaces + std::int64_t(k) * s.subspaceSize);
}

void
StreamGrowTrees(const HoeffdingTreeShape & s,
                const StreamForestArrays & f,
                const StreamTreeInfo *     info,
                std::uint64_t              seed,
                std::int32_t *             splitOfSlot,
                const HoeffdingSplit *     splits,
                StreamTreeGrowth *         growth,
                std::int32_t *             scratch,
                std::int32_t *             overflow)
{
  for (int p = 0; p < f.trees; ++p)
  {
    if (!info[p].active)
      continue;
    StreamTreeGrowth & g = growth[p];
    int                branches = 0, count = 0, slot = 0, index = 0;
    for (int node = 0; node < g.nodes; ++node)
    {
      const int b = StreamSplitBranchesAt(f, splitOfSlot, splits, p, node, &slot, &index);
      branches += b;
      count += b > 0 ? 1 : 0;
    }
    if (!StreamGrowthFits(f, g, branches, count))
    {
      overflow[0] = 1;
      overflow[1] = std::max(overflow[1], g.nodes + branches);
      overflow[2] = std::max(overflow[2], g.slots + branches - count);
      continue;
    }
    // Node order; a split's children lie past g.nodes, so the loop meets only the batch's leaves.
    int added = 0, before = 0;
    for (int node = 0; node < g.nodes; ++node)
      if (const int b = StreamSplitBranchesAt(f, splitOfSlot, splits, p, node, &slot, &index))
      {
        StreamApplySplitAfter(s, f, seed, g, splitOfSlot, p, node, slot, splits[index], added, before, scratch);
        added += b;
        ++before;
      }
    g = StreamGrowthAfter(g, branches, count);
  }
}

} // namespace canopy::host
