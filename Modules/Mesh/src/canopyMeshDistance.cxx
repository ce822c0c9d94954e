#include "canopyMeshDistance.h"

#include "canopy/Errors.h"

#include <vtkCellLocator.h>
#include <vtkGenericCell.h>
#include <vtkNew.h>

#include <cmath>

namespace canopy
{
namespace
{
void
RequirePolygons(vtkPolyData * mesh, const char * name)
{
  if (!mesh)
    CANOPY_THROW("ComputeMeshDistances: the " << name << " mesh is null");
  if (mesh->GetNumberOfPoints() > 0 && mesh->GetNumberOfPolys() + mesh->GetNumberOfStrips() == 0)
    CANOPY_THROW("ComputeMeshDistances: the " << name << " mesh has " << mesh->GetNumberOfPoints()
                                              << " points but no polygons (not a surface)");
}

// Distance from every vertex of `from` to the closest point on the cells of `to`.
std::vector<double>
VertexToSurface(vtkPolyData * from, vtkPolyData * to)
{
  std::vector<double> distances;
  if (from->GetNumberOfPoints() == 0 || to->GetNumberOfPoints() == 0)
  {
    distances.assign(std::size_t(from->GetNumberOfPoints()), 0.0); // only the count matters then
    return distances;
  }
  vtkNew<vtkCellLocator> locator;
  locator->SetDataSet(to);
  locator->BuildLocator();
  vtkNew<vtkGenericCell> cell;
  distances.reserve(std::size_t(from->GetNumberOfPoints()));
  for (vtkIdType i = 0; i < from->GetNumberOfPoints(); ++i)
  {
    double    p[3], closest[3], squared = 0;
    vtkIdType cellId;
    int       subId;
    from->GetPoint(i, p);
    locator->FindClosestPoint(p, closest, cell, cellId, subId, squared);
    distances.push_back(std::sqrt(squared));
  }
  return distances;
}
} // namespace

SurfaceDistances
ComputeMeshDistances(vtkPolyData * test, vtkPolyData * reference)
{
  RequirePolygons(test, "test");
  RequirePolygons(reference, "reference");
  return SummarizeSurfaceDistances(VertexToSurface(test, reference), VertexToSurface(reference, test));
}

} // namespace canopy
