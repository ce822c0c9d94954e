// Graph-cut regularisation of a probability volume on raw arrays (Birkbeck et al. §4.1): binary
// labels l minimising  E(l) = sum_v |p_v - l_v| V  +  lambda * Area(boundary of {l = 1}),
// V the voxel volume (mm^3), Area in mm^2, so lambda is a length in mm. No ITK types here: the ITK
// filter (itkGraphCutRegularizationImageFilter.h) and the benchmark both call this layer.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace canopy
{

/** Parameters; RegularizeProbabilities checks them and throws canopy::Error naming the bad one. */
struct GridGraphCutParameters
{
  /** Surface weight in mm (mm^3 of data term per mm^2 of surface). A blob of uniform probability p
   * and radius r survives only if r > 3 lambda / (2p - 1); a slab only if thicker than 2 lambda /
   * (2p - 1) (isolated in a confident background). Default 1 mm: confident (p ~ 1) islands smaller
   * than a ball of radius ~3 mm and slivers thinner than ~2 mm go, as do holes and gaps of that size;
   * on the colin27 PBT map it gave the best Dice with the 26-neighbourhood (docs/BENCHMARKS.md).
   * 0 reproduces thresholding at 0.5 exactly. */
  double lambda = 1.0;
  /** 6 (n-links weighted by the shared face area: exact for axis-aligned surfaces, up to sqrt(3)
   * too large for oblique ones) or 26 (Cauchy-Crofton weights, Boykov & Kolmogorov 2003). */
  int neighborhood = 6;
  /** Voxels with p <= uncertainLow are "confidently 0", p >= uncertainHigh "confidently 1". */
  float uncertainLow = 0.02f;
  float uncertainHigh = 0.98f;
  /** The graph covers the uncertain voxels and the thresholded surface, dilated by this many voxels
   * along each axis (a cube). The banded result should equal the full one when margin x spacing >=
   * ~3 lambda / (2 uncertainHigh - 1) mm (canopyGridGraphCut.cxx argues why; not a proof). */
  int margin = 3;
  /** false: every voxel is a graph node (the exact problem; memory grows with the whole volume). */
  bool banded = true;
};

struct GridGraphCutStatistics
{
  std::int64_t voxels = 0;          // in the volume
  std::int64_t uncertain = 0;       // voxels in the uncertain band before the margin dilation
  std::int64_t nodes = 0;           // graph nodes (voxels not fixed), excluding source and sink
  std::int64_t nLinks = 0;          // undirected neighbour links between nodes
  std::int64_t arcs = 0;            // directed arcs the Boost solver holds (n-links twice, t-links with reverse)
  std::int64_t fixedForeground = 0; // voxels fixed to 1 (outside the graph)
  std::int64_t fixedBackground = 0; // voxels fixed to 0
  std::int64_t graphBytes = 0;      // estimate: graph build arrays + Boost CSR graph + solver maps
  std::int64_t borderCuts = 0;      // node-to-fixed links cut by the result: > 0 hints the margin was too small
  double       buildSeconds = 0;
  double       maxFlowSeconds = 0;     // the solver call: its graph set-up plus the max-flow
  double       solverSetupSeconds = 0; // of which: building the solver's own graph (CSR, reverse arcs)
  double       maxFlow = 0;            // the minimum cut of the graph (energy minus constant terms)
  double       energy = 0;             // E(l) of the result over the whole volume, mm^3
};

/** A graph over the non-fixed voxels of a grid, in plain arrays, solver-neutral: node i is voxel
 * voxelOfNode[i]; t-link capacities are reduced so at most one of sourceCap/sinkCap is > 0 (source
 * side = label 1); n-links are symmetric. Fixed neighbours are folded into the t-links. */
struct GridGraph
{
  std::int64_t               numNodes = 0;
  std::vector<std::uint32_t> voxelOfNode;
  std::vector<float>         sourceCap, sinkCap;
  std::vector<std::uint32_t> linkA, linkB;
  std::vector<float>         linkCap;
  std::vector<std::uint8_t>  fixedLabels; // whole volume: thresholded labels, overwritten for nodes by the solver
};

/** n-link weight (mm^2 times lambda) of each of the 13 forward offsets (dx, dy, dz) of `neighborhood`
 * (3 for 6) with the given spacing in mm. 26: w_k = lambda * dPhi_k * V / (pi * |e_k|), e_k the
 * physical offset, dPhi_k the solid angle of the unit directions closer to +-e_k than to any other
 * offset (hemisphere sum 2 pi), V the voxel volume: the Cauchy-Crofton formula Area = 1/pi * integral
 * over lines of their crossing count, with grid lines of family k spaced V/|e_k| apart. */
struct NeighborWeights
{
  std::vector<std::array<int, 3>> offsets;
  std::vector<double>             weights;
};
NeighborWeights
ComputeNeighborWeights(const double spacing[3], int neighborhood, double lambda);

/** Cut cost per mm^2 of a plane with unit normal n (physical): sum_k w_k |n . e_k| / V. With
 * lambda = 1 this is the metrication factor (1 = exact). For tests and documentation. */
double
PlaneCutCostPerArea(const NeighborWeights & weights, const double spacing[3], const double normal[3]);

/** Builds the (banded) graph. p: size[0]*size[1]*size[2] finite values, x fastest (clamped to [0,1]). */
GridGraph
BuildGridGraph(const float *                  p,
               const int                      size[3],
               const double                   spacing[3],
               const GridGraphCutParameters & parameters,
               GridGraphCutStatistics &       statistics);

/** Boost.Graph boykov_kolmogorov_max_flow on `graph` (arrays released as they are consumed).
 * Returns the label (1 = source side) of each node: every node not in the sink's residual tree, so
 * ties (p = 0.5 with nothing else) go to 1, as thresholding p >= 0.5 does. */
std::vector<std::uint8_t>
SolveBoostMaxFlow(GridGraph & graph, GridGraphCutStatistics & statistics);

/** E(labels) over the whole volume (mm^3) with the same weights: data term + cut n-links. */
double
ComputeEnergy(const float *                  p,
              const std::uint8_t *           labels,
              const int                      size[3],
              const double                   spacing[3],
              const GridGraphCutParameters & parameters,
              std::int64_t *                 borderCuts = nullptr,
              const std::uint8_t *           inGraph = nullptr);

/** The whole job: labels (0/1, size voxels) of the regularised probabilities. Throws canopy::Error
 * on bad parameters, an empty volume, or NaN / infinite probabilities (a classifier bug upstream is
 * not silently smoothed over). progress receives fractions in [0, 1]. */
GridGraphCutStatistics
RegularizeProbabilities(const float *                       p,
                        const int                           size[3],
                        const double                        spacing[3],
                        const GridGraphCutParameters &      parameters,
                        std::uint8_t *                      labels,
                        const std::function<void(double)> & progress = {});

} // namespace canopy
