#include "canopyPBTClassModel.h"

#include "canopy/AtomicFile.h"
#include "canopy/Errors.h"
#include "canopy/JsonField.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>

namespace canopy
{

void
PBTClassModel::Validate(const std::string & where) const
{
  if (labels.empty() || labels.size() > 255)
  {
    CANOPY_THROW(where << ": a PBT class model has 1 to 255 classes, not " << labels.size());
  }
  std::set<int> seen;
  for (int label : labels)
  {
    if (label < 1 || label > 255 || !seen.insert(label).second)
    {
      CANOPY_THROW(where << ": class labels must be distinct values in [1, 255], got " << label);
    }
  }
  if (stages.empty() || stages.size() > std::size_t(kPBTCascadeMaxStages))
  {
    CANOPY_THROW(where << ": a PBT cascade has 1 to " << kPBTCascadeMaxStages << " stages, not " << stages.size());
  }
  for (int k = 0; k < NumberOfStages(); ++k)
  {
    if (stages[k].size() != labels.size())
    {
      CANOPY_THROW(where << ": stage " << k << " holds " << stages[k].size() << " PBTs for " << labels.size()
                         << " classes");
    }
    for (int c = 0; c < NumberOfClasses(); ++c)
    {
      const std::string at = where + ": stage " + std::to_string(k) + ", class " + std::to_string(labels[c]);
      const PBTModel &  tree = stages[k][c];
      tree.Validate(at);
      if (tree.featureFamily != PBTFeatureFamily::Haar)
      {
        CANOPY_THROW(at << ": voxel PBTs read Haar features");
      }
      for (const auto & f : tree.features)
      {
        if (f.channel < 0 || f.channel >= ChannelsOfStage(k))
        {
          CANOPY_THROW(at << ": a feature reads channel " << f.channel << " but the stage has " << ChannelsOfStage(k)
                          << " channel(s)");
        }
      }
    }
  }
}

PBTClassModel
ClassModelFromBinary(const PBTModelFile & model, int label)
{
  PBTClassModel out;
  out.workingSpacing = model.workingSpacing;
  out.normalization = model.normalization;
  out.labels = { label };
  out.stages = { { model.tree } };
  out.training = model.training;
  out.provenance = model.provenance;
  out.regularization = model.regularization;
  return out;
}

nlohmann::json
PBTClassModelToJson(const PBTClassModel & model)
{
  nlohmann::json doc;
  doc["format"] = kModelFormatName;
  doc["version"] = kModelFormatVersion;
  doc["kind"] = kPBTClassesKind;
  doc["workingSpacing"] = model.workingSpacing;
  ToJson(model.normalization, doc["normalization"]);
  doc["training"] = model.training;
  doc["provenance"] = model.provenance;
  doc["labels"] = model.labels;
  doc["stages"] = nlohmann::json::array();
  for (const auto & stage : model.stages)
  {
    nlohmann::json trees = nlohmann::json::array();
    for (const auto & tree : stage)
    {
      PBTModelToJson(tree, trees.emplace_back());
    }
    doc["stages"].push_back(trees);
  }
  return doc;
}

PBTClassModel
PBTClassModelFromJson(const nlohmann::json & doc, const std::string & where)
{
  if (!doc.is_object() || !doc.contains("kind") || doc["kind"] != kPBTClassesKind)
  {
    return ClassModelFromBinary(PBTModelFileFromJson(doc, where)); // checks format, version and kind
  }
  if (doc.value("format", "") != kModelFormatName)
  {
    CANOPY_THROW(where << ": not a Canopy model (\"format\" is not \"" << kModelFormatName << "\")");
  }
  if (!doc.contains("version") || !doc["version"].is_number_integer() || doc["version"].get<std::int64_t>() < 3 ||
      doc["version"].get<std::int64_t>() > kModelFormatVersion)
  {
    CANOPY_THROW(where << ": a \"" << kPBTClassesKind << "\" model needs format version 3 to " << kModelFormatVersion);
  }
  // The shared fields (spacing, normalisation) are checked by the binary reader on a stand-in.
  nlohmann::json binary = doc;
  binary["kind"] = "pbt";
  if (!doc.contains("stages") || !doc["stages"].is_array() || doc["stages"].empty() || !doc["stages"][0].is_array() ||
      doc["stages"][0].empty())
  {
    CANOPY_THROW(where << ": \"stages\" must be a non-empty array of arrays of PBTs");
  }
  binary["pbt"] = doc["stages"][0][0];
  const PBTModelFile common = PBTModelFileFromJson(binary, where);
  PBTClassModel      model;
  model.workingSpacing = common.workingSpacing;
  model.normalization = common.normalization;
  model.training = common.training;
  model.provenance = common.provenance;
  if (!doc.contains("labels") || !doc["labels"].is_array())
  {
    CANOPY_THROW(where << ": \"labels\" must be an array of class label values");
  }
  for (const auto & label : doc["labels"])
  {
    if (!label.is_number_integer())
    {
      CANOPY_THROW(where << ": \"labels\" entries must be integers");
    }
    model.labels.push_back(static_cast<int>(label.get<std::int64_t>()));
    if (model.labels.size() > 255)
    {
      CANOPY_THROW(where << ": more than 255 labels");
    }
  }
  if (doc["stages"].size() > std::size_t(kPBTCascadeMaxStages))
  {
    CANOPY_THROW(where << ": more than " << kPBTCascadeMaxStages << " stages");
  }
  for (std::size_t k = 0; k < doc["stages"].size(); ++k)
  {
    const auto & stage = doc["stages"][k];
    if (!stage.is_array() || stage.size() > 255)
    {
      CANOPY_THROW(where << ": stage " << k << " must be an array of PBTs (one per class)");
    }
    auto & trees = model.stages.emplace_back();
    for (std::size_t c = 0; c < stage.size(); ++c)
    {
      trees.push_back(
        PBTModelFromJson(stage[c], where + ": stage " + std::to_string(k) + ", PBT " + std::to_string(c)));
    }
  }
  model.Validate(where);
  return model;
}

void
SavePBTClassModel(const PBTClassModel & model, const std::string & path)
{
  model.Validate(path);
  const std::string text = PBTClassModelToJson(model).dump(1);
  WriteFileAtomically(path, [&text](std::ostream & out) { out << text << '\n'; });
}

PBTClassModel
LoadPBTClassModel(const std::string & path)
{
  return PBTClassModelFromJson(ReadJsonFile(path, "the model file"), path);
}

} // namespace canopy
