// Host-only helpers shared by the model-file readers (PBT, forest) and the dataset reader: a required
// field of a JSON object, or a canopy::Error naming where it was looked for; a nesting limit for parsing.
#pragma once

#include "canopy/Errors.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

namespace canopy
{
/** Deepest nesting a model file may have. The formats need 4 levels; nlohmann-json parses iteratively
 * but copies and prints recursively, so a "training" field nested 40,000 levels deep (an 80 KB file)
 * overflowed the stack when the PBT reader copied it (found by Testing/Fuzz/canopyFuzzPBTModel). */
constexpr int kMaxJsonDepth = 64;

/** nlohmann::json::parse(input) that stops with a canopy::Error naming `context` at the first value
 * nested deeper than kMaxJsonDepth. Syntax errors stay nlohmann::json::parse_error. */
template<typename TInput>
nlohmann::json
ParseJsonWithDepthLimit(TInput && input, const std::string & context)
{
  return nlohmann::json::parse(std::forward<TInput>(input),
                               [&context](int depth, nlohmann::json::parse_event_t, nlohmann::json &)
                               {
                                 if (depth > kMaxJsonDepth)
                                 {
                                   CANOPY_THROW(context << ": JSON nested deeper than " << kMaxJsonDepth << " levels");
                                 }
                                 return true;
                               });
}

/** ParseJsonWithDepthLimit whose syntax errors, too, are canopy::Errors: "<context>: not valid JSON (...)". */
inline nlohmann::json
ParseJsonDocument(const std::string & text, const std::string & context)
{
  try
  {
    return ParseJsonWithDepthLimit(text, context);
  }
  catch (const nlohmann::json::exception & e)
  {
    CANOPY_THROW(context << ": not valid JSON (" << e.what() << ")");
  }
}

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

/** The string field `key` of `object`, or "" when the field is absent. A field of another type is a
 * canopy::Error naming `context` (nlohmann's value(key, default) throws its own type_error instead,
 * which the readers' callers do not expect: found by Testing/Fuzz/canopyFuzzPBTModel). */
inline std::string
OptionalJsonString(const nlohmann::json & object, const char * key, const std::string & context)
{
  if (!object.is_object())
  {
    CANOPY_THROW(context << " must be a JSON object");
  }
  const auto it = object.find(key);
  if (it == object.end())
  {
    return std::string();
  }
  if (!it->is_string())
  {
    CANOPY_THROW(context << ": \"" << key << "\" must be a string");
  }
  return it->get<std::string>();
}

/** The whole text of a model file, or a canopy::Error naming it when it is a folder or cannot be read. */
inline std::string
ReadModelFileText(const std::string & fileName)
{
  std::error_code error;
  if (std::filesystem::is_directory(fileName, error))
  {
    CANOPY_THROW(fileName << ": is a folder, not a model file");
  }
  std::ifstream in(fileName, std::ios::binary);
  if (!in)
  {
    CANOPY_THROW(fileName << ": cannot be opened for reading");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/** The JSON document of a file the readers load whole (models, poses), with canopy::Errors that name
 * the file: "<file>: cannot open <what> (no such file)", a folder or an unreadable file (ReadModelFileText), "<file>:
 * <what> is empty", and
 * "<file>: <what> is truncated or not valid JSON (...)" (nesting deeper than kMaxJsonDepth included).
 * `what` names the kind, e.g. "the model file" or "the detector model". */
inline nlohmann::json
ReadJsonFile(const std::string & fileName, const std::string & what)
{
  std::error_code error;
  if (!std::filesystem::exists(fileName, error))
  {
    CANOPY_THROW(fileName << ": cannot open " << what << " (no such file)");
  }
  const std::string text = ReadModelFileText(fileName);
  if (text.empty())
  {
    CANOPY_THROW(fileName << ": " << what << " is empty");
  }
  try
  {
    return ParseJsonWithDepthLimit(text, fileName);
  }
  catch (const nlohmann::json::exception & e)
  {
    CANOPY_THROW(fileName << ": " << what << " is truncated or not valid JSON (" << e.what() << ")");
  }
}
} // namespace canopy
