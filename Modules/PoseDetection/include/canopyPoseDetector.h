// Marginal-space learning for structure poses (issue 9 part 3; Zheng et al. TMI 2008, Birkbeck et al.
// Sec. 2): position -> position + orientation -> position + orientation + size, each stage a PBT that
// keeps the best hypotheses for the next.
//
//  1. Position: a Haar PBT (the voxel classifier's trainer and dense evaluator) on a coarse working
//     grid (default 3 mm). Training positives are the working voxels within positiveRadiusMm of the
//     true centre (default: one working voxel's largest spacing), negatives all others (half of them
//     within 4 radii). Detection evaluates every working voxel and keeps the `candidates` best.
//  2. Orientation (constrained MSL): at each kept centre, the orientations of the training poses
//     plus `perturbations` random turns of each by up to perturbationDegrees, with the training poses'
//     mean size; a steerable-feature PBT scores them and the `orientationKeep` best go on. Training
//     positives: centre within centerPositiveMm and every axis within orientationPositiveDegrees of the
//     truth (sign-invariant per axis); negatives: axes off by orientationNegativeDegrees or more, or
//     centre off by centerNegativeMm or more; hypotheses in between are not used.
//  3. Scale: each kept (centre, orientation) with the training sizes times sizeFactors; a second
//     steerable PBT; positives: every axis' size within sizePositive (relative) of the truth, centre
//     and orientation near as above; negatives: a size off by sizeNegative or more, or centre or
//     orientation off as in stage 2.
//  3b. Optional centre refinement (DetectionOptions::refineStepMm > 0, detect --refine-step): the
//     position stage's centres lie on its coarse working grid (3 mm by default); the `aggregateCount`
//     best scale hypotheses are each shifted by every offset of a cubic lattice of refineStepMm steps,
//     refineReach steps per side (the unshifted pose included), and the scale stage's steerable PBT
//     scores the full shifted poses (the stage's traversal with every field from the parent, so CUDA
//     runs it as it runs the scale stage); a shifted hypothesis' evidence is its position and
//     orientation posteriors x its new scale posterior, its ranking score the same x its prior factors
//     (a child's centre factor recomputed at the shifted centre).
//  4. The `aggregateCount` best scale hypotheses within clusterMm of the best are averaged (scores as
//     weights; axes sign-aligned to the best, averaged and re-orthonormalised; CanonicalAxes). The
//     structure is found when the best score reaches `threshold`; otherwise it is reported not
//     found, never with a made-up pose.
// Stages 2 and 3 rank hypotheses by the product of the posteriors along their chain (position x
// orientation [x scale]), MSL's joint probability; the reported score is that product for the best.
// A child of the hierarchical network whose parent was found is detected under its prior
// (canopyNetworkPrior.h): its hypotheses also come from the prior, and every stage's ranking score is
// multiplied by exp(weight x log prior); the best ranked hypothesis among those whose PBT posteriors'
// product ("evidence") reaches the threshold is the answer, and it is missed when none does (its
// reported score is always an evidence, never a prior).
// A hypothesis' steerable grid spans gridSpan x its size along each axis. All stages read one
// normalised copy of the image (the position model's normalisation) and one steerable pyramid.
#pragma once

