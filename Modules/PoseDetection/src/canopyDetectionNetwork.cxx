// The hierarchical detection network's description, order and spatial priors (canopyDetectionNetwork.h).
#include "canopyDetectionNetwork.h"

#include "canopy/Errors.h"
#include "canopy/JsonField.h"
#include "canopyNetworkMath.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>

namespace canopy
{
using namespace networkdetail;

namespace
{

/** Mean and sample covariance (n - 1) of vectors. */
GaussianPrior3
Gaussian(const std::vector<Vector3d> & samples)
{
  Vector3d mean = Vector3d::Zero();
  for (const auto & s : samples)
    mean += s;
  mean /= static_cast<double>(samples.size());
  Eigen::Matrix3d covariance = Eigen::Matrix3d::Zero();
  for (const auto & s : samples)
    covariance += (s - mean) * (s - mean).transpose();
  covariance /= static_cast<double>(samples.size() - 1);
  return { ToVec(mean), ToRows(covariance) };
}

void
CheckCovariance(const std::array<Vec3d, 3> & c, const std::string & where)
{
  const Eigen::Matrix3d m = ToEigen(c);
  if (!m.allFinite())
    CANOPY_THROW(where << ": the covariance must be finite");
  const double scale = std::max(1e-12, m.cwiseAbs().maxCoeff());
  if (!((m - m.transpose()).cwiseAbs().maxCoeff() <= 1e-9 * scale))
    CANOPY_THROW(where << ": the covariance must be symmetric");
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eigen(m, Eigen::EigenvaluesOnly);
  if (!(eigen.eigenvalues().minCoeff() >= -1e-9 * scale))
    CANOPY_THROW(where << ": the covariance must be positive semi-definite");
}

void
CheckFinite(const Vec3d & v, const std::string & where)
{
  for (double x : v)
    if (!std::isfinite(x))
      CANOPY_THROW(where << ": must hold 3 finite numbers");
}

Vec3d
TripleFrom(const nlohmann::json & v, const std::string & where)
{
  if (!v.is_array() || v.size() != 3)
    CANOPY_THROW(where << " must be an array of 3 numbers");
  Vec3d out;
  for (int k = 0; k < 3; ++k)
  {
    if (!v[k].is_number())
      CANOPY_THROW(where << " must hold 3 finite numbers");
    out[k] = v[k].get<double>();
    if (!std::isfinite(out[k]))
      CANOPY_THROW(where << " must hold 3 finite numbers");
  }
  return out;
}

std::array<Vec3d, 3>
MatrixFrom(const nlohmann::json & v, const std::string & where)
{
  if (!v.is_array() || v.size() != 3)
    CANOPY_THROW(where << " must be 3 rows of 3 numbers");
  std::array<Vec3d, 3> out;
  for (int r = 0; r < 3; ++r)
    out[r] = TripleFrom(v[r], where + "[" + std::to_string(r) + "]");
  return out;
}

double
NumberFrom(const nlohmann::json & object, const char * key, const std::string & where)
{
  const auto & v = RequireJsonField(object, key, where);
  if (!v.is_number() || !std::isfinite(v.get<double>()))
    CANOPY_THROW(where << ": \"" << key << "\" must be a finite number");
  return v.get<double>();
}

GaussianPrior3
GaussianFrom(const nlohmann::json & object, const char * key, const std::string & where)
{
  const std::string at = where + ": \"" + key + "\"";
  const auto &      g = RequireJsonField(object, key, where);
  return { TripleFrom(RequireJsonField(g, "mean", at), at + ".\"mean\""),
           MatrixFrom(RequireJsonField(g, "covariance", at), at + ".\"covariance\"") };
}
} // namespace

std::vector<NetworkArc>
DetectionNetworkFromJson(const nlohmann::json &           document,
                         const std::string &              where,
                         const std::vector<std::string> & trained)
{
  if (!document.is_object() || !document.contains("structures") || !document["structures"].is_array())
    CANOPY_THROW(where << ": a detection network must be {\"structures\": [{\"name\": ..., \"parent\": ...}, ...]}");
  const auto &                       list = document["structures"];
  std::vector<std::string>           names;
  std::map<std::string, std::string> parents;
  for (std::size_t i = 0; i < list.size(); ++i)
  {
    const std::string at = where + ": structures[" + std::to_string(i) + "]";
    if (!list[i].is_object() || !list[i].contains("name") || !list[i]["name"].is_string() ||
        list[i]["name"].get<std::string>().empty())
      CANOPY_THROW(at << ": needs a non-empty string \"name\"");
    const std::string name = list[i]["name"].get<std::string>();
    const std::string parent = OptionalJsonString(list[i], "parent", at + " (" + name + ")");
    if (parents.count(name))
      CANOPY_THROW(where << ": structure '" << name << "' is listed twice");
    if (std::find(trained.begin(), trained.end(), name) == trained.end())
      CANOPY_THROW(where << ": structure '" << name << "' is not trained (give it with --structure NAME=LABEL)");
    names.push_back(name);
    parents[name] = parent;
  }
  std::vector<NetworkArc> arcs;
  for (const auto & name : names)
  {
    const std::string & parent = parents[name];
    if (parent.empty())
      continue;
    if (!parents.count(parent))
      CANOPY_THROW(where << ": structure '" << name << "' has parent '" << parent
                         << "', which is not a structure of the network");
    arcs.push_back({ name, parent });
  }
  NetworkOrder(trained, arcs, where); // cycles
  return arcs;
}

std::vector<NetworkArc>
ReadDetectionNetwork(const std::string & path, const std::vector<std::string> & trained)
{
  std::error_code error;
  if (!std::filesystem::exists(path, error))
    CANOPY_THROW(path << ": cannot open the detection network (no such file)");
  const std::string text = ReadModelFileText(path);
  if (text.empty())
    CANOPY_THROW(path << ": the detection network file is empty");
  return DetectionNetworkFromJson(ParseJsonDocument(text, path), path, trained);
}

std::vector<int>
NetworkOrder(const std::vector<std::string> & names, const std::vector<NetworkArc> & arcs, const std::string & where)
{
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  const int n = static_cast<int>(names.size());
  auto      index = [&](const std::string & name)
  {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
      CANOPY_THROW(where << ": the network names structure '" << name << "', which the detector does not have");
    return static_cast<int>(it - names.begin());
  };
  Graph            graph(n);
  std::vector<int> parent(n, -1);
  for (const auto & arc : arcs)
  {
    const int c = index(arc.child), p = index(arc.parent);
    if (parent[c] >= 0)
      CANOPY_THROW(where << ": structure '" << arc.child << "' has two parents ('" << names[parent[c]] << "' and '"
                         << arc.parent << "'); a structure has at most one");
    parent[c] = p;
    boost::add_edge(p, c, graph);
  }
  std::vector<Graph::vertex_descriptor> reversed;
  try
  {
    boost::topological_sort(graph, std::back_inserter(reversed));
  }
  catch (const boost::not_a_dag &)
  {
    // Each structure has one parent at most: walking up from a structure on a cycle returns to it.
    for (int start = 0; start < n; ++start)
    {
      int v = parent[start];
      for (int steps = 0; v >= 0 && v != start && steps < n; ++steps)
        v = parent[v];
      if (v == start)
      {
        std::string cycle = names[start];
        for (int u = parent[start]; u != start; u = parent[u])
          cycle = names[u] + " -> " + cycle;
        CANOPY_THROW(where << ": the network has a cycle through structure '" << names[start] << "' (" << names[start]
                           << " -> " << cycle << "; parent -> child)");
      }
    }
    CANOPY_THROW(where << ": the network has a cycle");
  }
  return std::vector<int>(reversed.rbegin(), reversed.rend());
}

SpatialPrior
EstimateSpatialPrior(const std::vector<StructurePose> & parents, const std::vector<StructurePose> & children)
{
  if (parents.size() != children.size() || parents.size() < 2)
    CANOPY_THROW("EstimateSpatialPrior: needs at least 2 paired poses (got " << parents.size() << " and "
                                                                             << children.size() << ")");
  // Parent frames sign-aligned to the first subject's (the canonical convention can flip a pair of
  // axes between subjects near 45 degrees between LPS axes, which would flip the offsets too); their
  // mean is the reference that detected parent frames are aligned to before predicting.
  Eigen::Matrix3d parentSum = Eigen::Matrix3d::Zero();
  for (const auto & p : parents)
    parentSum += SignAligned(ToEigen(p.axes), ToEigen(parents.front().axes));
  const Eigen::Matrix3d reference = NearestRotation(parentSum);
  // Offsets and relative axes in the parent's frame, or in its long-axis frame: the one whose offsets
  // vary less (trace of their covariance) is kept.
  struct InFrame
  {
    std::vector<Vector3d>        offsets;
    std::vector<Eigen::Matrix3d> relatives;
    double                       spread = 0.0;
  };
  auto express = [&](bool longAxisOnly)
  {
    InFrame f;
    for (std::size_t i = 0; i < parents.size(); ++i)
    {
      const Eigen::Matrix3d ap = PriorFrame(ToEigen(parents[i].axes), reference, longAxisOnly);
      const Eigen::Matrix3d ac = ToEigen(children[i].axes);
      f.offsets.push_back(ap * (ToEigen(children[i].centerMm) - ToEigen(parents[i].centerMm)));
      f.relatives.push_back(f.relatives.empty() ? Eigen::Matrix3d(ac * ap.transpose())
                                                : SignAligned(ac * ap.transpose(), f.relatives.front()));
    }
    const GaussianPrior3 g = Gaussian(f.offsets);
    f.spread = g.covariance[0][0] + g.covariance[1][1] + g.covariance[2][2];
    return f;
  };
  const InFrame full = express(false), longAxis = express(true);
  // Ties (and near-ties, within rounding) keep the whole parent frame.
  const bool                           useLongAxis = longAxis.spread < full.spread * (1.0 - 1e-9);
  const std::vector<Vector3d> &        offsets = useLongAxis ? longAxis.offsets : full.offsets;
  const std::vector<Eigen::Matrix3d> & relatives = useLongAxis ? longAxis.relatives : full.relatives;
  std::vector<Vector3d>                ratios;
  for (std::size_t i = 0; i < parents.size(); ++i)
    ratios.push_back(ToEigen(children[i].sizeMm).cwiseQuotient(ToEigen(parents[i].sizeMm)));
  SpatialPrior prior;
  prior.subjects = static_cast<int>(parents.size());
  prior.parentAxesReference = ToRows(reference);
  prior.frame = useLongAxis ? "parentLongAxis" : "parent";
  prior.offsetMm = Gaussian(offsets);
  prior.sizeRatio = Gaussian(ratios);
  Eigen::Matrix3d sum = Eigen::Matrix3d::Zero();
  for (const auto & r : relatives)
    sum += r;
  const Eigen::Matrix3d mean = NearestRotation(sum);
  prior.relativeAxes = ToRows(mean);
  std::vector<Vector3d> turns;
  for (const auto & r : relatives)
  {
    const Eigen::AngleAxisd turn(Eigen::Matrix3d(mean.transpose() * r));
    turns.push_back(turn.angle() * turn.axis());
  }
  // The turns' covariance about zero (the mean rotation), as the offsets' is about their mean.
  Eigen::Matrix3d covariance = Eigen::Matrix3d::Zero();
  for (const auto & t : turns)
    covariance += t * t.transpose();
  prior.rotationCovariance = ToRows(covariance / static_cast<double>(turns.size() - 1));
  return prior;
}

PredictedCentre
PredictCentre(const SpatialPrior & prior, const StructurePose & parent)
{
  const Eigen::Matrix3d ap =
    PriorFrame(ToEigen(parent.axes), ToEigen(prior.parentAxesReference), prior.frame == "parentLongAxis");
  PredictedCentre out;
  out.centerMm = ToVec(ToEigen(parent.centerMm) + ap.transpose() * ToEigen(prior.offsetMm.mean));
  out.covariance = ToRows(ap.transpose() * ToEigen(prior.offsetMm.covariance) * ap);
  return out;
}

StructurePose
PredictPose(const SpatialPrior & prior, const StructurePose & parent)
{
  StructurePose out;
  out.centerMm = PredictCentre(prior, parent).centerMm;
  const Eigen::Matrix3d ap =
    PriorFrame(ToEigen(parent.axes), ToEigen(prior.parentAxesReference), prior.frame == "parentLongAxis");
  out.axes = CanonicalAxes(ToRows(NearestRotation(ToEigen(prior.relativeAxes) * ap)));
  for (int a = 0; a < 3; ++a)
    out.sizeMm[a] = prior.sizeRatio.mean[a] * parent.sizeMm[a];
  return out;
}

void
ValidateSpatialPrior(const SpatialPrior & p, const std::string & where)
{
  if (p.child.empty() || p.parent.empty())
    CANOPY_THROW(where << ": \"structure\" and \"parent\" must be non-empty");
  if (p.child == p.parent)
    CANOPY_THROW(where << ": structure '" << p.child << "' is its own parent");
  if (p.subjects < 2)
    CANOPY_THROW(where << ": \"subjects\" must be >= 2 (" << p.subjects << ")");
  CheckFinite(p.offsetMm.mean, where + ": \"offsetMm\".\"mean\"");
  CheckCovariance(p.offsetMm.covariance, where + ": \"offsetMm\".\"covariance\"");
  CheckFinite(p.sizeRatio.mean, where + ": \"sizeRatio\".\"mean\"");
  for (double r : p.sizeRatio.mean)
    if (!(r > 0.0))
      CANOPY_THROW(where << ": \"sizeRatio\".\"mean\" must be > 0");
  CheckCovariance(p.sizeRatio.covariance, where + ": \"sizeRatio\".\"covariance\"");
  CheckCovariance(p.rotationCovariance, where + ": \"relativeAxes\".\"rotationCovariance\"");
  const Eigen::Matrix3d r = ToEigen(p.relativeAxes);
  if (!r.allFinite() || !((r * r.transpose() - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() <= 1e-3) ||
      !(r.determinant() > 0.0))
    CANOPY_THROW(where << ": \"relativeAxes\".\"mean\" must be a rotation (orthonormal, right-handed rows)");
  const Eigen::Matrix3d f = ToEigen(p.parentAxesReference);
  if (!f.allFinite() || !((f * f.transpose() - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff() <= 1e-3) ||
      !(f.determinant() > 0.0))
    CANOPY_THROW(where << ": \"parentAxesReference\" must be a rotation (orthonormal, right-handed rows)");
  if (p.frame != "parent" && p.frame != "parentLongAxis")
    CANOPY_THROW(where << ": \"frame\" must be \"parent\" or \"parentLongAxis\"");
  if (!(std::isfinite(p.sigmas) && p.sigmas > 0.0 && p.sigmas <= 10.0))
    CANOPY_THROW(where << ": \"search\".\"sigmas\" must be in (0, 10]");
  if (!(std::isfinite(p.marginMm) && p.marginMm >= 0.0 && p.marginMm <= 1000.0))
    CANOPY_THROW(where << ": \"search\".\"marginMm\" must be in [0, 1000]");
}

nlohmann::json
SpatialPriorToJson(const SpatialPrior & p)
{
  return { { "structure", p.child },
           { "parent", p.parent },
           { "subjects", p.subjects },
           { "parentAxesReference", p.parentAxesReference },
           { "frame", p.frame },
           { "offsetMm", { { "mean", p.offsetMm.mean }, { "covariance", p.offsetMm.covariance } } },
           { "relativeAxes", { { "mean", p.relativeAxes }, { "rotationCovariance", p.rotationCovariance } } },
           { "sizeRatio", { { "mean", p.sizeRatio.mean }, { "covariance", p.sizeRatio.covariance } } },
           { "search", { { "sigmas", p.sigmas }, { "marginMm", p.marginMm } } } };
}

SpatialPrior
SpatialPriorFromJson(const nlohmann::json & e, const std::string & where)
{
  SpatialPrior p;
  p.child = OptionalJsonString(e, "structure", where);
  const std::string at = where + (p.child.empty() ? "" : " (" + p.child + ")");
  p.parent = OptionalJsonString(e, "parent", at);
  const auto & subjects = RequireJsonField(e, "subjects", at);
  if (!subjects.is_number_integer() || subjects.get<std::int64_t>() < 2 || subjects.get<std::int64_t>() > 1000000000)
    CANOPY_THROW(at << ": \"subjects\" must be an integer >= 2");
  p.subjects = static_cast<int>(subjects.get<std::int64_t>());
  p.parentAxesReference = MatrixFrom(RequireJsonField(e, "parentAxesReference", at), at + ": \"parentAxesReference\"");
  p.frame = OptionalJsonString(e, "frame", at);
  p.offsetMm = GaussianFrom(e, "offsetMm", at);
  p.sizeRatio = GaussianFrom(e, "sizeRatio", at);
  const std::string r = at + ": \"relativeAxes\"";
  const auto &      relative = RequireJsonField(e, "relativeAxes", at);
  p.relativeAxes = MatrixFrom(RequireJsonField(relative, "mean", r), r + ".\"mean\"");
  p.rotationCovariance = MatrixFrom(RequireJsonField(relative, "rotationCovariance", r), r + ".\"rotationCovariance\"");
  const auto & search = RequireJsonField(e, "search", at);
  p.sigmas = NumberFrom(search, "sigmas", at + ": \"search\"");
  p.marginMm = NumberFrom(search, "marginMm", at + ": \"search\"");
  ValidateSpatialPrior(p, at);
  return p;
}

} // namespace canopy
