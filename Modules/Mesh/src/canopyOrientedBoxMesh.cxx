#include "canopyOrientedBoxMesh.h"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkIntArray.h>
#include <vtkNew.h>
#include <vtkPoints.h>
#include <vtkStringArray.h>

namespace canopy
{
namespace
{
// The six faces as corner quads (corner c: bit k set = + side of axis k), counter-clockwise seen from
// outside when the axes are right-handed.
constexpr int kFaces[6][4] = { { 0, 4, 6, 2 }, { 1, 3, 7, 5 }, { 0, 1, 5, 4 },
                               { 2, 6, 7, 3 }, { 0, 2, 3, 1 }, { 4, 5, 7, 6 } };

double
Determinant(const std::array<std::array<double, 3>, 3> & m)
{
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}
} // namespace

vtkSmartPointer<vtkPolyData>
OrientedBoxesMesh(const std::vector<OrientedBox> & boxes, const std::vector<std::string> & structureNames)
{
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble(); // corners exact to double, not rounded to float
  vtkNew<vtkCellArray>   triangles;
  vtkNew<vtkIntArray>    structure;
  vtkNew<vtkDoubleArray> score;
  structure->SetName("StructureIndex");
  score->SetName("Score");
  for (const OrientedBox & box : boxes)
  {
    const vtkIdType first = points->GetNumberOfPoints();
    for (int c = 0; c < 8; ++c)
    {
      double p[3];
      for (int d = 0; d < 3; ++d)
      {
        p[d] = box.centerMm[d];
        for (int k = 0; k < 3; ++k)
          p[d] += ((c >> k) & 1 ? 0.5 : -0.5) * box.sizeMm[k] * box.axes[k][d];
      }
      points->InsertNextPoint(p);
    }
    const bool mirrored = Determinant(box.axes) < 0.0; // left-handed axes: reverse the winding
    for (const auto & face : kFaces)
      for (const auto & [a, b, c] :
           { std::array<int, 3>{ face[0], face[1], face[2] }, std::array<int, 3>{ face[0], face[2], face[3] } })
      {
        const vtkIdType ids[3] = { first + a, first + (mirrored ? c : b), first + (mirrored ? b : c) };
        triangles->InsertNextCell(3, ids);
        structure->InsertNextValue(box.structure);
        score->InsertNextValue(box.score);
      }
  }
  auto mesh = vtkSmartPointer<vtkPolyData>::New();
  mesh->SetPoints(points);
  mesh->SetPolys(triangles);
  mesh->GetCellData()->AddArray(structure);
  mesh->GetCellData()->AddArray(score);
  mesh->GetCellData()->SetActiveScalars("StructureIndex"); // viewers colour by structure at first
  vtkNew<vtkStringArray> names;
  names->SetName("StructureNames");
  for (const auto & name : structureNames)
    names->InsertNextValue(name);
  vtkNew<vtkFieldData> fields;
  fields->AddArray(names);
  mesh->SetFieldData(fields);
  return mesh;
}

} // namespace canopy
