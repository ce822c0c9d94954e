#include "canopySteerablePBT.h"

#include "canopy/Elapsed.h"
#include "canopy/Errors.h"
#include "canopySteerableFeatureBank.h"

#include <algorithm>
#include <chrono>

namespace canopy
{
namespace
{
int
LevelsOf(const SteerablePyramidOptions & pyramid)
{
  return static_cast<int>(pyramid.levelFactors.empty() ? pyramid.levelSpacingsMm.size() : pyramid.levelFactors.size());
}
} // namespace

PBTModel
TrainSteerablePBT(const std::vector<SteerableTrainingSet> & sets,
                  const SteerablePBTTrainingOptions &       options,
                  SteerablePBTTrainingReport *              report,
                  const TrainingProgress &                  progress)
{
  SteerablePBTTrainingReport   local;
  SteerablePBTTrainingReport & out = report ? *report : local;
  out.backend = options.backend.Describe();
  const int numLevels = LevelsOf(options.pyramid);
  ValidateSteerableGrid(options.grid, numLevels);
  std::int64_t numSamples = 0;
  for (const SteerableTrainingSet & set : sets)
  {
    if (set.pyramid == nullptr || set.pyramid->GetNumberOfLevels() != numLevels)
    {
      CANOPY_THROW("steerable PBT training: " << set.name << ": needs a pyramid of " << numLevels << " levels (got "
                                              << (set.pyramid ? set.pyramid->GetNumberOfLevels() : 0) << ")");
    }
    if (set.labels.size() != set.poses.size() || (!set.weights.empty() && set.weights.size() != set.poses.size()))
    {
      CANOPY_THROW("steerable PBT training: " << set.name << ": " << set.poses.size() << " poses but "
                                              << set.labels.size() << " labels and " << set.weights.size()
                                              << " weights");
    }
    numSamples += static_cast<std::int64_t>(set.poses.size());
  }
  const auto exhaustive = static_cast<std::int64_t>(options.grid.size) * options.grid.size * options.grid.size *
                          kSteerableFeatureTypes * numLevels;
  const std::vector<SteerableFeature> bank =
    options.featureBankSize <= 0 || options.featureBankSize >= exhaustive
      ? ExhaustiveSteerableFeatures(options.grid, numLevels)
      : RandomSteerableFeatures(options.grid, numLevels, options.featureBankSize, options.pbt.seed * 7919 + 2);

  // One feature-major matrix; each set's responses land in its columns directly.
  ResponseMatrix responses;
  responses.numFeatures = static_cast<int>(bank.size());
  responses.numSamples = numSamples;
  responses.values.resize(static_cast<std::size_t>(responses.numFeatures) * static_cast<std::size_t>(numSamples));
  std::vector<std::int8_t> labels;
  std::vector<float>       weights;
  const bool weighted = std::any_of(sets.begin(), sets.end(), [](const auto & s) { return !s.weights.empty(); });
  const auto start = std::chrono::steady_clock::now();
  SteerableResponseEngine engine(options.backend, options.pbt.threads);
  std::int64_t            column = 0;
  for (std::size_t k = 0; k < sets.size(); ++k)
  {
    const SteerableTrainingSet & set = sets[k];
    if (progress)
      progress(0.3 * k / sets.size(), "steerable responses of " + set.name);
    engine.SetPyramid(*set.pyramid);
    engine.SetFeatures(options.grid, bank);
    const auto n = static_cast<std::int64_t>(set.poses.size());
    engine.Evaluate(set.poses.data(), n, ResponseLayout{ responses.values.data() + column, numSamples, 1 });
    labels.insert(labels.end(), set.labels.begin(), set.labels.end());
    if (weighted)
    {
      if (set.weights.empty())
        weights.insert(weights.end(), set.poses.size(), 1.0f);
      else
        weights.insert(weights.end(), set.weights.begin(), set.weights.end());
    }
    column += n;
  }
  out.responseSeconds = SecondsSince(start);
  if (std::count(labels.begin(), labels.end(), 1) == 0 || std::count(labels.begin(), labels.end(), -1) == 0)
  {
    CANOPY_THROW("steerable PBT training: the poses need both positive (+1) and negative (-1) labels");
  }

  const auto trainStart = std::chrono::steady_clock::now();
  PBTModel   model = TrainPBT(responses,
                            labels,
                            weights,
                            options.pbt,
                            [&progress](double f, const std::string & stage)
                            {
                              if (progress)
                                progress(0.3 + 0.7 * f, stage);
                            });
  out.trainSeconds = SecondsSince(trainStart);
  const std::vector<float> posterior = EvaluatePBTOnMatrix(model, responses, options.pbt.threads);
  std::int64_t             correct = 0;
  for (std::size_t s = 0; s < labels.size(); ++s)
    correct += (posterior[s] >= 0.5f) == (labels[s] > 0);
  out.trainingAccuracy = labels.empty() ? 0.0 : double(correct) / labels.size();

  model.featureFamily = PBTFeatureFamily::Steerable;
  model.sampleBox = { { 0, 0, 0 } };
  model.steerable.grid = options.grid;
  model.steerable.pyramid = options.pyramid;
  model.steerable.features = bank;
  model.CompactFeatures();
  model.Validate("steerable PBT training");
  out.samples = numSamples;
  out.candidateFeatures = responses.numFeatures;
  out.featuresUsed = model.NumberOfFeatures();
  out.depth = model.Depth();
  out.nodes = static_cast<int>(model.nodes.size());
  if (progress)
    progress(1.0, "done");
  return model;
}

void
SetSteerablePBT(SteerableResponseEngine & engine, const PBTModel & model)
{
  model.Validate("steerable PBT");
  if (model.featureFamily != PBTFeatureFamily::Steerable)
  {
    CANOPY_THROW("steerable PBT: the model reads " << PBTFeatureFamilyName(model.featureFamily)
                                                   << " features, not steerable ones");
  }
  engine.SetFeatures(model.steerable.grid, model.steerable.features);
  engine.SetTree(model.View());
}

} // namespace canopy
