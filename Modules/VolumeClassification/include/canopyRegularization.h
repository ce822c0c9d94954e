// Graph-cut regularisation of a PBT probability map as `canopy segment` applies it, with the counts
// that tell when it removed most of the foreground, and the choice at training time of the surface
// weight lambda a model recommends (stored in the model file's "regularization" field).
#pragma once

#include "canopy/Device.h"
#include "canopyGridGraphCut.h"
#include "canopyPBTEvaluator.h"
#include "canopyPBTModelFile.h"
#include "canopyPBTVolumeTraining.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace canopy
{

/** Lambda when a model has no recommendation and none is asked for (the value segment always used). */
constexpr double kDefaultLambdaMm = 1.0;

struct RegularizedLabels
{
  MaskVolume::Pointer    labels;            // 0/1 on the probability map's grid
  std::int64_t           confident = 0;     // voxels with p >= 0.5
  std::int64_t           confidentKept = 0; // of those, labelled 1
  std::int64_t           labelled = 0;      // voxels labelled 1
  GridGraphCutStatistics statistics;

  /** Share of the p >= 0.5 voxels the cut set to 0 (0 when there are none). */
  double RemovedFraction() const { return confident ? double(confident - confidentKept) / confident : 0.0; }
};

/** itk::GraphCutRegularizationImageFilter (banded) on `probability`, plus the counts above. */
RegularizedLabels
RegularizeProbabilityMap(const FloatVolume * probability, double lambdaMm, int neighborhood);

struct LambdaSelectionOptions
{
  /** Candidates, mm, ascending; 0 = threshold at 0.5. */
  std::vector<double> grid{ 0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0 };
  int                 neighborhood = 6;
  /** Volumes classified for the choice, spread evenly over the training list (each costs one
   * classification plus one graph cut per candidate). */
  int                  maxVolumes = 8;
  PBTEvaluationOptions evaluation;
};

/** The lambda of `options.grid` whose graph-cut labels have the highest mean Dice against the label
 * maps of (up to maxVolumes of) `volumes`, each classified by `model` on its own grid as segment
 * does; ties go to the smaller lambda. `selection` records the method, the grid, the mean Dice per
 * candidate, the volumes used and the seconds spent. */
RegularizationRecommendation
RecommendRegularization(const PBTModelFile &                model,
                        const std::vector<LabelledVolume> & volumes,
                        const ResolvedBackend &             backend,
                        const LambdaSelectionOptions &      options = {},
                        const std::function<void(double)> & progress = {});

} // namespace canopy
