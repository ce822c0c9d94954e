// Multi-class and auto-context PBT models on the command line (Modules/PBTCascade): train-pbt with
// --labels / --classes / --auto-context, and segment with a model holding several classes or stages.
#pragma once

#include "canopyPBTCascade.h"
#include "canopyPBTClassModel.h"
#include "canopyRuns.h"

#include <string>
#include <vector>

namespace canopy::app
{

struct TrainClassesArguments
{
  std::vector<std::string>  images, labels; // label maps hold the class values
  std::string               out, report;
  PBTCascadeTrainingOptions options;
  nlohmann::json            parameters; // train-pbt's options, stored in the model
  bool                      quiet = false;
};

/** Trains and writes a "pbt-classes" model; prints what it did. */
void
RunTrainPBTClasses(const TrainClassesArguments & a);

/** segment with a model of several classes or stages: a label map with every class (the joint
 * decision, or a graph cut per class with --lambda); outputs all or nothing. */
SegmentOutcome
RunSegmentClasses(const SegmentArguments & a, const PBTClassModel & model);

} // namespace canopy::app
