// A streaming forest saved so that its stream can be resumed (`canopy stream --model-out/--model-in`):
// one JSON document holding the stream's schema, the forest's options, the stream position reached and
// everything each member has learnt (its trees' nodes and leaf statistics, its ADWIN detectors). Loading
// it and learning the rest of the stream gives exactly the forest that learning the whole stream gives
// (same batches), on the CPU or the GPU. docs/MODEL_FORMAT.md describes the fields.
#pragma once

#include "canopyStreamSchema.h"
#include "canopyStreamingForest.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>

namespace canopy::streaming
{

constexpr const char * kStreamingModelFormat = "canopy-streaming-forest";
constexpr int          kStreamingModelVersion = 1;

struct StreamingModel
{
  StreamSchema           schema;
  StreamingForestOptions options;       // threads is not saved (a property of the machine)
  std::uint64_t          instances = 0; // stream position: the next instance's index (keys the Poisson draws)
  std::string            source;        // what was learnt from (informative)
  StreamingForestState   state;
};

nlohmann::json
StreamingModelToJson(const StreamingModel & model);

/** Strict: a missing or mistyped field, a value out of range, a tree that is not one this schema and
 * these options could have grown (ValidateHoeffdingTreeState), an ADWIN or monitor state no detector
 * could hold: a canopy::Error that starts with `context` and names the field (e.g.
 * `m.json: members[3].tree: "child" ...`). */
StreamingModel
StreamingModelFromJson(const nlohmann::json & document, const std::string & context);

/** Written atomically (a temporary file renamed). */
void
SaveStreamingModel(const StreamingModel & model, const std::string & fileName);

/** Errors start with the file name: missing, unreadable, not JSON (truncated), or rejected above. */
StreamingModel
LoadStreamingModel(const std::string & fileName);

/** Throws canopy::Error naming the first difference when a stream's schema is not the model's
 * (attribute names, kinds, nominal values in order, classes in order). */
void
RequireSameSchema(const StreamSchema & model, const StreamSchema & stream, const std::string & context);

} // namespace canopy::streaming
