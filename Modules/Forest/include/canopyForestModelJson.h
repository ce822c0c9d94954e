// The forest model as a JSON value, for formats that embed forests (the auto-context cascade) and so
// parse a file once. The string and file forms are in canopyForestModel.h.
#pragma once

#include "canopy/JsonDocumentWriter.h"
#include "canopyForestModel.h"

#include <nlohmann/json.hpp>

#include <string>

namespace canopy
{
nlohmann::json
ForestModelToJson(const ForestModel & model);

/** Writes ForestModelToJson(model) with `out` (its dump() or to_cbor() bytes) without building the document:
 * node by node, so a large model costs no more memory to write than to hold. */
void
WriteForestModelDocument(JsonDocumentWriter & out, const ForestModel & model);

/** The JSON document of a forest, a cascade of forests or a training checkpoint, from JSON text or from
 * CBOR (text starting with kCborSelfDescribeTag, as the writers write ".cbor" files), parsed with every tree's
 * "nodes" array converted and checked as it is read (ForestModelFromJson's checks and messages) and kept
 * packed, 32 bytes a node, instead of one JSON value per field: about a tenth of the memory of
 * ParseJsonDocument's document for large models. Other fields are as ParseJsonDocument gives them,
 * errors too ("<context>: not valid JSON (...)" or "not valid CBOR (...)", nesting deeper than kMaxJsonDepth). */
nlohmann::json
ParseForestJsonDocument(const std::string & text, const std::string & context);

/** Checks every field and validates the model, as ForestModelFromJsonString does. Reads trees and
 * distributions in either form: JSON arrays, or packed by ParseForestJsonDocument. */
ForestModel
ForestModelFromJson(const nlohmann::json & in, const std::string & context);

/** "reference" of a model or cascade with filter bank `bank`: written (an object) only when the bank has
 * pose channels; read and checked against the bank: a bank with pose channels needs a reference with a
 * non-empty structure, a reference without pose channels is an error. */
void
WriteForestReference(const ForestReference & reference, nlohmann::json & out);
ForestReference
ReadForestReference(const nlohmann::json & in, const std::vector<std::string> & bank, const std::string & context);

/** "normalization" of a model or cascade: written only when set; read (absent: none) and checked by
 * IntensityNormalizationFromJson, its errors naming `context`. */
void
WriteForestNormalization(const std::optional<IntensityNormalization> & normalization, nlohmann::json & out);
std::optional<IntensityNormalization>
ReadForestNormalization(const nlohmann::json & in, const std::string & context);

} // namespace canopy
