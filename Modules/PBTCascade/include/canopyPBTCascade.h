// Training and applying multi-class / auto-context PBT models (canopyPBTClassModel.h).
//
// Joint decision: each class's one-vs-rest PBT gives p_c; the posteriors are normalised so that they
// can be compared and fed back, P_c = p_c / max(1, sum_j p_j), and the background gets the rest,
// P_0 = 1 - sum_c P_c. A voxel takes the class of the largest P_c (the lowest class on ties) unless
// the background's P_0 is larger (ties go to the class, as a binary PBT's p >= 0.5). One class gives
// exactly the binary decision p >= 0.5.
//
// Auto-context: stage k > 0 reads channel 0 (the prepared intensity) and channels 1..C, the normalised
// posteriors of stage k-1 on the working grid. The maps a stage trains on are out of fold: the
// training volumes are dealt into F folds (canopy/FoldAssignment.h, as the forest cascade) and volume
// i's map of stage k-1 comes from stage k-1's PBTs trained on the other folds, so a stage does not
// learn to trust maps of volumes its predecessor has seen.
#pragma once

#include "canopy/Device.h"
#include "canopyPBTClassModel.h"
#include "canopyPBTEvaluator.h"
#include "canopyPBTVolumeTraining.h"

#include "itkVectorImage.h"

#include <functional>
#include <string>
#include <vector>

namespace canopy
{

/** A training volume with its label map (values: class labels, anything else background). */
struct ClassLabelledVolume
{
  FloatVolume::Pointer image;
  MaskVolume::Pointer  labels; // same grid as image
  std::string          name;
};

struct PBTCascadeTrainingOptions
{
  PBTVolumeTrainingOptions volume; // every PBT's options (seed varied per stage, class and fold)
  std::vector<int>         labels{ 1 };
  int                      stages = 1; // 1: multi-class PBTs without auto-context
  int                      folds = 4;  // out-of-fold maps for stages > 0; 2 to the number of volumes
  std::uint64_t            foldSeed = 1;
  PBTEvaluationOptions     evaluation; // of the out-of-fold maps (channels is set per stage)
};

struct PBTCascadeStageReport
{
  double                               trainSeconds = 0.0;     // the stage's C PBTs on all volumes
  double                               outOfFoldSeconds = 0.0; // the fold PBTs and their maps (stages before the last)
  std::vector<PBTVolumeTrainingReport> classes;
};

/** Throws canopy::Error for bad options or volumes. progress(fraction, what). */
PBTClassModel
TrainPBTCascade(const std::vector<ClassLabelledVolume> & volumes,
                const PBTCascadeTrainingOptions &        options,
                std::vector<PBTCascadeStageReport> *     report = nullptr,
                const TrainingProgress &                 progress = {});

/** Normalised posteriors of one stage's PBTs (one per class) on `prepared`, whose channels 1.. are
 * `context` (the previous stage's maps; empty for stage 0). */
std::vector<FloatVolume::Pointer>
PredictPBTStage(const std::vector<PBTModel> &             trees,
                const FloatVolume *                       prepared,
                const std::vector<FloatVolume::Pointer> & context,
                const ResolvedBackend &                   backend,
                const PBTEvaluationOptions &              options);

/** Normalised posteriors (P_1..P_C, one volume each) of the cascade cut after `stages` stages (<= 0:
 * all) on the working grid of `prepared` (a volume already prepared with the model's spacing and
 * normalisation). */
std::vector<FloatVolume::Pointer>
PredictPBTCascadePrepared(const PBTClassModel &        model,
                          const FloatVolume *          prepared,
                          const ResolvedBackend &      backend,
                          const PBTEvaluationOptions & options,
                          int                          stages = 0);

/** The same on `image`'s own grid (prepare, predict, linear interpolation back), as ClassifyVolume. */
std::vector<FloatVolume::Pointer>
ClassifyVolumeClasses(const FloatVolume *                 image,
                      const PBTClassModel &               model,
                      const ResolvedBackend &             backend,
                      const PBTEvaluationOptions &        options,
                      int                                 stages = 0,
                      const std::function<void(double)> & progress = {});

/** In place: P_c = p_c / max(1, sum_j p_j) at every voxel. */
void
NormalizePosteriors(const std::vector<FloatVolume::Pointer> & posteriors);

/** Label map of the joint decision (header): labels[c] where class c wins, 0 where the background does. */
MaskVolume::Pointer
JointLabels(const std::vector<FloatVolume::Pointer> & posteriors, const std::vector<int> & labels);

/** Every class's probability in one volume, the layout of predict-forest --mode distribution (so fuse-shape
 * --probabilities / --ensemble-probabilities read it): component 0 the background's share 1 - sum_c P_c
 * (clamped at 0), component labels[c] P_c, components of label values no class has 0; as many components
 * as the largest label + 1; the grid of the posteriors. Its argmax (a class over the background on ties,
 * the class first in `labels` among classes) is JointLabels' decision. */
itk::VectorImage<float, 3>::Pointer
ClassProbabilityMap(const std::vector<FloatVolume::Pointer> & posteriors, const std::vector<int> & labels);

/** Per-class graph cut: each class's P_c regularised on its own (RegularizeProbabilityMap, lambda mm,
 * 6 or 26 neighbours); a voxel kept by several cuts takes the class of the largest P_c, one kept by
 * none is background. */
MaskVolume::Pointer
JointLabelsWithGraphCut(const std::vector<FloatVolume::Pointer> & posteriors,
                        const std::vector<int> &                  labels,
                        double                                    lambdaMm,
                        int                                       neighborhood);

} // namespace canopy
