// Fitting a template mesh to a target surface (issue 10 part 1, correspondence): a similarity ICP,
// then a non-rigid ICP whose smoothness term is the stiffness of per-vertex affine transforms
// (Amberg, Romdhani & Vetter, "Optimal step nonrigid ICP algorithms for surface registration",
// CVPR 2007), solved with Eigen's sparse Cholesky. Both use closest points in both directions, so
// the template covers the whole target and not only the part nearest to it.
#pragma once

#include "canopySimilarity.h"

#include "itk_eigen.h" // ITK's own Eigen: one Eigen in every unit that also includes ITK IO
#include ITK_EIGEN(Core)
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

#include <memory>
#include <vector>

class vtkStaticCellLocator;

namespace canopy
{
/** A closed triangle surface to fit to: closest points on its triangles, its vertices and normals. */
class TargetSurface
{
public:
  /** canopy::Error when the surface is null or has no triangles. Polygons are triangulated. */
  explicit TargetSurface(vtkPolyData * surface);
  ~TargetSurface();
  TargetSurface(const TargetSurface &) = delete;
  TargetSurface & operator=(const TargetSurface &) = delete;

  /** The closest point on the surface to p and the unit normal of its triangle. */
  void ClosestPoint(const Eigen::Vector3d & p, Eigen::Vector3d & closest, Eigen::Vector3d & normal) const;
  const Eigen::Matrix3Xd & Points() const { return m_Points; }
  const Eigen::Matrix3Xd & Normals() const { return m_Normals; }
  vtkPolyData *            Surface() const { return m_Surface; }

private:
  vtkSmartPointer<vtkPolyData>          m_Surface;
  vtkSmartPointer<vtkStaticCellLocator> m_Locator;
  Eigen::Matrix3Xd                      m_Points, m_Normals, m_CellNormals;
};

/** Nearest of a fixed set of points (a VTK static point locator). */
class NearestPoints
{
public:
  explicit NearestPoints(const Eigen::Matrix3Xd & points);
  ~NearestPoints();
  NearestPoints(const NearestPoints &) = delete;
  NearestPoints & operator=(const NearestPoints &) = delete;
  Eigen::Index    Nearest(const Eigen::Vector3d & p) const;

private:
  struct Impl;
  std::unique_ptr<Impl> m_Impl;
};

struct SimilarityIcpOptions
{
  int    iterations = 60;
  bool   withScale = true;
  double tolerance = 1e-6; // stop when the transformed points move less than this (relative to the size)
};

/** The similarity taking `source` (template vertices) onto `target`: starts by matching centroids and
 * root-mean-square radii (no rotation: subjects are assumed in roughly the same anatomical
 * orientation, as LPS images are), then ICP with closest points both ways. */
Similarity
FitSimilarityIcp(const Eigen::Matrix3Xd &     source,
                 const TargetSurface &        target,
                 const SimilarityIcpOptions & options = {});

struct NonrigidFitOptions
{
  /** Stiffness weights alpha, from stiff to supple (Amberg's schedule); the geometry is normalised to
   * unit RMS radius and the data terms to one unit of weight per template vertex each way. */
  std::vector<double> stiffness{ 50, 20, 10, 5, 2, 1 };
  int                 iterationsPerStiffness = 6;
  /** Pairs whose normals differ by more than this angle are ignored (a thin structure's far side). */
  double maxNormalAngleDegrees = 60;
  /** Weight of the target -> template pairs relative to the template -> target pairs. */
  double backwardWeight = 1.0;
  /** Weight of the translation column of each affine in the stiffness term (Amberg's gamma). */
  double gamma = 1.0;
};

struct NonrigidFitResult
{
  Eigen::Matrix3Xd points; // the fitted template vertices, target frame
  int              iterations = 0;
};

/** Deforms the template (vertices `points` already aligned to the target, triangles `triangles`)
 * onto the target surface with the optimal-step non-rigid ICP. */
NonrigidFitResult
FitNonrigid(const Eigen::Matrix3Xd &   points,
            const Eigen::Matrix3Xi &   triangles,
            const TargetSurface &      target,
            const NonrigidFitOptions & options = {});

/** Unique undirected edges (i < j) of a triangle mesh, 2 x e. */
Eigen::Matrix2Xi
MeshEdges(const Eigen::Matrix3Xi & triangles);
} // namespace canopy
