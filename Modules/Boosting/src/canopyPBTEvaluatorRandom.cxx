#include "canopyHaarFeatureBank.h"
#include "canopyPBTEvaluator.h"

#include <random>

namespace canopy
{

PBTModel
MakeRandomPBTModel(const RandomPBTModelOptions & options)
{
  std::mt19937_64                       rng(options.seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  auto uniform = [&](float a, float b) { return a + (b - a) * unit(rng); };

  PBTModel model;
  model.sampleBox = options.sampleBox;
  RandomHaarBankOptions bank;
  bank.count = options.numFeatures;
  bank.seed = options.seed * 7919 + 1;
  model.features = GenerateRandomHaarBank(bank);

  // Breadth-first: a node at level < depth is inner; its children exist (always for a full tree).
  std::vector<int> level{ 0 };
  model.nodes.push_back(PBTNodeFlat{});
  for (std::size_t i = 0; i < model.nodes.size(); ++i)
  {
    PBTNodeFlat node{};
    node.left = node.right = -1;
    node.empiricalPositive = unit(rng);
    if (level[i] < options.depth)
    {
      for (int * child : { &node.left, &node.right })
      {
        if (options.fullTree || unit(rng) < 0.8f)
        {
          *child = static_cast<int>(model.nodes.size());
          model.nodes.push_back(PBTNodeFlat{});
          level.push_back(level[i] + 1);
        }
      }
    }
    const bool inner = node.left >= 0 || node.right >= 0;
    if (inner)
    {
      node.firstLearner = static_cast<int>(model.learners.size());
      node.numLearners = options.learnersPerNode;
      node.calibrationScale = uniform(0.5f, 2.0f);
      node.calibrationOffset = uniform(-0.5f, 0.5f);
      for (int k = 0; k < options.learnersPerNode; ++k)
      {
        PBTWeakLearnerFlat learner{};
        learner.feature = static_cast<int>(rng() % model.features.size());
        learner.tableOffset = static_cast<int>(model.tables.size());
        if (options.mixStumps && rng() % 4 == 0)
        {
          // Discrete AdaBoost stump: threshold t, table {-a, +a} (PBTFlat.h).
          learner.numBins = 2;
          learner.lo = uniform(options.responseLow, options.responseHigh) - 1.0f;
          learner.invBinWidth = 1.0f;
          const float a = uniform(0.0f, options.tableScale);
          model.tables.push_back(-a);
          model.tables.push_back(a);
        }
        else
        {
          const float mid = options.responseLow + (options.responseHigh - options.responseLow) * 0.5f;
          const float lo = uniform(options.responseLow, mid);
          const float hi = uniform(mid, options.responseHigh);
          learner.numBins = options.numBins;
          learner.lo = lo;
          learner.invBinWidth = options.numBins / (hi - lo);
          for (int b = 0; b < options.numBins; ++b)
          {
            model.tables.push_back(uniform(-options.tableScale, options.tableScale));
          }
        }
        model.learners.push_back(learner);
      }
    }
    model.nodes[i] = node;
  }
  model.Validate("MakeRandomPBTModel");
  return model;
}

} // namespace canopy
