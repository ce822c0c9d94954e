#include "canopyShapeTemplate.h"

#include "canopy/Errors.h"

#include <vtkCleanPolyData.h>
#include <vtkDecimatePro.h>
#include <vtkNew.h>
#include <vtkQuadricDecimation.h>
#include <vtkTriangleFilter.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

namespace canopy
{
namespace
{
vtkSmartPointer<vtkPolyData>
CleanTriangles(vtkPolyData * mesh)
{
  vtkNew<vtkTriangleFilter> triangulate;
  triangulate->SetInputData(mesh);
  triangulate->PassVertsOff();
  triangulate->PassLinesOff();
  vtkNew<vtkCleanPolyData> clean;
  clean->SetInputConnection(triangulate->GetOutputPort());
  clean->PointMergingOn();
  clean->SetTolerance(0.0);
  clean->Update();
  vtkSmartPointer<vtkPolyData> out = clean->GetOutput();
  return out;
}

// Decimation keeps the surface's genus, so triangles = 2 * vertices - 4 + 4 * genus; the target
// reduction is asked for genus 0 and the result reports what it reached.
double
ReductionFor(vtkIdType triangles, int vertices)
{
  return std::clamp(1.0 - double(2 * vertices - 4) / double(triangles), 0.0, 0.999);
}
// Every edge in exactly two triangles: a closed, manifold-edged surface.
bool
IsClosed(const Eigen::Matrix3Xi & triangles)
{
  std::map<std::pair<int, int>, int> uses;
  for (Eigen::Index t = 0; t < triangles.cols(); ++t)
    for (int k = 0; k < 3; ++k)
    {
      const int a = triangles(k, t), b = triangles((k + 1) % 3, t);
      ++uses[{ std::min(a, b), std::max(a, b) }];
    }
  for (const auto & edge : uses)
    if (edge.second != 2)
      return false;
  return true;
}

// Vertex-removal decimation (survivors keep their coordinates). On a bumpy surface it stopped short
// of the target (666 and 778 of 600 vertices on SynthSeg hippocampi): vertices where feature edges
// meet are not removed without splitting, so no edge counts as a feature (feature angle 180), passes
// repeat while they make progress, and as a last resort the result without topology preservation
// is taken when it is still a closed surface and nearer the target.
vtkSmartPointer<vtkPolyData>
DecimateKeepingVertices(vtkPolyData * finest, int vertices)
{
  auto once = [&](vtkPolyData * input, bool preserveTopology)
  {
    vtkNew<vtkDecimatePro> decimate;
    decimate->SetInputData(input);
    decimate->SetTargetReduction(ReductionFor(input->GetNumberOfPolys(), vertices));
    decimate->SetFeatureAngle(180.0);
    decimate->SetPreserveTopology(preserveTopology);
    decimate->SplittingOff();
    decimate->BoundaryVertexDeletionOff();
    decimate->SetOutputPointsPrecision(vtkAlgorithm::DOUBLE_PRECISION);
    decimate->Update();
    return CleanTriangles(decimate->GetOutput());
  };
  auto run = [&](bool preserveTopology)
  {
    vtkSmartPointer<vtkPolyData> mesh = once(finest, preserveTopology);
    for (int pass = 0; pass < 5 && mesh->GetNumberOfPoints() > vertices + vertices / 50; ++pass)
    {
      const vtkSmartPointer<vtkPolyData> again = once(mesh, preserveTopology);
      if (again->GetNumberOfPoints() >= mesh->GetNumberOfPoints())
        break;
      mesh = again;
    }
    return mesh;
  };
  vtkSmartPointer<vtkPolyData> coarse = run(true);
  if (coarse->GetNumberOfPoints() > vertices + vertices / 20)
  {
    const vtkSmartPointer<vtkPolyData> free = run(false);
    if (std::abs(free->GetNumberOfPoints() - vertices) < std::abs(coarse->GetNumberOfPoints() - vertices) &&
        IsClosed(MeshTriangles(free)))
      coarse = free;
  }
  return coarse;
}
} // namespace

vtkSmartPointer<vtkPolyData>
SubdivideMidpoints(vtkPolyData * mesh)
{
  const Eigen::Matrix3Xd             points = MeshPoints(mesh);
  const Eigen::Matrix3Xi             triangles = MeshTriangles(mesh);
  std::map<std::pair<int, int>, int> midpoint;
  std::vector<Eigen::Vector3d>       added;
  auto                               middle = [&](int a, int b)
  {
    const auto key = std::make_pair(std::min(a, b), std::max(a, b));
    const auto found = midpoint.find(key);
    if (found != midpoint.end())
      return found->second;
    const int index = int(points.cols() + Eigen::Index(added.size()));
    added.push_back(0.5 * (points.col(a) + points.col(b)));
    midpoint.emplace(key, index);
    return index;
  };
  Eigen::Matrix3Xi finer(3, 4 * triangles.cols());
  for (Eigen::Index t = 0; t < triangles.cols(); ++t)
  {
    const int a = triangles(0, t), b = triangles(1, t), c = triangles(2, t);
    const int ab = middle(a, b), bc = middle(b, c), ca = middle(c, a);
    finer.col(4 * t) << a, ab, ca;
    finer.col(4 * t + 1) << ab, b, bc;
    finer.col(4 * t + 2) << ca, bc, c;
    finer.col(4 * t + 3) << ab, bc, ca;
  }
  Eigen::Matrix3Xd all(3, points.cols() + Eigen::Index(added.size()));
  all.leftCols(points.cols()) = points;
  for (std::size_t k = 0; k < added.size(); ++k)
    all.col(points.cols() + Eigen::Index(k)) = added[k];
  return MakeTriangleMesh(all, finer);
}

std::vector<ShapeLevel>
BuildTemplateHierarchy(vtkPolyData * surface, std::vector<int> levelVertices)
{
  if (!surface || surface->GetNumberOfPolys() == 0)
    CANOPY_THROW("BuildTemplateHierarchy: the template surface is empty");
  if (levelVertices.empty())
    CANOPY_THROW("BuildTemplateHierarchy: no level asked for");
  std::sort(levelVertices.begin(), levelVertices.end());
  for (std::size_t l = 0; l < levelVertices.size(); ++l)
    if (levelVertices[l] < 4 || (l > 0 && levelVertices[l] == levelVertices[l - 1]))
      CANOPY_THROW("BuildTemplateHierarchy: level vertex counts must be distinct and at least 4, got "
                   << levelVertices[l]);
  const int finestCount = levelVertices.back();

  vtkSmartPointer<vtkPolyData> mesh = CleanTriangles(surface);
  while (mesh->GetNumberOfPoints() < 2 * finestCount) // decimate from at least twice the vertices
    mesh = CleanTriangles(SubdivideMidpoints(mesh));
  vtkNew<vtkQuadricDecimation> quadric;
  quadric->SetInputData(mesh);
  quadric->SetTargetReduction(ReductionFor(mesh->GetNumberOfPolys(), finestCount));
  quadric->VolumePreservationOn();
  quadric->Update();
  const vtkSmartPointer<vtkPolyData> finest = CleanTriangles(quadric->GetOutput());
  const Eigen::Matrix3Xd             finestPoints = MeshPoints(finest);

  std::map<std::array<double, 3>, int> indexOf; // coarse vertices are finest vertices, bit for bit
  for (Eigen::Index i = 0; i < finestPoints.cols(); ++i)
    indexOf.emplace(std::array<double, 3>{ finestPoints(0, i), finestPoints(1, i), finestPoints(2, i) }, int(i));

  std::vector<ShapeLevel> levels(levelVertices.size());
  for (std::size_t l = 0; l + 1 < levelVertices.size(); ++l)
  {
    const vtkSmartPointer<vtkPolyData> coarse = DecimateKeepingVertices(finest, levelVertices[l]);
    ShapeLevel &                       level = levels[l];
    level.mean = MeshPoints(coarse);
    level.triangles = MeshTriangles(coarse);
    for (Eigen::Index i = 0; i < level.mean.cols(); ++i)
    {
      const auto found = indexOf.find({ level.mean(0, i), level.mean(1, i), level.mean(2, i) });
      if (found == indexOf.end())
        CANOPY_THROW("BuildTemplateHierarchy: a vertex of the " << levelVertices[l]
                                                                << "-vertex level is not a vertex of the finest level");
      level.finestVertex.push_back(found->second);
    }
  }
  ShapeLevel & last = levels.back();
  last.mean = finestPoints;
  last.triangles = MeshTriangles(finest);
  for (Eigen::Index i = 0; i < finestPoints.cols(); ++i)
    last.finestVertex.push_back(int(i));
  for (std::size_t l = 0; l + 1 < levels.size(); ++l)
    if (!(levels[l].Vertices() < levels[l + 1].Vertices()))
      CANOPY_THROW("BuildTemplateHierarchy: the "
                   << levelVertices[l] << "-vertex level reached " << levels[l].Vertices()
                   << " vertices, not fewer than the next level's " << levels[l + 1].Vertices()
                   << " (the template is too small?)");
  return levels;
}
} // namespace canopy
