// Pieces of the shape-fusion phantoms shared by the one-structure and the joint tests: ellipsoid meshes,
// approximate signed distances to ellipsoids, and blob-shaped (correlated) noise for voxel maps.
#pragma once

#include "ShapeTestPhantoms.h"
#include "canopyShapeModel.h" // MeshPoints, MeshTriangles

#include <cmath>
#include <random>
#include <vector>

namespace canopy::testing
{
/** The ellipsoid's surface: an octahedron subdivided 4 times onto the sphere and scaled (2,048
 * triangles; chord error below 0.02 mm at these sizes, and fast to voxelise). */
struct TriangulatedEllipsoid
{
  Eigen::Matrix3Xd points;
  Eigen::Matrix3Xi triangles;
};
inline TriangulatedEllipsoid
EllipsoidMesh(const Ellipsoid & e)
{
  const vtkSmartPointer<vtkPolyData> mesh = AnalyticEllipsoidMesh(e, 4); // 2,048 triangles
  return { MeshPoints(mesh), MeshTriangles(mesh) };
}

/** Noise of standard deviation `sigma` on a size^3 grid, correlated over a few mm (white noise averaged
 * over a 5^3 box, rescaled; 0 within 2 voxels of the border): the errors of a voxel classifier come in
 * blobs, which a graph cut alone keeps. */
inline std::vector<float>
CorrelatedNoise(unsigned seed, double sigma, int size)
{
  std::mt19937_64                  random(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double>              white(std::size_t(size) * size * size);
  for (auto & w : white)
    w = normal(random);
  std::vector<float> smooth(white.size(), 0.0f);
  const auto         at = [size](int x, int y, int z)
  { return std::size_t(x) + size * (std::size_t(y) + size * std::size_t(z)); };
  for (int z = 2; z < size - 2; ++z)
    for (int y = 2; y < size - 2; ++y)
      for (int x = 2; x < size - 2; ++x)
      {
        double sum = 0;
        for (int dz = -2; dz <= 2; ++dz)
          for (int dy = -2; dy <= 2; ++dy)
            for (int dx = -2; dx <= 2; ++dx)
              sum += white[at(x + dx, y + dy, z + dz)];
        smooth[at(x, y, z)] = float(sigma * sum / std::sqrt(125.0)); // sum of 125 unit normals: sd sqrt(125)
      }
  return smooth;
}

/** Approximate signed distance (mm) to an ellipsoid: the radial excess scaled by the local radius
 * (exact on a sphere). */
inline double
EllipsoidDistance(const Ellipsoid & e, const Eigen::Vector3d & x)
{
  const Eigen::Vector3d local = e.rotation.transpose() * (x - e.centre);
  const double          r = local.cwiseQuotient(e.radii).norm();
  if (r == 0)
    return -e.radii.minCoeff();
  return (r - 1.0) * local.norm() / r;
}
} // namespace canopy::testing
