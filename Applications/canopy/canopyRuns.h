// The runs behind `canopy segment`, `canopy classify` and `canopy predict-forest`, as functions taking
// their arguments and returning what they found: the canopy command line and the 3D Slicer CLI modules
// (Applications/SlicerModules) both call these, so the two front ends share one implementation.
#pragma once

#include "canopyRegularization.h"
#include "canopySegmentationFile.h"

#include <cstdint>
#include <optional>
#include <string>

namespace canopy::app
{
struct SegmentArguments
{
  std::string model, input, output, mesh, probability, device = "auto", report, snapshot, snapshotReference;
  /** Also write the labels here as a Slicer segmentation (.seg.nrrd); --output may be one too. */
  std::string segmentation;
  /** Also write every class's probability here (the layout of predict-forest --mode distribution:
   * component 0 the background, component L the class of label L; fuse-shape reads it). */
  std::string classProbabilities;
  /** Batch (--inputs): each volume's class probabilities in this folder, named as its label map. */
  std::string classProbabilitiesDir;
  /** Segment name in segmentations (empty: the model file's name without extension) and colour "R,G,B". */
  std::string  segmentName, segmentColor = "0.9,0.35,0.2";
  double       lambda = kDefaultLambdaMm;
  unsigned int neighborhood = 6;
  bool         lambdaGiven = false, neighborhoodGiven = false;
  unsigned     smoothing = 0;
  double       decimation = 0.0;
  bool         nonProbabilistic = false, quiet = false;
};

struct SegmentOutcome
{
  std::string  device;       // the backend that ran, described
  double       lambda = 0.0; // graph-cut lambda used (mm) and where it came from
  std::string  lambdaSource;
  unsigned     neighborhood = 6;
  std::int64_t labelledVoxels = 0;
  double       labelledVolumeMm3 = 0.0;
  std::int64_t meshTriangles = 0;
};

/** Classify, graph cut, optional mesh, probability, segmentation and snapshot; outputs all or nothing. */
SegmentOutcome
RunSegment(const SegmentArguments & a);

struct ClassifyArguments
{
  std::string model, input, output, device = "auto", report, snapshot, snapshotReference;
  bool        nonProbabilistic = false, quiet = false;
};

struct ClassifyOutcome
{
  std::string device;
  double      maximumProbability = 0.0;
  /** Voxels with p >= 0.5. */
  std::int64_t voxelsAtLeastHalf = 0;
};

ClassifyOutcome
RunClassify(const ClassifyArguments & a);

struct PredictForestArguments
{
  std::string model, input, output, mode = "argmax", device = "auto", report;
  /** argmax only: also write the labels here as a Slicer segmentation, one segment per class > 0
   * (names from segmentNames, comma-separated, else "class N"). --output may be a .seg.nrrd too. */
  std::string segmentation, segmentNames;
  /** argmax only: canopyLabelCleanup.h steps ("none", "largest,fill", ...). */
  std::string postprocess = "none";
  /** argmax only: a voxel is background unless 1 - p(background) reaches this, in (0, 1)
   * (LabelsAtForegroundThreshold); unset: the most probable class. */
  std::optional<double> foregroundThreshold;
  /** Models with pose channels: the input's reference pose from a poses.json (or, in a batch, a folder
   * of NAME.poses.json) or from a pose detector run on the input (canopyReferencePose.h). */
  std::string referencePoses, referenceDetector;
  bool        quiet = false;
};

struct PredictForestOutcome
{
  std::string backend;
  int         classes = 0;
};

PredictForestOutcome
RunPredictForest(const PredictForestArguments & a);

/** Every volume of `list` (a dataset.json or a folder) into outputDir/<name><suffix>, over the
 * processes of an MPI run when `distributed`; a failed volume is reported and skipped, and the run
 * throws at the end when any failed (after rank 0 wrote a.report, which lists every volume). */
void
RunPredictForestBatch(const PredictForestArguments & a,
                      const std::string &            list,
                      const std::string &            outputDir,
                      const std::string &            suffix,
                      bool                           distributed);
} // namespace canopy::app
