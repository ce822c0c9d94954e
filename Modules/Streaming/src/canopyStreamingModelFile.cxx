#include "canopyStreamingModelFile.h"

#include "canopy/AtomicFile.h"
#include "canopy/Errors.h"
#include "canopy/JsonField.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <type_traits>

namespace canopy::streaming
{
namespace
{
using nlohmann::json;

// A field's path for messages: "members[3].tree".
std::string
At(const std::string & path, const std::string & key)
{
  return path.empty() ? key : path + "." + key;
}

class Reader
{
public:
  explicit Reader(std::string context)
    : m_Context(std::move(context))
  {
  }

  [[noreturn]] void Reject(const std::string & path, const std::string & what) const
  {
    CANOPY_THROW(m_Context << ": \"" << path << "\" " << what);
  }

  const json & Field(const json & object, const std::string & path, const char * key) const
  {
    if (!object.is_object())
      Reject(path, "must be a JSON object");
    const auto it = object.find(key);
    if (it == object.end())
      Reject(At(path, key), "is missing");
    return *it;
  }

  /** An integer of type T (range checked). */
  template<typename T>
  T Integer(const json & value, const std::string & path) const
  {
    if (!value.is_number_integer())
      Reject(path, "must be an integer");
    if (value.is_number_unsigned())
    {
      const auto v = value.get<std::uint64_t>();
      if (v > std::uint64_t(std::numeric_limits<T>::max()))
        Reject(path, "is out of range (" + std::to_string(v) + ")");
      return T(v);
    }
    const auto v = value.get<std::int64_t>();
    if (v < std::int64_t(std::numeric_limits<T>::min()) ||
        (v > 0 && std::uint64_t(v) > std::uint64_t(std::numeric_limits<T>::max())))
      Reject(path, "is out of range (" + std::to_string(v) + ")");
    return T(v);
  }
  template<typename T>
  T Integer(const json & object, const std::string & path, const char * key) const
  {
    return Integer<T>(Field(object, path, key), At(path, key));
  }

  double Number(const json & value, const std::string & path) const
  {
    if (!value.is_number())
      Reject(path, "must be a number");
    const double v = value.get<double>();
    if (!std::isfinite(v))
      Reject(path, "must be finite");
    return v;
  }
  double Number(const json & object, const std::string & path, const char * key) const
  {
    return Number(Field(object, path, key), At(path, key));
  }

  bool Boolean(const json & object, const std::string & path, const char * key) const
  {
    const json & v = Field(object, path, key);
    if (!v.is_boolean())
      Reject(At(path, key), "must be true or false");
    return v.get<bool>();
  }

  std::string String(const json & value, const std::string & path) const
  {
    if (!value.is_string())
      Reject(path, "must be a string");
    return value.get<std::string>();
  }
  std::string String(const json & object, const std::string & path, const char * key) const
  {
    return String(Field(object, path, key), At(path, key));
  }

  const json & Array(const json & object, const std::string & path, const char * key) const
  {
    const json & v = Field(object, path, key);
    if (!v.is_array())
      Reject(At(path, key), "must be an array");
    return v;
  }

  template<typename T>
  std::vector<T> Integers(const json & object, const std::string & path, const char * key) const
  {
    const json &   a = Array(object, path, key);
    std::vector<T> out;
    out.reserve(a.size());
    for (std::size_t k = 0; k < a.size(); ++k)
      out.push_back(Integer<T>(a[k], At(path, key) + "[" + std::to_string(k) + "]"));
    return out;
  }

  std::vector<double> Numbers(const json & object, const std::string & path, const char * key) const
  {
    const json &        a = Array(object, path, key);
    std::vector<double> out;
    out.reserve(a.size());
    for (std::size_t k = 0; k < a.size(); ++k)
      out.push_back(Number(a[k], At(path, key) + "[" + std::to_string(k) + "]"));
    return out;
  }

  std::vector<float> Floats(const json & object, const std::string & path, const char * key) const
  {
    std::vector<float> out;
    for (double v : Numbers(object, path, key))
    {
      if (double(float(v)) != v)
        Reject(At(path, key), "holds " + std::to_string(v) + ", which is not a float");
      out.push_back(float(v));
    }
    return out;
  }

