// JSON form of a forest model (Modules/Forest/README.md). Every field is type-checked before use and
// the whole model validated after, so no corrupt file reaches the predictors.
#include "canopyForestModelJson.h"
#include "canopy/Errors.h"
#include "canopy/JsonDocumentWriter.h"
#include "canopy/JsonField.h"
#include "canopyForestFilterBank.h"
#include "canopyForestModel.h"
#include "canopyForestNodeJson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace canopy
{
namespace
{
using nlohmann::json;

/** "<what> must ..." (`what` is anything std::ostream prints: a string, or a NodeField that is only spelled out
 * on error). Out of line, so that the conversions below, run for every field of every node, stay small. */
template<typename What>
[[noreturn, gnu::noinline, gnu::cold]] void
ThrowFieldError(const What & what, const char * problem)
{
  CANOPY_THROW(what << " must " << problem);
}

template<typename What>
[[noreturn, gnu::noinline, gnu::cold]] void
ThrowOutOfRange(const What & what, std::int64_t low, std::int64_t high)
{
  CANOPY_THROW(what << " must be in [" << low << ", " << high << "]");
}

template<typename What>
std::int64_t
ToInteger(const ForestScalar & value, std::int64_t low, std::int64_t high, const What & what)
{
  using Kind = ForestScalar::Kind;
  if (value.GetKind() != Kind::Integer && value.GetKind() != Kind::Unsigned)
    ThrowFieldError(what, "be an integer");
  // Unsigned values beyond int64 fail the upper bound; all others compare as int64.
  const bool isUnsigned = value.GetKind() == Kind::Unsigned;
  if (isUnsigned ? (value.GetUnsigned() > static_cast<std::uint64_t>(high) ||
                    static_cast<std::int64_t>(value.GetUnsigned()) < low)
                 : (value.GetInteger() < low || value.GetInteger() > high))
    ThrowOutOfRange(what, low, high);
  return isUnsigned ? static_cast<std::int64_t>(value.GetUnsigned()) : value.GetInteger();
}

template<typename What>
std::int64_t
ToInteger(const json & value, std::int64_t low, std::int64_t high, const What & what)
{
  return ToInteger(ForestScalar::Of(value), low, high, what);
}

/** A float; null stands for -inf (low threshold) or +inf (high threshold), which JSON cannot hold. */
template<typename What>
float
ToThreshold(const ForestScalar & value, float infinity, const What & what)
{
  if (value.GetKind() == ForestScalar::Kind::Null)
  {
    return infinity;
  }
  if (value.GetKind() == ForestScalar::Kind::Other)
    ThrowFieldError(what, "be a number or null");
  const double v = value.AsDouble();
  if (!std::isfinite(v) || std::abs(v) > std::numeric_limits<float>::max())
    ThrowFieldError(what, "be a finite single-precision number");
  return static_cast<float>(v);
}

json
FromThreshold(float v)
{
  return std::isinf(v) ? json(nullptr) : json(v);
}

/** "<context>: tree T node I <field>" (`tree` holds the first part), written out only when an error message needs
 * it: building it as a string for every field of every node took 0.9 of the 3.1 s that reading a 50 MB
 * forest took. */
struct NodeField
{
  const std::string & tree;
  std::size_t         node;
  const char *        field;
};

std::ostream &
operator<<(std::ostream & out, const NodeField & f)
{
  return out << f.tree << " node " << f.node << (f.field[0] ? " " : "") << f.field;
}

} // namespace

ForestNode
ForestNodeFromRow(const ForestScalar * fields,
                  std::size_t          count,
                  std::int32_t         root,
                  const std::string &  tree,
                  std::size_t          index)
{
  const auto node = [&](const char * field) { return NodeField{ tree, index, field }; };
  if (count != kForestInnerNodeFields)
    CANOPY_THROW(node("") << " must be {\"leaf\": d} or an array of " << kForestInnerNodeFields << " numbers");
  ForestNode n{};
  n.left = static_cast<std::int32_t>(root + ToInteger(fields[0], 1, INT32_MAX / 2, node("left child")));
  n.threshold[0] = ToThreshold(fields[1], -std::numeric_limits<float>::infinity(), node("theta0"));
  n.threshold[1] = ToThreshold(fields[2], std::numeric_limits<float>::infinity(), node("theta1"));
  for (int b = 0; b < 2; ++b)
  {
    const int at = 3 + 7 * b;
    n.feature.channel[b] = static_cast<std::uint8_t>(ToInteger(fields[at], 0, 255, node("channel")));
    for (int a = 0; a < 3; ++a)
    {
      n.feature.offset[b][a] =
        static_cast<std::int16_t>(ToInteger(fields[at + 1 + a], -kForestMaxOffset, kForestMaxOffset, node("offset")));
      n.feature.size[b][a] =
        static_cast<std::uint8_t>(ToInteger(fields[at + 4 + a], 1, kForestMaxBoxSize, node("box size")));
    }
  }
  return n;
}

ForestNode
ForestNodeFromLeaf(const ForestScalar * leaf, const std::string & tree, std::size_t index)
{
  const auto node = [&](const char * field) { return NodeField{ tree, index, field }; };
  if (!leaf) // RequireJsonField's message, without a string per node
    CANOPY_THROW(node("") << " has no field \"leaf\"");
  ForestNode n{};
  n.left = static_cast<std::int32_t>(-1 - ToInteger(*leaf, 0, INT32_MAX - 1, node("leaf")));
  return n;
}

ForestNode
ForestNodeFromJson(const json & j, std::int32_t root, const std::string & tree, std::size_t index)
{
  if (j.is_object())
  {
    const auto leaf = j.find("leaf");
    if (leaf == j.end())
      return ForestNodeFromLeaf(nullptr, tree, index);
    const ForestScalar value = ForestScalar::Of(*leaf);
    return ForestNodeFromLeaf(&value, tree, index);
  }
  ForestScalar fields[kForestInnerNodeFields];
  const bool   inner = j.is_array() && j.size() == kForestInnerNodeFields;
  for (std::size_t k = 0; inner && k < kForestInnerNodeFields; ++k)
    fields[k] = ForestScalar::Of(j[k]);
  return ForestNodeFromRow(fields, inner ? kForestInnerNodeFields : 0, root, tree, index);
}

void
WriteForestReference(const ForestReference & reference, json & out)
{
  if (!reference.Empty())
    out["reference"] = { { "structure", reference.structure }, { "training", reference.training } };
}

ForestReference
ReadForestReference(const json & in, const std::vector<std::string> & bank, const std::string & context)
{
  const bool      needed = ForestBankNeedsReference(bank);
  const auto      field = in.find("reference");
  ForestReference reference;
  if (field == in.end())
  {
    if (needed)
      CANOPY_THROW(context << ": the filter bank has pose channels but no \"reference\" names their structure");
    return reference;
  }
  if (!needed)
    CANOPY_THROW(context << ": \"reference\" is given but the filter bank has no pose channel");
  if (!field->is_object() || !field->contains("structure") || !(*field)["structure"].is_string() ||
      (*field)["structure"].get<std::string>().empty())
    CANOPY_THROW(context << ": \"reference\" must be an object with a non-empty \"structure\" string");
  reference.structure = (*field)["structure"].get<std::string>();
  if (const auto training = field->find("training"); training != field->end())
  {
    if (!training->is_string())
      CANOPY_THROW(context << ": \"reference\": \"training\" must be a string");
    reference.training = training->get<std::string>();
  }
  return reference;
}

void
WriteForestNormalization(const std::optional<IntensityNormalization> & normalization, json & out)
{
  if (normalization)
    ToJson(*normalization, out["normalization"]);
}

std::optional<IntensityNormalization>
ReadForestNormalization(const json & in, const std::string & context)
{
  const auto field = in.find("normalization");
  if (field == in.end())
    return std::nullopt;
  return IntensityNormalizationFromJson(*field, context);
}

namespace
{
/** Every field but the two large ones, "trees" and "distributions". */
json
ForestModelHeadToJson(const ForestModel & model)
{
  json out;
  out["format"] = "canopy-forest";
  out["version"] = model.normalization ? 2 : 1; // 1 without it: what earlier readers read correctly
  out["dimension"] = model.dimension;
  out["channels"] = model.numChannels;
  out["classes"] = model.numClasses;
  out["scaled"] = model.usesScale;
  if (!model.filterBank.empty())
    out["filterBank"] = model.filterBank; // optional, so files without it stay version 1
  WriteForestReference(model.reference, out);
  WriteForestNormalization(model.normalization, out);
  return out;
}

/** One node of the tree whose first node is `root`: {"leaf": d}, or the 17 numbers of an inner node. */
json
ForestNodeToJson(const ForestNode & n, int root)
{
  if (ForestIsLeaf(n))
    return json{ { "leaf", ForestLeafDistribution(n) } };
  json row = { n.left - root, FromThreshold(n.threshold[0]), FromThreshold(n.threshold[1]) };
  for (int b = 0; b < 2; ++b)
  {
    row.push_back(n.feature.channel[b]);
    for (int a = 0; a < 3; ++a)
      row.push_back(n.feature.offset[b][a]);
    for (int a = 0; a < 3; ++a)
      row.push_back(n.feature.size[b][a]);
  }
  return row;
}

/** Tree `t` as {"nodes": [...]}, written node by node. */
void
WriteTree(JsonDocumentWriter & out, const ForestModel & model, int t)
{
  const int root = model.treeRoots[t];
  const int size = model.TreeSize(t);
  out.BeginObject(1);
  out.Key("nodes");
  out.BeginArray(std::size_t(size));
  for (int i = root; i < root + size; ++i)
    out.Value(ForestNodeToJson(model.nodes[i], root));
  out.EndArray();
  out.EndObject();
}
} // namespace

json
ForestModelToJson(const ForestModel & model)
{
  json out = ForestModelHeadToJson(model);
  json trees = json::array();
  for (int t = 0; t < model.NumberOfTrees(); ++t)
  {
    const int root = model.treeRoots[t];
    json      nodes = json::array();
    for (int i = root; i < root + model.TreeSize(t); ++i)
      nodes.push_back(ForestNodeToJson(model.nodes[i], root));
    trees.push_back(json{ { "nodes", std::move(nodes) } });
  }
  out["trees"] = std::move(trees);
  out["distributions"] = model.distributions;
  return out;
}

void
WriteForestModelDocument(JsonDocumentWriter & out, const ForestModel & model)
{
  out.ObjectWithStreamedMembers(ForestModelHeadToJson(model),
                                { { "distributions",
                                    [&](JsonDocumentWriter & o)
                                    {
                                      o.BeginArray(model.distributions.size());
                                      o.Floats(model.distributions.data(), model.distributions.size());
                                      o.EndArray();
                                    } },
                                  { "trees",
                                    [&](JsonDocumentWriter & o)
                                    {
                                      o.BeginArray(std::size_t(model.NumberOfTrees()));
                                      for (int t = 0; t < model.NumberOfTrees(); ++t)
                                        WriteTree(o, model, t);
                                      o.EndArray();
                                    } } });
}

std::string
ForestModelToJsonString(const ForestModel & model)
{
  std::ostringstream out;
  JsonDocumentWriter writer(out, ModelEncoding::JsonText);
  WriteForestModelDocument(writer, model);
  return out.str();
}

ForestModel
ForestModelFromJsonString(const std::string & text, const std::string & context)
{
  return ForestModelFromJson(ParseForestJsonDocument(text, context), context);
}

ForestModel
ForestModelFromJson(const json & in, const std::string & context)
{
  const json & format = RequireJsonField(in, "format", context);
  if (format.is_string() && format.get<std::string>() == "canopy-model")
  {
    CANOPY_THROW(context << ": is a PBT model (from train-pbt); this command needs a forest model (from train-forest)");
  }
  if (!format.is_string() || format.get<std::string>() != "canopy-forest")
  {
    CANOPY_THROW(context << ": \"format\" must be \"canopy-forest\"");
  }
  const auto version = ToInteger(RequireJsonField(in, "version", context), 1, 1 << 20, context + ": \"version\"");
  if (version > kForestModelVersion)
  {
    CANOPY_THROW(context << ": model version " << version << " is newer than this build reads (" << kForestModelVersion
                         << ")");
  }
  ForestModel model;
  model.dimension = int(ToInteger(RequireJsonField(in, "dimension", context), 2, 3, context + ": \"dimension\""));
  model.numChannels = int(ToInteger(RequireJsonField(in, "channels", context), 1, 256, context + ": \"channels\""));
  model.numClasses = int(ToInteger(RequireJsonField(in, "classes", context), 1, 1 << 20, context + ": \"classes\""));
  const json & scaled = RequireJsonField(in, "scaled", context);
  if (!scaled.is_boolean())
  {
    CANOPY_THROW(context << ": \"scaled\" must be true or false");
  }
  model.usesScale = scaled.get<bool>();
  if (const auto bank = in.find("filterBank"); bank != in.end())
  {
    if (!bank->is_array() || bank->empty())
    {
      CANOPY_THROW(context << ": \"filterBank\" must be a non-empty array of channel names");
    }
    for (const json & name : *bank)
    {
      if (!name.is_string())
      {
        CANOPY_THROW(context << ": \"filterBank\" entries must be strings");
      }
      ForestFilterChannel::Parse(name.get<std::string>(), context + ": \"filterBank\""); // a known channel
      model.filterBank.push_back(name.get<std::string>());
    }
    if (model.numChannels % int(model.filterBank.size()) != 0)
    {
      CANOPY_THROW(context << ": \"channels\" (" << model.numChannels << ") is not a multiple of the "
                           << model.filterBank.size() << " filter-bank channels");
    }
  }
  model.reference = ReadForestReference(in, model.filterBank, context);
  model.normalization = ReadForestNormalization(in, context);
  const json & distributions = RequireJsonField(in, "distributions", context);
  if (IsPackedForestDistributions(distributions)) // by ParseForestJsonDocument: the floats below, already taken
  {
    model.distributions.resize(distributions.get_binary().size() / sizeof(float));
    std::memcpy(model.distributions.data(), distributions.get_binary().data(), distributions.get_binary().size());
  }
  else if (!distributions.is_array())
  {
    CANOPY_THROW(context << ": \"distributions\" must be an array");
  }
  for (std::size_t i = 0; i < (distributions.is_array() ? distributions.size() : 0); ++i)
  {
    const json & p = distributions[i];
    if (!p.is_number())
    {
      CANOPY_THROW(context << ": distributions[" << i << "] must be a number");
    }
    model.distributions.push_back(p.get<float>());
  }
  const json & trees = RequireJsonField(in, "trees", context);
  if (!trees.is_array() || trees.empty() || trees.size() > std::size_t(kForestMaxTrees))
  {
    CANOPY_THROW(context << ": \"trees\" must be an array of 1 to " << kForestMaxTrees << " trees");
  }
  std::size_t total = 0; // the nodes of all trees, reserved at once: growing by doubling held up to twice them
  for (const json & tree : trees)
  {
    const auto nodes = tree.is_object() ? tree.find("nodes") : tree.end();
    if (nodes != tree.end())
      total += IsPackedForestNodes(*nodes) ? nodes->get_binary().size() / sizeof(ForestNode)
                                           : (nodes->is_array() ? nodes->size() : 0);
  }
  if (total <= std::size_t(INT32_MAX / 2))
    model.nodes.reserve(total);
  for (std::size_t t = 0; t < trees.size(); ++t)
  {
    const std::string where = context + ": tree " + std::to_string(t);
    const json &      nodes = RequireJsonField(trees[t], "nodes", where);
    const std::string packedError = PackedForestNodesError(nodes);
    if (!packedError.empty())
    {
      CANOPY_THROW(where << packedError);
    }
    const bool        packed = IsPackedForestNodes(nodes);
    const std::size_t count = packed ? nodes.get_binary().size() / sizeof(ForestNode) : nodes.size();
    if (!(packed || nodes.is_array()) || count == 0)
    {
      CANOPY_THROW(where << ": \"nodes\" must be a non-empty array");
    }
    const std::int64_t root = static_cast<std::int64_t>(model.nodes.size());
    if (root + static_cast<std::int64_t>(count) > INT32_MAX / 2)
    {
      CANOPY_THROW(where << ": too many nodes");
    }
    model.treeRoots.push_back(static_cast<std::int32_t>(root));
    if (packed)
    {
      const auto & bytes = nodes.get_binary();
      const auto   first = model.nodes.size();
      model.nodes.resize(first + count);
      std::memcpy(model.nodes.data() + first, bytes.data(), count * sizeof(ForestNode));
      for (std::size_t i = first; i < model.nodes.size(); ++i)
        if (!ForestIsLeaf(model.nodes[i]))
          model.nodes[i].left += static_cast<std::int32_t>(root); // packed relative to the tree
      continue;
    }
    for (std::size_t i = 0; i < count; ++i)
      model.nodes.push_back(ForestNodeFromJson(nodes[i], static_cast<std::int32_t>(root), where, i));
  }
  model.Validate(context);
  return model;
}

void
WriteForestModelJson(const ForestModel & model, const std::string & fileName)
{
  model.Validate(fileName);
  WriteModelDocumentFile(fileName, [&](JsonDocumentWriter & out) { WriteForestModelDocument(out, model); });
}

ForestModel
ReadForestModelJson(const std::string & fileName)
{
  return ForestModelFromJsonString(ReadModelFileText(fileName), fileName);
}

} // namespace canopy
