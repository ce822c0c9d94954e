// A trained decision forest in the flat layout of ForestFlat.h (the arrays the CPU and GPU predictors
// read directly), with what prediction needs to know about its input, and its JSON form.
#pragma once

#include "canopy/ForestFlat.h"
#include "canopy/IntensityNormalization.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace canopy
{

/** Version written by WriteForestModelJson for models with a normalisation (1 without, which earlier
 * readers read correctly; they refuse version 2 rather than ignore the normalisation); readers accept
 * versions up to this one. */
constexpr int kForestModelVersion = 2;

/** The reference pose a model's pose channels ("pose:0..2") are measured in: prediction needs the pose
 * of `structure` for every volume (a poses.json of `canopy detect`, or the inline detector). `training`
 * says where the training volumes' poses came from ("label 1", "detected", ...), for the record. JSON
 * "reference": {"structure": ..., "training": ...}, present exactly when the bank has pose channels. */
struct ForestReference
{
  std::string structure;
  std::string training;
  bool        Empty() const { return structure.empty(); }
};

struct ForestModel
{
  int dimension = 3;      // 2: features have offset z 0 and size z 1 (images with nz == 1); 3: volumes
  int numChannels = 1;    // channels the features read (integral images, one per channel)
  int numClasses = 2;
  bool usesScale = false; // offsets and sizes scale with a per-voxel scale channel (CURFIL depth)
  /** Filter-bank channels computed from each input component before integration, in order
   * (canopyForestFilterBank.h names, e.g. "intensity", "gaussian:2"); numChannels = components x size.
   * Empty: the channels are the input's components as they are. JSON "filterBank", optional. */
  std::vector<std::string> filterBank;
  ForestReference          reference; // for pose channels in filterBank; empty otherwise
  /** How each input component's intensities are mapped before the filter bank (per volume: the
   * percentiles of that volume, or a fixed window), so a model reads scans of other intensity scales
   * as it read its training images. Empty: the components as they are (models before this field).
   * JSON "normalization" (IntensityNormalization's form), optional. */
  std::optional<IntensityNormalization> normalization;

  std::vector<ForestNode>   nodes;      // trees concatenated, each breadth-first
  std::vector<std::int32_t> treeRoots;  // first node of each tree
  std::vector<float>        distributions; // numClasses per leaf distribution

  int NumberOfTrees() const { return static_cast<int>(treeRoots.size()); }
  int NumberOfDistributions() const;
  /** Levels of the deepest tree (a lone leaf has depth 0). */
  int Depth() const;
  /** Node count of tree t. */
  int TreeSize(int t) const;

  /** Host view of the arrays (valid while the model is unchanged). */
  ForestView View() const;

  /** Throws canopy::Error, prefixed by `context` (a file name, say), at the first inconsistency:
   * roots, child indices (each left child after its node and inside its tree, right child too),
   * distributions, channels, 2D features, box sizes, NaN thresholds, tree count (kForestMaxTrees). */
  void Validate(const std::string & context) const;
};

/** JSON form (docs in Modules/Forest/README.md). Write throws canopy::Error when the file cannot be
 * written; Read throws naming the file and the first problem, for any corrupt input. */
void
WriteForestModelJson(const ForestModel & model, const std::string & fileName);
ForestModel
ReadForestModelJson(const std::string & fileName);

/** The same, to and from a string (context names the source in errors). */
std::string
ForestModelToJsonString(const ForestModel & model);
ForestModel
ForestModelFromJsonString(const std::string & text, const std::string & context);

} // namespace canopy
