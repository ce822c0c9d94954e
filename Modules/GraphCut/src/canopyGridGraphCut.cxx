// Graph construction (banded), Boost.Graph max-flow and the energy of a labelling.
//
// Which voxels are nodes: the uncertain ones (low < p < high) and those on the thresholded map's
// surface (a face neighbour with the other label), dilated by the margin. The surface term matters
// because a sharp map (0 next to 1) has no uncertain voxels, yet its jagged surface and its small
// confident islands are what the regulariser should change; fixing them would make it a no-op.
//
// Why the banded graph solves the full problem, and when it does not. Voxels outside the graph keep
// their thresholded label; each link from a node u to a fixed voxel w is folded into u's t-links
// (cost w_k if u takes the label w does not have). The banded problem is therefore exactly the full
// energy E restricted to labellings that agree with the fixed labels, so (1) its minimum is >= the
// full minimum, and (2) it is a full minimiser whenever some full minimiser labels every fixed voxel
// with its threshold label. When does the full optimum flip confident voxels? Flipping a region A of
// voxels with p >= high (or <= low) costs sum (2p - 1) V >= (2 high - 1) vol(A) and saves at most
// lambda * Area(dA), so only regions thinner than about 2 lambda / (2 high - 1) mm flip (2.1 mm with
// the defaults; balls below a radius of 3 lambda / (2 high - 1), 3.1 mm): islands, slivers, gaps,
// and the confident side of the surface next to the band, all within 3 lambda / (2 high - 1) mm of
// a thresholded surface. A margin of at least that many mm (default 3 voxels, 3 mm at 1 mm spacing)
// keeps them in the graph; where it does not, the result is an approximation pinned to the graph's
// edge. Ties: both graphs return the largest minimiser of their own problem, so where the
// full problem has several minimisers the labels may differ on tied voxels at equal energy.
// borderCuts counts node-to-fixed links the result cuts: > 0 says the surface reached the graph's
// edge (raise Margin); 0 is the expected case, not a proof of exactness.
#include "canopyGridGraphCut.h"

#include "canopy/Errors.h"

