// Steps shared by `canopy classify` and `canopy segment`: classification with a progress bar, the
// timings in run reports, and the PNG snapshot with an optional reference outline.
#pragma once

#include "canopyPBTClassification.h"
#include "canopyProgress.h"

#include <nlohmann/json.hpp>

#include <string>

namespace canopy::app
{
FloatVolume::Pointer
ClassifyWithProgress(const FloatVolume *        image,
                     const PBTModelFile &       model,
                     const ResolvedBackend &    backend,
                     bool                       probabilistic,
                     bool                       quiet,
                     PBTClassificationTimings & timings,
                     ProgressShare              share = {});

nlohmann::json
ToJson(const PBTClassificationTimings & timings);

/** Float copy of a 0/1 mask (the snapshot and float filters take float overlays). */
FloatVolume::Pointer
MaskAsFloat(const MaskVolume * mask);

/** Writes `snapshotPath` when non-empty: image with `overlay` (>= 0.5) tinted, and the label map at
 * `referencePath` (when non-empty) outlined. */
void
WriteSnapshotIfAsked(const FloatVolume * image,
                     const FloatVolume * overlay,
                     const std::string & snapshotPath,
                     const std::string & referencePath);
} // namespace canopy::app
