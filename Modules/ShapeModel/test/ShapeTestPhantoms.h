// Ellipsoid phantoms for the shape-model tests: label maps of posed ellipsoids on a 1 mm grid and
// the analytic surfaces they sample.
#pragma once

#include "canopyShapeModel.h"
#include "canopySurfaceMetrics.h"

#include "canopyShapeTemplate.h" // SubdivideMidpoints

#include "itk_eigen.h" // ITK's own Eigen: one Eigen in every unit that also includes ITK IO
#include ITK_EIGEN(Geometry)

#include <random>

namespace canopy::testing
{
struct Ellipsoid
{
  Eigen::Vector3d radii{ 16, 11, 8 }; // mm
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();
  Eigen::Vector3d centre{ 32, 32, 32 }; // mm (LPS)

  /** The point of the ellipsoid whose direction in the ellipsoid's own frame is `unit` scaled by
   * the radii: the analytic correspondence of the family (an axis scaling). */
  Eigen::Vector3d SurfacePoint(const Eigen::Vector3d & sphereDirection) const
  {
    return rotation * radii.cwiseProduct(sphereDirection.normalized()) + centre;
  }
  /** The direction on the unit sphere of a point near the surface. */
  Eigen::Vector3d SphereDirection(const Eigen::Vector3d & point) const
  {
    return (rotation.transpose() * (point - centre)).cwiseQuotient(radii).normalized();
  }
};

/** Label `label` inside the ellipsoid, 0 outside, on a size^3 grid of 1 mm voxels at the origin. */
inline LabelImage::Pointer
MakeEllipsoidLabels(const Ellipsoid & e, int label = 1, int size = 64)
{
  auto image = LabelImage::New();
  image->SetRegions(LabelImage::SizeType{ { unsigned(size), unsigned(size), unsigned(size) } });
  image->Allocate();
  int * p = image->GetBufferPointer();
  for (int z = 0; z < size; ++z)
    for (int y = 0; y < size; ++y)
      for (int x = 0; x < size; ++x, ++p)
      {
        const Eigen::Vector3d local =
          (e.rotation.transpose() * (Eigen::Vector3d(x, y, z) - e.centre)).cwiseQuotient(e.radii);
        *p = local.squaredNorm() <= 1.0 ? label : 0;
      }
  return image;
}

/** A fine triangulation of the analytic ellipsoid: an octahedron subdivided `subdivisions` times (8 x 4^n
 * triangles), projected to the unit sphere and scaled (6: 32,768 triangles, chord error below 0.002 mm at
 * these sizes). */
inline vtkSmartPointer<vtkPolyData>
AnalyticEllipsoidMesh(const Ellipsoid & e, int subdivisions = 6)
{
  Eigen::Matrix3Xd points(3, 6);
  points << 1, -1, 0, 0, 0, 0, 0, 0, 1, -1, 0, 0, 0, 0, 0, 0, 1, -1;
  Eigen::Matrix3Xi triangles(3, 8);
  triangles << 0, 2, 1, 3, 2, 1, 3, 0, //
    2, 1, 3, 0, 0, 2, 1, 3,            //
    4, 4, 4, 4, 5, 5, 5, 5;
  vtkSmartPointer<vtkPolyData> mesh = MakeTriangleMesh(points, triangles);
  for (int k = 0; k < subdivisions; ++k)
    mesh = SubdivideMidpoints(mesh);
  Eigen::Matrix3Xd fine = MeshPoints(mesh);
  for (Eigen::Index i = 0; i < fine.cols(); ++i)
    fine.col(i) = e.SurfacePoint(fine.col(i));
  return MakeTriangleMesh(fine, MeshTriangles(mesh));
}

/** Radii a = 16 +/- 4, b = 11 +/- 3 (independent, uniform), c = 8; rotation up to `maxDegrees` about
 * a random axis; centre within 3 mm of the grid's middle. */
inline Ellipsoid
RandomEllipsoid(std::mt19937_64 & random, double maxDegrees = 15)
{
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Ellipsoid                              e;
  e.radii = Eigen::Vector3d(16 + 4 * u(random), 11 + 3 * u(random), 8);
  const Eigen::Vector3d axis = Eigen::Vector3d(u(random), u(random), u(random)).normalized();
  e.rotation = Eigen::AngleAxisd(maxDegrees * M_PI / 180.0 * u(random), axis).toRotationMatrix();
  e.centre = Eigen::Vector3d(32 + 3 * u(random), 32 + 3 * u(random), 32 + 3 * u(random));
  return e;
}
} // namespace canopy::testing
