// Shape prior + voxel evidence (issues 10 and 13): the label of a structure decided jointly by a fitted
// surface mesh (segment-shape) and a voxel classifier's probability of the structure (predict-forest
// --mode distribution), by a graph cut (Modules/GraphCut) on a fused probability inside a band around
// the mesh. The mesh alone is limited by its shape space and its start; the voxel map alone is noisy
// and knows no shape; near the mesh surface they are combined in log-odds,
//   logit p = w * logit(p_voxel) - (d - o) / s,      d = signed distance to the mesh (mm, < 0 inside),
// i.e. the shape prior is the logistic 1 / (1 + exp((d - o) / s)) of width s around the mesh moved
// outward by o (default 0), weighed against the voxel evidence with weight w. Beyond the band (|d| > band) the mesh's
// label stands. The graph cut then minimises sum |p - l| V + lambda * Area (canopyGridGraphCut.h), which removes specks
// and fills pits that the voxel evidence makes near the surface.
#pragma once

#include "canopyGridGraphCut.h"
#include "canopySurfaceMetrics.h" // LabelImage

#include "itk_eigen.h" // ITK's own Eigen: one Eigen in every unit that also includes ITK IO
#include ITK_EIGEN(Core)
#include <itkImage.h>

#include <cstdint>
#include <vector>

namespace canopy
{
/** Parameters; FuseShapeAndProbabilities checks them and throws canopy::Error naming the bad one. */
struct ShapeFusionParameters
{
  /** s (mm): the shape prior 1 / (1 + exp(d / s)) falls from 0.73 to 0.27 over +-s around the surface.
   * Small: the mesh dominates; large: the voxel evidence does. > 0. */
  double widthMm = 1.0;
  /** w: weight of the voxel classifier's log-odds (0: the mesh alone, smoothed by the graph cut). >= 0. */
  double voxelWeight = 1.0;
  /** Voxels farther than this from the mesh surface (mm) keep the mesh's label. >= 0. */
  double bandMm = 3.0;
  /** o (mm): the shape prior's 0.5 level moved outward by o, 1 / (1 + exp((d - o) / s)): > 0 grows the mesh,
   * < 0 shrinks it (a fitted shape's systematic size error, chosen on a validation split). |o| <= bandMm. */
  double offsetMm = 0.0;
  /** Surface weight of the graph cut (mm; canopyGridGraphCut.h); 0: the fused probability at 0.5. >= 0. */
  double lambda = 0.3;
  /** 6 or 26 (canopyGridGraphCut.h). */
  int neighborhood = 6;
  /** Voxel probabilities are clamped to [floor, 1 - floor] before their logit. In (0, 0.5). */
  double probabilityFloor = 1e-3;
};

/** canopy::Error naming the first parameter out of its range. */
void
CheckShapeFusionParameters(const ShapeFusionParameters & parameters);

struct ShapeFusionStatistics
{
  std::int64_t           bandVoxels = 0;    // voxels within bandMm of the mesh surface (fused there)
  std::int64_t           meshVoxels = 0;    // voxels inside the mesh (its voxelisation)
  std::int64_t           fusedVoxels = 0;   // voxels of the fused label
  std::int64_t           addedVoxels = 0;   // fused label, outside the mesh
  std::int64_t           removedVoxels = 0; // inside the mesh, not in the fused label
  GridGraphCutStatistics graphCut;
};

/** Signed distance (mm) from each voxel centre of `inside`'s grid to the closest point of the triangle
 * mesh (LPS mm): -distance for voxels inside (inside != 0: the mesh's voxelisation, so the sign agrees
 * with the label map exactly; a voxel on the surface gets +-1e-3 mm), +distance outside. Only voxels
 * whose centre may lie within clampMm of the mesh are measured; the others get +-clampMm. x fastest.
 * exactInside: the voxels inside keep their whole depth instead of -clampMm (they all lie in the mesh's
 * bounding box, so this costs nothing; the joint fusion compares the depths of overlapping meshes). */
std::vector<float>
SignedDistanceToMesh(const Eigen::Matrix3Xd & points,
                     const Eigen::Matrix3Xi & triangles,
                     const LabelImage *       inside,
                     double                   clampMm,
                     bool                     exactInside = false);

/** The fused probability of each voxel (x fastest, n voxels): logit p = w logit(p_voxel) - (d - o) / s
 * within the band, the mesh's label (d < 0: 1, else 0) beyond it. canopy::Error for bad parameters or
 * a non-finite voxel probability. */
std::vector<float>
FuseShapePrior(const float *                 voxelProbability,
               const float *                 signedDistanceMm,
               std::size_t                   n,
               const ShapeFusionParameters & parameters);

/** The whole job on raw arrays: labels (0/1) = graph cut of FuseShapePrior. */
ShapeFusionStatistics
FuseShapeAndProbabilities(const float *                 voxelProbability,
                          const float *                 signedDistanceMm,
                          const int                     size[3],
                          const double                  spacing[3],
                          const ShapeFusionParameters & parameters,
                          std::uint8_t *                labels);

/** The ITK front: the mesh (LPS mm) voxelised on the grid of `probability` (the voxel classifier's
 * probability of the structure, on the input's grid), fused; returns `label` inside the fused
 * segmentation, 0 elsewhere. canopy::Error for a bad mesh, bad parameters or label 0. */
LabelImage::Pointer
FuseMeshWithProbabilities(const Eigen::Matrix3Xd &      points,
                          const Eigen::Matrix3Xi &      triangles,
                          const itk::Image<float, 3> *  probability,
                          int                           label,
                          const ShapeFusionParameters & parameters,
                          ShapeFusionStatistics *       statistics = nullptr);
} // namespace canopy
