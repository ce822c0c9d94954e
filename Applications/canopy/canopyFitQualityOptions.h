// segment-shape's fit-quality check (canopyFitQuality.h): its options, its report entry and the lines
// it prints (a warning on stderr for a suspect fit).
#pragma once

#include "canopyFitQuality.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>

namespace canopy::app
{
/** --fit-low-score, --fit-max-low-share, --fit-min-surface-score, --fit-shape-z, --fit-probe on `command`. */
void
AddFitQualityOptions(CLI::App * command, FitQualityOptions & options);

/** The measures, the thresholds and the verdict for a JSON report. */
nlohmann::json
FitQualityJson(const FitQuality & quality, const FitQualityOptions & options);

/** One line of measures on stdout; a suspect fit also a warning line on stderr. */
void
PrintFitQuality(const std::string & structure, const FitQuality & quality);
} // namespace canopy::app
