// The runs behind `canopy detect` (pose detection, issue 9) and `canopy segment-shape` (shape-model
// segmentation, issue 10), as functions taking their arguments and returning what they found: the
// canopy command line and the 3D Slicer CLI modules (CanopyDetect, CanopySegmentShape) call these, as
// canopyRuns.h does for the voxel classifiers.
#pragma once

#include "canopyBoundaryRefinement.h"
#include "canopyFitQuality.h"
#include "canopyNetworkPrior.h"
#include "canopyShapeFusionOptions.h"
#include "canopyStructurePose.h"

#include <cstdint>
#include <string>
#include <vector>

namespace canopy::app
{
/** --refine-step / --refine-reach's defaults: chosen on the validation subjects 08-10 (median centre
 * 3.69 -> 3.07 mm; the test split 3.04 -> 2.49 mm; docs/ACCURACY.md). */
constexpr double kDefaultRefineStepMm = 1.0;
constexpr int    kDefaultRefineReach = 2;

struct DetectArguments
{
  /** output: poses.json; markups: Slicer markups JSON (a point list of the centres, then a box ROI per
   * structure); centres: a markups JSON of the centres alone (one point list, what a Slicer CLI
   * module's point-file output loads); boxes: the oriented boxes as a mesh. Each optional, at least one
   * given (the command requires output). */
  std::string         model, input, output, markups, centres, boxes, snapshot, report, truth, device = "auto";
  double              threshold = -1.0;
  bool                quiet = false, ignoreNetwork = false;
  PriorScoringOptions prior;
  double              refineStepMm = kDefaultRefineStepMm;
  int                 refineReach = kDefaultRefineReach;
};

struct DetectOutcome
{
  std::string                    device;     // the backend that ran, described
  std::vector<DetectedStructure> structures; // every structure of the model, in model order
};

/** Detects every structure of the model in the input; writes the outputs all together or none
 * (canopy::Error names the file or parameter). */
DetectOutcome
RunDetect(const DetectArguments & a);

struct SegmentShapeArguments
{
  std::string            shape, input, output, mesh, detector, pose, initLabel, structure, device = "auto", report;
  std::string            startLabels;              // a voxel classifier's label map: a second start
  double                 startLabelsMargin = 0.01; // it replaces the first fit when its score is higher by more
  int                    initLabelValue = 0;
  double                 detectionThreshold = -1.0; // >= 0: replaces the detector's threshold
  bool                   ignorePoseAxes = false, imageCenter = false, quiet = false;
  ShapeRefinementOptions refinement;
  FitQualityOptions      quality;
  ShapeFusionOptions     fusion; // --probabilities: the label from the mesh and the voxel map together
};

struct SegmentShapeOutcome
{
  std::string  device;    // the backend that ran, described
  std::string  structure; // the shape model's structure that was fitted
  std::string  initialisation;
  std::int64_t labelledVoxels = 0;
  double       labelledVolumeMm3 = 0.0;
  double       detectionScore = -1.0; // the detector's (or poses file's) score; -1 without one
  FitQuality   quality;               // the fit check (quality.suspect: fit_suspect)
};

/** Places the shape model's mean mesh at the initial pose, refines it and writes the label map (and the
 * optional mesh and report) all together or none. Logs the fit check; a suspect fit is a warning. */
SegmentShapeOutcome
RunSegmentShape(SegmentShapeArguments & a);
} // namespace canopy::app
