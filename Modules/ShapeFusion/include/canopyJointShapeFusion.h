// Joint shape fusion of several structures that touch (issues 10 and 13): one label map from one fitted
// mesh per structure and a voxel classifier's class probabilities (all classes, predict-forest --mode
// distribution), each voxel to the class with the highest fused score. Fused one structure at a time
// (canopyShapePriorFusion.h), two meshes that overlap at a shared boundary both keep the overlap, a gap
// between them is left to neither, and the classifier's anterior-vs-posterior decision is used only as
// one-vs-rest evidence. Here, with p_k the classifier's probability of structure k, d_k the signed
// distance to its mesh (mm, < 0 inside) and "rest" everything that is not one of the fused structures
// (p_rest = 1 - sum_k p_k):
//   score_k = w log p_k - (d_k - o) / s   for each structure whose band holds the voxel (|d_k| <= band),
//   score_rest = w log p_rest,
// the voxel going to the highest score (a softmax over the classes whose logit against the rest is the
// one-structure fusion's: with one mesh this is canopyShapePriorFusion's decision at lambda 0 exactly).
// Inside a mesh beyond its band (d_k < -band) the mesh's label stands, several such meshes: the one the
// voxel lies deepest in; beyond every band outside: the rest (0). No graph cut (lambda must be 0).
#pragma once

#include "canopyShapePriorFusion.h"

#include <itkVectorImage.h>

#include <cstdint>
#include <vector>

namespace canopy
{
/** One structure of a joint fusion: its fitted mesh (LPS mm) and its label value, which is also its
 * component in the class-probability image. */
struct FusionStructure
{
  Eigen::Matrix3Xd points;
  Eigen::Matrix3Xi triangles;
  int              label = 1;
};

struct JointShapeFusionStatistics
{
  /** Per structure, in the order given: meshVoxels, fusedVoxels, addedVoxels (labelled k, outside its
   * mesh), removedVoxels (inside its mesh, not labelled k), bandVoxels. graphCut stays empty. */
  std::vector<ShapeFusionStatistics> structures;
  std::int64_t                       overlapVoxels = 0;   // inside two or more meshes
  std::int64_t                       contestedVoxels = 0; // within the bands of two or more meshes
};

/** The joint decision on raw arrays (n voxels, x fastest). probabilities: n * components values,
 * interleaved (voxel-major, as itk::VectorImage holds them); signedDistancesMm[j] and labels[j]: structure
 * j's signed distance (SignedDistanceToMesh, exactInside for the overlap rule) and label (1 <= label <
 * components, distinct). Writes the label value (0 for the rest) of each voxel to `out`. canopy::Error
 * for bad parameters (lambda > 0 included), labels, or non-finite values. */
JointShapeFusionStatistics
JointFuseShapePriors(const float *                      probabilities,
                     int                                components,
                     const std::vector<const float *> & signedDistancesMm,
                     const std::vector<int> &           labels,
                     std::size_t                        n,
                     const ShapeFusionParameters &      parameters,
                     int *                              out);

/** The ITK front: every mesh voxelised on the grid of `probabilities` (one component per class, values in
 * [0, 1]; component k = class k), fused jointly; returns the multi-label map on that grid. canopy::Error
 * naming the structure (by its label) for a bad mesh, a label the image has no component for, a mesh off
 * the grid, and for bad parameters. */
LabelImage::Pointer
FuseMeshesWithClassProbabilities(const std::vector<FusionStructure> & structures,
                                 const itk::VectorImage<float, 3> *   probabilities,
                                 const ShapeFusionParameters &        parameters,
                                 JointShapeFusionStatistics *         statistics = nullptr);
} // namespace canopy
