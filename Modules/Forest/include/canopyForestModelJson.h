// The forest model as a JSON value, for formats that embed forests (the auto-context cascade) and so
// parse a file once. The string and file forms are in canopyForestModel.h.
#pragma once

#include "canopyForestModel.h"

#include <nlohmann/json.hpp>

#include <string>

namespace canopy
{
nlohmann::json
ForestModelToJson(const ForestModel & model);

/** Checks every field and validates the model, as ForestModelFromJsonString does. */
ForestModel
ForestModelFromJson(const nlohmann::json & in, const std::string & context);

} // namespace canopy
