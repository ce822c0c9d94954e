// The shape-fusion options shared by segment-shape (fit and fuse in one run) and fuse-shape (fuse a
// mesh written earlier): the voxel classifier's probability map of the structure and the fusion's
// parameters (Modules/ShapeFusion).
#pragma once

#include "canopyShapePriorFusion.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>

namespace canopy::app
{
struct ShapeFusionOptions
{
  std::string           probabilities;  // empty: no fusion
  int                   component = -1; // -1: the structure's label value (a scalar map: its only component)
  ShapeFusionParameters parameters;
};

/** --probabilities, --probability-component, --fusion-width, --fusion-voxel-weight, --fusion-band,
 * --fusion-lambda on `command`; the parameters need --probabilities. */
void
AddShapeFusionOptions(CLI::App * command, ShapeFusionOptions & options, const std::string & probabilitiesHelp);

/** The structure's probability (component `options.component`, or the label value `label` when -1) of
 * --probabilities as a float volume. A scalar file is the probability itself. With `grid` (the input
 * volume): canopy::Error unless the map lies on its grid (size, and origin, spacing, direction within
 * 1e-3). */
itk::Image<float, 3>::Pointer
ReadStructureProbability(const ShapeFusionOptions & options, int label, const itk::ImageBase<3> * grid = nullptr);

/** The options and the run's statistics for a JSON report. */
nlohmann::json
ShapeFusionReport(const ShapeFusionOptions & options, const ShapeFusionStatistics & statistics);
} // namespace canopy::app
