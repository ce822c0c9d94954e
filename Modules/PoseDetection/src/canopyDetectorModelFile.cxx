#include "canopyDetectorModelFile.h"

#include "canopy/AtomicFile.h"
#include "canopy/Errors.h"
#include "canopy/JsonField.h"
#include "canopyPoseGeometry.h"

#include <cmath>
#include <filesystem>
#include <set>

namespace canopy
{
using namespace posedetail;

namespace
{
void
CheckFrame(const Frame & f, const std::string & where)
{
  for (int a = 0; a < 3; ++a)
    for (int b = a; b < 3; ++b)
      if (!(std::abs(Dot(f[a], f[b]) - (a == b ? 1.0 : 0.0)) <= 1e-3))
        CANOPY_THROW(where << ": rows must be unit vectors at right angles (rows " << a << " and " << b << ")");
  if (!(Dot(Cross(f[0], f[1]), f[2]) > 0.0))
    CANOPY_THROW(where << ": the frame is left-handed (axis 2 must be axis 0 x axis 1)");
}

void
CheckSize(const Vec3d & s, const std::string & where)
{
  for (double v : s)
    if (!(std::isfinite(v) && v > 0.0))
      CANOPY_THROW(where << ": sizes must be finite and > 0 mm");
}

void
CheckCount(std::int64_t n, const std::string & where)
{
  if (n < 1 || n > kMaxDetectorCandidates)
    CANOPY_THROW(where << ": " << n << " is outside 1.." << kMaxDetectorCandidates);
}

const nlohmann::json &
Need(const nlohmann::json & object, const char * key, const std::string & where)
{
  return RequireJsonField(object, key, where);
}

double
Number(const nlohmann::json & object, const char * key, const std::string & where)
{
  const auto & v = Need(object, key, where);
  if (!v.is_number() || !std::isfinite(v.get<double>()))
    CANOPY_THROW(where << ": \"" << key << "\" must be a finite number");
  return v.get<double>();
}

int
Integer(const nlohmann::json & object, const char * key, const std::string & where)
{
  const auto & v = Need(object, key, where);
  if (!v.is_number_integer() || v.get<std::int64_t>() < INT32_MIN || v.get<std::int64_t>() > INT32_MAX)
    CANOPY_THROW(where << ": \"" << key << "\" must be an integer");
  return static_cast<int>(v.get<std::int64_t>());
}

Vec3d
Triple(const nlohmann::json & v, const std::string & where)
{
  if (!v.is_array() || v.size() != 3)
    CANOPY_THROW(where << " must be an array of 3 numbers");
  Vec3d out;
  for (int k = 0; k < 3; ++k)
  {
    if (!v[k].is_number() || !std::isfinite(v[k].get<double>()))
      CANOPY_THROW(where << " must hold 3 finite numbers");
    out[k] = v[k].get<double>();
  }
  return out;
}

const nlohmann::json &
Array(const nlohmann::json & object, const char * key, const std::string & where)
{
  const auto & v = Need(object, key, where);
  if (!v.is_array() || v.empty())
    CANOPY_THROW(where << ": \"" << key << "\" must be a non-empty array");
  return v;
}

std::string
StructureWhere(const std::string & where, std::size_t index, const std::string & name)
{
  return where + ": structures[" + std::to_string(index) + "]" + (name.empty() ? "" : " (" + name + ")");
}
} // namespace

void
ValidateDetectorModel(const DetectorModel & model, const std::string & where)
{
  if (model.structures.empty())
    CANOPY_THROW(where << ": the detector has no structure");
  std::set<std::string> names;
  std::set<int>         labels;
  for (std::size_t i = 0; i < model.structures.size(); ++i)
  {
    const StructureDetector & d = model.structures[i];
    const std::string         at = StructureWhere(where, i, d.name);
    if (d.name.empty())
      CANOPY_THROW(at << ": \"name\" is empty");
    if (!names.insert(d.name).second)
      CANOPY_THROW(at << ": a second structure of this name");
    if (d.label == 0 || !labels.insert(d.label).second)
      CANOPY_THROW(at << ": \"label\" must be non-zero and differ from the other structures' (" << d.label << ")");
    if (!(d.threshold >= 0.0 && d.threshold <= 1.0))
      CANOPY_THROW(at << ": \"threshold\" must be in [0, 1]");
    d.position.tree.Validate(at + ": position PBT");
    if (d.position.tree.featureFamily != PBTFeatureFamily::Haar)
      CANOPY_THROW(at << ": the position PBT must read Haar features");
    d.orientation.Validate(at + ": orientation PBT");
    d.scale.Validate(at + ": scale PBT");
    if (d.orientation.featureFamily != PBTFeatureFamily::Steerable ||
        d.scale.featureFamily != PBTFeatureFamily::Steerable)
      CANOPY_THROW(at << ": the orientation and scale PBTs must read steerable features");
    const auto & pyramid = model.structures.front().orientation.steerable.pyramid;
    for (const PBTModel * m : { &d.orientation, &d.scale })
      if (m->steerable.pyramid.levelSpacingsMm != pyramid.levelSpacingsMm ||
          m->steerable.pyramid.levelFactors != pyramid.levelFactors)
        CANOPY_THROW(at << ": every steerable PBT of a detector must use the same pyramid levels");
    nlohmann::json mine, first;
    ToJson(d.position.normalization, mine);
    ToJson(model.structures.front().position.normalization, first);
    if (mine != first)
      CANOPY_THROW(at << ": every structure of a detector must use the same intensity normalisation");
    CheckCount(d.candidates, at + ": position \"candidates\"");
    CheckCount(d.orientationKeep, at + ": orientation \"keep\"");
    CheckCount(d.aggregateCount, at + ": scale \"keep\"");
    if (d.orientations.empty() || d.sizesMm.empty())
      CANOPY_THROW(at << ": the orientation and size hypothesis lists must not be empty");
    if (static_cast<std::int64_t>(d.candidates) * static_cast<std::int64_t>(d.orientations.size()) >
          kMaxDetectorHypotheses ||
        static_cast<std::int64_t>(d.orientationKeep) * static_cast<std::int64_t>(d.sizesMm.size()) >
          kMaxDetectorHypotheses)
      CANOPY_THROW(at << ": more than " << kMaxDetectorHypotheses << " hypotheses per stage");
    for (std::size_t k = 0; k < d.orientations.size(); ++k)
      CheckFrame(d.orientations[k], at + ": orientation \"hypotheses\"[" + std::to_string(k) + "]");
    CheckSize(d.meanSizeMm, at + ": orientation \"sizeMm\"");
    for (std::size_t k = 0; k < d.sizesMm.size(); ++k)
      CheckSize(d.sizesMm[k], at + ": scale \"sizesMm\"[" + std::to_string(k) + "]");
    if (!(std::isfinite(d.gridSpan) && d.gridSpan > 0.0 && d.gridSpan <= 10.0))
      CANOPY_THROW(at << ": \"gridSpan\" must be in (0, 10]");
    if (!(std::isfinite(d.clusterMm) && d.clusterMm >= 0.0))
      CANOPY_THROW(at << ": aggregate \"clusterMm\" must be finite and >= 0");
  }
  std::vector<NetworkArc> arcs;
  for (std::size_t i = 0; i < model.network.size(); ++i)
  {
    const SpatialPrior & p = model.network[i];
    const std::string    at = where + ": network[" + std::to_string(i) + "] (" + p.child + ")";
    ValidateSpatialPrior(p, at);
    for (const std::string & name : { p.child, p.parent })
      if (!names.count(name))
        CANOPY_THROW(at << ": structure '" << name << "' is not a structure of the detector");
    arcs.push_back({ p.child, p.parent });
  }
  std::vector<std::string> ordered;
  for (const auto & d : model.structures)
    ordered.push_back(d.name);
  NetworkOrder(ordered, arcs, where + ": network"); // two parents, cycles
}

nlohmann::json
DetectorModelToJson(const DetectorModel & model)
{
  nlohmann::json network = nlohmann::json::array();
  for (const auto & prior : model.network)
    network.push_back(SpatialPriorToJson(prior));
  nlohmann::json structures = nlohmann::json::array();
  for (const auto & d : model.structures)
  {
    nlohmann::json orientation, scale;
    PBTModelToJson(d.orientation, orientation["pbt"]);
    orientation["hypotheses"] = d.orientations;
    orientation["keep"] = d.orientationKeep;
    orientation["sizeMm"] = d.meanSizeMm;
    PBTModelToJson(d.scale, scale["pbt"]);
    scale["sizesMm"] = d.sizesMm;
    scale["keep"] = d.aggregateCount;
    structures.push_back(
      { { "name", d.name },
        { "label", d.label },
        { "threshold", d.threshold },
        { "gridSpan", d.gridSpan },
        { "position", { { "model", PBTModelFileToJson(d.position) }, { "candidates", d.candidates } } },
        { "orientation", orientation },
        { "scale", scale },
        { "aggregate", { { "clusterMm", d.clusterMm } } },
        { "training", d.training } });
  }
  return { { "format", kDetectorFormatName },  { "version", kDetectorFormatVersion }, { "kind", "msl-detector" },
           { "provenance", model.provenance }, { "structures", structures },          { "network", network } };
}

DetectorModel
DetectorModelFromJson(const nlohmann::json & doc, const std::string & where)
{
  if (!doc.is_object())
    CANOPY_THROW(where << ": not a Canopy detector (the document is not a JSON object)");
  const std::string format = OptionalJsonString(doc, "format", where);
  if (format == "canopy-model" || format == "canopy-forest")
    CANOPY_THROW(where << ": is a " << (format == "canopy-model" ? "PBT" : "forest")
                       << " model; this command needs a detector (from train-detector)");
  if (format != kDetectorFormatName)
    CANOPY_THROW(where << ": not a Canopy detector (\"format\" is not \"" << kDetectorFormatName << "\")");
  const int version = Integer(doc, "version", where);
  if (version != 1 && version != kDetectorFormatVersion)
    CANOPY_THROW(where << ": detector format version " << version
                       << " is not supported (this Canopy reads versions 1 to " << kDetectorFormatVersion << ")");
  DetectorModel model;
  const auto &  provenance = doc.contains("provenance") ? doc["provenance"] : nlohmann::json::object();
  if (!provenance.is_object())
    CANOPY_THROW(where << ": \"provenance\" must be an object");
  model.provenance = provenance;
  const auto & list = Array(doc, "structures", where);
  for (std::size_t i = 0; i < list.size(); ++i)
  {
    const auto &      s = list[i];
    StructureDetector d;
    std::string       at = StructureWhere(where, i, "");
    const auto &      name = Need(s, "name", at);
    if (!name.is_string())
      CANOPY_THROW(at << ": \"name\" must be a string");
    d.name = name.get<std::string>();
    at = StructureWhere(where, i, d.name);
    d.label = Integer(s, "label", at);
    d.threshold = Number(s, "threshold", at);
    d.gridSpan = Number(s, "gridSpan", at);
    if (s.contains("training"))
      d.training = s["training"];

    const auto & position = Need(s, "position", at);
    d.position = PBTModelFileFromJson(Need(position, "model", at + ": \"position\""), at + ": \"position\".\"model\"");
    d.candidates = Integer(position, "candidates", at + ": \"position\"");

    const std::string o = at + ": \"orientation\"";
    const auto &      orientation = Need(s, "orientation", at);
    d.orientation = PBTModelFromJson(Need(orientation, "pbt", o), o + ".\"pbt\"");
    d.orientationKeep = Integer(orientation, "keep", o);
    d.meanSizeMm = Triple(Need(orientation, "sizeMm", o), o + ".\"sizeMm\"");
    const auto & frames = Array(orientation, "hypotheses", o);
    for (std::size_t k = 0; k < frames.size(); ++k)
    {
      const std::string h = o + ".\"hypotheses\"[" + std::to_string(k) + "]";
      if (!frames[k].is_array() || frames[k].size() != 3)
        CANOPY_THROW(h << " must be 3 rows of 3 numbers");
      Frame f;
      for (int a = 0; a < 3; ++a)
        f[a] = Triple(frames[k][a], h + "[" + std::to_string(a) + "]");
      d.orientations.push_back(f);
    }

    const std::string c = at + ": \"scale\"";
    const auto &      scale = Need(s, "scale", at);
    d.scale = PBTModelFromJson(Need(scale, "pbt", c), c + ".\"pbt\"");
    d.aggregateCount = Integer(scale, "keep", c);
    const auto & sizes = Array(scale, "sizesMm", c);
    for (std::size_t k = 0; k < sizes.size(); ++k)
      d.sizesMm.push_back(Triple(sizes[k], c + ".\"sizesMm\"[" + std::to_string(k) + "]"));
    d.clusterMm = Number(Need(s, "aggregate", at), "clusterMm", at + ": \"aggregate\"");
    model.structures.push_back(std::move(d));
  }
  if (version >= 2) // version 1 had no network: every structure is a root
  {
    const auto & network = Need(doc, "network", where);
    if (!network.is_array())
      CANOPY_THROW(where << ": \"network\" must be an array");
    for (std::size_t i = 0; i < network.size(); ++i)
      model.network.push_back(SpatialPriorFromJson(network[i], where + ": network[" + std::to_string(i) + "]"));
  }
  ValidateDetectorModel(model, where);
  return model;
}

void
SaveDetectorModel(const DetectorModel & model, const std::string & path)
{
  ValidateDetectorModel(model, path);
  const std::string text = DetectorModelToJson(model).dump(1);
  WriteFileAtomically(path, [&text](std::ostream & out) { out << text << '\n'; });
}

DetectorModel
LoadDetectorModel(const std::string & path)
{
  return DetectorModelFromJson(ReadJsonFile(path, "the detector model"), path);
}

} // namespace canopy