#include <boost/graph/boykov_kolmogorov_max_flow.hpp>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/property_map/property_map.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace canopy
{
namespace
{
constexpr std::uint32_t kNoNode = std::numeric_limits<std::uint32_t>::max();

double
Seconds(std::chrono::steady_clock::time_point t0)
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

float
Clamp01(float v)
{
  return std::min(1.0f, std::max(0.0f, v));
}

void
CheckParameters(const GridGraphCutParameters & p)
{
  if (!(p.lambda >= 0.0) || !std::isfinite(p.lambda))
    CANOPY_THROW("graph cut: Lambda must be finite and >= 0 (got " << p.lambda << ")");
  if (p.neighborhood != 6 && p.neighborhood != 26)
    CANOPY_THROW("graph cut: Neighborhood must be 6 or 26 (got " << p.neighborhood << ")");
  if (!(p.uncertainLow >= 0.0f && p.uncertainLow < 0.5f && p.uncertainHigh > 0.5f && p.uncertainHigh <= 1.0f))
    CANOPY_THROW("graph cut: need 0 <= UncertainLow < 0.5 < UncertainHigh <= 1 (got " << p.uncertainLow << ", "
                                                                                      << p.uncertainHigh << ")");
  if (p.margin < 0)
    CANOPY_THROW("graph cut: Margin must be >= 0 voxels (got " << p.margin << ")");
}

void
CheckGrid(const int size[3], const double spacing[3])
{
  for (int d = 0; d < 3; ++d)
  {
    if (size[d] <= 0)
      CANOPY_THROW("graph cut: the probability image is empty (size " << size[0] << "x" << size[1] << "x" << size[2]
                                                                      << ")");
    if (!(spacing[d] > 0.0) || !std::isfinite(spacing[d]))
      CANOPY_THROW("graph cut: spacing must be positive and finite (axis " << d << ": " << spacing[d] << ")");
  }
  const double voxels = double(size[0]) * size[1] * size[2];
  if (voxels > double(kNoNode) - 3)
    CANOPY_THROW("graph cut: " << voxels << " voxels exceed the 32-bit node indices of the graph");
}

/** All offsets of the neighbourhood (both signs) with their weights. */
void
FullOffsets(const NeighborWeights & w, std::vector<std::array<int, 3>> & offsets, std::vector<double> & weights)
{
  offsets.clear();
  weights.clear();
  for (std::size_t k = 0; k < w.offsets.size(); ++k)
  {
    const auto & o = w.offsets[k];
    offsets.push_back(o);
    offsets.push_back({ -o[0], -o[1], -o[2] });
    weights.push_back(w.weights[k]);
    weights.push_back(w.weights[k]);
  }
}

/** Marks voxels within `margin` voxels (per axis, a cube) of a marked voxel; separable. */
void
DilateBox(std::vector<std::uint8_t> & mask, const int size[3], int margin)
{
  if (margin == 0)
    return;
  const std::int64_t        stride[3] = { 1, size[0], std::int64_t(size[0]) * size[1] };
  std::vector<std::uint8_t> line;
  for (int axis = 0; axis < 3; ++axis)
  {
    const int n = size[axis];
    line.resize(n);
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    for (int j = 0; j < size[a2]; ++j)
      for (int i = 0; i < size[a1]; ++i)
      {
        const std::int64_t base = i * stride[a1] + j * stride[a2];
        int                last = -1 - margin; // last marked position seen going forward
        for (int t = 0; t < n; ++t)
        {
          if (mask[base + t * stride[axis]])
            last = t;
          line[t] = (t - last <= margin);
        }
        last = n + margin; // going backward
        for (int t = n - 1; t >= 0; --t)
        {
          if (mask[base + t * stride[axis]])
            last = t;
          line[t] = line[t] || (last - t <= margin);
        }
        for (int t = 0; t < n; ++t)
          mask[base + t * stride[axis]] = line[t];
      }
  }
}
} // namespace

NeighborWeights
ComputeNeighborWeights(const double spacing[3], int neighborhood, double lambda)
{
  NeighborWeights result;
  const double    volume = spacing[0] * spacing[1] * spacing[2];
  if (neighborhood == 6)
  {
    result.offsets = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
    for (int d = 0; d < 3; ++d)
      result.weights.push_back(lambda * volume / spacing[d]); // the shared face's area
    return result;
  }
  // 13 unoriented directions: the first non-zero of (dz, dy, dx) positive.
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx)
        if (dz > 0 || (dz == 0 && (dy > 0 || (dy == 0 && dx > 0))))
          result.offsets.push_back({ dx, dy, dz });
  const std::size_t   K = result.offsets.size();
  std::vector<double> unit(3 * K), length(K);
  for (std::size_t k = 0; k < K; ++k)
  {
    double e[3], n2 = 0;
    for (int d = 0; d < 3; ++d)
    {
      e[d] = result.offsets[k][d] * spacing[d];
      n2 += e[d] * e[d];
    }
    length[k] = std::sqrt(n2);
    for (int d = 0; d < 3; ++d)
      unit[3 * k + d] = e[d] / length[k];
  }
  // Solid angles of the +-e_k Voronoi cells on the sphere, by a deterministic Fibonacci lattice
  // (200k points: relative error ~1e-3, far below the metrication error of 26 neighbours).
  const int                 M = 200000;
  std::vector<std::int64_t> count(K, 0);
  const double              golden = M_PI * (3.0 - std::sqrt(5.0));
  for (int i = 0; i < M; ++i)
  {
    const double z = 1.0 - (2.0 * i + 1.0) / M, r = std::sqrt(1.0 - z * z), phi = golden * i;
    const double u[3] = { r * std::cos(phi), r * std::sin(phi), z };
    std::size_t  best = 0;
    double       bestDot = -1;
    for (std::size_t k = 0; k < K; ++k)
    {
      const double dot = std::abs(u[0] * unit[3 * k] + u[1] * unit[3 * k + 1] + u[2] * unit[3 * k + 2]);
      if (dot > bestDot)
      {
        bestDot = dot;
        best = k;
      }
    }
    ++count[best];
  }
  for (std::size_t k = 0; k < K; ++k)
  {
    const double dPhi = 2.0 * M_PI * double(count[k]) / M; // hemisphere share
    result.weights.push_back(lambda * dPhi * volume / (M_PI * length[k]));
  }
  return result;
}

