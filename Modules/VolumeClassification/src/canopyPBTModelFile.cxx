#include "canopyPBTModelFile.h"

#include "canopy/AtomicFile.h"
#include "canopy/Errors.h"
#include "canopy/JsonField.h"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace canopy
{
namespace
{
RegularizationRecommendation
RegularizationFromJson(const nlohmann::json & field, const std::string & where)
{
  if (!field.is_object())
  {
    CANOPY_THROW(where << ": \"regularization\" must be an object");
  }
  if (!field.contains("version") || !field["version"].is_number_integer())
  {
    CANOPY_THROW(where << ": \"regularization\" has no integer \"version\"");
  }
  const auto version = field["version"].get<std::int64_t>();
  if (version != kRegularizationFieldVersion)
  {
    CANOPY_THROW(where << ": \"regularization\" version " << version << " is not supported (this Canopy reads version "
                       << kRegularizationFieldVersion << ")");
  }
  RegularizationRecommendation r;
  if (!field.contains("lambda") || !field["lambda"].is_number() || !std::isfinite(field["lambda"].get<double>()) ||
      field["lambda"].get<double>() < 0.0)
  {
    CANOPY_THROW(where << ": \"regularization\".\"lambda\" must be a finite number >= 0 (mm)");
  }
  r.lambda = field["lambda"].get<double>();
  if (field.contains("neighborhood"))
  {
    const auto & n = field["neighborhood"];
    if (!n.is_number_integer() || (n.get<std::int64_t>() != 6 && n.get<std::int64_t>() != 26))
    {
      CANOPY_THROW(where << ": \"regularization\".\"neighborhood\" must be 6 or 26");
    }
    r.neighborhood = static_cast<int>(n.get<std::int64_t>());
  }
  r.selection = field.value("selection", nlohmann::json::object());
  return r;
}
} // namespace

nlohmann::json
PBTModelFileToJson(const PBTModelFile & model)
{
  nlohmann::json doc;
  doc["format"] = kModelFormatName;
  doc["version"] = kModelFormatVersion;
  doc["kind"] = "pbt";
  doc["workingSpacing"] = model.workingSpacing;
  ToJson(model.normalization, doc["normalization"]);
  doc["training"] = model.training;
  doc["provenance"] = model.provenance;
  if (model.regularization)
  {
    doc["regularization"] = { { "version", kRegularizationFieldVersion },
                              { "lambda", model.regularization->lambda },
                              { "neighborhood", model.regularization->neighborhood },
                              { "selection", model.regularization->selection } };
  }
  PBTModelToJson(model.tree, doc["pbt"]);
  return doc;
}

PBTModelFile
PBTModelFileFromJson(const nlohmann::json & doc, const std::string & where)
{
  if (!doc.is_object())
  {
    CANOPY_THROW(where << ": not a Canopy model (the document is not a JSON object)");
  }
  const std::string format =
    doc.contains("format") && doc["format"].is_string() ? doc["format"].get<std::string>() : "";
  if (format == "canopy-forest")
  {
    CANOPY_THROW(where << ": is a forest model (from train-forest); this command needs a PBT model (from train-pbt)");
  }
  if (format != kModelFormatName)
  {
    CANOPY_THROW(where << ": not a Canopy model (\"format\" is not \"" << kModelFormatName << "\")");
  }
  if (!doc.contains("version") || !doc["version"].is_number_integer())
  {
    CANOPY_THROW(where << ": the model has no integer \"version\"");
  }
  const auto version = doc["version"].get<std::int64_t>();
  if (version < kOldestModelFormatVersion || version > kModelFormatVersion)
  {
    CANOPY_THROW(where << ": model format version " << version << " is not supported (this Canopy reads versions "
                       << kOldestModelFormatVersion << " to " << kModelFormatVersion << ")");
  }
  const std::string kind = OptionalJsonString(doc, "kind", where);
  if (kind == "pbt-classes")
  {
    CANOPY_THROW(where << ": holds a multi-class or auto-context PBT model (train-pbt --labels / --auto-context); "
                          "this command needs a binary PBT model (canopy segment reads both)");
  }
  if (kind != "pbt")
  {
    CANOPY_THROW(where << ": the model's \"kind\" is not \"pbt\"");
  }
  PBTModelFile model;
  const auto & spacing = doc.contains("workingSpacing") ? doc["workingSpacing"] : nlohmann::json();
  if (!spacing.is_array() || spacing.size() != 3)
  {
    CANOPY_THROW(where << ": \"workingSpacing\" must be an array of 3 numbers (mm)");
  }
  for (int d = 0; d < 3; ++d)
  {
    if (!spacing[d].is_number() || !(spacing[d].get<double>() > 0.0) || !std::isfinite(spacing[d].get<double>()))
    {
      CANOPY_THROW(where << ": \"workingSpacing\" entries must be positive numbers");
    }
    model.workingSpacing[d] = spacing[d].get<double>();
  }
  if (!doc.contains("normalization"))
  {
    CANOPY_THROW(where << ": the model has no \"normalization\"");
  }
  model.normalization = IntensityNormalizationFromJson(doc["normalization"], where);
  model.training = doc.value("training", nlohmann::json::object());
  model.provenance = doc.value("provenance", nlohmann::json::object());
  if (doc.contains("regularization")) // optional: older models lack it
  {
    model.regularization = RegularizationFromJson(doc["regularization"], where);
  }
  if (!doc.contains("pbt"))
  {
    CANOPY_THROW(where << ": the model has no \"pbt\" tree");
  }
  const auto & pbt = doc["pbt"];
  const bool   namesFamily = pbt.is_object() && pbt.contains("featureFamily");
  if (version >= 2 && !namesFamily)
  {
    CANOPY_THROW(where << ": the \"pbt\" tree has no \"featureFamily\" (required since model format version 2)");
  }
  if (version == 1 && namesFamily && pbt["featureFamily"] != "haar")
  {
    CANOPY_THROW(where << ": a version 1 model holds a Haar PBT only, but its \"featureFamily\" is "
                       << pbt["featureFamily"].dump());
  }
  model.tree = PBTModelFromJson(pbt, where);
  return model;
}

void
SavePBTModelFile(const PBTModelFile & model, const std::string & path)
{
  const std::string text = PBTModelFileToJson(model).dump(1);
  WriteFileAtomically(path, [&text](std::ostream & out) { out << text << '\n'; });
}

PBTModelFile
LoadPBTModelFile(const std::string & path)
{
  return PBTModelFileFromJson(ReadJsonFile(path, "the model file"), path);
}

} // namespace canopy
