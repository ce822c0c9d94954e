// JSON form of an auto-context cascade: {"format": "canopy-forest-cascade", "version": 1,
// "filterBank": [...], "stages": [<forest model objects, as train-forest writes them>]}; version 2 adds
// "contextChannels": [...] (channels derived from the class maps, canopyForestCascade.h); version 3 adds
// "normalization" (the input components' intensity mapping, ForestModel::normalization). Each stage
// goes through the forest reader, so a stage is checked exactly as a forest file is.
#include "canopy/Errors.h"
#include "canopy/JsonField.h"
#include "canopyForestCascade.h"
#include "canopyForestFilterBank.h"
#include "canopyForestModelJson.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace canopy
{
using nlohmann::json;

namespace
{
/** The cascade's document, its stages streamed (WriteForestModelDocument) rather than built as a document.
 * The callers validate the cascade first, naming what they write. */
void
WriteForestCascadeDocument(JsonDocumentWriter & out, const ForestCascade & cascade)
{
  json head;
  head["format"] = "canopy-forest-cascade";
  // The lowest version that holds the cascade, so earlier readers read what they can read correctly and
  // refuse a normalisation they would ignore.
  head["version"] = cascade.normalization ? 3 : cascade.contextChannels.empty() ? 1 : 2;
  head["filterBank"] = cascade.filterBank;
  if (!cascade.contextChannels.empty())
    head["contextChannels"] = cascade.contextChannels;
  WriteForestReference(cascade.reference, head);
  WriteForestNormalization(cascade.normalization, head);
  out.ObjectWithStreamedMembers(head,
                                { { "stages",
                                    [&cascade](JsonDocumentWriter & o)
                                    {
                                      o.BeginArray(cascade.stages.size());
                                      for (const ForestModel & stage : cascade.stages)
                                        WriteForestModelDocument(o, stage);
                                      o.EndArray();
                                    } } });
}
} // namespace

std::string
ForestCascadeToJsonString(const ForestCascade & cascade)
{
  cascade.Validate("auto-context cascade");
  std::ostringstream out;
  JsonDocumentWriter writer(out, ModelEncoding::JsonText);
  WriteForestCascadeDocument(writer, cascade);
  return out.str();
}

namespace
{
ForestCascade
ForestCascadeFromJson(const json & in, const std::string & context)
{
  const json & format = RequireJsonField(in, "format", context);
  if (!format.is_string() || format.get<std::string>() != "canopy-forest-cascade")
  {
    CANOPY_THROW(context << ": \"format\" must be \"canopy-forest-cascade\"");
  }
  const json & version = RequireJsonField(in, "version", context);
  if (!version.is_number_integer() || version.get<std::int64_t>() < 1)
  {
    CANOPY_THROW(context << ": \"version\" must be a positive integer");
  }
  if (version.get<std::int64_t>() > kForestCascadeVersion)
  {
    CANOPY_THROW(context << ": cascade version " << version.get<std::int64_t>() << " is newer than this build reads ("
                         << kForestCascadeVersion << ")");
  }
  ForestCascade cascade;
  const json &  bank = RequireJsonField(in, "filterBank", context);
  if (!bank.is_array())
  {
    CANOPY_THROW(context << ": \"filterBank\" must be an array of channel names");
  }
  for (const auto & name : bank)
  {
    if (!name.is_string())
    {
      CANOPY_THROW(context << ": \"filterBank\" entries must be strings");
    }
    cascade.filterBank.push_back(
      ForestFilterChannel::Parse(name.get<std::string>(), context + ": \"filterBank\"").Name());
  }
  cascade.reference = ReadForestReference(in, cascade.filterBank, context);
  cascade.normalization = ReadForestNormalization(in, context); // version 3; absent: none
  if (in.contains("contextChannels")) // version 2; absent: the maps alone
  {
    const json & names = in["contextChannels"];
    if (!names.is_array())
    {
      CANOPY_THROW(context << ": \"contextChannels\" must be an array of channel names");
    }
    for (const auto & name : names)
    {
      if (!name.is_string())
      {
        CANOPY_THROW(context << ": \"contextChannels\" entries must be strings");
      }
      cascade.contextChannels.push_back(name.get<std::string>());
    }
  }
  const json & stages = RequireJsonField(in, "stages", context);
  if (!stages.is_array() || stages.empty() || stages.size() > std::size_t(kForestCascadeMaxStages))
  {
    CANOPY_THROW(context << ": \"stages\" must be an array of 1 to " << kForestCascadeMaxStages << " forests");
  }
  for (std::size_t k = 0; k < stages.size(); ++k)
  {
    cascade.stages.push_back(ForestModelFromJson(stages[k], context + ": stage " + std::to_string(k)));
    if (cascade.stages.back().normalization) // the reader would ignore it: refused, not silently dropped
      CANOPY_THROW(context << ": stage " << k << ": \"normalization\" belongs to the cascade, not to a stage");
  }
  cascade.Validate(context);
  return cascade;
}
} // namespace

ForestCascade
ForestCascadeFromJsonString(const std::string & text, const std::string & context)
{
  return ForestCascadeFromJson(ParseForestJsonDocument(text, context), context);
}

void
WriteForestCascadeJson(const ForestCascade & cascade, const std::string & fileName)
{
  cascade.Validate(fileName); // before a file is opened
  WriteModelDocumentFile(fileName, [&](JsonDocumentWriter & out) { WriteForestCascadeDocument(out, cascade); });
}

ForestModelFile
ReadForestModelFile(const std::string & fileName)
{
  // Parsed once; a cascade names its format, anything else goes to the forest reader, whose errors name
  // the problem.
  const json      in = ParseForestJsonDocument(ReadModelFileText(fileName), fileName);
  ForestModelFile file;
  if (in.is_object() && in.contains("format") && in["format"] == "canopy-forest-cascade")
  {
    file.cascade = ForestCascadeFromJson(in, fileName);
    file.isCascade = true;
    return file;
  }
  ForestCascade & cascade = file.cascade;
  cascade.stages.push_back(ForestModelFromJson(in, fileName));
  cascade.filterBank = cascade.stages.front().filterBank;
  cascade.reference = cascade.stages.front().reference;
  cascade.normalization = cascade.stages.front().normalization;
  cascade.Validate(fileName);
  return file;
}

ForestCascade
ReadForestOrCascadeJson(const std::string & fileName)
{
  return ReadForestModelFile(fileName).cascade;
}

} // namespace canopy
