// The streaming forest's splits applied on the device (StreamingForestLaunch.h's step 6): after the
// split checks, each tree takes the splits decided for its leaves in node order, as the CPU's
// HoeffdingTree::AttemptSplit does them one after another, so its nodes, slots and subspace draws get
// the same numbers. A tree's splits are independent of other trees', and within a tree a split's
// numbers follow from how many branches the splits at lower nodes add: a prefix sum over the tree's
// nodes (a block per tree on the GPU, StreamingForestGrow.cu; a loop on the host, the reference).
// Nothing comes back to the host per split: only each tree's counts (StreamTreeGrowth), so the host
// knows its sizes, and a flag when a tree's splits would not fit its arrays (the host grows them and
// runs the step again: a tree that did not fit changed nothing).
// No ITK or CUDA types here.
#pragma once

#include "canopy/StreamingForestLaunch.h"

#include <cstdint>

struct CUstream_st;

namespace canopy
{

/** A physical tree's size and draw counters on the device: what the grow step advances (the host
 * reads them back after each batch and sets them when it starts or restores a tree). */
struct StreamTreeGrowth
{
  std::int32_t  nodes = 0, slots = 0;
  std::uint64_t streamKey = 0;     // the tree's subspace draws' stream (HoeffdingDrawSubspace)
  std::uint64_t leavesCreated = 0; // the draws made: the next leaf's key
};

/** Threads of the grow step's block per tree (its scan over the tree's nodes). */
constexpr int kStreamGrowThreads = 256;

/** HoeffdingDrawSubspace's first subspaceSize entries, without its `attributes`-long permutation:
 * the shuffle's swaps only move values to positions at or after the current one, so a list of the
 * positions moved so far (at most subspaceSize; moved[2 * subspaceSize] is scratch) gives each
 * position's value. The same draws, the same subspace (tested against HoeffdingDrawSubspace). */
CANOPY_HD void
HoeffdingDrawSubspaceSparse(std::uint64_t  seed,
                            std::uint64_t  streamKey,
                            std::uint64_t  leafKey,
                            int            attributes,
                            int            subspaceSize,
                            std::int32_t * subspace,
                            std::int32_t * moved)
{
  if (subspaceSize >= attributes)
  {
    for (int a = 0; a < subspaceSize; ++a)
      subspace[a] = a;
    return;
  }
  std::int32_t * movedTo = moved;                   // a position a swap wrote to,
  std::int32_t * movedValue = moved + subspaceSize; // and the value it left there
  int            count = 0;
  auto           valueAt = [&](int position)
  {
    for (int m = count - 1; m >= 0; --m) // the newest move to a position holds its value
      if (movedTo[m] == position)
        return movedValue[m];
    return position;
  };
  for (int j = 0; j < subspaceSize; ++j)
  {
    const double u = CounterUniform(seed, streamKey, leafKey * 4096u + std::uint64_t(j));
    int          k = j + int(u * double(attributes - j));
    k = k < attributes - 1 ? k : attributes - 1;
    const std::int32_t atJ = valueAt(j);
    subspace[j] = k == j ? atJ : valueAt(k);
    if (k != j)
    {
      movedTo[count] = k;
      movedValue[count] = atJ;
      ++count;
    }
  }
}

/** Where tree p's leaf at `node` splits: the split's branches (0: an inner node, or a leaf with no split
 * decided this batch); *slot and *index: the leaf's slot and its split's index in the batch's list.
 * splitOfSlot: per (tree, slot) key, the split's index + 1, or 0 (the split checks write it). */
CANOPY_HD int
StreamSplitBranchesAt(const StreamForestArrays & f,
                      const std::int32_t *       splitOfSlot,
                      const HoeffdingSplit *     splits,
                      int                        p,
                      int                        node,
                      int *                      slot,
                      int *                      index)
{
  const std::int64_t n = std::int64_t(p) * f.nodeCapacity + node;
  if (f.attribute[n] >= 0)
    return 0;
  *slot = f.child[n];
  *index = splitOfSlot[std::int64_t(p) * f.slotCapacity + *slot] - 1;
  return *index >= 0 ? splits[*index].branches : 0;
}

/** Tree p's split at leaf `node` (slot), as the host's HoeffdingTree::AttemptSplit: the node becomes the
 * split, its children are nodes firstChild.., branch 0 keeps the slot and the others take slots
 * firstNewSlot.., each child's subspace is the tree's next draw (leaf keys firstLeaf..) and its counts
 * are the split's branch counts (childCounts). Clears the slot's split mark. moved: scratch of
 * 2 * subspaceSize. */
CANOPY_HD void
StreamApplySplitItem(const HoeffdingTreeShape & s,
                     const StreamForestArrays & f,
                     std::uint64_t              seed,
                     std::uint64_t              streamKey,
                     std::int32_t *             splitOfSlot,
                     int                        p,
                     int                        node,
                     int                        slot,
                     const HoeffdingSplit &     split,
                     int                        firstChild,
                     int                        firstNewSlot,
                     std::uint64_t              firstLeaf,
                     std::int32_t *             moved)
{
  const HoeffdingTreeView t = StreamTreeView(s, f, p);
  const int               depth = t.slotDepth[slot] + 1; // before branch 0's init rewrites the slot
  StreamWriteNodeItem(f, StreamNodeWrite{ p, node, split.attribute, firstChild, split.heaviest, split.threshold });
  for (int b = 0; b < split.branches; ++b)
  {
    const int      childSlot = b == 0 ? slot : firstNewSlot + b - 1;
    std::int32_t * subspace = t.subspace + std::int64_t(childSlot) * s.subspaceSize;
    HoeffdingDrawSubspaceSparse(
      seed, streamKey, firstLeaf + std::uint64_t(b), s.attributes, s.subspaceSize, subspace, moved);
    // The children's counts are the split's (childCounts of the parent slot), which no init writes, so
    // branch 0 may restart the parent's slot before the others read them.
    StreamInitSlotItem(s, f, StreamSlotInit{ p, childSlot, slot, b, depth }, subspace);
    StreamWriteNodeItem(f, StreamNodeWrite{ p, firstChild + b, -1, childSlot, 0, 0.0f });
  }
  splitOfSlot[std::int64_t(p) * f.slotCapacity + slot] = 0;
}

/** StreamApplySplitItem for tree p (its sizes before the batch's splits: g) at the split whose lower
 * nodes' splits add branchesBefore branches in splitsBefore splits; then, after the tree's last split,
 * StreamGrowthAfter gives its sizes. The host loop and the kernel number the splits through these. */
CANOPY_HD void
StreamApplySplitAfter(const HoeffdingTreeShape & s,
                      const StreamForestArrays & f,
                      std::uint64_t              seed,
                      const StreamTreeGrowth &   g,
                      std::int32_t *             splitOfSlot,
                      int                        p,
                      int                        node,
                      int                        slot,
                      const HoeffdingSplit &     split,
                      int                        branchesBefore,
                      int                        splitsBefore,
                      std::int32_t *             moved)
{
  StreamApplySplitItem(s,
                       f,
                       seed,
                       g.streamKey,
                       splitOfSlot,
                       p,
                       node,
                       slot,
                       split,
                       g.nodes + branchesBefore,
                       g.slots + branchesBefore - splitsBefore,
                       g.leavesCreated + std::uint64_t(branchesBefore),
                       moved);
}

CANOPY_HD StreamTreeGrowth
StreamGrowthAfter(StreamTreeGrowth g, int branches, int count)
{
  g.nodes += branches;
  g.slots += branches - count;
  g.leavesCreated += std::uint64_t(branches);
  return g;
}

/** Whether tree g's splits of this batch (branches in all, count splits) fit the arrays. */
CANOPY_HD bool
StreamGrowthFits(const StreamForestArrays & f, const StreamTreeGrowth & g, int branches, int count)
{
  return std::int64_t(g.nodes) + branches <= f.nodeCapacity &&
         std::int64_t(g.slots) + branches - count <= f.slotCapacity;
}

namespace cuda
{
/** Step 6 for every active tree (info), a block each: its splits applied (StreamApplySplitItem) in node
 * order and growth[p] advanced; a tree whose splits would exceed the arrays' capacity is left as it was,
 * overflow[0] set to 1 and overflow[1], overflow[2] raised to the nodes and slots it needs. scratch:
 * trees x kStreamGrowThreads x 2 x subspaceSize. */
void
LaunchStreamGrowTrees(const HoeffdingTreeShape & s,
                      const StreamForestArrays & f,
                      const StreamTreeInfo *     info,
                      std::uint64_t              seed,
                      std::int32_t *             splitOfSlot,
                      const HoeffdingSplit *     splits,
                      StreamTreeGrowth *         growth,
                      std::int32_t *             scratch,
                      std::int32_t *             overflow,
                      CUstream_st *              stream);
} // namespace cuda

namespace host
{
/** The same step as a loop over trees and their nodes (scratch: 2 x subspaceSize). */
void
StreamGrowTrees(const HoeffdingTreeShape & s,
                const StreamForestArrays & f,
                const StreamTreeInfo *     info,
                std::uint64_t              seed,
                std::int32_t *             splitOfSlot,
                const HoeffdingSplit *     splits,
                StreamTreeGrowth *         growth,
                std::int32_t *             scratch,
                std::int32_t *             overflow);
} // namespace host

} // namespace canopy
