#include "canopyShapeSegmentationModel.h"

#include "canopy/AtomicFile.h"
#include "canopy/Errors.h"
#include "canopy/JsonField.h"

#include <set>

namespace canopy
{
const BoundaryClassifiers *
ShapeSegmentationModel::Boundary(const std::string & structure) const
{
  for (const auto & b : boundaries)
    if (b.structure == structure)
      return &b;
  return nullptr;
}

nlohmann::json
ShapeSegmentationModelToJson(const ShapeSegmentationModel & model)
{
  nlohmann::json doc = ShapeModelFileToJson(model.shapes);
  if (!model.boundaries.empty())
  {
    nlohmann::json array = nlohmann::json::array();
    for (const auto & b : model.boundaries)
      array.push_back(BoundaryClassifiersToJson(b));
    doc["boundaryClassifiers"] = array;
  }
  return doc;
}

ShapeSegmentationModel
ShapeSegmentationModelFromJson(const nlohmann::json & doc, const std::string & where)
{
  ShapeSegmentationModel model;
  model.shapes = ShapeModelFileFromJson(doc, where);
  if (!doc.contains("boundaryClassifiers"))
    return model;
  const auto & array = doc["boundaryClassifiers"];
  if (!array.is_array())
    CANOPY_THROW(where << ": \"boundaryClassifiers\" must be an array");
  std::set<std::string> seen;
  for (std::size_t k = 0; k < array.size(); ++k)
  {
    const std::string here = where + ": boundaryClassifiers[" + std::to_string(k) + "]";
    if (!array[k].is_object() || !array[k].contains("structure") || !array[k]["structure"].is_string())
      CANOPY_THROW(here << ": needs a \"structure\" string");
    const std::string  name = array[k]["structure"].get<std::string>();
    const ShapeModel * shape = nullptr;
    for (const auto & s : model.shapes.structures)
      if (s.structure == name)
        shape = &s;
    if (shape == nullptr)
      CANOPY_THROW(here << ": structure \"" << name << "\" has no shape model in the file");
    if (!seen.insert(name).second)
      CANOPY_THROW(here << ": structure \"" << name << "\" has boundary classifiers twice");
    model.boundaries.push_back(BoundaryClassifiersFromJson(array[k], here, shape->levels.size()));
  }
  return model;
}

void
SaveShapeSegmentationModel(const ShapeSegmentationModel & model, const std::string & path)
{
  const std::string text = ShapeSegmentationModelToJson(model).dump(1);
  WriteFileAtomically(path, [&text](std::ostream & out) { out << text << '\n'; });
}

ShapeSegmentationModel
LoadShapeSegmentationModel(const std::string & path)
{
  return ShapeSegmentationModelFromJson(ReadJsonFile(path, "the shape model file"), path);
}
} // namespace canopy
