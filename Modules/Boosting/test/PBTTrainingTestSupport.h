// Synthetic training problems and random trees shared by the PBT training and JSON tests.
#pragma once

#include "canopyPBTTraining.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace canopy::testing
{

struct SyntheticProblem
{
  ResponseMatrix           responses;
  std::vector<std::int8_t> labels;
};

/** Features 0..informative-1 are shift * y + N(0, 1); the rest are N(0, 1); a fraction `flip` of the
 * labels is flipped after the responses are drawn (label noise). */
inline SyntheticProblem
MakeGaussianProblem(int           numFeatures,
                    std::int64_t  numSamples,
                    int           informative,
                    double        shift,
                    double        flip,
                    std::uint64_t seed)
{
  std::mt19937_64                        rng(seed);
  std::normal_distribution<double>       normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  SyntheticProblem                       p;
  p.responses.numFeatures = numFeatures;
  p.responses.numSamples = numSamples;
  p.responses.values.resize(static_cast<std::size_t>(numFeatures) * numSamples);
  p.labels.resize(numSamples);
  for (std::int64_t s = 0; s < numSamples; ++s)
  {
    p.labels[s] = uniform(rng) < 0.5 ? 1 : -1;
  }
  for (int f = 0; f < numFeatures; ++f)
  {
    for (std::int64_t s = 0; s < numSamples; ++s)
    {
      const double signal = f < informative ? shift * p.labels[s] : 0.0;
      p.responses.values[static_cast<std::size_t>(f) * numSamples + s] = static_cast<float>(signal + normal(rng));
    }
  }
  for (auto & y : p.labels)
  {
    if (uniform(rng) < flip)
    {
      y = static_cast<std::int8_t>(-y);
    }
  }
  return p;
}

/** A random tree of exactly `depth` levels below the root (one path reaches it), with random missing
 * children, histogram and stump learners over `numFeatures` features. */
inline PBTModel
MakeRandomTree(int depth, int numFeatures, std::uint64_t seed)
{
  std::mt19937_64                       rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  PBTModel                              m;
  m.sampleBox = { { 5, 5, 5 } };
  m.features.resize(numFeatures);
  struct Item
  {
    int  index, level;
    bool onSpine;
  };
  std::vector<Item> pending{ { 0, 0, true } };
  m.nodes.push_back(PBTNodeFlat{});
  while (!pending.empty())
  {
    const Item item = pending.back();
    pending.pop_back();
    PBTNodeFlat node{};
    node.empiricalPositive = u(rng);
    node.left = node.right = -1;
    node.firstLearner = static_cast<int>(m.learners.size());
    node.calibrationScale = 0.5f + 2.0f * u(rng);
    node.calibrationOffset = u(rng) - 0.5f;
    const bool inner = item.level < depth && (item.onSpine || u(rng) < 0.7f);
    if (inner)
    {
      node.numLearners = 1 + static_cast<int>(u(rng) * 6);
      for (int i = 0; i < node.numLearners; ++i)
      {
        PBTWeakLearnerFlat w{};
        w.feature = static_cast<int>(rng() % numFeatures);
        w.numBins = u(rng) < 0.5f ? 2 : 16;
        w.lo = -2.0f + u(rng);
        w.invBinWidth = w.numBins == 2 ? 1.0f : 4.0f;
        w.tableOffset = static_cast<int>(m.tables.size());
        for (int b = 0; b < w.numBins; ++b)
        {
          m.tables.push_back(2.0f * u(rng) - 1.0f);
        }
        m.learners.push_back(w);
      }
      // The spine continues on one side; the other child may be missing.
      const bool spineRight = u(rng) < 0.5f;
      for (int side = 0; side < 2; ++side)
      {
        const bool isSpine = item.onSpine && ((side == 1) == spineRight);
        if (!isSpine && u(rng) < 0.25f)
        {
          continue;
        }
        const int child = static_cast<int>(m.nodes.size());
        m.nodes.push_back(PBTNodeFlat{});
        (side == 0 ? node.left : node.right) = child;
        pending.push_back(Item{ child, item.level + 1, isSpine });
      }
    }
    m.nodes[item.index] = node;
  }
  return m;
}

/** Fraction of samples whose posterior falls on their label's side of 0.5. */
inline double
Accuracy(const std::vector<float> & posterior, const std::vector<std::int8_t> & labels)
{
  std::int64_t right = 0;
  for (std::size_t s = 0; s < labels.size(); ++s)
  {
    right += (posterior[s] > 0.5f) == (labels[s] > 0) ? 1 : 0;
  }
  return static_cast<double>(right) / static_cast<double>(labels.size());
}

} // namespace canopy::testing
