// Shape model files (docs/MODEL_FORMAT.md, "Shape models"): versioned JSON holding one model per
// structure (mean mesh per level with triangles, modes, variances, the structure's label), mm, LPS.
// Readers reject damaged files with one error naming the file and the field.
#pragma once

#include "canopyShapeModel.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace canopy
{
inline constexpr const char * kShapeModelFormatName = "canopy-shape-model";
inline constexpr int          kShapeModelFormatVersion = 1;

struct ShapeModelFile
{
  std::vector<ShapeModel> structures;
  nlohmann::json          provenance = nlohmann::json::object(); // canopy version, command, date
  /** The structure called `name`; canopy::Error naming the file's structures when absent. */
  const ShapeModel & Structure(const std::string & name) const;
};

nlohmann::json
ShapeModelFileToJson(const ShapeModelFile & file);

/** canopy::Error naming `where` and the field for anything malformed or inconsistent. */
ShapeModelFile
ShapeModelFileFromJson(const nlohmann::json & document, const std::string & where);

/** Writes through a temporary file beside `path` and a rename (no half-written file). */
void
SaveShapeModelFile(const ShapeModelFile & file, const std::string & path);

ShapeModelFile
LoadShapeModelFile(const std::string & path);
} // namespace canopy
