#include "canopyForestRandom.h"
#include "canopy/PortableRandom.h"

#include "canopy/Errors.h"

#include <cmath>
#include <limits>
#include <random>

namespace canopy
{

ForestModel
MakeRandomForest(const RandomForestOptions & o, const ForestImagesView * image)
{
  if (o.numTrees < 1 || o.numTrees > kForestMaxTrees || o.depth < 0 || o.depth > 30 || o.numClasses < 1)
  {
    CANOPY_THROW("MakeRandomForest: numTrees (" << o.numTrees << ") must be in [1, " << kForestMaxTrees
                                                << "], depth (" << o.depth << ") in [0, 30], classes positive");
  }
  ForestModel model;
  model.dimension = o.dimension;
  model.numChannels = o.numChannels;
  model.numClasses = o.numClasses;
  model.usesScale = o.usesScale;
  std::mt19937_64 rng(o.seed);
  auto uniform = [&](int low, int high) { return low + static_cast<int>(rng() % std::uint64_t(high - low + 1)); };
  auto unit = [&] { return UniformUnit(rng); };
  auto newDistribution = [&] {
    double total = 0;
    std::vector<float> p(o.numClasses);
    for (auto & v : p)
      total += v = float(std::pow(unit(), 4.0)); // peaked, as trained leaves are
    for (auto & v : p)
      model.distributions.push_back(float(v / total));
  };
  for (int d = 0; d < o.distributionPool; ++d)
    newDistribution();
  for (int t = 0; t < o.numTrees; ++t)
  {
    const int root = int(model.nodes.size());
    model.treeRoots.push_back(root);
    std::vector<int> level{ root };
    model.nodes.push_back(ForestNode{});
    for (int depth = 0; !level.empty(); ++depth)
    {
      std::vector<int> next;
      for (int index : level)
      {
        ForestNode node{};
        if (depth >= o.depth || (depth > 0 && unit() < o.leafProbability))
        {
          int d;
          if (o.distributionPool > 0)
            d = uniform(0, o.distributionPool - 1);
          else
          {
            d = int(model.distributions.size() / o.numClasses);
            newDistribution();
          }
          node.left = -1 - d;
          model.nodes[index] = node;
          continue;
        }
        for (int b = 0; b < 2; ++b)
        {
          node.feature.channel[b] = std::uint8_t(uniform(0, o.numChannels - 1));
          for (int a = 0; a < 3; ++a)
          {
            const bool flat = a == 2 && o.dimension == 2;
            node.feature.offset[b][a] = std::int16_t(flat ? 0 : uniform(-o.maxOffset, o.maxOffset));
            node.feature.size[b][a] = std::uint8_t(flat ? 1 : uniform(1, o.maxBoxSize));
          }
        }
        float theta = float(2.0 * unit() - 1.0);
        if (image)
        {
          const int x = uniform(0, image->nx - 1), y = uniform(0, image->ny - 1), z = uniform(0, image->nz - 1);
          const float r = ForestResponseAt(*image, node.feature, x, y, z);
          theta = std::isnan(r) ? 0.0f : r;
        }
        node.threshold[0] = -std::numeric_limits<float>::infinity();
        node.threshold[1] = theta;
        if (unit() < o.twoSidedFraction)
        {
          // A band around theta: theta0 <= rho < theta1.
          const float width = std::abs(theta) * 0.5f + 0.25f;
          node.threshold[0] = theta - width;
          node.threshold[1] = theta + width;
        }
        node.left = int(model.nodes.size());
        model.nodes[index] = node;
        model.nodes.push_back(ForestNode{});
        model.nodes.push_back(ForestNode{});
        next.push_back(node.left);
        next.push_back(node.left + 1);
      }
      level = std::move(next);
    }
  }
  model.Validate("MakeRandomForest");
  return model;
}

} // namespace canopy
