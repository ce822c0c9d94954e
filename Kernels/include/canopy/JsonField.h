// Host-only helper shared by the model-file readers (PBT, forest): a required field of a JSON object,
// or a canopy::Error naming where it was looked for.
#pragma once

#include "canopy/Errors.h"

#include <nlohmann/json.hpp>

#include <string>

namespace canopy
{
inline const nlohmann::json &
RequireJsonField(const nlohmann::json & object, const char * key, const std::string & context)
{
  if (!object.is_object())
  {
    CANOPY_THROW(context << " must be a JSON object");
  }
  const auto it = object.find(key);
  if (it == object.end())
  {
    CANOPY_THROW(context << " has no field \"" << key << "\"");
  }
  return *it;
}
} // namespace canopy
