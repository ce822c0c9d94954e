// Training a PBT voxel classifier from labelled volumes: resampling to the working spacing,
// normalisation, balanced sampling with extra negatives near the boundary, Haar responses (on the
// GPU when one is used), then TrainPBT.
#pragma once

#include "canopy/Device.h"
#include "canopyPBTModelFile.h"
#include "canopyPBTTraining.h"
#include "canopyVolumePreparation.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace canopy
{

struct LabelledVolume
{
  FloatVolume::Pointer image;
  MaskVolume::Pointer  mask; // non-zero = positive class; same grid as image
  std::string          name;
};

struct SamplingOptions
{
  int           positivesPerVolume = 4000;
  int           negativesPerVolume = 4000;
  double        nearBoundaryFraction = 0.5; // of the negatives, drawn within nearBoundaryMm of the label
  double        nearBoundaryMm = 12.0;
  std::uint64_t seed = 1;
  /** Weight each sample by (voxels of its stratum) / (samples drawn from it), so training sees the
   * volume's true class balance instead of the balanced sample's (unbiased posterior at p = 0.5 for
   * small structures; balanced sampling alone over-segments them). */
  bool weightByPrior = false;
  /** Weight the positives of each volume so that they weigh as much as its negatives (after any
   * weightByPrior): for classes of very different counts, such as the few voxels near a structure's
   * centre that a position detector takes as positives (canopyPoseDetector.h). */
  bool balanceClasses = false;
};

struct PBTVolumeTrainingOptions
{
  std::array<double, 3>  workingSpacing{ { 2.0, 2.0, 2.0 } };
  IntensityNormalization normalization;
  SamplingOptions        sampling;
  int                    featureBankSize = 1500;
  std::array<double, 3>  sampleBoxMm{ { 64.0, 64.0, 64.0 } };
  float                  minimumFeatureSize = 0.06f; // smallest cuboid edge, fraction of the sample box
  PBTTrainingOptions     pbt;
  ResolvedBackend        backend;
  /** The global index of this process's first volume when the volumes are a process's consecutive
   * share of the training list (pbt.shards): volume v samples with the seed of volume firstVolume + v,
   * as one process training on the whole list does. 0 for one process. */
  std::size_t firstVolume = 0;
};

/** With pbt.shards, `samples` and `trainingAccuracy` are over every process; the times are this process's. */
struct PBTVolumeTrainingReport
{
  double       prepareSeconds = 0.0;
  double       responseSeconds = 0.0;
  double       trainSeconds = 0.0;
  std::int64_t samples = 0;
  int          candidateFeatures = 0;
  int          featuresUsed = 0;
  int          depth = 0;
  int          nodes = 0;
  std::string  backend;
  double       trainingAccuracy = 0.0; // at p >= 0.5 on the training samples
};

/** A volume as a model sees it: resampled to the working spacing and normalised. */
FloatVolume::Pointer
PrepareVolume(const FloatVolume * image, const std::array<double, 3> & workingSpacing,
              const IntensityNormalization & normalization);

/** Sample box in voxels for a physical size at a spacing (at least 1 voxel per axis). */
std::array<int, 3>
SampleBoxVoxels(const std::array<double, 3> & sampleBoxMm, const std::array<double, 3> & spacing);

/** Balanced samples of one prepared volume: positives inside `mask`, negatives outside, a share of
 * them within nearBoundaryMm of the mask. Labels are +1 / -1. Deterministic for a seed. When
 * `weights` is given, appends each sample's stratum weight (voxels in stratum / samples drawn). */
void
DrawTrainingSamples(const MaskVolume * mask, const SamplingOptions & options, std::uint64_t seed,
                    std::vector<VoxelIndex3> & points, std::vector<std::int8_t> & labels,
                    std::vector<float> * weights = nullptr);

PBTModelFile
TrainPBTFromVolumes(const std::vector<LabelledVolume> & volumes, const PBTVolumeTrainingOptions & options,
                    PBTVolumeTrainingReport * report = nullptr, const TrainingProgress & progress = {});

/** One training volume as the trainer reads it: its channels on the working grid (channel 0 the
 * prepared image; auto-context stages add class-probability maps), and the positive mask on that grid. */
struct PreparedChannels
{
  std::vector<FloatVolume::Pointer> channels;
  MaskVolume::Pointer               mask;
  std::string                       name;
};

/** The core of TrainPBTFromVolumes for volumes of `channels` channels, produced one at a time by
 * `prepare(v)` (v < numVolumes), whose features (`bank`, each naming its channel) are evaluated on the
 * channels stacked along z (canopyHaarChannels.h). Returns the compacted tree with its features and
 * sample box. */
PBTModel
TrainPBTOnChannels(std::size_t                                          numVolumes,
                   const std::function<PreparedChannels(std::size_t)> & prepare,
                   int                                                  channels,
                   const std::vector<HaarFeature> &                     bank,
                   const PBTVolumeTrainingOptions &                     options,
                   PBTVolumeTrainingReport *                            report = nullptr,
                   const TrainingProgress &                             progress = {});

} // namespace canopy
