// Flat decision-forest layout (Sharp 2008 §3.1) and its traversal, shared by CPU and CUDA code.
// Every tree is stored breadth-first; trees are concatenated in one node array and found through
// per-tree root offsets. An inner node holds its feature, thresholds and the index of its left child;
// the right child is the next node (left + 1), so the next node is computed from the test result
// (left + test) rather than chosen by a branch. A leaf holds -(1 + d) in place of the left index,
// where d indexes the leaf-distribution array (numClasses floats per distribution; leaves may share one).
#pragma once

#include "canopy/ForestFeature.h"

#include <cstdint>

namespace canopy
{

/** 32 bytes, 16-byte aligned: two vector loads on the GPU. */
struct alignas(16) ForestNode
{
  ForestFeature feature;      // 20 bytes
  std::int32_t  left;         // inner: absolute index of the left child (> this node's); leaf: -(1 + d)
  float         threshold[2]; // theta0 <= rho < theta1 goes right (left + 1); else (NaN too) left
};
static_assert(sizeof(ForestNode) == 32, "ForestNode must stay 32 bytes");

/** Trees a prediction kernel keeps leaf indices of, per voxel (Distribution/ArgMax combine them). */
constexpr int kForestMaxTrees = 64;

enum class ForestOutputMode : int
{
  Distribution = 0, // numClasses floats per voxel: the mean over trees of the leaves' distributions
  ArgMax = 1,       // one int32 per voxel: the class of largest mean probability (lowest on ties)
  ForestLeaves = 2, // numTrees int32 per voxel: the leaf reached in each tree (node index within its tree)
  TreeLeaf = 3      // one int32 per voxel: the leaf reached in the first tree
};

struct ForestView
{
  const ForestNode *   nodes = nullptr;
  const std::int32_t * treeRoots = nullptr;     // numTrees absolute node indices
  const float *        distributions = nullptr; // numDistributions * numClasses
  int                  numTrees = 0;
  int                  numNodes = 0;
  int                  numClasses = 0;
  int                  numDistributions = 0;
};

CANOPY_HD bool
ForestIsLeaf(const ForestNode & node)
{
  return node.left < 0;
}

CANOPY_HD int
ForestLeafDistribution(const ForestNode & node)
{
  return -1 - node.left;
}

/** Values written per voxel in `mode`. */
CANOPY_HD int
ForestComponents(const ForestView & forest, ForestOutputMode mode)
{
  return mode == ForestOutputMode::Distribution ? forest.numClasses
                                                : (mode == ForestOutputMode::ForestLeaves ? forest.numTrees : 1);
}

/** Walks one tree from `root` for the voxel (x, y, z) at scale s; returns the absolute index of the
 * leaf and leaves the leaf in `node`. loadNode(i) -> ForestNode lets kernels choose the memory the
 * forest is read from. Terminates because every left index exceeds its node's (ForestModel::Validate). */
template <bool kPlanar, bool kScaled, typename TLoadNode>
CANOPY_HD int
ForestDescend(const ForestImagesView & images, TLoadNode && loadNode, int root, int x, int y, int z, float s,
              ForestNode & node)
{
  int index = root;
  node = loadNode(index);
  while (!ForestIsLeaf(node))
  {
    const float rho = ForestResponse<kPlanar, kScaled>(images, node.feature, x, y, z, s);
    index = node.left + static_cast<int>(ForestTest(rho, node.threshold[0], node.threshold[1]));
    node = loadNode(index);
  }
  return index;
}

/** Everything one voxel contributes to the output, in the same arithmetic on CPU and GPU: `out` points
 * at the voxel's ForestComponents values (float for Distribution, int32 otherwise). `leaves` is
 * scratch for numTrees indices. The distribution of class c is (sum over trees in order) / numTrees.
 * kScaled must be true when images.scale is set (false only saves arithmetic: s is then 1). */
template <bool kPlanar, bool kScaled, typename TLoadNode, typename TLoadRoot, typename TLoadDistribution>
CANOPY_HD void
ForestPredictVoxel(const ForestView & forest, const ForestImagesView & images, ForestOutputMode mode,
                   TLoadNode && loadNode, TLoadRoot && loadRoot, TLoadDistribution && loadDistribution, int x, int y,
                   int z, float * outDistribution, std::int32_t * outIndex)
{
  const float s = ForestScaleAt(images, x, y, z);
  if (mode == ForestOutputMode::TreeLeaf || mode == ForestOutputMode::ForestLeaves)
  {
    const int trees = mode == ForestOutputMode::TreeLeaf ? 1 : forest.numTrees;
    for (int t = 0; t < trees; ++t)
    {
      const int root = loadRoot(t);
      ForestNode leaf;
      outIndex[t] = ForestDescend<kPlanar, kScaled>(images, loadNode, root, x, y, z, s, leaf) - root;
    }
    return;
  }
  int leaves[kForestMaxTrees]; // distribution offsets of the leaves reached
  for (int t = 0; t < forest.numTrees; ++t)
  {
    ForestNode leaf;
    ForestDescend<kPlanar, kScaled>(images, loadNode, loadRoot(t), x, y, z, s, leaf);
    leaves[t] = ForestLeafDistribution(leaf) * forest.numClasses;
  }
  const float invTrees = 1.0f / static_cast<float>(forest.numTrees);
  float       best = 0.0f;
  int         bestClass = 0;
  for (int c = 0; c < forest.numClasses; ++c)
  {
    float sum = 0.0f;
    for (int t = 0; t < forest.numTrees; ++t)
    {
      sum += loadDistribution(leaves[t] + c);
    }
    if (mode == ForestOutputMode::Distribution)
    {
      outDistribution[c] = sum * invTrees;
    }
    else if (c == 0 || sum > best)
    {
      best = sum;
      bestClass = c;
    }
  }
  if (mode == ForestOutputMode::ArgMax)
  {
    outIndex[0] = bestClass;
  }
}

} // namespace canopy
