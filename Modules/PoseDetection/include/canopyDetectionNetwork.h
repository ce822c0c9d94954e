// Hierarchical detection network (issue 9 part 5; Sofka et al. CVPR 2010, Birkbeck et al. Sec. 2): a
// DAG of structures in which a detected parent predicts where its child lies, through a spatial prior
// learnt from the training subjects' ground-truth poses; the child's position stage then searches only
// that region. Roots (structures without a parent) are searched on the whole volume.
//
// Network description (net.json), one entry per structure, each with at most one parent:
//   {"structures": [{"name": "brainstem"}, {"name": "left_thalamus", "parent": "brainstem"}, ...]}
// Structures trained (--structure) but absent from the network are roots.
//
// Spatial prior of a child c given its parent p (both ground-truth poses; axes are unit rows A, so a
// vector v has coordinates A v in the frame):
//  - parent frames first sign-aligned to a reference (parentAxesReference: the training parents' mean
//    frame), as the canonical convention can flip a pair of axes between subjects;
//  - the frame A_p: the parent's axes, or its long axis completed by the reference's axis 1
//    ("parentLongAxis", when the parent's short axes are ill-defined), whichever makes the training
//    offsets vary less;
//  - offset u = A_p (centre_c - centre_p), mm along the frame's axes (not scaled by the parent's size:
//    detected sizes err by ~10% and would move the prediction with them);
//  - relative axes Rel = A_c A_p^T (the child's axes in the parent's frame), child axes 0 and 1 sign-
//    aligned to the first subject's before averaging; mean = the nearest rotation to the sum; spread =
//    covariance of the rotation vectors (radians) of mean^T Rel_i;
//  - size ratio r_a = size_c,a / size_p,a per axis;
// each with its mean and sample covariance (n - 1) over the training subjects.
// Search region from a detected parent pose: centre_p + A_p^T mean(u), covariance A_p^T cov(u) A_p; on
// the position stage's working grid the box of `sigmas` standard deviations along each grid axis plus
// marginMm (which absorbs the parent's own detection error) on each side.
#pragma once

#include "canopyStructurePose.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <string>
#include <vector>

namespace canopy
{

using Matrix3d = std::array<Vec3d, 3>; // rows

/** A child and its parent, by name. */
struct NetworkArc
{
  std::string child;
  std::string parent;
};

/** Reads a network description; `trained` are the structures of the detector. canopy::Error naming
 * `where` and the structure for: a document that is not {"structures": [...]}, an entry without a string
 * "name", a structure listed twice, a parent that is not in the network, a structure that is not
 * trained, a structure its own parent or any other cycle. Arcs in file order. */
std::vector<NetworkArc>
DetectionNetworkFromJson(const nlohmann::json &           document,
                         const std::string &              where,
                         const std::vector<std::string> & trained);

/** The file version of DetectionNetworkFromJson (missing, empty or invalid JSON: canopy::Error naming it). */
std::vector<NetworkArc>
ReadDetectionNetwork(const std::string & path, const std::vector<std::string> & trained);

/** Indices of `names` in an order where every parent comes before its children (Boost.Graph
 * topological_sort), ties in the given order. canopy::Error naming `where` for an arc naming an unknown
 * structure, a child with two parents, or a cycle (naming a structure on it). */
std::vector<int>
NetworkOrder(const std::vector<std::string> & names, const std::vector<NetworkArc> & arcs, const std::string & where);

struct GaussianPrior3
{
  Vec3d    mean{ { 0, 0, 0 } };
  Matrix3d covariance{}; // sample covariance (n - 1)
};

/** The spatial prior of one arc (file comment). */
struct SpatialPrior
{
  std::string child, parent;
  int         subjects = 0;
  /** Sign reference of the parent's frame: the training parents' mean frame. A parent frame (training
   * or detected) has axes 0 and 1 flipped (with axis 2) to point within 90 degrees of it first, since
   * the canonical convention may flip a pair of axes between subjects. */
  Matrix3d parentAxesReference{ { { { 1, 0, 0 } }, { { 0, 1, 0 } }, { { 0, 0, 1 } } } };
  /** The frame offsets and relative axes are expressed in: "parent" (the parent's sign-aligned axes) or
   * "parentLongAxis" (the parent's axis 0, then the reference's axis 1 made orthogonal to it, then their
   * cross product: for parents whose short axes are not defined by their shape). Training keeps the one
   * whose offsets vary less over the subjects (trace of the covariance). */
  std::string    frame = "parent";
  GaussianPrior3 offsetMm;             // child centre along the parent's axes
  Matrix3d       relativeAxes{};       // mean child axes in the parent's frame (rows, a rotation)
  Matrix3d       rotationCovariance{}; // rotation vectors of mean^T Rel_i, rad^2
  GaussianPrior3 sizeRatio;            // child size / parent size per axis
  double         sigmas = 3.0;         // search box half-width in standard deviations
  double         marginMm = 8.0;       // added on each side
};

/** Estimates the prior of child given parent from paired ground-truth poses (at least 2). */
SpatialPrior
EstimateSpatialPrior(const std::vector<StructurePose> & parents, const std::vector<StructurePose> & children);

/** The predicted child centre (LPS mm) and its covariance (mm^2, LPS) for a detected parent pose. */
struct PredictedCentre
{
  Vec3d    centerMm{ { 0, 0, 0 } };
  Matrix3d covariance{};
};
PredictedCentre
PredictCentre(const SpatialPrior & prior, const StructurePose & parent);

/** The prior's child pose for a parent pose: predicted centre, axes Rel_mean A_p (right-handed,
 * CanonicalAxes), size = ratio mean x parent size. */
StructurePose
PredictPose(const SpatialPrior & prior, const StructurePose & parent);

/** Checks a prior as the model reader does (finite means, symmetric positive semi-definite covariances,
 * rotations, size ratios > 0, sigmas in (0, 10], margin in [0, 1000] mm, subjects >= 2); `where` starts
 * the message. */
void
ValidateSpatialPrior(const SpatialPrior & prior, const std::string & where);

nlohmann::json
SpatialPriorToJson(const SpatialPrior & prior);

/** Strict reader (canopy::Error naming `where` and the field). */
SpatialPrior
SpatialPriorFromJson(const nlohmann::json & entry, const std::string & where);

} // namespace canopy
