// PBT model files: the tree and features plus everything needed to apply them to a new volume
// (working spacing, intensity normalisation) and to reproduce them (training parameters, provenance).
// Format: JSON, documented in docs/MODEL_FORMAT.md; versioned by "format" and "version".
#pragma once

#include "canopyPBTModel.h"
#include "canopyVolumePreparation.h"

#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <string>

namespace canopy
{

constexpr const char * kModelFormatName = "canopy-model";
/** Version 2 (issue 9): the "pbt" object says which features it reads ("featureFamily": "haar" or
 * "steerable"). Version 1 files hold Haar PBTs and still load. Version 3 (issue 13): a file may hold
 * multi-class / auto-context PBTs ("kind": "pbt-classes", Modules/PBTCascade) whose Haar features name
 * their channel; binary files are unchanged apart from the number. */
constexpr int kModelFormatVersion = 3;
constexpr int kOldestModelFormatVersion = 1;

/** The graph-cut settings recommended for segmenting with this model (optional "regularization"
 * field, its own "version" 1): chosen at training time on the training volumes
 * (canopyLambdaSelection.h), used by `canopy segment` unless overridden. */
constexpr int kRegularizationFieldVersion = 1;

struct RegularizationRecommendation
{
  double         lambda = 1.0;                         // graph-cut surface weight, mm
  int            neighborhood = 6;                     // 6 or 26
  nlohmann::json selection = nlohmann::json::object(); // how it was chosen (method, grid, Dice per lambda)
};

struct PBTModelFile
{
  PBTModel               tree;
  std::array<double, 3>  workingSpacing{ { 2.0, 2.0, 2.0 } }; // mm
  IntensityNormalization normalization;
  nlohmann::json         training = nlohmann::json::object();   // parameters used
  nlohmann::json         provenance = nlohmann::json::object(); // inputs, date, version, device
  /** Absent in models written before it existed (and when training skipped the choice). */
  std::optional<RegularizationRecommendation> regularization;
};

nlohmann::json
PBTModelFileToJson(const PBTModelFile & model);

/** Validates everything; `where` (usually the file name) starts every error message. */
PBTModelFile
PBTModelFileFromJson(const nlohmann::json & document, const std::string & where);

/** Writes to "<path>.tmp-<pid>" and renames, so a failed write leaves no half-written model. */
void
SavePBTModelFile(const PBTModelFile & model, const std::string & path);

/** Reads and validates; a missing, truncated, corrupted or wrong-version file is a canopy::Error
 * naming the file and the problem. */
PBTModelFile
LoadPBTModelFile(const std::string & path);

} // namespace canopy