double
PlaneCutCostPerArea(const NeighborWeights & weights, const double spacing[3], const double normal[3])
{
  const double volume = spacing[0] * spacing[1] * spacing[2];
  double       cost = 0;
  for (std::size_t k = 0; k < weights.offsets.size(); ++k)
  {
    double dot = 0;
    for (int d = 0; d < 3; ++d)
      dot += normal[d] * weights.offsets[k][d] * spacing[d];
    cost += weights.weights[k] * std::abs(dot);
  }
  return cost / volume;
}

GridGraph
BuildGridGraph(const float *                  p,
               const int                      size[3],
               const double                   spacing[3],
               const GridGraphCutParameters & parameters,
               GridGraphCutStatistics &       statistics)
{
  CheckParameters(parameters);
  CheckGrid(size, spacing);
  const auto         t0 = std::chrono::steady_clock::now();
  const int          nx = size[0], ny = size[1], nz = size[2];
  const std::int64_t N = std::int64_t(nx) * ny * nz;
  const double       volume = spacing[0] * spacing[1] * spacing[2];

  GridGraph graph;
  graph.fixedLabels.resize(N);
  std::vector<std::uint8_t> inGraph(N);
  for (std::int64_t i = 0; i < N; ++i)
  {
    const float v = Clamp01(p[i]);
    graph.fixedLabels[i] = v >= 0.5f;
    inGraph[i] = v > parameters.uncertainLow && v < parameters.uncertainHigh;
  }
  statistics.uncertain = std::count(inGraph.begin(), inGraph.end(), std::uint8_t(1));
  if (!parameters.banded)
    std::fill(inGraph.begin(), inGraph.end(), std::uint8_t(1));
  else
  {
    const std::int64_t stride[3] = { 1, nx, std::int64_t(nx) * ny };
    for (std::int64_t i = 0; i < N; ++i) // the thresholded surface joins the band
    {
      const int c[3] = { int(i % nx), int((i / nx) % ny), int(i / stride[2]) };
      for (int d = 0; d < 3; ++d)
        if (c[d] + 1 < size[d] && graph.fixedLabels[i] != graph.fixedLabels[i + stride[d]])
          inGraph[i] = inGraph[i + stride[d]] = 1;
    }
    DilateBox(inGraph, size, parameters.margin);
  }

  std::vector<std::uint32_t> nodeOf(N, kNoNode);
  graph.voxelOfNode.reserve(std::count(inGraph.begin(), inGraph.end(), std::uint8_t(1)));
  for (std::int64_t i = 0; i < N; ++i)
    if (inGraph[i])
    {
      nodeOf[i] = static_cast<std::uint32_t>(graph.voxelOfNode.size());
      graph.voxelOfNode.push_back(static_cast<std::uint32_t>(i));
    }
  inGraph.clear();
  inGraph.shrink_to_fit();
  const std::int64_t n = graph.numNodes = std::int64_t(graph.voxelOfNode.size());
  graph.sourceCap.assign(n, 0.0f);
  graph.sinkCap.assign(n, 0.0f);

  std::vector<std::array<int, 3>> offsets;
  std::vector<double>             weights;
  FullOffsets(ComputeNeighborWeights(spacing, parameters.neighborhood, parameters.lambda), offsets, weights);
  const bool withLinks = parameters.lambda > 0; // lambda = 0: t-links only, thresholding exactly
  auto       forEachNeighbor = [&](std::int64_t i, auto && body)
  {
    const int x = int(i % nx), y = int((i / nx) % ny), z = int(i / (std::int64_t(nx) * ny));
    for (std::size_t k = 0; k < offsets.size(); ++k)
    {
      const int qx = x + offsets[k][0], qy = y + offsets[k][1], qz = z + offsets[k][2];
      if (qx >= 0 && qy >= 0 && qz >= 0 && qx < nx && qy < ny && qz < nz) // the image border is not surface
        body(k, (std::int64_t(qz) * ny + qy) * nx + qx);
    }
  };
  std::size_t linkCount = 0; // exact reservation: growth by doubling would add up to 12 B per link
  for (std::int64_t u = 0; withLinks && u < n; ++u)
    forEachNeighbor(graph.voxelOfNode[u],
                    [&](std::size_t, std::int64_t j)
                    { linkCount += (j > graph.voxelOfNode[u] && nodeOf[j] != kNoNode); });
  graph.linkA.reserve(linkCount);
  graph.linkB.reserve(linkCount);
  graph.linkCap.reserve(linkCount);
  for (std::int64_t u = 0; u < n; ++u)
  {
    const std::int64_t i = graph.voxelOfNode[u];
    const double       pv = Clamp01(p[i]);
    double             cost1 = (1.0 - pv) * volume, cost0 = pv * volume; // |p - l| V
    if (withLinks)
      forEachNeighbor(i,
                      [&](std::size_t k, std::int64_t j)
                      {
                        if (nodeOf[j] != kNoNode)
                        {
                          if (j > i)
                          {
                            graph.linkA.push_back(static_cast<std::uint32_t>(u));
                            graph.linkB.push_back(nodeOf[j]);
                            graph.linkCap.push_back(static_cast<float>(weights[k]));
                          }
                        }
                        else if (graph.fixedLabels[j]) // fixed 1: cut if u takes 0
                          cost0 += weights[k];
                        else
                          cost1 += weights[k];
                      });
    // Only the difference matters; one t-link per node halves the t-link arcs.
    if (cost0 > cost1)
      graph.sourceCap[u] = static_cast<float>(cost0 - cost1);
    else
      graph.sinkCap[u] = static_cast<float>(cost1 - cost0);
  }
  std::int64_t tLinks = 0;
  for (std::int64_t u = 0; u < n; ++u)
    tLinks += (graph.sourceCap[u] > 0 || graph.sinkCap[u] > 0);

  statistics.voxels = N;
  statistics.nodes = n;
  statistics.nLinks = std::int64_t(graph.linkA.size());
  statistics.arcs = 2 * statistics.nLinks + 2 * tLinks;
  statistics.fixedForeground = statistics.fixedBackground = 0;
  for (std::int64_t i = 0; i < N; ++i)
    if (nodeOf[i] == kNoNode)
      ++(graph.fixedLabels[i] ? statistics.fixedForeground : statistics.fixedBackground);
  // Peak bytes, the largest of: building (voxel maps, node arrays, links); filling the solver's arcs
  // (links + per arc source, target, capacity, reverse index); solving (per arc target, capacity,
  // residual, reverse index; per vertex row start, predecessor, colour, distance and Boost's own time
  // and flag maps). The output labels and the input copy are not counted.
  const std::int64_t E = statistics.arcs, L = statistics.nLinks;
  const std::int64_t build = 6 * N + 12 * n + 12 * L;
  const std::int64_t fill = N + 4 * n + 12 * n + 12 * L + 16 * E + 8 * n;
  const std::int64_t solve = N + 4 * n + 16 * E + (4 + 8 + 4 + 4 + 8 + 2) * n;
  statistics.graphBytes = std::max({ build, fill, solve });
  statistics.buildSeconds = Seconds(t0);
  return graph;
}

