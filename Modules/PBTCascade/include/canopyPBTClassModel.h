// Multi-class and auto-context PBT voxel models (issue 13): one-vs-rest PBTs for C classes decided
// jointly, optionally as an auto-context cascade (Tu & Bai, PAMI 2010) whose stage k reads the
// intensity and stage k-1's class-probability maps through multi-channel Haar features
// (canopyHaarChannels.h). One model file holds them all; binary model files (train-pbt without
// --labels) read as one class and one stage.
#pragma once

#include "canopyPBTModelFile.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace canopy
{

/** The model file's "kind" of a multi-class / cascade PBT model ("canopy-model" version >= 3). */
constexpr const char * kPBTClassesKind = "pbt-classes";
constexpr int          kPBTCascadeMaxStages = 8;

struct PBTClassModel
{
  std::array<double, 3>  workingSpacing{ { 2.0, 2.0, 2.0 } }; // mm
  IntensityNormalization normalization;
  /** Label value of each class (written into label maps), in the order of the PBTs of every stage. */
  std::vector<int> labels;
  /** stages[k][c]: the one-vs-rest PBT of class c at stage k. Stage 0 reads channel 0 (the prepared
   * intensity); stage k > 0 reads channel 0 and channels 1..C, stage k-1's normalised posteriors. */
  std::vector<std::vector<PBTModel>>          stages;
  nlohmann::json                              training = nlohmann::json::object();
  nlohmann::json                              provenance = nlohmann::json::object();
  std::optional<RegularizationRecommendation> regularization; // from binary files only

  int NumberOfClasses() const { return static_cast<int>(labels.size()); }
  int NumberOfStages() const { return static_cast<int>(stages.size()); }
  /** Channels the PBTs of stage k read: 1, then 1 + C. */
  int ChannelsOfStage(int k) const { return k == 0 ? 1 : 1 + NumberOfClasses(); }

  /** Throws canopy::Error starting with `where` at the first inconsistency (stage and class named). */
  void Validate(const std::string & where) const;
};

/** A binary model as a class model of one class (label `label`) and one stage. */
PBTClassModel
ClassModelFromBinary(const PBTModelFile & model, int label = 1);

nlohmann::json
PBTClassModelToJson(const PBTClassModel & model);

/** A "pbt-classes" document, or a binary one (kind "pbt", versions 1 to 3) as one class and one stage. */
PBTClassModel
PBTClassModelFromJson(const nlohmann::json & document, const std::string & where);

/** Writes atomically (temporary name, then rename). */
void
SavePBTClassModel(const PBTClassModel & model, const std::string & path);

/** Reads and validates a class model or a binary model file; errors name the file. */
PBTClassModel
LoadPBTClassModel(const std::string & path);

} // namespace canopy
