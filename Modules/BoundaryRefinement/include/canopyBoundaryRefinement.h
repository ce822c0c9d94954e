// Boundary refinement of a shape model (issue 10 part 3; Birkbeck §4.3 after Ling et al. CVPR 2008):
// the mean mesh placed at an initial pose, then per level of the mesh hierarchy (coarse to fine):
// score displacements along every vertex normal (a BoundaryScorer), move each vertex to its best
// offset (its score is the vertex's weight), smooth the displacement field, regularise by projecting
// onto the shape space with bounded coefficients (ProjectOntoShapeSpace), iterate. The levels are
// nested, so the pose and coefficients of one level start the next.
#pragma once

#include "canopyBoundaryScorer.h"
#include "canopyShapeModel.h"
#include "canopyShapeProjection.h"

#include <vector>

namespace canopy
{
struct ShapeRefinementOptions
{
  /** Candidate offsets per vertex, evenly spaced over [-search, +search] mm. */
  int displacements = 32;
  /** Per level (coarse to fine) the search half-range, mm; a level without an entry takes the last
   * one. Empty: the scorer's own ranges, passed in by the caller (RefineShape's searchMm argument). */
  std::vector<double> searchMm;
  int                 iterationsPerLevel = 6;
  /** The search range shrinks by this factor after each iteration of a level (down to a third). */
  double rangeDecay = 0.8;
  /** Passes of Laplacian smoothing of the displacement field (each: half own, half the neighbours'
   * mean) before the projection; 0: none. */
  int smoothingPasses = 2;
  /** Shape-space bound (|b_k| <= bound sigma_k) and modes used (-1: all). */
  double bound = 3.0;
  int    modes = -1;
  /** A level stops early when no vertex moved more than this (mm). */
  double convergenceMm = 0.02;
  /** After the finest level: iterations that keep the best offsets (smoothed, within +/- a third of the
   * finest range) without the projection, for detail outside the shape space; 0: none. */
  int freeIterations = 0;
  /** Starts besides the initial pose: 0 none; > 0 also the six poses shifted by +/- this (mm) along
   * the initial pose's axes. The coarsest level is refined from each (keptStarts, startMargin say which
   * go on and which wins): a detected start further off than the coarse search range can still be
   * caught. */
  double startSpreadMm = 0;
  /** How many coarse fits go on through the finer levels: the initial pose's and the keptStarts - 1
   * others with the best coarse mean scores. 1..7. */
  int keptStarts = 3;
  /** Another start wins only when its finest-level mean best score beats the initial pose's by more than
   * this (the best such score wins): nearby fits score alike, and the detected pose is evidence too. */
  double startMargin = 0.003;
};

struct ShapeRefinementLevelReport
{
  int             vertices = 0;
  int             iterations = 0;
  double          searchMm = 0;
  double          meanMoveMm = 0; // mean |best offset| of the last iteration
  double          meanScore = 0;  // mean best score of the last iteration
  double          projectionRmsMm = 0;
  int             clampedModes = 0;
  double          mahalanobis = 0;                    // |coefficients / sigma| after the level
  double          scale = 1;                          // the pose's scale after the level
  Eigen::Vector3d centerMm = Eigen::Vector3d::Zero(); // the level's mesh centroid after the level
  double          seconds = 0;
  double          scoringSeconds = 0;
};

struct ShapeRefinementResult
{
  Eigen::Matrix3Xd                        points; // the finest level's vertices, the input's frame (LPS mm)
  Eigen::Matrix3Xi                        triangles;
  Similarity                              pose; // model frame -> input frame
  Eigen::VectorXd                         coefficients;
  Eigen::VectorXd                         sigmas;
  std::vector<ShapeRefinementLevelReport> levels;
  std::vector<double>                     startScores;  // the coarsest level's mean best score per start
  std::vector<double>                     finestScores; // per start: the finest level's mean best score, -1 if not kept
  int                                     chosenStart = 0; // index into RefinementStarts
  double                                  seconds = 0;
};

/** The finest-level mesh refined from the mean shape at `initialPose` (model frame -> input frame).
 * searchMm: the default per-level ranges when options.searchMm is empty (e.g. the boundary
 * classifiers'). canopy::Error for bad options, or a scorer that returns scores of the wrong size or
 * non-finite ones. */
ShapeRefinementResult
RefineShape(const ShapeModel &             model,
            BoundaryScorer &               scorer,
            const Similarity &             initialPose,
            const ShapeRefinementOptions & options,
            const std::vector<double> &    searchMm = {});

/** The starts RefineShape tries (options.startSpreadMm): the initial pose first, then -/+ spread
 * along its first, second and third axes. */
std::vector<Similarity>
RefinementStarts(const Similarity & initialPose, double spreadMm);

/** The offsets RefineShape scores: count values evenly spaced over [-range, range]. */
std::vector<double>
RefinementOffsets(int count, double range);

/** One pass of Laplacian smoothing of per-vertex vectors over the mesh's edges: v_i <- (v_i + mean of
 * its neighbours' v) / 2. */
Eigen::Matrix3Xd
SmoothOverMesh(const Eigen::Matrix3Xd & values, const Eigen::Matrix3Xi & triangles);
} // namespace canopy