  const std::string & Context() const { return m_Context; }

private:
  std::string m_Context;
};

const char *
CriterionName(SplitCriterion c)
{
  return c == SplitCriterion::Gini ? "gini" : "infogain";
}

const char *
LeafName(LeafPrediction p)
{
  return p == LeafPrediction::MajorityClass ? "mc" : p == LeafPrediction::NaiveBayes ? "nb" : "nba";
}

json
AdwinToJson(const AdwinState & a)
{
  return { { "rowCounts", a.rowCounts }, { "totals", a.totals },    { "variances", a.variances },
           { "width", a.width },         { "ticks", a.ticks },      { "detections", a.detections },
           { "total", a.total },         { "variance", a.variance } };
}

AdwinState
AdwinFromJson(const Reader & r, const json & j, const std::string & path)
{
  AdwinState a;
  a.rowCounts = r.Integers<std::int32_t>(j, path, "rowCounts");
  a.totals = r.Numbers(j, path, "totals");
  a.variances = r.Numbers(j, path, "variances");
  a.width = r.Integer<std::int64_t>(j, path, "width");
  a.ticks = r.Integer<std::int64_t>(j, path, "ticks");
  a.detections = r.Integer<std::int64_t>(j, path, "detections");
  a.total = r.Number(j, path, "total");
  a.variance = r.Number(j, path, "variance");
  return a;
}

// Gaussians as 5 numbers each: mean, m2, weight, min, max; an unused one (weight 0) as five zeros.
constexpr std::size_t kGaussianFields = 5;

json
TreeToJson(const HoeffdingTreeState & t)
{
  std::vector<double> gaussians;
  gaussians.reserve(t.gaussians.size() * kGaussianFields);
  for (const GaussianEstimator & g : t.gaussians)
  {
    const bool used = g.weight > 0;
    gaussians.insert(
      gaussians.end(),
      { g.mean, g.m2, double(g.weight), used ? double(g.minValue) : 0.0, used ? double(g.maxValue) : 0.0 });
  }
  return { { "streamKey", t.streamKey },
           { "leavesCreated", t.leavesCreated },
           { "attribute", t.nodes.attribute },
           { "threshold", t.nodes.threshold },
           { "child", t.nodes.child },
           { "missingBranch", t.nodes.missingBranch },
           { "depth", t.nodes.depth },
           { "classCounts", t.classCounts },
           { "nominalCounts", t.nominalCounts },
           { "gaussians", gaussians },
           { "subspace", t.subspace },
           { "weight", t.weight },
           { "weightAtLastCheck", t.weightAtLastCheck },
           { "majorityCorrect", t.majorityCorrect },
           { "bayesCorrect", t.bayesCorrect },
           { "slotDepth", t.slotDepth } };
}

HoeffdingTreeState
TreeFromJson(const Reader &               r,
             const json &                 j,
             const std::string &          path,
             const StreamSchema &         schema,
             const HoeffdingTreeOptions & options)
{
  HoeffdingTreeState t;
  t.streamKey = r.Integer<std::uint64_t>(j, path, "streamKey");
  t.leavesCreated = r.Integer<std::uint64_t>(j, path, "leavesCreated");
  t.nodes.attribute = r.Integers<std::int32_t>(j, path, "attribute");
  t.nodes.threshold = r.Floats(j, path, "threshold");
  t.nodes.child = r.Integers<std::int32_t>(j, path, "child");
  t.nodes.missingBranch = r.Integers<std::int32_t>(j, path, "missingBranch");
  t.nodes.depth = r.Integers<std::int32_t>(j, path, "depth");
  t.classCounts = r.Integers<std::uint32_t>(j, path, "classCounts");
  t.nominalCounts = r.Integers<std::uint32_t>(j, path, "nominalCounts");
  const std::vector<double> g = r.Numbers(j, path, "gaussians");
  if (g.size() % kGaussianFields != 0)
    r.Reject(At(path, "gaussians"), "must hold 5 numbers per estimator");
  for (std::size_t k = 0; k < g.size(); k += kGaussianFields)
  {
    GaussianEstimator e;
    const double      weight = g[k + 2];
    if (!(weight >= 0.0 && weight <= 4294967295.0 && weight == std::floor(weight)))
      r.Reject(At(path, "gaussians"),
               "estimator " + std::to_string(k / kGaussianFields) + " has weight " + std::to_string(weight) +
                 ", not a 32-bit count");
    if (weight == 0.0)
    {
      if (g[k] != 0.0 || g[k + 1] != 0.0 || g[k + 3] != 0.0 || g[k + 4] != 0.0)
        r.Reject(At(path, "gaussians"),
                 "estimator " + std::to_string(k / kGaussianFields) + " has weight 0 but values");
    }
    else
    {
      if (double(float(g[k + 3])) != g[k + 3] || double(float(g[k + 4])) != g[k + 4])
        r.Reject(At(path, "gaussians"), "estimator " + std::to_string(k / kGaussianFields) + ": min/max not floats");
      e.mean = g[k];
      e.m2 = g[k + 1];
      e.weight = std::uint32_t(weight);
      e.minValue = float(g[k + 3]);
      e.maxValue = float(g[k + 4]);
    }
    t.gaussians.push_back(e);
  }
  t.subspace = r.Integers<std::int32_t>(j, path, "subspace");
  t.weight = r.Integers<std::uint32_t>(j, path, "weight");
  t.weightAtLastCheck = r.Integers<std::uint32_t>(j, path, "weightAtLastCheck");
  t.majorityCorrect = r.Integers<std::uint32_t>(j, path, "majorityCorrect");
  t.bayesCorrect = r.Integers<std::uint32_t>(j, path, "bayesCorrect");
  t.slotDepth = r.Integers<std::int32_t>(j, path, "slotDepth");
  ValidateHoeffdingTreeState(t, schema, options, r.Context() + ": " + path);
  return t;
}

json
SchemaToJson(const StreamSchema & s)
{
  json attributes = json::array();
  for (const StreamAttribute & a : s.attributes)
    attributes.push_back({ { "name", a.name }, { "nominal", a.nominal }, { "values", a.values } });
  return { { "className", s.className }, { "classes", s.classes }, { "attributes", attributes } };
}

StreamSchema
SchemaFromJson(const Reader & r, const json & j)
{
  const std::string path = "schema";
  StreamSchema      s;
  s.className = r.String(j, path, "className");
  const json & classes = r.Array(j, path, "classes");
  for (std::size_t k = 0; k < classes.size(); ++k)
    s.classes.push_back(r.String(classes[k], path + ".classes[" + std::to_string(k) + "]"));
  if (s.classes.size() < 2 || s.classes.size() > std::size_t(kHoeffdingMaxClasses))
    r.Reject(path + ".classes",
             "holds " + std::to_string(s.classes.size()) + " classes (2 to " + std::to_string(kHoeffdingMaxClasses) +
               ")");
  const json & attributes = r.Array(j, path, "attributes");
  if (attributes.empty())
    r.Reject(path + ".attributes", "is empty");
  for (std::size_t k = 0; k < attributes.size(); ++k)
  {
    const std::string p = path + ".attributes[" + std::to_string(k) + "]";
    StreamAttribute   a;
    a.name = r.String(attributes[k], p, "name");
    a.nominal = r.Boolean(attributes[k], p, "nominal");
    const json & values = r.Array(attributes[k], p, "values");
    for (std::size_t v = 0; v < values.size(); ++v)
      a.values.push_back(r.String(values[v], p + ".values[" + std::to_string(v) + "]"));
    if (a.nominal ? a.values.empty() || a.values.size() > 1000000 : !a.values.empty())
      r.Reject(p + ".values",
               a.nominal ? "must list 1 to 10^6 values of a nominal attribute"
                         : "must be empty for a numeric attribute");
    s.attributes.push_back(std::move(a));
  }
  return s;
}

json
OptionsToJson(const StreamingForestOptions & o)
{
  const HoeffdingTreeOptions & t = o.tree;
  return { { "trees", o.trees },
           { "lambda", o.lambda },
           { "subspaceSize", o.subspaceSize },
           { "driftDetection", o.driftDetection },
           { "backgroundTrees", o.backgroundTrees },
           { "warningDelta", o.warningDelta },
           { "driftDelta", o.driftDelta },
           { "weightedVote", o.weightedVote },
           { "seed", o.seed },
           { "tree",
             { { "gracePeriod", t.gracePeriod },
               { "splitConfidence", t.splitConfidence },
               { "tieThreshold", t.tieThreshold },
               { "criterion", CriterionName(t.criterion) },
               { "leafPrediction", LeafName(t.leafPrediction) },
               { "numericSplitPoints", t.numericSplitPoints },
               { "maxDepth", t.maxDepth },
               { "skipFlatGaussians", t.skipFlatGaussians } } } };
}

StreamingForestOptions
OptionsFromJson(const Reader & r, const json & j)
{
  const std::string      path = "options";
  StreamingForestOptions o;
  auto                   range = [&](const std::string & key, double v, double lo, double hi, bool openLow)
  {
    if (openLow ? !(v > lo && v <= hi) : !(v >= lo && v <= hi))
      r.Reject(At(path, key),
               "is " + std::to_string(v) + ", not in " + (openLow ? "(" : "[") + std::to_string(lo) + ", " +
                 std::to_string(hi) + "]");
  };
  o.trees = r.Integer<int>(j, path, "trees");
  range("trees", o.trees, 1, 100000, false);
  o.lambda = r.Number(j, path, "lambda");
  range("lambda", o.lambda, 0.0, 30.0, true);
  o.subspaceSize = r.Integer<int>(j, path, "subspaceSize");
  range("subspaceSize", o.subspaceSize, -1, 1000000, false);
  o.driftDetection = r.Boolean(j, path, "driftDetection");
  o.backgroundTrees = r.Boolean(j, path, "backgroundTrees");
  o.warningDelta = r.Number(j, path, "warningDelta");
  range("warningDelta", o.warningDelta, 0.0, 1.0, true);
  o.driftDelta = r.Number(j, path, "driftDelta");
  range("driftDelta", o.driftDelta, 0.0, 1.0, true);
  o.weightedVote = r.Boolean(j, path, "weightedVote");
  o.seed = r.Integer<std::uint64_t>(j, path, "seed");
  const json &           t = r.Field(j, path, "tree");
  const std::string      tp = path + ".tree";
  HoeffdingTreeOptions & to = o.tree;
  to.gracePeriod = r.Integer<int>(t, tp, "gracePeriod");
  range("tree.gracePeriod", to.gracePeriod, 1, 1e9, false);
  to.splitConfidence = r.Number(t, tp, "splitConfidence");
  range("tree.splitConfidence", to.splitConfidence, 0.0, 0.999, true);
  to.tieThreshold = r.Number(t, tp, "tieThreshold");
  range("tree.tieThreshold", to.tieThreshold, 0.0, 1.0, false);
  const std::string criterion = r.String(t, tp, "criterion");
  if (criterion != "infogain" && criterion != "gini")
    r.Reject(tp + ".criterion", "is '" + criterion + "', not infogain or gini");
  to.criterion = criterion == "gini" ? SplitCriterion::Gini : SplitCriterion::InfoGain;
  const std::string leaf = r.String(t, tp, "leafPrediction");
  if (leaf != "mc" && leaf != "nb" && leaf != "nba")
    r.Reject(tp + ".leafPrediction", "is '" + leaf + "', not mc, nb or nba");
  to.leafPrediction = leaf == "mc"   ? LeafPrediction::MajorityClass
                      : leaf == "nb" ? LeafPrediction::NaiveBayes
                                     : LeafPrediction::NaiveBayesAdaptive;
  to.numericSplitPoints = r.Integer<int>(t, tp, "numericSplitPoints");
  range("tree.numericSplitPoints", to.numericSplitPoints, 1, 100000, false);
  to.maxDepth = r.Integer<int>(t, tp, "maxDepth");
  range("tree.maxDepth", to.maxDepth, 0, 1e9, false);
  // Absent from files written before the option existed: MOA's Gaussians, as those forests learnt.
  to.skipFlatGaussians = t.contains("skipFlatGaussians") && r.Boolean(t, tp, "skipFlatGaussians");
  return o;
}

MemberMonitorState
MonitorFromJson(const Reader & r, const json & j, const std::string & path)
{
  MemberMonitorState m;
  m.seen = r.Integer<std::uint64_t>(j, path, "seen");
  m.correct = r.Integer<std::uint64_t>(j, path, "correct");
  m.generation = r.Integer<std::uint64_t>(j, path, "generation");
  m.drifts = r.Integer<std::int64_t>(j, path, "drifts");
  m.warnings = r.Integer<std::int64_t>(j, path, "warnings");
  m.background = r.Boolean(j, path, "background");
  m.warning = AdwinFromJson(r, r.Field(j, path, "warning"), At(path, "warning"));
  m.drift = AdwinFromJson(r, r.Field(j, path, "drift"), At(path, "drift"));
  return m;
}

} // namespace

nlohmann::json
StreamingModelToJson(const StreamingModel & model)
{
  json members = json::array();
  for (const ForestMemberState & m : model.state.members)
  {
    const MemberMonitorState & s = m.monitor;
    json                       monitor = { { "seen", s.seen },
                                           { "correct", s.correct },
                                           { "generation", s.generation },
                                           { "drifts", s.drifts },
                                           { "warnings", s.warnings },
                                           { "background", s.background },
                                           { "warning", AdwinToJson(s.warning) },
                                           { "drift", AdwinToJson(s.drift) } };
    members.push_back({ { "monitor", monitor },
                        { "tree", TreeToJson(m.tree) },
                        { "background", m.hasBackground ? TreeToJson(m.background) : json(nullptr) } });
  }
  return { { "format", kStreamingModelFormat },
           { "version", kStreamingModelVersion },
           { "kind", "adaptive-random-forest" },
           { "instances", model.instances },
           { "source", model.source },
           { "schema", SchemaToJson(model.schema) },
           { "options", OptionsToJson(model.options) },
           { "members", members } };
}

StreamingModel
StreamingModelFromJson(const nlohmann::json & document, const std::string & context)
{
  const Reader r(context);
  if (!document.is_object())
    CANOPY_THROW(context << ": not a JSON object");
  const std::string format = r.String(document, "", "format");
  if (format != kStreamingModelFormat)
    r.Reject("format", "is '" + format + "', not '" + kStreamingModelFormat + "'");
  const int version = r.Integer<int>(document, "", "version");
  if (version != kStreamingModelVersion)
    r.Reject("version",
             "is " + std::to_string(version) + "; this Canopy reads version " + std::to_string(kStreamingModelVersion));
  const std::string kind = r.String(document, "", "kind");
  if (kind != "adaptive-random-forest")
    r.Reject("kind", "is '" + kind + "', not 'adaptive-random-forest'");
  StreamingModel model;
  model.instances = r.Integer<std::uint64_t>(document, "", "instances");
  model.source = r.String(document, "", "source");
  model.schema = SchemaFromJson(r, r.Field(document, "", "schema"));
  model.options = OptionsFromJson(r, r.Field(document, "", "options"));
  const HoeffdingTreeOptions treeOptions = model.options.ResolvedTreeOptions(model.schema.NumberOfAttributes());
  const json &               members = r.Array(document, "", "members");
  if (members.size() != std::size_t(model.options.trees))
    r.Reject("members",
             "holds " + std::to_string(members.size()) + " members for options.trees " +
               std::to_string(model.options.trees));
  for (std::size_t k = 0; k < members.size(); ++k)
  {
    const std::string path = "members[" + std::to_string(k) + "]";
    ForestMemberState m;
    m.monitor = MonitorFromJson(r, r.Field(members[k], path, "monitor"), path + ".monitor");
    try
    {
      ForestMemberMonitor(model.options.Drift()).Restore(m.monitor);
    }
    catch (const Error & e)
    {
      CANOPY_THROW(context << ": " << path << ".monitor: " << e.GetDescription());
    }
    m.tree = TreeFromJson(r, r.Field(members[k], path, "tree"), path + ".tree", model.schema, treeOptions);
    const json & background = r.Field(members[k], path, "background");
    m.hasBackground = !background.is_null();
    if (m.hasBackground != m.monitor.background)
      r.Reject(path + ".background",
               m.monitor.background ? "is null, but the monitor has a background tree"
                                    : "is a tree, but the monitor has no background tree");
    if (m.hasBackground)
      m.background = TreeFromJson(r, background, path + ".background", model.schema, treeOptions);
    model.state.members.push_back(std::move(m));
  }
  return model;
}

void
SaveStreamingModel(const StreamingModel & model, const std::string & fileName)
{
  const json document = StreamingModelToJson(model);
  WriteFileAtomically(fileName, [&](std::ostream & out) { out << document.dump() << '\n'; });
}

StreamingModel
LoadStreamingModel(const std::string & fileName)
{
  const std::string text = ReadModelFileText(fileName);
  json              document;
  try
  {
    document = ParseJsonWithDepthLimit(text, fileName);
  }
  catch (const json::exception & e)
  {
    CANOPY_THROW(fileName << ": truncated or not valid JSON (" << e.what() << ")");
  }
  return StreamingModelFromJson(document, fileName);
}

void
RequireSameSchema(const StreamSchema & model, const StreamSchema & stream, const std::string & context)
{
  auto list = [](const std::vector<std::string> & v)
  {
    std::string s;
    for (const auto & x : v)
      s += (s.empty() ? "" : ",") + x;
    return s;
  };
  if (model.classes != stream.classes)
    CANOPY_THROW(context << ": the stream's classes (" << list(stream.classes) << ") are not the model's ("
                         << list(model.classes) << ")");
  if (model.attributes.size() != stream.attributes.size())
    CANOPY_THROW(context << ": the stream has " << stream.attributes.size() << " attributes, the model "
                         << model.attributes.size());
  for (std::size_t k = 0; k < model.attributes.size(); ++k)
  {
    const StreamAttribute &a = model.attributes[k], &b = stream.attributes[k];
    if (a.name != b.name || a.nominal != b.nominal || a.values != b.values)
      CANOPY_THROW(context << ": the stream's attribute " << k + 1 << " ('" << b.name << "', "
                           << (b.nominal ? "nominal {" + list(b.values) + "}" : std::string("numeric"))
                           << ") is not the model's ('" << a.name << "', "
                           << (a.nominal ? "nominal {" + list(a.values) + "}" : std::string("numeric")) << ")");
  }
}

} // namespace canopy::streaming
