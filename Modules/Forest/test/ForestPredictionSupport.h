// Reference forest prediction written independently of ForestPredictVoxel: pointer chasing with an
// explicit branch per node, for checking the flat, branch-free traversal and the output modes.
#pragma once

#include "canopyForestModel.h"

#include <cstdint>
#include <vector>

namespace canopy::testing
{

/** Leaf (index within tree t) reached by voxel (x, y, z). */
inline int
ReferenceLeaf(const ForestModel & m, const ForestImagesView & image, int t, int x, int y, int z)
{
  const int root = m.treeRoots[t];
  int       i = root;
  while (m.nodes[i].left >= 0)
  {
    const ForestNode & n = m.nodes[i];
    const float        rho = ForestResponseAt(image, n.feature, x, y, z);
    if (rho >= n.threshold[0] && rho < n.threshold[1])
      i = n.left + 1;
    else
      i = n.left;
  }
  return i - root;
}

struct ReferencePrediction
{
  std::vector<float>        distribution; // numClasses per voxel
  std::vector<std::int32_t> argMax, treeLeaf, forestLeaves;
};

inline ReferencePrediction
PredictReference(const ForestModel & m, const ForestImagesView & image)
{
  ReferencePrediction r;
  const int           C = m.numClasses, T = m.NumberOfTrees();
  for (int z = 0; z < image.nz; ++z)
    for (int y = 0; y < image.ny; ++y)
      for (int x = 0; x < image.nx; ++x)
      {
        std::vector<double> p(C, 0.0);
        for (int t = 0; t < T; ++t)
        {
          const int leaf = ReferenceLeaf(m, image, t, x, y, z);
          r.forestLeaves.push_back(leaf);
          if (t == 0)
            r.treeLeaf.push_back(leaf);
          const int d = -1 - m.nodes[m.treeRoots[t] + leaf].left;
          for (int c = 0; c < C; ++c)
            p[c] += m.distributions[std::size_t(d) * C + c];
        }
        int best = 0;
        for (int c = 0; c < C; ++c)
        {
          r.distribution.push_back(float(p[c] / T));
          best = p[c] > p[best] ? c : best;
        }
        r.argMax.push_back(best);
      }
  return r;
}

} // namespace canopy::testing