namespace
{
struct ArcCapacity
{
  float value;
};
using CsrGraph = boost::compressed_sparse_row_graph<boost::directedS,
                                                    boost::no_property,
                                                    ArcCapacity,
                                                    boost::no_property,
                                                    std::uint32_t,
                                                    std::uint32_t>;
using CsrEdge = boost::graph_traits<CsrGraph>::edge_descriptor;

/** Reverse arcs for Boost's BK, 4 bytes per arc: the reverse of u->v lies in v's row at index rev[e]. */
struct ReverseArcMap
{
  using key_type = CsrEdge;
  using value_type = CsrEdge;
  using reference = CsrEdge;
  using category = boost::readable_property_map_tag;
  const CsrGraph *      graph;
  const std::uint32_t * rev;
};
CsrEdge
get(const ReverseArcMap & map, const CsrEdge & e)
{
  return CsrEdge(target(e, *map.graph), map.rev[e.idx]);
}
} // namespace

std::vector<std::uint8_t>
SolveBoostMaxFlow(GridGraph & graph, GridGraphCutStatistics & statistics)
{
  const auto          t0 = std::chrono::steady_clock::now();
  const std::int64_t  n = graph.numNodes;
  const std::uint32_t S = static_cast<std::uint32_t>(n), T = S + 1, V = S + 2;

  // Arcs sorted by source, written in place by a counting sort: Boost's in-place CSR constructor then
  // leaves them where they are (its histogram sort of sorted keys swaps nothing), so arc indices are
  // ours and each arc's reverse is known while filling. (Unsorted input made that constructor's
  // cycle-following permutation take 1.4-3.4x the max-flow time.)
  const std::uint64_t arcs = 2 * std::uint64_t(graph.linkA.size()) + 2 * std::uint64_t(n);
  if (arcs > std::numeric_limits<std::uint32_t>::max())
    CANOPY_THROW("graph cut: up to " << arcs
                                     << " arcs exceed the 32-bit arc indices of the graph; use a smaller "
                                        "band (Margin, UncertainLow/High), the 6-neighbourhood or a cropped image");
  std::vector<std::uint32_t> rowStart(std::size_t(V) + 1, 0);
  for (std::size_t l = 0; l < graph.linkA.size(); ++l)
  {
    ++rowStart[graph.linkA[l] + 1];
    ++rowStart[graph.linkB[l] + 1];
  }
  for (std::uint32_t u = 0; u < S; ++u)
    if (graph.sourceCap[u] > 0 || graph.sinkCap[u] > 0)
    {
      ++rowStart[u + 1];
      ++rowStart[(graph.sourceCap[u] > 0 ? S : T) + 1];
    }
  for (std::uint32_t v = 0; v < V; ++v)
    rowStart[v + 1] += rowStart[v];
  const std::size_t          E = rowStart[V];
  std::vector<std::uint32_t> next(rowStart.begin(), rowStart.end() - 1), sources(E), targets(E), rev(E);
  std::vector<ArcCapacity>   caps(E);
  auto                       addPair = [&](std::uint32_t a, std::uint32_t b, float ab, float ba)
  {
    const std::uint32_t i = next[a]++, j = next[b]++;
    sources[i] = a;
    targets[i] = b;
    caps[i].value = ab;
    rev[i] = j;
    sources[j] = b;
    targets[j] = a;
    caps[j].value = ba;
    rev[j] = i;
  };
  for (std::size_t l = 0; l < graph.linkA.size(); ++l)
    addPair(graph.linkA[l], graph.linkB[l], graph.linkCap[l], graph.linkCap[l]);
  for (std::uint32_t u = 0; u < S; ++u)
    if (graph.sourceCap[u] > 0)
      addPair(S, u, graph.sourceCap[u], 0.0f);
    else if (graph.sinkCap[u] > 0)
      addPair(u, T, graph.sinkCap[u], 0.0f);
  std::vector<std::uint32_t>().swap(next);
  for (auto * v : { &graph.linkA, &graph.linkB })
    std::vector<std::uint32_t>().swap(*v);
  std::vector<float>().swap(graph.linkCap);
  std::vector<float>().swap(graph.sourceCap);
  std::vector<float>().swap(graph.sinkCap);

  CsrGraph g(boost::construct_inplace_from_sources_and_targets, sources, targets, caps, V);
  std::vector<std::uint32_t>().swap(sources);
  std::vector<std::uint32_t>().swap(targets);
  std::vector<ArcCapacity>().swap(caps);
  for (std::uint32_t v = 0; v < V; ++v) // the arc order must be ours for rev to hold
    if (out_degree(v, g) != rowStart[v + 1] - rowStart[v] ||
        (out_degree(v, g) > 0 && out_edges(v, g).first->idx != rowStart[v]))
      CANOPY_THROW("graph cut: internal error, Boost's CSR graph reordered the arcs (row " << v << ")");
  std::vector<std::uint32_t>().swap(rowStart);
  statistics.solverSetupSeconds = Seconds(t0);

  const auto                             edgeIndex = get(boost::edge_index, g);
  const auto                             vertexIndex = get(boost::vertex_index, g);
  std::vector<float>                     residual(E);
  std::vector<CsrEdge>                   predecessor(V);
  std::vector<boost::default_color_type> color(V);
  std::vector<std::int32_t>              distance(V);
  statistics.maxFlow =
    boost::boykov_kolmogorov_max_flow(g,
                                      get(&ArcCapacity::value, g),
                                      boost::make_iterator_property_map(residual.begin(), edgeIndex),
                                      ReverseArcMap{ &g, rev.data() },
                                      boost::make_iterator_property_map(predecessor.begin(), vertexIndex),
                                      boost::make_iterator_property_map(color.begin(), vertexIndex),
                                      boost::make_iterator_property_map(distance.begin(), vertexIndex),
                                      vertexIndex,
                                      S,
                                      T);

  std::vector<std::uint8_t> labels(n);
  const auto                white = boost::color_traits<boost::default_color_type>::white();
  for (std::int64_t u = 0; u < n; ++u)
    labels[u] = color[u] != white; // not in the sink tree: the largest minimum cut's source side
  statistics.maxFlowSeconds = Seconds(t0);
  return labels;
}