#include "canopy/Device.h"
#include "canopyDetectionNetwork.h"
#include "canopyNetworkPrior.h"
#include "canopyPBTEvaluator.h"
#include "canopyPBTModelFile.h"
#include "canopyPBTVolumeTraining.h"
#include "canopySteerablePBT.h"
#include "canopyStructurePose.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace canopy
{

using Frame = std::array<Vec3d, 3>;

/** One structure's trained stages and hypothesis sets (explicit lists: detection draws nothing). */
struct StructureDetector
{
  std::string        name;
  int                label = 0;
  double             threshold = 0.05;
  PBTModelFile       position; // Haar PBT, its working spacing and normalisation
  int                candidates = 100;
  PBTModel           orientation; // steerable
  std::vector<Frame> orientations;
  Vec3d              meanSizeMm{ { 0, 0, 0 } };
  int                orientationKeep = 50;
  PBTModel           scale; // steerable
  std::vector<Vec3d> sizesMm;
  int                aggregateCount = 30;
  double             clusterMm = 6.0;
  double             gridSpan = 1.2;
  nlohmann::json     training = nlohmann::json::object(); // thresholds, sample counts, accuracies
};

struct DetectorModel
{
  std::vector<StructureDetector> structures;
  /** Hierarchical detection network (canopyDetectionNetwork.h): one prior per child; empty: every
   * structure is a root, searched on the whole volume. */
  std::vector<SpatialPrior> network;
  nlohmann::json            provenance = nlohmann::json::object();
};

struct DetectorTrainingOptions
{
  PBTVolumeTrainingOptions    position;               // working spacing (default 3 mm), normalisation, bank, PBT
  double                      positiveRadiusMm = 0.0; // 0: the working grid's largest spacing
  int                         candidates = 100;
  SteerablePBTTrainingOptions steerable; // grid, pyramid, bank and PBT of both pose stages
  int                         perturbations = 24;
  double                      perturbationDegrees = 12.0;
  int                         orientationKeep = 50;
  std::vector<double>         sizeFactors{ 0.85, 0.92, 1.0, 1.08, 1.16 };
  int                         aggregateCount = 30;
  double                      gridSpan = 1.2;
  /** On the product of three posteriors: 0.05 separated every held-out SynthSeg structure (scores
   * 0.08-0.69) from an absent phantom structure (1e-5); Modules/PoseDetection/README.md. */
  double          threshold = 0.05;
  double          centerPositiveMm = 0.0; // 0: 0.75 x the working grid's largest spacing
  double          centerNegativeMm = 0.0; // 0: 2 x the working grid's largest spacing
  double          orientationPositiveDegrees = 6.0;
  double          orientationNegativeDegrees = 12.0;
  double          sizePositive = 0.06;
  double          sizeNegative = 0.15;
  int             positivesPerVolume = 60; // pose stages, per training volume
  int             negativesPerVolume = 300;
  std::uint64_t   seed = 1;
  ResolvedBackend backend;
  /** Network arcs (child, parent) whose spatial priors are estimated from the subjects' ground truth;
   * each child's search box: searchSigmas standard deviations + searchMarginMm per side. */
  std::vector<NetworkArc> network;
  double                  searchSigmas = 3.0;
  double                  searchMarginMm = 8.0;
};

/** A training subject: image and label map on one grid. */
struct DetectorTrainingSubject
{
  FloatVolume::Pointer  image;
  PoseLabelMap::Pointer labels;
  std::string           name; // for messages
};

struct DetectorStructureSpec
{
  std::string name;
  int         label = 0;
};

/** Trains every structure's three stages on the subjects. Throws canopy::Error naming the subject and
 * label when a label is absent from a subject's map, or for fewer than 2 subjects. progress(fraction,
 * stage). */
DetectorModel
TrainDetector(const std::vector<DetectorTrainingSubject> & subjects,
              const std::vector<DetectorStructureSpec> &   structures,
              const DetectorTrainingOptions &              options,
              const TrainingProgress &                     progress = {});

/** A hypothesis with its score. */
struct ScoredPose
{
  StructurePose pose;
  float         score = 0.0f;                          // the ranking score: evidence x prior factors so far
  float         evidence = 0.0f;                       // product of the stages' posteriors so far
  float         stageScores[3] = { 0.0f, 0.0f, 0.0f }; // position, orientation, scale posteriors so far
};

struct StageTimings
{
  double       positionSeconds = 0.0, orientationSeconds = 0.0, scaleSeconds = 0.0, aggregateSeconds = 0.0;
  double       refineSeconds = 0.0;
  std::int64_t positionVoxels = 0, orientationHypotheses = 0, scaleHypotheses = 0, refineHypotheses = 0;
};

struct DetectionOptions
{
  ResolvedBackend     backend;
  int                 cpuThreads = 0;
  double              thresholdOverride = -1.0; // >= 0: replaces every structure's threshold
  bool                useNetwork = true;        // false: DetectAll searches every structure on the whole volume
  PriorScoringOptions prior;                    // how a found parent's prior scores and seeds its children
  double              refineStepMm = 0.0;       // > 0: centre refinement (stage 3b above) on this lattice step
  int                 refineReach = 1;          // lattice steps per side: (2 reach + 1)^3 offsets
};

/** canopy::Error starting with `where` for a refinement step that is negative, above 20 mm or not finite,
 * a reach outside 1..5, or invalid prior options (ValidatePriorScoring). */
void
ValidateDetectionOptions(const DetectionOptions & options, const std::string & where);

/** A position stage's per-voxel factor: given a voxel centre (LPS mm), the factor its posterior is
 * multiplied by for ranking (the candidate's score; its evidence stays the posterior). */
using CentreFactor = std::function<float(const Vec3d &)>;

/** Inclusive voxel bounds on a working grid. */
struct GridBox
{
  std::array<long, 3> lo{ { 0, 0, 0 } }, hi{ { -1, -1, -1 } };
  std::int64_t        Voxels() const; // 0 when empty
};

/** One structure of DetectAll: its result, stage timings and where its position stage searched
 * ("whole volume", "whole volume (parent X not found)", or "region predicted from parent X"). */
struct NetworkDetection
{
  DetectedStructure result;
  StageTimings      timings;
  std::string       searched;
  std::string       parent;            // empty for a root
  GridBox           box;               // the searched box of the working grid (a region search only)
  std::int64_t      gridVoxels = 0;    // voxels of the whole working grid
  bool              priorUsed = false; // detected under its prior (a found parent)
  int               priorOrientations = 0, priorSizes = 0; // prior hypotheses added
  /** Log priors (-1/2 Mahalanobis^2) of the reported pose's centre, turn and size ratio (priorUsed and found). */
  double centreLogPrior = 0.0, orientationLogPrior = 0.0, sizeLogPrior = 0.0;
};

/** How a detector's stages score a known (ground-truth) pose: PoseDetector::ScoreTruth. Tells a miss
 * whose true pose the stages do not recognise (low posteriors: the classifiers do not generalise) from one
 * the search lost (high posteriors, but the truth's voxel ranked below the kept candidates). */
struct TruthScores
{
  float        position = 0.0f;    // position posterior at the working voxel nearest the true centre
  float        orientation = 0.0f; // orientation posterior at the true centre and axes, the mean size
  float        scale = 0.0f;       // scale posterior at the true pose
  std::int64_t positionRank = -1;  // voxels of the searched region scoring above the truth's (-1: outside)
  std::int64_t searchedVoxels = 0; // voxels of the searched region (the box, or the whole working grid)
  double       Evidence() const { return static_cast<double>(position) * orientation * scale; }
};

/** Detects the structures of one model in images: the image's normalised copy and steerable pyramid
 * are made once per image (SetImage; on CUDA on the device from one upload) and shared by every
 * structure; the stages run on the chosen backend (on CUDA: dense Haar PBT and top-K on the device,
 * only the K candidates come back; steerable hypotheses on the device). */
class PoseDetector
{
public:
  /** Validates the model (canopy::Error naming the structure and stage). */
  PoseDetector(const DetectorModel & model, const DetectionOptions & options);
  ~PoseDetector();
  PoseDetector(const PoseDetector &) = delete;
  PoseDetector & operator=(const PoseDetector &) = delete;

  /** canopy::Error naming `where` for a constant image (nothing to detect). */
  void SetImage(const FloatVolume * image, const std::string & where);

  /** Stage 1: the `candidates` best working voxels' centres (mm) and posteriors, best first (ties: the
   * lower voxel index). The StructurePose carries only the centre. */
  std::vector<ScoredPose> PositionCandidates(int structure, StageTimings * timings = nullptr);
  /** Stage 2 on given centres: every centre x every model orientation, mean size; best first, at most
   * `keep` (all when keep <= 0). */
  std::vector<ScoredPose> OrientationCandidates(int                             structure,
                                                const std::vector<ScoredPose> & centres,
                                                int                             keep,
                                                StageTimings *                  timings = nullptr);
  /** Stage 3 on given (centre, orientation) hypotheses: each x every model size; best first, at most `keep`. */
  std::vector<ScoredPose> ScaleCandidates(int                             structure,
                                          const std::vector<ScoredPose> & oriented,
                                          int                             keep,
                                          StageTimings *                  timings = nullptr);
  /** Stage 1 inside the box the prior predicts from a detected parent pose (SearchBoxOnGrid on the
   * structure's working grid); the box is returned in `box` (empty when the region misses the grid);
   * ranked by posterior x factor(centre) when a factor is given (BestPositionsInBox). */
  std::vector<ScoredPose> PositionCandidatesInRegion(int                     structure,
                                                     const PredictedCentre & centre,
                                                     double                  sigmas,
                                                     double                  marginMm,
                                                     StageTimings *          timings = nullptr,
                                                     GridBox *               box = nullptr,
                                                     std::int64_t *          gridVoxels = nullptr,
                                                     const CentreFactor &    factor = {});
  /** A child under its prior given its detected parent's pose (canopyNetworkPrior.h): the position stage
   * in the predicted box, each box voxel's posterior times its centre prior factor; orientations and
   * sizes from the model's lists and/or the prior (options.prior.hypotheses), each times its prior
   * factor; aggregation as Detect's. `entry` receives the result, box and prior fields. */
  void DetectChild(int structure, const SpatialPrior & prior, const StructurePose & parent, NetworkDetection & entry);
  /** All stages and the aggregation; `centres`: stage 1's candidates when already found (a region search). */
  DetectedStructure Detect(int                             structure,
                           StageTimings *                  timings = nullptr,
                           const std::vector<ScoredPose> * centres = nullptr);
  /** Every structure of the model in the network's order (canopyNetworkDetection.cxx): roots on the
   * whole volume, children in the region their parent's pose predicts, or on the whole volume when the
   * parent was not found (said in `searched`) or options.useNetwork is false. Results in model order. */
  std::vector<NetworkDetection> DetectAll(const std::function<void(double)> & progress = {});

  const DetectorModel &    GetModel() const;
  const DetectionOptions & GetOptions() const;

  const ResolvedBackend & GetBackend() const;

private:
  /** Stage 2 with a given frame list, each frame's weight multiplying the joint score (null: 1). */
  std::vector<ScoredPose> OrientationStage(int                             structure,
                                           const std::vector<ScoredPose> & centres,
                                           const std::vector<Frame> &      frames,
                                           const std::vector<float> *      weights,
                                           int                             keep,
                                           StageTimings *                  timings);
  /** Stage 3 with a given size list, each size's weight multiplying the joint score (null: 1). */
  std::vector<ScoredPose> ScaleStage(int                             structure,
                                     const std::vector<ScoredPose> & oriented,
                                     const std::vector<Vec3d> &      sizes,
                                     const std::vector<float> *      weights,
                                     int                             keep,
                                     StageTimings *                  timings);
  /** The best ranked hypothesis is the answer, found when its evidence reaches the threshold; found: the
   * cluster of the first aggregateCount ranked hypotheses within clusterMm of it, averaged. With
   * `onlyWithEvidence` (a child ranked under its prior) hypotheses whose evidence is below the threshold
   * are dropped first: the prior chooses among the hypotheses the image supports and never turns a
   * supported structure into a miss; none left: missed, score = the best evidence. `threshold` >= 0
   * replaces the structure's (a child's --child-threshold); found below the structure's own threshold:
   * lowConfidence. */
  DetectedStructure Aggregate(int                             structure,
                              const std::vector<ScoredPose> & scaled,
                              StageTimings &                  timings,
                              bool                            onlyWithEvidence = false,
                              double                          threshold = -1.0);

public:
  /** Stage 3b (file comment) on ranked scale hypotheses: the first aggregateCount whose evidence reaches
   * `evidenceFloor` (all when < 0), each x every lattice offset of options.refineStepMm; returns every
   * shifted hypothesis, best ranked first; `factor` (a child's centre prior factor) is replaced at the
   * shifted centre. Returns `ranked` unchanged when refinement is off. */
  std::vector<ScoredPose> RefineCentres(int                             structure,
                                        const std::vector<ScoredPose> & ranked,
                                        double                          evidenceFloor,
                                        const CentreFactor &            factor = {},
                                        StageTimings *                  timings = nullptr);
  /** The stages' posteriors at a known pose (TruthScores); the position rank is among the voxels of
   * `box` (a child's searched box) or of the whole working grid when `box` is empty, by posterior alone. */
  TruthScores ScoreTruth(int structure, const StructurePose & truth, const GridBox & box = {});
  /** The threshold deciding found for structure s (options.thresholdOverride or the model's). */
  double ThresholdOf(int structure) const;

private:
  struct Impl;
  std::unique_ptr<Impl> m_Impl;
};

/** Stage 1 on its own: the dense posteriors of a Haar position PBT on `prepared` (the image as
 * PrepareVolume makes it for the model: resampled to its working spacing and normalised), and the k
 * best voxels' centres (mm), best first (TopScores order); poses carry the centre and `size`. */
std::vector<ScoredPose>
BestPositions(const PBTModelFile &    model,
              const FloatVolume *     prepared,
              int                     k,
              const Vec3d &           size,
              const ResolvedBackend & backend,
              int                     cpuThreads,
              std::int64_t *          voxels = nullptr);

/** The box of `sigmas` standard deviations of the predicted centre along each axis of `grid`, plus
 * marginMm on each side, clipped to the grid (empty when it misses the grid). */
GridBox
SearchBoxOnGrid(const PredictedCentre & centre, double sigmas, double marginMm, const FloatVolume * grid);

/** Voxels a Haar PBT's features reach from their sample point along each axis (cuboid offsets + 1). */
std::array<int, 3>
HaarReach(const PBTModel & tree);

/** The position PBT's posteriors on the voxels of `box` (x fastest), evaluated on a crop of `prepared`
 * that extends the box by HaarReach on each side (clipped to the volume): equal to the whole volume's
 * scores there. `voxels` += the crop's voxel count. */
std::vector<float>
PositionScoresInBox(const PBTModelFile &    model,
                    const FloatVolume *     prepared,
                    const GridBox &         box,
                    const ResolvedBackend & backend,
                    int                     cpuThreads,
                    std::int64_t *          voxels = nullptr);

/** BestPositions restricted to the voxels of `box` (same order and tie rule), ranked by posterior x
 * factor(centre) when a factor is given. */
std::vector<ScoredPose>
BestPositionsInBox(const PBTModelFile &    model,
                   const FloatVolume *     prepared,
                   const GridBox &         box,
                   int                     k,
                   const Vec3d &           size,
                   const ResolvedBackend & backend,
                   int                     cpuThreads,
                   std::int64_t *          voxels = nullptr,
                   const CentreFactor &    factor = {});

/** Indices of the k largest scores, best first; ties and NaN: lower index first, NaN last. */
std::vector<std::int64_t>
TopScores(const float * scores, std::int64_t count, std::int64_t k);

/** The steerable hypothesis for a pose: its centre and axes, grid scale size_a x gridSpan / the grid's span. */
SteerablePose
ToSteerablePose(const StructurePose & pose, const SteerableGrid & grid, double gridSpan);

/** Weighted average of poses (axes sign-aligned to the first, orthonormalised, CanonicalAxes). */
StructurePose
AveragePoses(const std::vector<ScoredPose> & poses);

} // namespace canopy
