// JSON form of a PBT model (docs/MODEL_FORMAT.md). The reader type-checks every field before use
// and then validates the whole model, so no input, however corrupted, reaches the evaluators.
#include "canopy/Errors.h"
#include "canopy/JsonField.h"
#include "canopyHaarFeatureBank.h"
#include "canopyPBTModel.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace canopy
{
namespace
{

using nlohmann::json;

const json &
ArrayField(const json & object, const char * key, const std::string & context)
{
  const json & value = RequireJsonField(object, key, context);
  if (!value.is_array())
  {
    CANOPY_THROW(context << ": \"" << key << "\" must be an array");
  }
  return value;
}

int
ToInt(const json & value, const std::string & what)
{
  if (value.is_number_integer())
  {
    // Signed and unsigned JSON integers both fit in int64 after the range check on the unsigned one.
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    {
      CANOPY_THROW(what << " is out of range");
    }
    const std::int64_t v =
      value.is_number_unsigned() ? static_cast<std::int64_t>(value.get<std::uint64_t>()) : value.get<std::int64_t>();
    if (v >= std::numeric_limits<int>::min() && v <= std::numeric_limits<int>::max())
    {
      return static_cast<int>(v);
    }
    CANOPY_THROW(what << " is out of range");
  }
  CANOPY_THROW(what << " must be an integer");
}

float
ToFloat(const json & value, const std::string & what)
{
  if (!value.is_number())
  {
    CANOPY_THROW(what << " must be a number");
  }
  const double v = value.get<double>();
  if (!std::isfinite(v) || std::abs(v) > static_cast<double>(std::numeric_limits<float>::max()))
  {
    CANOPY_THROW(what << " must be a finite single-precision number");
  }
  return static_cast<float>(v);
}

int
IntField(const json & object, const char * key, const std::string & context)
{
  return ToInt(RequireJsonField(object, key, context), context + ": \"" + key + "\"");
}

float
FloatField(const json & object, const char * key, const std::string & context)
{
  return ToFloat(RequireJsonField(object, key, context), context + ": \"" + key + "\"");
}

} // namespace

void
PBTModelToJson(const PBTModel & model, nlohmann::json & out)
{
  json nodes = json::array();
  for (const auto & n : model.nodes)
  {
    nodes.push_back({ { "firstLearner", n.firstLearner },
                      { "numLearners", n.numLearners },
                      { "calibrationScale", n.calibrationScale },
                      { "calibrationOffset", n.calibrationOffset },
                      { "empiricalPositive", n.empiricalPositive },
                      { "left", n.left },
                      { "right", n.right } });
  }
  json learners = json::array();
  for (const auto & w : model.learners)
  {
    learners.push_back({ { "feature", w.feature },
                         { "numBins", w.numBins },
                         { "lo", w.lo },
                         { "invBinWidth", w.invBinWidth },
                         { "tableOffset", w.tableOffset } });
  }
  // Floats become doubles exactly and nlohmann-json prints the shortest round-tripping form, so
  // reading back gives bit-identical values.
  out = json{ { "featureFamily", PBTFeatureFamilyName(model.featureFamily) },
              { "epsilon1", model.epsilon1 },
              { "epsilon2", model.epsilon2 },
              { "nodes", std::move(nodes) },
              { "learners", std::move(learners) },
              { "tables", json(model.tables) } };
  json features = json::array();
  if (model.featureFamily == PBTFeatureFamily::Steerable)
  {
    const SteerablePBTFeatures & s = model.steerable;
    out["steerable"] = { { "grid", s.grid.size }, { "gridSpacingMm", s.grid.spacingMm } };
    if (s.pyramid.levelFactors.empty())
      out["steerable"]["levelSpacingsMm"] = s.pyramid.levelSpacingsMm;
    else
      out["steerable"]["levelFactors"] = s.pyramid.levelFactors;
    for (const SteerableFeature & f : s.features)
    {
      features.push_back(
        { { "at", { int(f.x), int(f.y), int(f.z) } }, { "type", int(f.type) }, { "level", int(f.level) } });
    }
  }
  else
  {
    out["sampleBox"] = { model.sampleBox[0], model.sampleBox[1], model.sampleBox[2] };
    for (const auto & f : model.features)
    {
      json feature;
      HaarFeatureToJson(f, feature);
      features.push_back(std::move(feature));
    }
  }
  out["features"] = std::move(features);
}

namespace
{
// A small non-negative integer field of a steerable feature (stored in a byte; Validate checks ranges).
std::uint8_t
ByteOf(const json & value, const std::string & what)
{
  const int v = ToInt(value, what);
  if (v < 0 || v > 255)
  {
    CANOPY_THROW(what << " must be in [0, 255], got " << v);
  }
  return static_cast<std::uint8_t>(v);
}

std::vector<double>
PositiveNumbers(const json & object, const char * key, const std::string & context)
{
  const json & values = ArrayField(object, key, context);
  if (values.empty() || values.size() > static_cast<std::size_t>(kMaxSteerableLevels))
  {
    CANOPY_THROW(context << ": \"" << key << "\" must hold 1 to " << kMaxSteerableLevels << " numbers");
  }
  std::vector<double> out;
  for (const json & v : values)
  {
    const float x = ToFloat(v, context + ": a \"" + key + "\" entry");
    if (!(x > 0.0f))
    {
      CANOPY_THROW(context << ": \"" << key << "\" entries must be > 0");
    }
    out.push_back(v.get<double>());
  }
  return out;
}

void
SteerableFromJson(const json & in, const std::string & context, SteerablePBTFeatures & out)
{
  const json & s = RequireJsonField(in, "steerable", context);
  if (!s.is_object())
  {
    CANOPY_THROW(context << ": \"steerable\" must be an object");
  }
  out.grid.size = IntField(s, "grid", context + ": \"steerable\"");
  out.grid.spacingMm = FloatField(s, "gridSpacingMm", context + ": \"steerable\"");
  if (s.contains("levelFactors"))
  {
    out.pyramid.levelFactors = PositiveNumbers(s, "levelFactors", context + ": \"steerable\"");
    out.pyramid.levelSpacingsMm.clear();
  }
  else
  {
    out.pyramid.levelSpacingsMm = PositiveNumbers(s, "levelSpacingsMm", context + ": \"steerable\"");
  }
  const json & features = ArrayField(in, "features", context);
  out.features.reserve(features.size());
  for (std::size_t i = 0; i < features.size(); ++i)
  {
    const std::string c = context + ": feature " + std::to_string(i);
    const json &      f = features[i];
    const json &      at = ArrayField(f, "at", c);
    if (at.size() != 3)
    {
      CANOPY_THROW(c << ": \"at\" must hold 3 grid indices");
    }
    SteerableFeature feature{};
    feature.x = ByteOf(at[0], c + ": \"at\" entry");
    feature.y = ByteOf(at[1], c + ": \"at\" entry");
    feature.z = ByteOf(at[2], c + ": \"at\" entry");
    feature.type = ByteOf(RequireJsonField(f, "type", c), c + ": \"type\"");
    feature.level = ByteOf(RequireJsonField(f, "level", c), c + ": \"level\"");
    out.features.push_back(feature);
  }
}
} // namespace

PBTModel
PBTModelFromJson(const nlohmann::json & in, const std::string & where)
{
  const std::string context = where + ": PBT model";
  PBTModel          model;
  if (in.is_object() && in.contains("featureFamily")) // absent before format version 2: Haar
  {
    const json & family = in["featureFamily"];
    if (family == "steerable")
      model.featureFamily = PBTFeatureFamily::Steerable;
    else if (family != "haar")
      CANOPY_THROW(context << ": \"featureFamily\" must be \"haar\" or \"steerable\", got " << family.dump());
  }
  model.epsilon1 = FloatField(in, "epsilon1", context);
  model.epsilon2 = FloatField(in, "epsilon2", context);

  if (model.featureFamily == PBTFeatureFamily::Haar)
  {
    const json & box = ArrayField(in, "sampleBox", context);
    if (box.size() != 3)
    {
      CANOPY_THROW(context << ": \"sampleBox\" must hold 3 integers");
    }
    for (int d = 0; d < 3; ++d)
    {
      model.sampleBox[d] = ToInt(box[d], context + ": \"sampleBox\" entry");
    }
  }

  const json & nodes = ArrayField(in, "nodes", context);
  model.nodes.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i)
  {
    const std::string c = context + ": node " + std::to_string(i);
    const json &      n = nodes[i];
    PBTNodeFlat       node{};
    node.firstLearner = IntField(n, "firstLearner", c);
    node.numLearners = IntField(n, "numLearners", c);
    node.calibrationScale = FloatField(n, "calibrationScale", c);
    node.calibrationOffset = FloatField(n, "calibrationOffset", c);
    node.empiricalPositive = FloatField(n, "empiricalPositive", c);
    node.left = IntField(n, "left", c);
    node.right = IntField(n, "right", c);
    model.nodes.push_back(node);
  }

  const json & learners = ArrayField(in, "learners", context);
  model.learners.reserve(learners.size());
  for (std::size_t i = 0; i < learners.size(); ++i)
  {
    const std::string  c = context + ": weak learner " + std::to_string(i);
    const json &       w = learners[i];
    PBTWeakLearnerFlat learner{};
    learner.feature = IntField(w, "feature", c);
    learner.numBins = IntField(w, "numBins", c);
    learner.lo = FloatField(w, "lo", c);
    learner.invBinWidth = FloatField(w, "invBinWidth", c);
    learner.tableOffset = IntField(w, "tableOffset", c);
    model.learners.push_back(learner);
  }

  const json & tables = ArrayField(in, "tables", context);
  model.tables.reserve(tables.size());
  for (const auto & t : tables)
  {
    model.tables.push_back(ToFloat(t, context + ": a \"tables\" entry"));
  }

  if (model.featureFamily == PBTFeatureFamily::Steerable)
  {
    SteerableFromJson(in, context, model.steerable);
  }
  else
  {
    const json & features = ArrayField(in, "features", context);
    model.features.reserve(features.size());
    for (std::size_t i = 0; i < features.size(); ++i)
    {
      model.features.push_back(HaarFeatureFromJson(features[i], context + ": feature " + std::to_string(i)));
    }
  }

  model.Validate(context);
  return model;
}

} // namespace canopy
