// The run behind `canopy scribble-segment` (segmentation from scribbles with a voxel classifier learnt
// online, issue 11), as a function taking its arguments and returning what it learnt: the canopy
// command line and the 3D Slicer CLI module CanopyScribbleSegment call it.
#pragma once

#include "canopyScribbleClassifier.h"

#include <cstdint>
#include <string>
#include <vector>

namespace canopy::app
{
struct ScribbleArguments
{
  /** output: the foreground label's probability; labelsOut: the most probable label (optional);
   * modelIn: continue a saved classifier (give the new strokes); modelOut: save it; bank: the filter
   * bank of a new classifier ("" = the default). */
  std::string               image, scribbles, output, labelsOut, modelIn, modelOut, bank, report;
  int                       foregroundLabel = 0; // 0: the largest label value
  bool                      quiet = false;
  ScribbleClassifierOptions options;
};

struct ScribbleOutcome
{
  std::vector<int> labels;              // the classifier's label values (ascending)
  std::int64_t     voxelsLearnt = 0;    // labelled voxels learnt by this run
  std::int64_t     instancesLearnt = 0; // instances the classifier has learnt in all (passes included)
};

/** Learns the scribbles (continuing modelIn when given), predicts every voxel and writes the outputs all
 * together or none (canopy::Error names the file or parameter). */
ScribbleOutcome
RunScribbleSegment(ScribbleArguments & a);
} // namespace canopy::app
