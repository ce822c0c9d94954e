// A per-tree checkpoint of forest training (canopy train-forest --checkpoint): the trees grown so far
// and a fingerprint of everything that determines the forest, so that a rerun with the same inputs
// resumes where a stopped run left off and grows the forest an uninterrupted run grows.
#pragma once

#include "canopyForestModel.h"

#include <nlohmann/json.hpp>

#include <string>

namespace canopy
{
struct ForestCheckpoint
{
  nlohmann::json fingerprint; // a JSON object the caller builds (options, inputs, sample counts)
  ForestModel    trees;       // the first trees of the forest, at least one
};

/** Writes the checkpoint to `path` atomically (a temporary file renamed into place), so a run stopped
 * at any moment leaves the previous checkpoint or the new one, never a half-written file. */
void
WriteForestCheckpoint(const ForestCheckpoint & checkpoint, const std::string & path);

/** Reads a checkpoint; any problem (unreadable, not JSON, another format, a corrupt forest) is a
 * canopy::Error naming `path` and the first problem. */
ForestCheckpoint
ReadForestCheckpoint(const std::string & path);

/** The first difference between two fingerprints, as "depth: 14 in the checkpoint, 12 now" (nested
 * fields by path, array elements by index and their "image" field), or "" when they are equal. */
std::string
DescribeFingerprintDifference(const nlohmann::json & saved, const nlohmann::json & now);

} // namespace canopy
