// Host-only helpers shared by the model-file readers (PBT, forest) and the dataset reader: a required
// field of a JSON object, or a canopy::Error naming where it was looked for; a nesting limit for parsing.
#pragma once

#include "canopy/Errors.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace canopy
{
/** Deepest nesting a model file may have. The formats need 4 levels; nlohmann-json parses iteratively
 * but copies and prints recursively, so a "training" field nested 40,000 levels deep (an 80 KB file)
 * overflowed the stack when the PBT reader copied it (found by Testing/Fuzz/canopyFuzzPBTModel). */
constexpr int kMaxJsonDepth = 64;

/** Whether `text` opens more than `limit` arrays or objects inside one another, by one pass over its
 * bytes (strings skipped, escapes included). Only the nesting is looked at: the syntax is the parser's
 * business, and a malformed text just ends the scan wherever it ends. */
inline bool
JsonNestsDeeperThan(std::string_view text, int limit)
{
  int  open = 0;
  bool inString = false;
  for (std::size_t i = 0; i < text.size(); ++i)
  {
    const char c = text[i];
    if (inString)
    {
      if (c == '\\')
        ++i; // the escaped character, a quote included, belongs to the string
      else if (c == '"')
        inString = false;
    }
    else if (c == '"')
      inString = true;
    else if (c == '[' || c == '{')
    {
      if (++open > limit)
        return true;
    }
    else if ((c == ']' || c == '}') && open > 0)
      --open;
  }
  return false;
}

/** Throws the canopy::Error "<context>: JSON nested deeper than kMaxJsonDepth levels" when `text` does;
 * every JSON reader checks this before parsing. */
inline void
RequireJsonNestingLimit(std::string_view text, const std::string & context)
{
  if (JsonNestsDeeperThan(text, kMaxJsonDepth))
  {
    CANOPY_THROW(context << ": JSON nested deeper than " << kMaxJsonDepth << " levels");
  }
}

/** The canopy::Error for a syntax error the parser reported: "<context>: not valid JSON (<its message>)". */
[[noreturn]] inline void
ThrowNotValidJson(const std::string & context, const nlohmann::json::exception & e)
{
  CANOPY_THROW(context << ": not valid JSON (" << e.what() << ")");
}

/** nlohmann::json::parse(input) that stops with a canopy::Error naming `context` when arrays or objects
 * nest deeper than kMaxJsonDepth, before anything is parsed. Syntax errors stay nlohmann::json::parse_error.
 * The nesting is checked by JsonNestsDeeperThan and then the plain parser runs: with nlohmann-json's
 * callback parser (the way the limit was first enforced) predict-forest read a 50 MB forest in 8-12 s
 * instead of 3 s, most of its time with a large model (docs/BENCHMARKS.md, "Reading model files"). A
 * stream is read whole first. */
template<typename TInput>
nlohmann::json
ParseJsonWithDepthLimit(TInput && input, const std::string & context)
{
  if constexpr (std::is_convertible_v<TInput, std::string_view>)
  {
    const std::string_view text(input);
    RequireJsonNestingLimit(text, context);
    return nlohmann::json::parse(text);
  }
  else
  {
    const std::string text{ std::istreambuf_iterator<char>(input), std::istreambuf_iterator<char>() };
    return ParseJsonWithDepthLimit(text, context);
  }
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
    ThrowNotValidJson(context, e);
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

/** Whether `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above
 * U+10FFFF), as JSON text must be. A CBOR reader does not check it, and a string that is not would make
 * nlohmann-json's dump() throw wherever the value is written later (a report, the model written back). */
inline bool
IsValidUtf8(std::string_view text)
{
  const auto * p = reinterpret_cast<const unsigned char *>(text.data());
  const auto * end = p + text.size();
  while (p < end)
  {
    const unsigned c = *p++;
    if (c < 0x80)
      continue;
    int      more;
    unsigned low = 0x80, high = 0xBF; // the range of the first continuation byte
    if (c >= 0xC2 && c <= 0xDF)
      more = 1;
    else if (c >= 0xE0 && c <= 0xEF)
    {
      more = 2;
      low = c == 0xE0 ? 0xA0 : 0x80;  // no overlong forms
      high = c == 0xED ? 0x9F : 0xBF; // no surrogates
    }
    else if (c >= 0xF0 && c <= 0xF4)
    {
      more = 3;
      low = c == 0xF0 ? 0x90 : 0x80;
      high = c == 0xF4 ? 0x8F : 0xBF; // nothing above U+10FFFF
    }
    else
      return false;
    if (end - p < more || *p < low || *p > high)
      return false;
    for (++p, --more; more > 0; --more, ++p)
      if (*p < 0x80 || *p > 0xBF)
        return false;
  }
  return true;
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
  // Read straight into a string of the file's size: through a stringstream, a large model was held
  // twice. A stream without a size (a pipe) is read to its end.
  std::string text;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size >= 0 && in)
  {
    text.resize(static_cast<std::size_t>(size));
    if (!in.read(text.data(), size))
    {
      CANOPY_THROW(fileName << ": could not be read to its end");
    }
    return text;
  }
  in.clear();
  std::ostringstream whole;
  whole << in.rdbuf();
  return whole.str();
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
