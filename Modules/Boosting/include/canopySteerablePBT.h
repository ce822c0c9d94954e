// A PBT on steerable features of pose hypotheses: the orientation and scale stages of marginal-space
// learning (issue 9 part 3) train one on labelled poses and score candidate poses with it. Training
// computes the responses of a steerable bank at the poses with SteerableResponseEngine (on the GPU
// when one is used, as Haar training does with HaarResponseEngine) and then runs the same TrainPBT;
// scoring runs the same traversal as every PBT (PbtPosteriorStack through PBTHypotheses.h).
#pragma once

#include "canopy/Device.h"
#include "canopyPBTTraining.h"
#include "canopySteerablePyramid.h"
#include "canopySteerableResponseEngine.h"

#include <cstdint>
#include <string>
#include <vector>

namespace canopy
{

/** Labelled hypotheses of one volume. */
struct SteerableTrainingSet
{
  const SteerablePyramid *   pyramid = nullptr; // built with the training options' pyramid; outlives training
  std::vector<SteerablePose> poses;
  std::vector<std::int8_t>   labels;  // +1 (a pose of the structure) / -1
  std::vector<float>         weights; // empty: uniform; otherwise one per pose
  std::string                name;    // for messages
};

struct SteerablePBTTrainingOptions
{
  SteerableGrid           grid{ 5, 1.0f };
  SteerablePyramidOptions pyramid; // recorded in the model; every set's pyramid must have as many levels
  /** Candidate features: a seeded random bank of this many (RandomSteerableFeatures), or the exhaustive
   * bank when 0 or at least its size (grid.size^3 x 24 x levels). */
  int                featureBankSize = 2000;
  PBTTrainingOptions pbt;
  ResolvedBackend    backend;
};

struct SteerablePBTTrainingReport
{
  double       responseSeconds = 0.0;
  double       trainSeconds = 0.0;
  std::int64_t samples = 0;
  int          candidateFeatures = 0;
  int          featuresUsed = 0;
  int          depth = 0;
  int          nodes = 0;
  std::string  backend;
  double       trainingAccuracy = 0.0; // at p >= 0.5 on the training poses
};

/** A steerable-feature PBT (featureFamily Steerable, the bank compacted to the features it uses).
 * Throws canopy::Error naming the set for a missing pyramid, a level count different from the
 * options', labels or weights that do not match the poses, or no positive or no negative pose. */
PBTModel
TrainSteerablePBT(const std::vector<SteerableTrainingSet> & sets,
                  const SteerablePBTTrainingOptions &       options,
                  SteerablePBTTrainingReport *              report = nullptr,
                  const TrainingProgress &                  progress = {});

/** Binds a steerable PBT to an engine: the model's bank and tree are set on `engine` (whose pyramid
 * must be set, with the model's number of levels); then engine.EvaluatePBT(poses, n, scores) scores
 * hypotheses. Throws canopy::Error when the model is not a valid steerable PBT. */
void
SetSteerablePBT(SteerableResponseEngine & engine, const PBTModel & model);

} // namespace canopy
