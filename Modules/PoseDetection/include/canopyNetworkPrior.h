// The hierarchical network's spatial prior at detection time (issue 9 part 5; Sofka et al. CVPR 2010,
// constrained MSL of Zheng et al. 2009): once a parent is detected, its child's prior
// (canopyDetectionNetwork.h) is bound to the parent's pose and
//  1. generates the child's hypotheses: orientations Rel A_p with Rel = Rel_mean Exp(t), t drawn from
//     the turn Gaussian (the first is the mean, t = 0), and sizes r * parent size with r drawn from the
//     size-ratio Gaussian (the first is the mean), in addition to ("both", the default) or instead of
//     ("prior") the model's own hypothesis lists ("model": the model's lists only);
//  2. scores every hypothesis: the ranking score of a stage is the product of the PBT posteriors times
//     exp(weight x log prior), log prior = -1/2 Mahalanobis^2 of the centre, of the turn and of the size
//     ratio (0 at the prior's mean; the normalising constants are the same for every hypothesis of a
//     child and left out). weight 0 ranks by the PBTs alone; 1 is the Bayesian product; the default
//     0.5 was chosen on a (small, CPU) validation split of training subjects (docs/ACCURACY.md).
// The found/missed decision stays on the image evidence: the answer is the best ranked hypothesis among
// those whose PBT posteriors' product reaches the threshold, and the structure is missed when none does
// (a prior never makes a pose found, nor a supported structure missed). The threshold of a child under
// its prior is the structure's own unless childThreshold is set (detect --child-threshold): a child of a
// found parent is known to exist in the anatomy, so a lower bar reports its best supported pose instead
// of a miss, flagged lowConfidence when its evidence is below the structure's threshold. Roots, children
// of a missed parent and children searched on the whole volume keep the structure's threshold; an
// absent child (evidence ~1e-5 on the phantoms) stays missed at any child threshold above its evidence
// (NetworkDecoyTest.AnAbsentChildIsStillMissedUnderAChildThreshold).
//
// Spreads at detection add the detected parent's own error to the training spreads (which were learnt
// from ground-truth parents):
//  - centre: the predicted covariance + s^2 I with s = the prior's search margin / its sigmas (the search
//    box, sigmas sd + margin, then spans about `sigmas` sd of this Gaussian), at least 1 mm, + the
//    parent's orientation error carried to the offset u: r^2 (|u|^2 I - u u^T), r = parentTurnDegrees in
//    radians (a turn t moves the prediction by t x u);
//  - turn: the learnt turn covariance + (parentTurnDegrees in radians)^2 I (default 10 degrees, about the
//    parent's median orientation error on SynthSeg), at least 1 degree;
//  - size ratio: the learnt covariance + (parentSizeShare x mean ratio)^2 per axis (default 0.10, the
//    parent's size error), at least 1% of the mean.
#pragma once

#include "canopyDetectionNetwork.h"

#include <cstdint>
#include <string>
#include <vector>

namespace canopy
{

/** How the network's priors enter detection (file comment); `canopy detect --prior-weight` etc. */
struct PriorScoringOptions
{
  double        weight = 0.5;             // exp(weight x log prior) multiplies the ranking score; >= 0
  std::string   hypotheses = "both";      // the child's hypotheses: "prior", "model" or "both"
  int           orientationSamples = 100; // prior orientations per child (the mean included)
  int           sizeSamples = 30;         // prior sizes per child (the mean included)
  double        parentTurnDegrees = 10.0;
  double        parentSizeShare = 0.10;
  std::uint64_t seed = 1;              // draws of the prior hypotheses (PortableRandom: the same on every platform)
  double        childThreshold = -1.0; // >= 0: a child under its prior is found at this evidence (file comment)
};

/** canopy::Error starting with `where` and naming the option for: a weight that is negative, above 1000
 * or not finite, hypotheses not one of "prior", "model", "both", sample counts outside 1..10000, a
 * negative or non-finite spread, a child threshold that is neither -1 (unset) nor in [0, 1]. */
void
ValidatePriorScoring(const PriorScoringOptions & options, const std::string & where);

/** A child's prior bound to its detected parent's pose: means and inverse covariances (file comment). */
struct ChildPrior
{
  Vec3d    centreMm{ { 0, 0, 0 } }; // predicted centre, LPS
  Matrix3d centreCovariance{}, centreInverse{};
  Matrix3d frame{};        // the prior's frame of the detected parent (rows)
  Matrix3d relativeAxes{}; // mean child axes in that frame
  Matrix3d turnCovariance{}, turnInverse{};
  Vec3d    parentSizeMm{ { 0, 0, 0 } };
  Vec3d    ratioMean{ { 0, 0, 0 } };
  Matrix3d ratioCovariance{}, ratioInverse{};
};

ChildPrior
BindChildPrior(const SpatialPrior & prior, const StructurePose & parent, const PriorScoringOptions & options);

/** -1/2 Mahalanobis^2 of a child centre (LPS mm). */
double
CentreLogPrior(const ChildPrior & prior, const Vec3d & centreMm);

/** -1/2 Mahalanobis^2 of the turn from the mean relative axes to a child frame's (rows, LPS), the frame's
 * axes 0 and 1 sign-aligned to the mean's first (the canonical convention may flip a pair). */
double
OrientationLogPrior(const ChildPrior & prior, const Matrix3d & axes);

/** -1/2 Mahalanobis^2 of the size ratio child size / detected parent size. */
double
SizeLogPrior(const ChildPrior & prior, const Vec3d & sizeMm);

/** `count` child frames: the prior's mean first, then Rel_mean Exp(t) A_p with t ~ N(0, turn covariance);
 * CanonicalAxes. */
std::vector<Matrix3d>
PriorOrientationHypotheses(const ChildPrior & prior, int count, std::uint64_t seed);

/** `count` child sizes: mean ratio x parent size first, then r x parent size with r ~ N(mean, ratio
 * covariance), each ratio at least 0.05 x its mean. */
std::vector<Vec3d>
PriorSizeHypotheses(const ChildPrior & prior, int count, std::uint64_t seed);

/** exp(weight x logPrior) as a float (0 when it underflows; 1 for weight 0). */
float
PriorFactor(double weight, double logPrior);

} // namespace canopy
