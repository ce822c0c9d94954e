// Statistical shape model of one structure (issue 10 part 1): a mean surface at several resolutions
// (a hierarchy of about 600 / 1,200 / 2,400 vertices) in point correspondence across subjects, and
// principal modes of variation shared by every level. Coordinates are mm in the model frame: the
// physical LPS axes of the training subjects, centroid at the origin, the training shapes' mean size.
#pragma once

#include "canopySimilarity.h"

#include "itk_eigen.h" // ITK's own Eigen: one Eigen in every unit that also includes ITK IO
#include ITK_EIGEN(Core)
#include <nlohmann/json.hpp>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

#include <string>
#include <vector>

namespace canopy
{
/** One resolution of the mesh hierarchy. Its vertices are a subset of the finest level's (vertex i
 * is vertex finestVertex[i] there), so one set of shape coefficients describes every level. */
struct ShapeLevel
{
  Eigen::Matrix3Xd mean;         // 3 x n, mm, model frame
  Eigen::Matrix3Xi triangles;    // 3 x t vertex indices, counter-clockwise seen from outside
  std::vector<int> finestVertex; // n indices into the finest level; the identity on the finest level
  /** The modes restricted to this level's vertices: 3n x k, rows x0 y0 z0 x1 ... (not orthonormal
   * on coarser levels). Filled by ShapeModel::UpdateLevelModes. */
  Eigen::MatrixXd modes;

  Eigen::Index Vertices() const { return mean.cols(); }
};

struct ShapeModel
{
  std::string             structure; // e.g. "hippocampus"
  int                     label = 0; // the label value of the structure in the training label maps
  std::vector<ShapeLevel> levels;    // coarse to fine; the last is the finest
  /** Orthonormal principal modes on the finest level: 3N x k (rows x0 y0 z0 x1 ...). */
  Eigen::MatrixXd modes;
  /** Variance of the training shapes along each mode (mm^2 of the 3N-vector), descending. */
  Eigen::VectorXd variances;
  /** Every eigenvalue of the training covariance (mm^2), descending: compactness of any mode count. */
  Eigen::VectorXd spectrum;
  double          requestedVarianceShare = 0.98;       // modes were kept up to this share of the total variance
  nlohmann::json  training = nlohmann::json::object(); // subjects, options, residuals (provenance)

  const ShapeLevel & Finest() const { return levels.back(); }
  Eigen::Index       Modes() const { return modes.cols(); }
  /** Share of the total variance the kept modes hold. */
  double CapturedVarianceShare() const;
  /** Recomputes every level's restricted modes from `modes` (after training or reading). */
  void UpdateLevelModes();
  /** canopy::Error naming `where` when levels, modes or variances are inconsistent. */
  void Validate(const std::string & where) const;
};

/** mean + modes * coefficients on `level`, mapped by `pose` (model frame -> output frame). The
 * coefficients may be fewer than the modes (the rest are 0). */
Eigen::Matrix3Xd
ShapeInstance(const ShapeModel &      model,
              std::size_t             level,
              const Eigen::VectorXd & coefficients = Eigen::VectorXd(),
              const Similarity &      pose = Similarity());

/** A triangle mesh of the points and triangles (points as given, LPS mm). */
vtkSmartPointer<vtkPolyData>
MakeTriangleMesh(const Eigen::Matrix3Xd & points, const Eigen::Matrix3Xi & triangles);

/** The points of a mesh as a 3 x n matrix. */
Eigen::Matrix3Xd
MeshPoints(vtkPolyData * mesh);

/** The triangles of a triangle mesh as a 3 x t matrix; canopy::Error for a polygon that is not a triangle. */
Eigen::Matrix3Xi
MeshTriangles(vtkPolyData * mesh);

/** Unit vertex normals (area-weighted average of the adjacent triangles' normals). */
Eigen::Matrix3Xd
VertexNormals(const Eigen::Matrix3Xd & points, const Eigen::Matrix3Xi & triangles);
} // namespace canopy