double
ComputeEnergy(const float *                  p,
              const std::uint8_t *           labels,
              const int                      size[3],
              const double                   spacing[3],
              const GridGraphCutParameters & parameters,
              std::int64_t *                 borderCuts,
              const std::uint8_t *           inGraph)
{
  const int    nx = size[0], ny = size[1], nz = size[2];
  const double volume = spacing[0] * spacing[1] * spacing[2];
  const auto   w = ComputeNeighborWeights(spacing, parameters.neighborhood, parameters.lambda);
  double       data = 0, surface = 0;
  std::int64_t border = 0;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
      {
        const std::int64_t i = (std::int64_t(z) * ny + y) * nx + x;
        data += std::abs(double(Clamp01(p[i])) - labels[i]) * volume;
        for (std::size_t k = 0; k < w.offsets.size(); ++k)
        {
          const int qx = x + w.offsets[k][0], qy = y + w.offsets[k][1], qz = z + w.offsets[k][2];
          if (qx < 0 || qy < 0 || qz < 0 || qx >= nx || qy >= ny || qz >= nz)
            continue;
          const std::int64_t j = (std::int64_t(qz) * ny + qy) * nx + qx;
          if (labels[i] != labels[j])
          {
            surface += w.weights[k];
            if (inGraph && inGraph[i] != inGraph[j])
              ++border;
          }
        }
      }
  if (borderCuts)
    *borderCuts = border;
  return data + (parameters.lambda > 0 ? surface : 0.0);
}

