#include "canopyShapeModelFile.h"

#include "canopy/AtomicFile.h"
#include "canopy/Errors.h"
#include "canopy/JsonField.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

namespace canopy
{
namespace
{
using Json = nlohmann::json;

Json
PointsToJson(const Eigen::Matrix3Xd & points)
{
  Json out = Json::array();
  for (Eigen::Index i = 0; i < points.cols(); ++i)
    out.push_back({ points(0, i), points(1, i), points(2, i) });
  return out;
}

const Json &
RequireArray(const Json & object, const char * key, const std::string & where)
{
  const Json & field = RequireJsonField(object, key, where);
  if (!field.is_array())
    CANOPY_THROW(where << ": \"" << key << "\" must be an array");
  return field;
}

double
FiniteNumber(const Json & value, const std::string & what)
{
  if (!value.is_number() || !std::isfinite(value.get<double>()))
    CANOPY_THROW(what << " must be a finite number");
  return value.get<double>();
}

int
Integer(const Json & value, const std::string & what)
{
  if (!value.is_number_integer() || value.get<std::int64_t>() < INT32_MIN || value.get<std::int64_t>() > INT32_MAX)
    CANOPY_THROW(what << " must be an integer");
  return int(value.get<std::int64_t>());
}

Eigen::Matrix3Xd
PointsFromJson(const Json & array, const std::string & where)
{
  Eigen::Matrix3Xd points(3, Eigen::Index(array.size()));
  for (std::size_t i = 0; i < array.size(); ++i)
  {
    if (!array[i].is_array() || array[i].size() != 3)
      CANOPY_THROW(where << " point " << i << " must be [x, y, z]");
    for (int d = 0; d < 3; ++d)
      points(d, Eigen::Index(i)) = FiniteNumber(array[i][std::size_t(d)], where + " point " + std::to_string(i));
  }
  return points;
}

Json
ModelToJson(const ShapeModel & model)
{
  Json levels = Json::array();
  for (const auto & level : model.levels)
  {
    Json triangles = Json::array();
    for (Eigen::Index t = 0; t < level.triangles.cols(); ++t)
      triangles.push_back({ level.triangles(0, t), level.triangles(1, t), level.triangles(2, t) });
    levels.push_back({ { "vertices", level.Vertices() },
                       { "mean", PointsToJson(level.mean) },
                       { "triangles", triangles },
                       { "finestVertex", level.finestVertex } });
  }
  Json modes = Json::array();
  for (Eigen::Index k = 0; k < model.Modes(); ++k)
  {
    // Single precision: a mode is a unit vector, 7 digits keep it orthonormal to ~1e-7 and halve the file.
    std::vector<float> values(std::size_t(model.modes.rows()));
    for (Eigen::Index r = 0; r < model.modes.rows(); ++r)
      values[std::size_t(r)] = float(model.modes(r, k));
    modes.push_back(values);
  }
  return { { "name", model.structure },
           { "label", model.label },
           { "levels", levels },
           { "modes", modes },
           { "variances",
             std::vector<double>(model.variances.data(), model.variances.data() + model.variances.size()) },
           { "spectrum", std::vector<double>(model.spectrum.data(), model.spectrum.data() + model.spectrum.size()) },
           { "requestedVarianceShare", model.requestedVarianceShare },
           { "capturedVarianceShare", model.CapturedVarianceShare() },
           { "training", model.training } };
}

ShapeModel
ModelFromJson(const Json & doc, const std::string & where)
{
  if (!doc.is_object())
    CANOPY_THROW(where << " must be a JSON object");
  ShapeModel   model;
  const Json & name = RequireJsonField(doc, "name", where);
  if (!name.is_string() || name.get<std::string>().empty())
    CANOPY_THROW(where << ": \"name\" must be a non-empty string");
  model.structure = name.get<std::string>();
  const std::string here = where + " (\"" + model.structure + "\")";
  model.label = Integer(RequireJsonField(doc, "label", here), here + ": \"label\"");
  const Json & levels = RequireArray(doc, "levels", here);
  if (levels.empty())
    CANOPY_THROW(here << ": \"levels\" is empty");
  for (std::size_t l = 0; l < levels.size(); ++l)
  {
    const std::string at = here + " level " + std::to_string(l);
    ShapeLevel        level;
    level.mean = PointsFromJson(RequireArray(levels[l], "mean", at), at + " \"mean\"");
    const Json & triangles = RequireArray(levels[l], "triangles", at);
    level.triangles.resize(3, Eigen::Index(triangles.size()));
    for (std::size_t t = 0; t < triangles.size(); ++t)
    {
      if (!triangles[t].is_array() || triangles[t].size() != 3)
        CANOPY_THROW(at << " triangle " << t << " must be [a, b, c]");
      for (int k = 0; k < 3; ++k)
        level.triangles(k, Eigen::Index(t)) =
          Integer(triangles[t][std::size_t(k)], at + " triangle " + std::to_string(t));
    }
    for (const auto & index : RequireArray(levels[l], "finestVertex", at))
      level.finestVertex.push_back(Integer(index, at + " \"finestVertex\""));
    if (levels[l].contains("vertices") && Integer(levels[l]["vertices"], at + " \"vertices\"") != level.Vertices())
      CANOPY_THROW(at << ": \"vertices\" says " << levels[l]["vertices"] << " but \"mean\" has " << level.Vertices());
    if (!model.levels.empty() && !(level.Vertices() > model.levels.back().Vertices()))
      CANOPY_THROW(at << ": levels must go from coarse to fine (more vertices each)");
    model.levels.push_back(std::move(level));
  }
  const Json &       modes = RequireArray(doc, "modes", here);
  const Eigen::Index rows = 3 * model.Finest().Vertices();
  model.modes.resize(rows, Eigen::Index(modes.size()));
  for (std::size_t k = 0; k < modes.size(); ++k)
  {
    if (!modes[k].is_array() || Eigen::Index(modes[k].size()) != rows)
      CANOPY_THROW(here << ": mode " << k << " must be an array of " << rows << " numbers (3 per finest-level vertex)");
    for (Eigen::Index r = 0; r < rows; ++r)
      model.modes(r, Eigen::Index(k)) = FiniteNumber(modes[k][std::size_t(r)], here + ": mode " + std::to_string(k));
  }
  auto vector = [&](const char * key)
  {
    const Json &    array = RequireArray(doc, key, here);
    Eigen::VectorXd v(Eigen::Index(array.size()));
    for (std::size_t k = 0; k < array.size(); ++k)
      v(Eigen::Index(k)) = FiniteNumber(array[k], here + ": \"" + key + "\" entry");
    return v;
  };
  model.variances = vector("variances");
  model.spectrum = vector("spectrum");
  if (doc.contains("requestedVarianceShare"))
    model.requestedVarianceShare = FiniteNumber(doc["requestedVarianceShare"], here + ": \"requestedVarianceShare\"");
  model.training = doc.value("training", Json::object());
  model.Validate(where);
  model.UpdateLevelModes();
  return model;
}
} // namespace

const ShapeModel &
ShapeModelFile::Structure(const std::string & name) const
{
  std::string known;
  for (const auto & s : structures)
  {
    if (s.structure == name)
      return s;
    known += (known.empty() ? "" : ", ") + s.structure;
  }
  CANOPY_THROW("the shape model has no structure \"" << name << "\" (it has " << known << ")");
}

nlohmann::json
ShapeModelFileToJson(const ShapeModelFile & file)
{
  Json structures = Json::array();
  for (const auto & model : file.structures)
    structures.push_back(ModelToJson(model));
  return {
    { "format", kShapeModelFormatName }, { "version", kShapeModelFormatVersion }, { "units", "mm" }, { "space", "LPS" },
    { "structures", structures },        { "provenance", file.provenance }
  };
}

ShapeModelFile
ShapeModelFileFromJson(const nlohmann::json & doc, const std::string & where)
{
  if (!doc.is_object())
    CANOPY_THROW(where << ": not a Canopy shape model (the document is not a JSON object)");
  const std::string format =
    doc.contains("format") && doc["format"].is_string() ? doc["format"].get<std::string>() : "";
  if (format == "canopy-model" || format == "canopy-forest")
    CANOPY_THROW(where << ": is a voxel classifier (" << format << "), not a shape model (from train-shape)");
  if (format != kShapeModelFormatName)
    CANOPY_THROW(where << ": not a Canopy shape model (\"format\" is not \"" << kShapeModelFormatName << "\")");
  if (!doc.contains("version") || !doc["version"].is_number_integer())
    CANOPY_THROW(where << ": the shape model has no integer \"version\"");
  if (doc["version"].get<std::int64_t>() != kShapeModelFormatVersion)
    CANOPY_THROW(where << ": shape model format version " << doc["version"].get<std::int64_t>()
                       << " is not supported (this Canopy reads version " << kShapeModelFormatVersion << ")");
  if (doc.value("units", std::string()) != "mm")
    CANOPY_THROW(where << ": \"units\" must be \"mm\"");
  if (doc.value("space", std::string()) != "LPS")
    CANOPY_THROW(where << ": \"space\" must be \"LPS\"");
  const Json & structures = RequireArray(doc, "structures", where);
  if (structures.empty())
    CANOPY_THROW(where << ": \"structures\" is empty");
  ShapeModelFile        file;
  std::set<std::string> names;
  for (std::size_t s = 0; s < structures.size(); ++s)
  {
    file.structures.push_back(ModelFromJson(structures[s], where + ": structure " + std::to_string(s)));
    if (!names.insert(file.structures.back().structure).second)
      CANOPY_THROW(where << ": structure \"" << file.structures.back().structure << "\" appears twice");
  }
  file.provenance = doc.value("provenance", Json::object());
  return file;
}

void
SaveShapeModelFile(const ShapeModelFile & file, const std::string & path)
{
  const std::string text = ShapeModelFileToJson(file).dump(1);
  WriteFileAtomically(path, [&text](std::ostream & out) { out << text << '\n'; });
}

ShapeModelFile
LoadShapeModelFile(const std::string & path)
{
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    CANOPY_THROW(path << ": is a folder, not a shape model file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    CANOPY_THROW(path << ": cannot open the shape model file");
  if (std::filesystem::file_size(path, error) == 0 && !error)
    CANOPY_THROW(path << ": the shape model file is empty");
  nlohmann::json doc;
  try
  {
    doc = ParseJsonWithDepthLimit(in, path);
  }
  catch (const nlohmann::json::exception & e)
  {
    CANOPY_THROW(path << ": the shape model file is truncated or not valid JSON (" << e.what() << ")");
  }
  return ShapeModelFileFromJson(doc, path);
}
} // namespace canopy
