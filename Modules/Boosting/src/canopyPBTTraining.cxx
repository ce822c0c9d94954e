#include "canopyPBTTraining.h"

#include "ParallelFor.h" // Kernels/src, a private include path of canopy_pbt
#include "canopy/Collective.h"
#include "canopy/Errors.h"
#include "canopy/ExactSum.h"
#include "canopyAdaBoost.h"

#include <cmath>
#include <deque>
#include <numeric>
#include <random>

namespace canopy
{
namespace
{

void
CheckInputs(const ResponseMatrix &           responses,
            const std::vector<std::int8_t> & labels,
            const std::vector<float> &       weights,
            const PBTTrainingOptions &       o)
{
  if (responses.numFeatures < 1 || responses.numSamples < 1 ||
      responses.values.size() != static_cast<std::size_t>(responses.numFeatures) * responses.numSamples)
  {
    CANOPY_THROW("TrainPBT: the response matrix must hold numFeatures x numSamples values (got "
                 << responses.numFeatures << " x " << responses.numSamples << " and " << responses.values.size()
                 << " values)");
  }
  if (labels.size() != static_cast<std::size_t>(responses.numSamples))
  {
    CANOPY_THROW("TrainPBT: " << labels.size() << " labels for " << responses.numSamples << " samples");
  }
  for (auto y : labels)
  {
    if (y != 1 && y != -1)
    {
      CANOPY_THROW("TrainPBT: labels must be +1 or -1, got " << static_cast<int>(y));
    }
  }
  if (!weights.empty() && weights.size() != labels.size())
  {
    CANOPY_THROW("TrainPBT: " << weights.size() << " weights for " << labels.size() << " samples");
  }
  for (float w : weights)
  {
    if (!(w >= 0.0f) || !std::isfinite(w))
    {
      CANOPY_THROW("TrainPBT: sample weights must be finite and >= 0");
    }
  }
  if (o.maxDepth < 0 || o.maxDepth > kPBTMaxDepth)
  {
    CANOPY_THROW("TrainPBT: maxDepth must be 0.." << kPBTMaxDepth << ", got " << o.maxDepth);
  }
  if (o.weakLearnersPerNode < 1)
  {
    CANOPY_THROW("TrainPBT: weakLearnersPerNode must be >= 1, got " << o.weakLearnersPerNode);
  }
  if (o.histogramBins < 2 || o.histogramBins > 256)
  {
    CANOPY_THROW("TrainPBT: histogramBins must be 2..256, got " << o.histogramBins);
  }
  if (!(o.purityStop > 0.5 && o.purityStop <= 1.0))
  {
    CANOPY_THROW("TrainPBT: purityStop must lie in (0.5, 1], got " << o.purityStop);
  }
  if (!(o.softBand >= 0.0 && o.softBand <= 0.5))
  {
    CANOPY_THROW("TrainPBT: softBand must lie in [0, 0.5], got " << o.softBand);
  }
  if (!(o.epsilon1 >= 0.0f && o.epsilon1 <= 0.5f) || !(o.epsilon2 >= 0.0f && o.epsilon2 <= 0.5f))
  {
    CANOPY_THROW("TrainPBT: epsilon1 and epsilon2 must lie in [0, 0.5]");
  }
  if (!(o.histogramSmoothing > 0.0) || !std::isfinite(o.histogramSmoothing))
  {
    CANOPY_THROW("TrainPBT: histogramSmoothing must be finite and > 0, got " << o.histogramSmoothing);
  }
  if (!std::isfinite(o.earlyStopError))
  {
    CANOPY_THROW("TrainPBT: earlyStopError must be finite");
  }
}

/** SplitMix64: independent, well-mixed seeds per node from one user seed. */
std::uint64_t
MixSeed(std::uint64_t seed, std::uint64_t node)
{
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (node + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/** Divides the node's weights by their exact total over every process (a collective call). */
void
Normalize(NodeSamples & s, Collective & processes)
{
  ExactSum total;
  for (double w : s.weight)
  {
    total.Add(w);
  }
  ExactSum::SumOverProcesses(processes, &total, 1);
  const double value = total.Value();
  for (double & w : s.weight)
  {
    w /= value;
  }
}

void
Append(NodeSamples & s, std::int64_t index, std::int8_t label, double weight)
{
  s.index.push_back(index);
  s.label.push_back(label);
  s.weight.push_back(weight);
}

struct PendingNode
{
  int         node;
  int         depth;
  NodeSamples samples;
};

} // namespace

PBTModel
TrainPBT(const ResponseMatrix &           responses,
         const std::vector<std::int8_t> & labels,
         const std::vector<float> &       weights,
         const PBTTrainingOptions &       options,
         const TrainingProgress &         progress)
{
  CheckInputs(responses, labels, weights, options);
  auto report = [&](double fraction, const std::string & stage)
  {
    if (progress)
    {
      progress(fraction, stage);
    }
  };
  SingleProcessCollective alone;
  Collective &            world = options.shards ? *options.shards : alone;
  report(0.0, "binning feature responses");
  const BinnedResponses binned = BinResponses(responses, options.histogramBins, options.threads, &world);

  PBTModel model;
  model.epsilon1 = options.epsilon1;
  model.epsilon2 = options.epsilon2;

  NodeSamples root;
  for (std::int64_t s = 0; s < responses.numSamples; ++s)
  {
    const double w = weights.empty() ? 1.0 : weights[s];
    if (w > 0.0)
    {
      Append(root, s, labels[s], w);
    }
  }
  std::int64_t rootCount = static_cast<std::int64_t>(root.index.size());
  world.SumInPlace(&rootCount, 1);
  if (rootCount == 0)
  {
    CANOPY_THROW("TrainPBT: every sample has weight zero");
  }
  Normalize(root, world);

  AdaBoostOptions boost;
  boost.numLearners = options.weakLearnersPerNode;
  boost.candidatesPerRound = options.featureCandidatesPerRound;
  boost.kind = options.kind;
  boost.earlyStopError = options.earlyStopError;
  boost.histogramSmoothing = options.histogramSmoothing;
  boost.threads = options.threads;

  model.nodes.push_back(PBTNodeFlat{});
  std::deque<PendingNode> queue;
  queue.push_back(PendingNode{ 0, 0, std::move(root) });
  // Breadth-first: when a level starts, all its nodes are queued, which gives the progress fraction.
  int                level = -1;
  double             levelTotal = 0.0;
  double             levelDone = 0.0;
  const double       levels = options.maxDepth + 1.0;
  std::vector<float> scores;
  while (!queue.empty())
  {
    PendingNode pending = std::move(queue.front());
    queue.pop_front();
    if (pending.depth != level)
    {
      level = pending.depth;
      levelDone = 0.0;
      levelTotal = static_cast<double>(pending.samples.index.size());
      for (const auto & p : queue)
      {
        levelTotal += static_cast<double>(p.samples.index.size());
      }
    }
    const NodeSamples & samples = pending.samples;
    ExactSum            sums[2]; // positive weight, squared weights
    for (std::size_t i = 0; i < samples.index.size(); ++i)
    {
      if (samples.label[i] > 0)
      {
        sums[0].Add(samples.weight[i]);
      }
      sums[1].Add(samples.weight[i] * samples.weight[i]);
    }
    ExactSum::SumOverProcesses(world, sums, 2);
    const double positive = sums[0].Value();
    const double squares = sums[1].Value();
    PBTNodeFlat  node{};
    node.firstLearner = static_cast<int>(model.learners.size());
    node.numLearners = 0;
    node.calibrationScale = 2.0f;
    node.calibrationOffset = 0.0f;
    node.empiricalPositive = static_cast<float>(std::clamp(positive, 0.0, 1.0));
    node.left = -1;
    node.right = -1;
    const double effectiveCount = 1.0 / squares; // (Σw)² / Σw² with Σw = 1
    const bool   stop = pending.depth >= options.maxDepth || effectiveCount < options.minSamplesToSplit ||
                      positive >= options.purityStop || positive <= 1.0 - options.purityStop;
    if (!stop)
    {
      std::mt19937_64  rng(MixSeed(options.seed, static_cast<std::uint64_t>(pending.node)));
      StrongClassifier strong = TrainAdaBoost(responses, binned, samples, boost, rng, scores, &world);
      if (strong.informative)
      {
        const int tableBase = static_cast<int>(model.tables.size());
        for (auto learner : strong.learners)
        {
          learner.tableOffset += tableBase;
          model.learners.push_back(learner);
        }
        model.tables.insert(model.tables.end(), strong.tables.begin(), strong.tables.end());
        node.numLearners = static_cast<int>(strong.learners.size());
        node.calibrationScale = strong.calibrationScale;
        node.calibrationOffset = strong.calibrationOffset;

        // Route with the evaluator's own q (same float sum and sigmoid), Tu's soft band in between.
        NodeSamples left, right;
        for (std::size_t i = 0; i < samples.index.size(); ++i)
        {
          const float  z = node.calibrationScale * scores[i] + node.calibrationOffset;
          const double q = 1.0f / (1.0f + expf(-z));
          const double w = samples.weight[i];
          if (q - 0.5 > options.softBand)
          {
            Append(right, samples.index[i], samples.label[i], w);
          }
          else if (0.5 - q > options.softBand)
          {
            Append(left, samples.index[i], samples.label[i], w);
          }
          else
          {
            if (q > 0.0)
            {
              Append(right, samples.index[i], samples.label[i], w * q);
            }
            if (q < 1.0)
            {
              Append(left, samples.index[i], samples.label[i], w * (1.0 - q));
            }
          }
        }
        std::int64_t childCounts[2] = { static_cast<std::int64_t>(left.index.size()),
                                        static_cast<std::int64_t>(right.index.size()) };
        world.SumInPlace(childCounts, 2);
        for (NodeSamples * child : { &left, &right })
        {
          if (childCounts[child == &left ? 0 : 1] == 0)
          {
            continue; // stays -1: evaluation uses this node's empirical value there
          }
          Normalize(*child, world);
          const int index = static_cast<int>(model.nodes.size());
          (child == &left ? node.left : node.right) = index;
          model.nodes.push_back(PBTNodeFlat{});
          queue.push_back(PendingNode{ index, pending.depth + 1, std::move(*child) });
        }
      }
    }
    model.nodes[pending.node] = node;
    levelDone += static_cast<double>(samples.index.size());
    report(std::min(1.0, (level + levelDone / levelTotal) / levels),
           "training level " + std::to_string(level) + ", node " + std::to_string(pending.node));
  }
  report(1.0, "done");
  return model;
}

std::vector<float>
EvaluatePBTOnMatrix(const PBTModel & model, const ResponseMatrix & responses, int threads)
{
  if (responses.numFeatures < 0 || responses.numSamples < 0 ||
      responses.values.size() != static_cast<std::size_t>(responses.numFeatures) * responses.numSamples)
  {
    CANOPY_THROW("EvaluatePBTOnMatrix: the response matrix must hold numFeatures x numSamples values");
  }
  // Validate the structure against the matrix's features (training leaves the bank to the caller).
  PBTModel structure;
  structure.nodes = model.nodes;
  structure.learners = model.learners;
  structure.tables = model.tables;
  structure.features.resize(responses.numFeatures);
  structure.sampleBox = { { 1, 1, 1 } };
  structure.epsilon1 = model.epsilon1;
  structure.epsilon2 = model.epsilon2;
  structure.Validate("EvaluatePBTOnMatrix");

  std::vector<float> out(responses.numSamples);
  const PBTView      view = model.View();
  detail::ParallelForChunks(responses.numSamples,
                            threads,
                            [&](std::int64_t begin, std::int64_t end)
                            {
                              for (std::int64_t s = begin; s < end; ++s)
                              {
                                auto responseOf = [&](int f) { return responses.at(f, s); };
                                out[s] = PbtPosteriorStack<kPBTStackSize>(view, responseOf);
                              }
                            });
  return out;
}

} // namespace canopy
