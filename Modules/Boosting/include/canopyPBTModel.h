// A trained probabilistic boosting tree in the flat layout the kernels read (PBTFlat.h), plus the
// feature bank its weak learners index: Haar features (voxel classification, position detection) or
// steerable features (pose hypotheses: orientation, scale). The tree, its training (TrainPBT) and its
// traversal (PbtPosteriorStack) are the same for every family; only the bank differs. Shared by
// training, evaluation and model files.
#pragma once

#include "canopy/HaarFeature.h"
#include "canopy/PBTFlat.h"
#include "canopy/SteerableFeature.h"
#include "canopySteerablePyramid.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <string>
#include <vector>

namespace canopy
{

/** Deepest tree any evaluator accepts; the stack holds kPBTMaxDepth + 1 entries (Birkbeck: 32). */
constexpr int kPBTMaxDepth = 30;
constexpr int kPBTStackSize = 32;

/** Which features a PBT's weak learners read (Birkbeck et al. Sec. 3.2). */
enum class PBTFeatureFamily
{
  Haar,     // HaarFeatureFunc: features, sampleBox
  Steerable // SteerableFeatureFunc: steerable
};

/** "haar" or "steerable" (the model file's "featureFamily"). */
const char *
PBTFeatureFamilyName(PBTFeatureFamily family);

/** The bank of a steerable PBT and the sampling it was trained with: evaluate it on a pyramid built
 * with `pyramid` (SteerablePyramid::Build) and poses on the same grid. */
struct SteerablePBTFeatures
{
  SteerableGrid                 grid;
  SteerablePyramidOptions       pyramid; // levels: levelSpacingsMm, or levelFactors when not empty
  std::vector<SteerableFeature> features;

  int
  NumberOfLevels() const
  {
    return static_cast<int>(pyramid.levelFactors.empty() ? pyramid.levelSpacingsMm.size() : pyramid.levelFactors.size());
  }
};

struct PBTModel
{
  std::vector<PBTNodeFlat>        nodes; // nodes[0] is the root
  std::vector<PBTWeakLearnerFlat> learners;
  std::vector<float>              tables;
  PBTFeatureFamily                featureFamily = PBTFeatureFamily::Haar;
  std::vector<HaarFeature>        features;           // Haar family: indexed by PBTWeakLearnerFlat::feature
  std::array<int, 3>              sampleBox{ { 0, 0, 0 } }; // Haar family: sample box in voxels at the working spacing
  SteerablePBTFeatures            steerable;          // Steerable family: steerable.features indexed by learners
  float                           epsilon1 = 1e-6f;
  float                           epsilon2 = 0.1f;

  /** Size of the bank of the model's family. */
  int
  NumberOfFeatures() const;

  /** Host view (pointers into this model's vectors). */
  PBTView
  View() const;

  /** Longest root-to-leaf path in edges (a lone root has depth 0). */
  int
  Depth() const;

  /** Checks every index (children, learners, tables, features), finite values, acyclicity, depth
   * <= kPBTMaxDepth and the family's bank (Haar: sample box; steerable: grid, pyramid levels, every
   * feature's position, type and level); throws canopy::Error naming `where` and the first problem. */
  void
  Validate(const std::string & where) const;

  /** Drops features no learner uses and renumbers learners' feature indices. */
  void
  CompactFeatures();
};

/** JSON form of the tree and its features (see docs/MODEL_FORMAT.md): "featureFamily" says which bank
 * it holds; an object without it (written before format version 2) is a Haar PBT. FromJson validates. */
void
PBTModelToJson(const PBTModel & model, nlohmann::json & out);
PBTModel
PBTModelFromJson(const nlohmann::json & in, const std::string & where);

} // namespace canopy
