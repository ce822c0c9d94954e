// Auto-context cascades of decision forests (Tu & Bai, PAMI 2010): stage 0 is a forest on the image's
// filter-bank channels; stage k > 0 reads the same channels followed by the class-probability maps of
// stage k-1, so its region features see where the previous stage put each class, at offsets and
// scales the image features alone cannot relate. Each stage widens the context the labels are decided
// in. Training builds the maps a stage learns from out of fold (each training image's map comes from
// a forest that never saw the image), so stage k does not learn to trust overfitted maps.
#pragma once

#include "canopyForestDensePrediction.h"
#include "canopyForestModel.h"
#include "canopyForestVolumeTraining.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace canopy
{

/** Version written by WriteForestCascadeJson for cascades with a normalisation (2 with context channels
 * and no normalisation, 1 with neither, which earlier readers read); readers accept versions up to this one. */
constexpr int kForestCascadeVersion = 3;
constexpr int kForestCascadeMaxStages = 8;

struct ForestCascade
{
  /** Filter-bank channels of the image (canopyForestFilterBank.h names), the first channels of every
   * stage; empty: the image's components as they are. */
  std::vector<std::string> filterBank;
  /** The reference pose of the bank's pose channels (ForestModel::reference); empty without them. */
  ForestReference reference;
  /** How the image's components are mapped before the filter bank (ForestModel::normalization); the
   * stages' own field is not used. Empty: as they are. */
  std::optional<IntensityNormalization> normalization;
  /** Channels derived from every class map for the stages after the first (ParseContextChannels):
   * "tophat:R", the map's black top-hat (its grey closing with a box of half-width R voxels minus the
   * map), large in narrow dents of a class's probability (a sulcus an earlier stage half opened) that
   * the box means of the map blur away. Empty: the maps alone. */
  std::vector<std::string> contextChannels;
  /** stages[0] reads the image channels; stages[k] the image channels, then NumberOfClasses()
   * probability maps of stages[k-1] (class 0 first), then for each context channel its NumberOfClasses()
   * channels (class 0 first). Every stage has the same classes and dimension. A cascade of one stage is
   * a plain forest. */
  std::vector<ForestModel> stages;

  int NumberOfClasses() const { return stages.empty() ? 0 : stages.front().numClasses; }
  int Dimension() const { return stages.empty() ? 0 : stages.front().dimension; }
  /** Channels of the image that stage 0 reads. */
  int ImageChannels() const { return stages.empty() ? 0 : stages.front().numChannels; }
  /** Channels a stage after the first reads besides the image's: the maps and those derived from them. */
  int ContextChannelsPerStage() const { return NumberOfClasses() * (1 + int(contextChannels.size())); }

  /** Throws canopy::Error, prefixed by `context`, at the first inconsistency between the stages (and
   * each stage's own, ForestModel::Validate). */
  void Validate(const std::string & context) const;
};

struct ForestCascadeOptions
{
  int                   stages = 2; // 1: a plain forest
  int                   folds = 4;  // out-of-fold maps for stages > 0; >= 2 and <= the training images
  std::uint64_t         foldSeed = 1;
  ForestTrainingOptions forest; // every stage's forest (seed varied per stage and fold)
  /** The same voxels at every stage, unless sampling.focusShare > 0: then stage k > 0 draws that
   * share of each image's samples from the image's out-of-fold mistakes of stage k-1 and the voxels
   * within focusBand of them (StageMistakeFocus), so later stages learn where earlier ones fail (the
   * sulci a smooth brain mask fills) instead of what they already get right. */
  ForestSamplingOptions    sampling;
  int                      focusBand = 1;   // voxels (Chebyshev), >= 0
  std::vector<std::string> contextChannels; // ForestCascade::contextChannels
  /** Backend and threads of the out-of-fold predictions (mode is set by the trainer). */
  ForestDensePredictionOptions prediction;
  /** What is being done ("stage 2 of 3: fold 1 of 4") and the fraction of all trainings done. */
  std::function<void(const std::string &, double)> progress;
  /** Distributed training (forest.shards set; docs/DISTRIBUTED.md): this process holds training
   * images [firstImage, firstImage + n) of totalImages, the processes' consecutive shares in rank
   * order. Folds are drawn over all totalImages and every forest (stage or fold) trains over the
   * shards, so each process returns the cascade one process trains on all the images. totalImages 0:
   * the images given are all (one process). */
  std::size_t firstImage = 0, totalImages = 0;
};

/** Per stage, what training did and (when held-out images were given) the stage's scores. */
struct ForestCascadeStageReport
{
  double              trainSeconds = 0.0, outOfFoldSeconds = 0.0;
  std::size_t         samples = 0;
  std::vector<double> heldOutDice; // per class, pooled over the held-out images; empty without them
  double              heldOutPixelAccuracy = 0.0;
  /** The last stage only: each held-out image's labels (argmax), which the whole cascade predicts for
   * it (PredictForestCascade), so that a caller scoring the held-out images need not predict again. */
  std::vector<std::vector<std::int32_t>> heldOutLabels;
};

/** Trains a cascade on `images` (their channels: the image's filter bank, as ForestCascade::filterBank
 * says; labels in [0, numClasses)). The cascade's filterBank is left to the caller. When `heldOut` is
 * not empty, every stage's labels on it are scored into `report` (the labels of a cascade cut after
 * that stage), which costs predictions only. Throws canopy::Error for bad options. */
ForestCascade
TrainForestCascade(const std::vector<const ForestLabelledImage *> & images,
                   int                                              numClasses,
                   const ForestCascadeOptions &                     options,
                   const std::vector<const ForestLabelledImage *> & heldOut = {},
                   std::vector<ForestCascadeStageReport> *          report = nullptr);

/** The same cascade, taking the training images over: each stage's maps are integrated after an image's
 * own tables, in the image itself, instead of into a copy of them (a colin27 copy's own tables are 635 MB). */
ForestCascade
TrainForestCascade(std::vector<ForestLabelledImage> &&              images,
                   int                                              numClasses,
                   const ForestCascadeOptions &                     options,
                   const std::vector<const ForestLabelledImage *> & heldOut = {},
                   std::vector<ForestCascadeStageReport> *          report = nullptr);

/** The same, with each stage's maps written into the held-out images too, in place (their labels and
 * sizes stay; their channels end as the last stage's input), instead of into copies: for a caller that
 * scores them with `report`'s last heldOutLabels (required) and needs their tables no more. */
ForestCascade
TrainForestCascade(std::vector<ForestLabelledImage> &&     images,
                   int                                     numClasses,
                   const ForestCascadeOptions &            options,
                   std::vector<ForestLabelledImage> &      heldOut,
                   std::vector<ForestCascadeStageReport> * report);

/** Canonical context channel names ("tophat:R", R a whole number of voxels, 1 to 32) and their box
 * half-widths; throws canopy::Error, prefixed by `context`, for anything else or a repeated name. */
std::vector<int>
ParseContextChannels(const std::vector<std::string> & names, const std::string & context);

/** `image` (the image's channels, as stage 0 reads them) followed by the integrated probability maps
 * `distribution` (numClasses values per voxel, x fastest) and the channels `contextChannels` derives
 * from them (ForestCascade::contextChannels). */
ForestImage
AppendProbabilityChannels(const ForestImage &              image,
                          const std::vector<float> &       distribution,
                          int                              numClasses,
                          int                              threads = 0,
                          const std::vector<std::string> & contextChannels = {});

/** The voxels a later stage's focus share draws from (ForestCascadeOptions::sampling): where the
 * argmax of `distribution` (numClasses values per voxel, x fastest) differs from `labels` (labels
 * outside [0, numClasses) are never mistakes), and every voxel within `band` voxels (Chebyshev; the z
 * axis only when nz > 1) of one. 1 in the focus, else 0. */
std::vector<std::uint8_t>
StageMistakeFocus(const std::vector<std::int32_t> & labels,
                  const std::vector<float> &        distribution,
                  int                               numClasses,
                  int                               nx,
                  int                               ny,
                  int                               nz,
                  int                               band);

/** Runs every stage on `image` (the image's channels) and returns the last stage's class
 * probabilities (NumberOfClasses() per voxel, x fastest). options.mode is ignored; options.progress
 * gets the fraction of all stages done. `backendUsed` (may be null) gets the last stage's backend;
 * `times` (may be null) gets each stage's forest and context seconds (channelsSeconds is left as is). */
std::vector<float>
PredictForestCascade(const ForestCascade &                cascade,
                     const ForestImage &                  image,
                     const ForestDensePredictionOptions & options,
                     std::string *                        backendUsed = nullptr,
                     ForestPredictionTimes *              times = nullptr);

/** The same, taking `image` over: each later stage's maps are integrated after the image's own tables, in
 * `image` itself, instead of into a copy of them (on a colin27 copy the image's tables are 635 MB). Made
 * with room for ContextChannelsPerStage() more tables (ForestImage::FromChannels' reserveChannels), its
 * tables are not even moved. */
std::vector<float>
PredictForestCascade(const ForestCascade &                cascade,
                     ForestImage &&                       image,
                     const ForestDensePredictionOptions & options,
                     std::string *                        backendUsed = nullptr,
                     ForestPredictionTimes *              times = nullptr);

/** Index of the largest probability per voxel (the lowest class on ties), as ForestOutputMode::ArgMax. */
std::vector<std::int32_t>
ArgMaxLabels(const std::vector<float> & distribution, int numClasses);

/** JSON form ("format": "canopy-forest-cascade"; docs/MODEL_FORMAT.md), written as CBOR to a ".cbor" file
 * name. Read throws naming the file and the first problem, for any corrupt input. */
std::string
ForestCascadeToJsonString(const ForestCascade & cascade);
ForestCascade
ForestCascadeFromJsonString(const std::string & text, const std::string & context);
void
WriteForestCascadeJson(const ForestCascade & cascade, const std::string & fileName);
/** A cascade file, or a plain forest file (train-forest without --auto-context) as a one-stage cascade.
 * Either may be JSON text or CBOR (written to a ".cbor" name); the content tells which. */
ForestCascade
ReadForestOrCascadeJson(const std::string & fileName);

/** What ReadForestOrCascadeJson reads, and whether the file was a cascade (else a forest: its one stage is
 * the file's model as it is), for tools that write a model back in its own format (canopy convert-model). */
struct ForestModelFile
{
  ForestCascade cascade;
  bool          isCascade = false;
};
ForestModelFile
ReadForestModelFile(const std::string & fileName);

} // namespace canopy
