// Detector model files (issue 9 part 7): every structure's three marginal-space stages, hypothesis sets
// and thresholds, as versioned JSON ("format": "canopy-detector", docs/MODEL_FORMAT.md). The reader is
// strict, like the PBT model reader: a damaged file is a canopy::Error naming the file, the structure
// and the field.
#pragma once

#include "canopyPoseDetector.h"

#include <nlohmann/json.hpp>

#include <string>

namespace canopy
{

constexpr const char * kDetectorFormatName = "canopy-detector";
/** Version 2 added "network" (the hierarchical detection network's spatial priors); version 1 files
 * (no network: every structure a root) are still read. */
constexpr int kDetectorFormatVersion = 2;

/** Largest hypothesis counts a model may ask for (a damaged count fails here, not in an allocation). */
constexpr int          kMaxDetectorCandidates = 100000;
constexpr std::int64_t kMaxDetectorHypotheses = 50000000;

nlohmann::json
DetectorModelToJson(const DetectorModel & model);

/** Parses and validates; `where` (the file name) starts every message. */
DetectorModel
DetectorModelFromJson(const nlohmann::json & document, const std::string & where);

/** Checks what DetectorModelFromJson checks on a model in memory: at least one structure; names unique
 * and non-empty, labels non-zero; thresholds in [0, 1]; a valid Haar position PBT and valid steerable
 * orientation and scale PBTs, all structures on one pyramid and one normalisation; counts in
 * [1, kMaxDetectorCandidates] and hypothesis totals <= kMaxDetectorHypotheses; orientations orthonormal
 * and right-handed within 1e-3; sizes, grid span and cluster radius finite and positive; network priors
 * valid (ValidateSpatialPrior), naming structures of the model, one prior per child, no cycle. */
void
ValidateDetectorModel(const DetectorModel & model, const std::string & where);

/** Written to a temporary name and renamed. */
void
SaveDetectorModel(const DetectorModel & model, const std::string & path);

/** canopy::Error naming the file for a missing, empty, truncated or damaged file, or another model kind. */
DetectorModel
LoadDetectorModel(const std::string & path);

} // namespace canopy
