#include "canopyShapeModel.h"

#include "canopy/Errors.h"

#include "itk_eigen.h" // ITK's own Eigen: one Eigen in every unit that also includes ITK IO
#include ITK_EIGEN(Geometry)

#include <vtkCellArray.h>
#include <vtkCellArrayIterator.h>
#include <vtkNew.h>
#include <vtkPoints.h>

#include <cmath>
#include <set>

namespace canopy
{
double
ShapeModel::CapturedVarianceShare() const
{
  const double total = spectrum.sum();
  return total > 0 ? variances.sum() / total : 1.0;
}

void
ShapeModel::UpdateLevelModes()
{
  for (auto & level : levels)
  {
    level.modes.resize(3 * level.Vertices(), modes.cols());
    for (Eigen::Index i = 0; i < level.Vertices(); ++i)
      level.modes.middleRows(3 * i, 3) = modes.middleRows(3 * Eigen::Index(level.finestVertex[i]), 3);
  }
}

void
ShapeModel::Validate(const std::string & where) const
{
  if (levels.empty())
    CANOPY_THROW(where << ": structure \"" << structure << "\" has no mesh level");
  const Eigen::Index finest = Finest().Vertices();
  for (std::size_t l = 0; l < levels.size(); ++l)
  {
    const ShapeLevel & level = levels[l];
    const std::string  name = where + ": structure \"" + structure + "\" level " + std::to_string(l);
    if (level.Vertices() < 4 || level.triangles.cols() < 4)
      CANOPY_THROW(name << " has " << level.Vertices() << " vertices and " << level.triangles.cols()
                        << " triangles (a closed surface needs at least 4 of each)");
    if (!level.mean.allFinite())
      CANOPY_THROW(name << ": a mean vertex is not finite");
    for (Eigen::Index t = 0; t < level.triangles.cols(); ++t)
    {
      const Eigen::Vector3i c = level.triangles.col(t);
      if ((c.array() < 0).any() || (c.array() >= level.Vertices()).any())
        CANOPY_THROW(name << ": triangle " << t << " names a vertex outside 0.." << level.Vertices() - 1);
      if (c(0) == c(1) || c(1) == c(2) || c(0) == c(2))
        CANOPY_THROW(name << ": triangle " << t << " repeats a vertex");
    }
    if (Eigen::Index(level.finestVertex.size()) != level.Vertices())
      CANOPY_THROW(name << ": " << level.finestVertex.size() << " finest-level indices for " << level.Vertices()
                        << " vertices");
    std::set<int> seen;
    for (Eigen::Index i = 0; i < level.Vertices(); ++i)
    {
      const int f = level.finestVertex[i];
      if (f < 0 || f >= finest || !seen.insert(f).second)
        CANOPY_THROW(name << ": finest-level index " << f << " of vertex " << i << " is out of range or repeated");
      if (l + 1 == levels.size() && f != i)
        CANOPY_THROW(name << " (the finest): its finest-level indices must be 0, 1, 2, ...");
      if (!(((level.mean.col(i) - Finest().mean.col(f)).norm()) <= 1e-3))
        CANOPY_THROW(name << ": mean vertex " << i << " is not the finest level's vertex " << f);
    }
    if (l > 0 && !(level.Vertices() > levels[l - 1].Vertices()))
      CANOPY_THROW(name << ": levels must go from coarse to fine (more vertices each)");
  }
  if (modes.rows() != 3 * finest)
    CANOPY_THROW(where << ": structure \"" << structure << "\": modes have " << modes.rows() << " entries, expected "
                       << 3 * finest << " (3 per finest-level vertex)");
  if (variances.size() != modes.cols())
    CANOPY_THROW(where << ": structure \"" << structure << "\": " << variances.size() << " variances for "
                       << modes.cols() << " modes");
  if (!modes.allFinite())
    CANOPY_THROW(where << ": structure \"" << structure << "\": a mode entry is not finite");
  for (Eigen::Index k = 0; k < variances.size(); ++k)
    if (!(variances(k) > 0) || !std::isfinite(variances(k)) || (k > 0 && variances(k) > variances(k - 1)))
      CANOPY_THROW(where << ": structure \"" << structure << "\": variance " << k
                         << " must be a positive finite number, no larger than the one before");
  const Eigen::MatrixXd gram = modes.transpose() * modes;
  if (modes.cols() > 0 &&
      !((gram - Eigen::MatrixXd::Identity(modes.cols(), modes.cols())).cwiseAbs().maxCoeff() < 1e-3))
    CANOPY_THROW(where << ": structure \"" << structure << "\": the modes are not orthonormal");
  if (!spectrum.allFinite() || (spectrum.array() < 0).any() || spectrum.size() < variances.size())
    CANOPY_THROW(where << ": structure \"" << structure
                       << "\": the spectrum must list at least the kept variances, all finite and >= 0");
}

Eigen::Matrix3Xd
ShapeInstance(const ShapeModel &      model,
              std::size_t             level,
              const Eigen::VectorXd & coefficients,
              const Similarity &      pose)
{
  if (level >= model.levels.size())
    CANOPY_THROW("ShapeInstance: level " << level << " of " << model.levels.size());
  const ShapeLevel & l = model.levels[level];
  if (coefficients.size() > l.modes.cols())
    CANOPY_THROW("ShapeInstance: " << coefficients.size() << " coefficients for " << l.modes.cols() << " modes");
  Eigen::Matrix3Xd points = l.mean;
  if (coefficients.size() > 0)
  {
    const Eigen::VectorXd offset = l.modes.leftCols(coefficients.size()) * coefficients;
    points += Eigen::Map<const Eigen::Matrix3Xd>(offset.data(), 3, l.Vertices());
  }
  return pose.Apply(points);
}

vtkSmartPointer<vtkPolyData>
MakeTriangleMesh(const Eigen::Matrix3Xd & points, const Eigen::Matrix3Xi & triangles)
{
  vtkNew<vtkPoints> vtkpoints;
  vtkpoints->SetDataTypeToDouble();
  vtkpoints->SetNumberOfPoints(points.cols());
  for (Eigen::Index i = 0; i < points.cols(); ++i)
    vtkpoints->SetPoint(i, points(0, i), points(1, i), points(2, i));
  vtkNew<vtkCellArray> cells;
  for (Eigen::Index t = 0; t < triangles.cols(); ++t)
  {
    const vtkIdType ids[3] = { triangles(0, t), triangles(1, t), triangles(2, t) };
    cells->InsertNextCell(3, ids);
  }
  auto mesh = vtkSmartPointer<vtkPolyData>::New();
  mesh->SetPoints(vtkpoints);
  mesh->SetPolys(cells);
  return mesh;
}

Eigen::Matrix3Xd
MeshPoints(vtkPolyData * mesh)
{
  Eigen::Matrix3Xd points(3, mesh->GetNumberOfPoints());
  for (vtkIdType i = 0; i < mesh->GetNumberOfPoints(); ++i)
    mesh->GetPoint(i, points.col(i).data());
  return points;
}

Eigen::Matrix3Xi
MeshTriangles(vtkPolyData * mesh)
{
  Eigen::Matrix3Xi triangles(3, mesh->GetNumberOfPolys());
  auto             polys = vtk::TakeSmartPointer(mesh->GetPolys()->NewIterator());
  Eigen::Index     t = 0;
  for (polys->GoToFirstCell(); !polys->IsDoneWithTraversal(); polys->GoToNextCell(), ++t)
  {
    vtkIdType         n;
    const vtkIdType * ids;
    polys->GetCurrentCell(n, ids);
    if (n != 3)
      CANOPY_THROW("MeshTriangles: polygon " << t << " has " << n << " vertices, not 3");
    triangles.col(t) << int(ids[0]), int(ids[1]), int(ids[2]);
  }
  return triangles;
}

Eigen::Matrix3Xd
VertexNormals(const Eigen::Matrix3Xd & points, const Eigen::Matrix3Xi & triangles)
{
  Eigen::Matrix3Xd normals = Eigen::Matrix3Xd::Zero(3, points.cols());
  for (Eigen::Index t = 0; t < triangles.cols(); ++t)
  {
    const Eigen::Vector3d a = points.col(triangles(0, t)), b = points.col(triangles(1, t)),
                          c = points.col(triangles(2, t));
    const Eigen::Vector3d n = (b - a).cross(c - a); // length = twice the area: area weighting
    for (int k = 0; k < 3; ++k)
      normals.col(triangles(k, t)) += n;
  }
  for (Eigen::Index i = 0; i < normals.cols(); ++i)
  {
    const double length = normals.col(i).norm();
    if (length > 0)
      normals.col(i) /= length;
  }
  return normals;
}
} // namespace canopy
