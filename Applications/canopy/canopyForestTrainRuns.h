// train-forest's trainings (CommandForestTrain.cxx parses and checks the arguments; these train): one
// forest or an auto-context cascade, resumed from a per-tree checkpoint, or over the processes of an
// MPI run (docs/DISTRIBUTED.md).
#pragma once

#include "canopy/Collective.h"
#include "canopy/IntensityNormalization.h"
#include "canopyForestCascade.h"
#include "canopyForestTraining.h"
#include "canopyForestVolumeTraining.h"
#include "canopyReferencePose.h"
#include "canopyShares.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace canopy::app
{
class ForestCheckpointRun;

/** train-forest's command line. */
struct ForestTrainArguments
{
  std::vector<std::string> images, labels;
  std::string              dataset, out, report, device = "auto", channels = "intensity", sampling = "uniform",
                                    classWeights = "none", slices, testSlices, postprocess = "none", checkpoint,
                                    normalize = "percentile";
  std::vector<double>      window{ -200.0, 300.0 }; // --normalize window: LOW HIGH
  int              maxVolumes = 0, classes = 0, samplesPerImage = 2000, cv = 0, autoContext = 1, contextFolds = 4;
  double           testFraction = 0.0, boundaryShare = 0.0, focusShare = 0.0;
  int              boundaryBand = 3, focusBand = 1;
  std::uint64_t    splitSeed = 1;
  std::vector<int> gridDepth, gridFeatures;
  std::vector<std::string> contextChannels; // auto-context: channels derived from the class maps
  ForestTrainingOptions    options;
  ReferencePoseOptions     reference; // pose channels' reference pose per volume
  bool quiet = false, distributed = false, checkpointGiven = false, restart = false, focusUniform = false;
};

/** The image/label pairs of a run: training and held-out. */
struct TrainTestPairs
{
  std::vector<std::string> trainImages, trainLabels, testImages, testLabels;
};

/** What training gave: the cascade (one stage for a forest), its stages' reports and, for --distributed,
 * every process's report (on rank 0). */
struct TrainedCascade
{
  ForestCascade                         cascade;
  std::vector<ForestCascadeStageReport> stages;
  nlohmann::json                        ranks;
};

/** What determines the forest besides the training files and samples (the checkpoint's fingerprint):
 * not the device, threads, GPU memory limits or process count, which give the same forest. */
nlohmann::json
CheckpointArguments(const ForestTrainArguments & a, int numClasses, int dimension);

/** --normalize and --window as a model's normalisation (none: empty); throws for a window with LOW >= HIGH. */
std::optional<IntensityNormalization>
NormalizationOf(const ForestTrainArguments & a);

/** The cascade trainer's options from the arguments (auto-context stages, folds, context channels). */
ForestCascadeOptions
CascadeOptions(const ForestTrainArguments & a, const ForestSamplingOptions & sampling);

/** --distributed: one forest or an auto-context cascade, each process holding its images' samples
 * (`share` of the allImages training images; one GPU per process, histograms summed through NCCL when
 * built in). `test`: the held-out images (rank 0's) that a cascade scores stage by stage. */
TrainedCascade
TrainDistributed(const ForestTrainArguments &                     a,
                 const TrainTestPairs &                           pairs,
                 const std::vector<const ForestLabelledImage *> & train,
                 const std::vector<const ForestLabelledImage *> & test,
                 const ShareRange &                               share,
                 std::size_t                                      allImages,
                 double                                           loadSeconds,
                 int                                              numClasses,
                 int                                              dimension,
                 const ForestSamplingOptions &                    sampling,
                 Collective &                                     processes,
                 ForestCheckpointRun *                            checkpointRun);

/** --checkpoint: one forest, resumed from and saved to the checkpoint tree by tree. */
TrainedCascade
TrainFromCheckpoint(const ForestTrainArguments &                     a,
                    const TrainTestPairs &                           pairs,
                    const std::vector<const ForestLabelledImage *> & train,
                    int                                              numClasses,
                    int                                              dimension,
                    const ForestSamplingOptions &                    sampling,
                    ForestCheckpointRun &                            checkpointRun);

/** One forest (a cascade of one stage: the forest TrainForest gives for the seed) or an auto-context
 * cascade (stage k reads the channels and stage k-1's class maps); the held-out images are scored per
 * stage only for real cascades. The training images are taken over: the stages' maps go into them; so
 * do they into a cascade's held-out images `test` (their labels and sizes stay), whose labels the
 * last stage's report then holds (heldOutLabels). */
TrainedCascade
TrainCascade(const ForestTrainArguments &        a,
             std::vector<ForestLabelledImage> && train,
             std::vector<ForestLabelledImage> &  test,
             int                                 numClasses,
             const ForestSamplingOptions &       sampling);

} // namespace canopy::app
