// --structure NAME=LABEL, the option of train-shape, train-detector and evaluate-poses.
#pragma once

#include <string>
#include <vector>

namespace canopy::app
{
struct StructureOption
{
  std::string name;
  int         label = 0;
};

/** Every spec NAME=LABEL, in order; names and labels unique, labels non-zero integers. Throws
 * canopy::Error quoting the spec otherwise. */
std::vector<StructureOption>
ParseStructureOptions(const std::vector<std::string> & specs);
} // namespace canopy::app
