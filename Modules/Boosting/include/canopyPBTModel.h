// A trained probabilistic boosting tree in the flat layout the kernels read (PBTFlat.h), plus the
// Haar feature bank its weak learners index. Shared by training, evaluation and model files.
#pragma once

#include "canopy/HaarFeature.h"
#include "canopy/PBTFlat.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <string>
#include <vector>

namespace canopy
{

/** Deepest tree any evaluator accepts; the stack holds kPBTMaxDepth + 1 entries (Birkbeck: 32). */
constexpr int kPBTMaxDepth = 30;
constexpr int kPBTStackSize = 32;

struct PBTModel
{
  std::vector<PBTNodeFlat>        nodes; // nodes[0] is the root
  std::vector<PBTWeakLearnerFlat> learners;
  std::vector<float>              tables;
  std::vector<HaarFeature>        features;           // indexed by PBTWeakLearnerFlat::feature
  std::array<int, 3>              sampleBox{ { 0, 0, 0 } }; // Haar sample box in voxels at the working spacing
  float                           epsilon1 = 1e-6f;
  float                           epsilon2 = 0.1f;

  /** Host view (pointers into this model's vectors). */
  PBTView
  View() const;

  /** Longest root-to-leaf path in edges (a lone root has depth 0). */
  int
  Depth() const;

  /** Checks every index (children, learners, tables, features), finite values, acyclicity and depth
   * <= kPBTMaxDepth; throws canopy::Error naming `where` and the first problem. */
  void
  Validate(const std::string & where) const;

  /** Drops features no learner uses and renumbers learners' feature indices. */
  void
  CompactFeatures();
};

/** JSON form of the tree and its features (see docs/MODEL_FORMAT.md). FromJson validates. */
void
PBTModelToJson(const PBTModel & model, nlohmann::json & out);
PBTModel
PBTModelFromJson(const nlohmann::json & in, const std::string & where);

} // namespace canopy
