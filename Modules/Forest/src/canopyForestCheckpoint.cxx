// Per-tree checkpoints of forest training: {format, version, fingerprint, forest} in one JSON file.
#include "canopyForestCheckpoint.h"
#include "canopy/Errors.h"
#include "canopy/JsonField.h"
#include "canopyForestModelJson.h"

#include <sstream>

namespace canopy
{
namespace
{
using nlohmann::json;

constexpr const char * kFormat = "canopy-forest-checkpoint";
constexpr int          kVersion = 1;

std::string
Shown(const json & value)
{
  const std::string text = value.dump();
  return text.size() <= 120 ? text : text.substr(0, 117) + "...";
}

std::string
Difference(const json & saved, const json & now, const std::string & where)
{
  const std::string prefix = where.empty() ? "" : where + ": ";
  if (saved.is_object() && now.is_object())
  {
    for (const auto & [key, value] : saved.items())
    {
      const std::string inner = where.empty() ? key : where + "." + key;
      if (!now.contains(key))
        return inner + ": " + Shown(value) + " in the checkpoint, absent now";
      const std::string d = Difference(value, now.at(key), inner);
      if (!d.empty())
        return d;
    }
    for (const auto & [key, value] : now.items())
      if (!saved.contains(key))
        return (where.empty() ? key : where + "." + key) + ": absent in the checkpoint, " + Shown(value) + " now";
    return "";
  }
  if (saved.is_array() && now.is_array())
  {
    for (std::size_t i = 0; i < saved.size() && i < now.size(); ++i)
    {
      std::string element = where + "[" + std::to_string(i) + "]";
      if (saved[i].is_object() && saved[i].contains("image") && saved[i]["image"].is_string())
        element += " (" + saved[i]["image"].get<std::string>() + ")";
      const std::string d = Difference(saved[i], now[i], element);
      if (!d.empty())
        return d;
    }
    if (saved.size() != now.size())
      return prefix + std::to_string(saved.size()) + " entries in the checkpoint, " + std::to_string(now.size()) +
             " now";
    return "";
  }
  return saved == now ? "" : prefix + Shown(saved) + " in the checkpoint, " + Shown(now) + " now";
}
} // namespace

void
WriteForestCheckpoint(const ForestCheckpoint & checkpoint, const std::string & path)
{
  checkpoint.trees.Validate(path);
  const json head = { { "format", kFormat }, { "version", kVersion }, { "fingerprint", checkpoint.fingerprint } };
  WriteModelDocumentFile(path,
                         [&](JsonDocumentWriter & out)
                         {
                           out.ObjectWithStreamedMembers(head, { { "forest", [&](JsonDocumentWriter & o) {
                                                                    WriteForestModelDocument(o, checkpoint.trees);
                                                                  } } });
                         });
}

ForestCheckpoint
ReadForestCheckpoint(const std::string & path)
{
  const json in = ParseForestJsonDocument(ReadModelFileText(path), path);
  if (OptionalJsonString(in, "format", path) != kFormat)
  {
    CANOPY_THROW(path << ": not a forest checkpoint (no \"format\": \"" << kFormat << "\")");
  }
  const json & version = RequireJsonField(in, "version", path);
  if (!version.is_number_integer() || version.get<std::int64_t>() != kVersion)
  {
    CANOPY_THROW(path << ": checkpoint version " << Shown(version) << " is not supported (only " << kVersion << ")");
  }
  ForestCheckpoint checkpoint;
  checkpoint.fingerprint = RequireJsonField(in, "fingerprint", path);
  if (!checkpoint.fingerprint.is_object())
  {
    CANOPY_THROW(path << ": \"fingerprint\" must be a JSON object");
  }
  checkpoint.trees = ForestModelFromJson(RequireJsonField(in, "forest", path), path + ": forest");
  return checkpoint;
}

std::string
DescribeFingerprintDifference(const nlohmann::json & saved, const nlohmann::json & now)
{
  return Difference(saved, now, "");
}

} // namespace canopy
