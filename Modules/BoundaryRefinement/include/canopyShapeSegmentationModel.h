// A shape model file with boundary classifiers (docs/MODEL_FORMAT.md, "Shape models"): the shape
// model file of part 1 plus an optional top-level "boundaryClassifiers" array, one entry per
// structure that has them. Readers of plain shape models ignore the array; `canopy segment-shape`
// needs it.
#pragma once

#include "canopyBoundaryClassifier.h"
#include "canopyShapeModelFile.h"

#include <string>
#include <vector>

namespace canopy
{
struct ShapeSegmentationModel
{
  ShapeModelFile                   shapes;
  std::vector<BoundaryClassifiers> boundaries; // each names a structure of `shapes`

  /** The classifiers of `structure`, or nullptr. */
  const BoundaryClassifiers * Boundary(const std::string & structure) const;
};

nlohmann::json
ShapeSegmentationModelToJson(const ShapeSegmentationModel & model);

/** canopy::Error naming `where` and the field: the shape model's checks, plus boundary classifiers
 * that are malformed, name an unknown structure, appear twice, or have another level count. */
ShapeSegmentationModel
ShapeSegmentationModelFromJson(const nlohmann::json & document, const std::string & where);

/** Writes through a temporary file and a rename. */
void
SaveShapeSegmentationModel(const ShapeSegmentationModel & model, const std::string & path);

ShapeSegmentationModel
LoadShapeSegmentationModel(const std::string & path);
} // namespace canopy
