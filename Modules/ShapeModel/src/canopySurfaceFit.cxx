#include "canopySurfaceFit.h"

#include "canopy/Errors.h"

#include "itk_eigen.h" // ITK's own Eigen: one Eigen in every unit that also includes ITK IO
#include ITK_EIGEN(Geometry)
#include "canopyShapeModel.h" // MeshPoints, MeshTriangles, VertexNormals

#include ITK_EIGEN(IterativeLinearSolvers)
#include ITK_EIGEN(SparseCore)
#include <vtkGenericCell.h>
#include <vtkNew.h>
#include <vtkPoints.h>
#include <vtkStaticCellLocator.h>
#include <vtkStaticPointLocator.h>
#include <vtkTriangleFilter.h>

#include <cmath>
#include <set>
#include <utility>

namespace canopy
{
TargetSurface::TargetSurface(vtkPolyData * surface)
{
  if (!surface || surface->GetNumberOfPolys() == 0)
    CANOPY_THROW("TargetSurface: the surface is null or has no polygons");
  vtkNew<vtkTriangleFilter> triangulate;
  triangulate->SetInputData(surface);
  triangulate->PassVertsOff();
  triangulate->PassLinesOff();
  triangulate->Update();
  m_Surface = triangulate->GetOutput();
  m_Points = MeshPoints(m_Surface);
  const Eigen::Matrix3Xi triangles = MeshTriangles(m_Surface);
  m_Normals = VertexNormals(m_Points, triangles);
  m_CellNormals.resize(3, triangles.cols());
  for (Eigen::Index t = 0; t < triangles.cols(); ++t)
  {
    const Eigen::Vector3d a = m_Points.col(triangles(0, t));
    const Eigen::Vector3d n = (m_Points.col(triangles(1, t)) - a).cross(m_Points.col(triangles(2, t)) - a);
    m_CellNormals.col(t) = n.norm() > 0 ? Eigen::Vector3d(n.normalized()) : Eigen::Vector3d::Zero();
  }
  m_Locator = vtkSmartPointer<vtkStaticCellLocator>::New();
  m_Locator->SetDataSet(m_Surface);
  m_Locator->BuildLocator();
}

TargetSurface::~TargetSurface() = default;

void
TargetSurface::ClosestPoint(const Eigen::Vector3d & p, Eigen::Vector3d & closest, Eigen::Vector3d & normal) const
{
  vtkNew<vtkGenericCell> cell; // per call: the locator's own cell is not shared between threads
  vtkIdType              cellId = -1;
  int                    subId = 0;
  double                 distance2 = 0;
  m_Locator->FindClosestPoint(p.data(), closest.data(), cell, cellId, subId, distance2);
  normal = cellId >= 0 ? Eigen::Vector3d(m_CellNormals.col(cellId)) : Eigen::Vector3d::Zero();
}

struct NearestPoints::Impl
{
  vtkNew<vtkPolyData>           points;
  vtkNew<vtkStaticPointLocator> locator;
};

NearestPoints::NearestPoints(const Eigen::Matrix3Xd & points)
  : m_Impl(std::make_unique<Impl>())
{
  vtkNew<vtkPoints> p;
  p->SetDataTypeToDouble();
  p->SetNumberOfPoints(points.cols());
  for (Eigen::Index i = 0; i < points.cols(); ++i)
    p->SetPoint(i, points.col(i).data());
  m_Impl->points->SetPoints(p);
  m_Impl->locator->SetDataSet(m_Impl->points);
  m_Impl->locator->BuildLocator();
}

NearestPoints::~NearestPoints() = default;

Eigen::Index
NearestPoints::Nearest(const Eigen::Vector3d & p) const
{
  return m_Impl->locator->FindClosestPoint(p.data());
}

Eigen::Matrix2Xi
MeshEdges(const Eigen::Matrix3Xi & triangles)
{
  std::set<std::pair<int, int>> edges;
  for (Eigen::Index t = 0; t < triangles.cols(); ++t)
    for (int k = 0; k < 3; ++k)
    {
      const int a = triangles(k, t), b = triangles((k + 1) % 3, t);
      edges.insert({ std::min(a, b), std::max(a, b) });
    }
  Eigen::Matrix2Xi result(2, Eigen::Index(edges.size()));
  Eigen::Index     e = 0;
  for (const auto & [a, b] : edges)
    result.col(e++) << a, b;
  return result;
}

namespace
{
Eigen::Vector3d
Centroid(const Eigen::Matrix3Xd & points)
{
  return points.rowwise().mean();
}

double
RmsRadius(const Eigen::Matrix3Xd & points)
{
  return std::sqrt((points.colwise() - Centroid(points)).colwise().squaredNorm().mean());
}
} // namespace

Similarity
FitSimilarityIcp(const Eigen::Matrix3Xd & source, const TargetSurface & target, const SimilarityIcpOptions & options)
{
  const Eigen::Index n = source.cols(), m = target.Points().cols();
  if (n < 4 || m < 4)
    CANOPY_THROW("FitSimilarityIcp: the template has " << n << " and the target " << m << " points (need 4 or more)");
  const double sourceRadius = RmsRadius(source), targetRadius = RmsRadius(target.Points());
  Similarity   t;
  t.scale = options.withScale ? targetRadius / sourceRadius : 1.0;
  t.translation = Centroid(target.Points()) - t.scale * Centroid(source);

  Eigen::Matrix3Xd from(3, n + m), to(3, n + m);
  Eigen::VectorXd  weights(n + m);
  weights.head(n).setOnes();
  weights.tail(m).setConstant(double(n) / double(m)); // each direction counts as much
  from.leftCols(n) = source;
  to.rightCols(m) = target.Points();
  for (int it = 0; it < options.iterations; ++it)
  {
    const Eigen::Matrix3Xd moved = t.Apply(source);
    Eigen::Vector3d        closest, normal;
    for (Eigen::Index i = 0; i < n; ++i)
    {
      target.ClosestPoint(moved.col(i), closest, normal);
      to.col(i) = closest;
    }
    const NearestPoints nearest(moved);
    for (Eigen::Index j = 0; j < m; ++j)
      from.col(n + j) = source.col(nearest.Nearest(target.Points().col(j)));
    const Similarity next = FitSimilarity(from, to, weights, options.withScale);
    const double     change = (next.Apply(source) - moved).colwise().norm().maxCoeff();
    t = next;
    if (change < options.tolerance * targetRadius)
      break;
  }
  return t;
}

NonrigidFitResult
FitNonrigid(const Eigen::Matrix3Xd &   points,
            const Eigen::Matrix3Xi &   triangles,
            const TargetSurface &      target,
            const NonrigidFitOptions & options)
{
  using Sparse = Eigen::SparseMatrix<double>;
  const Eigen::Index n = points.cols(), m = target.Points().cols();
  if (n < 4 || triangles.cols() < 4)
    CANOPY_THROW("FitNonrigid: the template needs 4 or more vertices and triangles");
  // Normalised geometry: centroid 0, RMS radius 1, so the stiffness weights mean the same for any size.
  const Eigen::Vector3d  centre = Centroid(points);
  const double           radius = RmsRadius(points);
  const Eigen::Matrix3Xd v = (points.colwise() - centre) / radius;
  const Eigen::Matrix3Xd targetPoints = (target.Points().colwise() - centre) / radius;
  const double           cosMax = std::cos(options.maxNormalAngleDegrees * M_PI / 180.0);
  const double           backward = options.backwardWeight * double(n) / double(m);

  // Stiffness: sum over edges of |G (X_i - X_j)|^2_F with G = diag(1, 1, 1, gamma), X_i the 4 x 3
  // affine of vertex i (rows 4i..4i+3 of X).
  const Eigen::Matrix2Xi              edges = MeshEdges(triangles);
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(std::size_t(edges.cols()) * 16 + std::size_t(n) * 16);
  for (Eigen::Index e = 0; e < edges.cols(); ++e)
    for (int a = 0; a < 4; ++a)
    {
      const double g = a == 3 ? options.gamma * options.gamma : 1.0;
      const int    i = 4 * edges(0, e) + a, j = 4 * edges(1, e) + a;
      entries.emplace_back(i, i, g);
      entries.emplace_back(j, j, g);
      entries.emplace_back(i, j, -g);
      entries.emplace_back(j, i, -g);
    }
  Sparse stiffness(4 * n, 4 * n);
  stiffness.setFromTriplets(entries.begin(), entries.end());

  Eigen::MatrixXd X = Eigen::MatrixXd::Zero(4 * n, 3);
  for (Eigen::Index i = 0; i < n; ++i)
    X.block<3, 3>(4 * i, 0).setIdentity();
  auto deform = [&](const Eigen::MatrixXd & affine)
  {
    Eigen::Matrix3Xd u(3, n);
    for (Eigen::Index i = 0; i < n; ++i)
      u.col(i) = affine.block<3, 3>(4 * i, 0).transpose() * v.col(i) + affine.row(4 * i + 3).transpose();
    return u;
  };

  NonrigidFitResult result;
  Eigen::Matrix3Xd  u = v;
  // Conjugate gradients warm-started from the previous affines: the system changes little between
  // ICP steps, and a sparse Cholesky of the 4n x 4n system cost ~30x more per step (measured on
  // 1,200 vertices).
  Eigen::ConjugateGradient<Sparse, Eigen::Lower | Eigen::Upper> solver; // Jacobi preconditioner
  solver.setTolerance(1e-6);
  solver.setMaxIterations(int(std::min<Eigen::Index>(4 * n, 2000)));
  for (const double alpha : options.stiffness)
    for (int it = 0; it < options.iterationsPerStiffness; ++it)
    {
      ++result.iterations;
      const Eigen::Matrix3Xd normals = VertexNormals(u, triangles);
      Eigen::VectorXd        weight = Eigen::VectorXd::Zero(n);
      Eigen::Matrix3Xd       sum = Eigen::Matrix3Xd::Zero(3, n); // weighted sum of each vertex's targets
      Eigen::Vector3d        closest, normal;
      for (Eigen::Index i = 0; i < n; ++i)
      {
        target.ClosestPoint(centre + radius * u.col(i), closest, normal);
        if (normals.col(i).dot(normal) >= cosMax)
        {
          weight(i) += 1.0;
          sum.col(i) += (closest - centre) / radius;
        }
      }
      const NearestPoints nearest(u);
      for (Eigen::Index j = 0; j < m; ++j)
      {
        const Eigen::Index i = nearest.Nearest(targetPoints.col(j));
        if (normals.col(i).dot(target.Normals().col(j)) >= cosMax)
        {
          weight(i) += backward;
          sum.col(i) += backward * targetPoints.col(j);
        }
      }
      // Data term sum_i |X_i^T v_i - target_i|^2 weight_i as 4 x 4 blocks, plus a tiny pull to the
      // current affines that keeps the system definite where no pair landed.
      entries.clear();
      Eigen::MatrixXd rhs = 1e-8 * X;
      for (Eigen::Index i = 0; i < n; ++i)
      {
        const Eigen::Vector4d h(v(0, i), v(1, i), v(2, i), 1.0);
        const Eigen::Matrix4d block = weight(i) * h * h.transpose() + 1e-8 * Eigen::Matrix4d::Identity();
        for (int a = 0; a < 4; ++a)
          for (int b = 0; b < 4; ++b)
            entries.emplace_back(4 * i + a, 4 * i + b, block(a, b));
        rhs.block<4, 3>(4 * i, 0) += h * sum.col(i).transpose();
      }
      Sparse data(4 * n, 4 * n);
      data.setFromTriplets(entries.begin(), entries.end());
      const Sparse system = alpha * alpha * stiffness + data;
      solver.compute(system);
      if (solver.info() != Eigen::Success)
        CANOPY_THROW("FitNonrigid: the preconditioner of the sparse system failed");
      X = solver.solveWithGuess(rhs, X);
      const Eigen::Matrix3Xd next = deform(X);
      const double           change = (next - u).colwise().norm().maxCoeff();
      u = next;
      if (change < 1e-3) // ~0.01 mm on a structure of 10 mm radius
        break;
    }
  result.points = (radius * u).colwise() + centre;
  return result;
}
} // namespace canopy