GridGraphCutStatistics
RegularizeProbabilities(const float *                       p,
                        const int                           size[3],
                        const double                        spacing[3],
                        const GridGraphCutParameters &      parameters,
                        std::uint8_t *                      labels,
                        const std::function<void(double)> & progress)
{
  auto report = [&](double f)
  {
    if (progress)
      progress(f);
  };
  CheckParameters(parameters);
  CheckGrid(size, spacing);
  const std::int64_t N = std::int64_t(size[0]) * size[1] * size[2];
  std::int64_t       bad = 0, first = -1;
  for (std::int64_t i = 0; i < N; ++i)
    if (!std::isfinite(p[i]) && bad++ == 0)
      first = i;
  if (bad > 0)
    CANOPY_THROW("graph cut: " << bad << " probabilities are NaN or infinite (first at voxel index (" << first % size[0]
                               << ", " << (first / size[0]) % size[1] << ", "
                               << first / (std::int64_t(size[0]) * size[1])
                               << ")); the probability map must be finite");
  report(0.05);
  GridGraphCutStatistics statistics;
  GridGraph              graph = BuildGridGraph(p, size, spacing, parameters, statistics);
  report(0.3);
  const auto nodeLabels = SolveBoostMaxFlow(graph, statistics);
  report(0.9);
  std::vector<std::uint8_t> inGraph(N, 0);
  for (std::int64_t u = 0; u < graph.numNodes; ++u)
  {
    graph.fixedLabels[graph.voxelOfNode[u]] = nodeLabels[u];
    inGraph[graph.voxelOfNode[u]] = 1;
  }
  std::copy(graph.fixedLabels.begin(), graph.fixedLabels.end(), labels);
  statistics.energy = ComputeEnergy(
    p, labels, size, spacing, parameters, &statistics.borderCuts, parameters.banded ? inGraph.data() : nullptr);
  report(1.0);
  return statistics;
}

} // namespace canopy
