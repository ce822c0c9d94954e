// Label -> mesh on grids with anisotropic spacing and a rotated, mirrored direction: sphere area and
// volume against the analytic values, LPS placement, multi-label meshes, file round trips and
// headers, RAS files, mesh-to-mesh distances (concentric spheres, and ITK-SNAP's ventricle mesh
// when the shared data are present).
#include "canopyLabelMesh.h"
#include "canopyMeshDistance.h"
#include "canopyMeshIO.h"
#include "canopyOrientedBoxMesh.h"
#include "canopyTesting.h"

#include "canopy/Errors.h"
#include "itkImageFileReader.h"
#include "itkMesh.h"
// ITK generates its mesh-IO factory list only for requested components; the test names its IO.
#undef ITK_IO_FACTORY_REGISTER_MANAGER
#include "itkMeshFileReader.h"
#include "itkVTKPolyDataMeshIO.h"

#include <vtkCellArray.h>
#include <vtkCellArrayIterator.h>
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkFieldData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPolyDataWriter.h>
#include <vtkStringArray.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace
{
using canopy::LabelImage;
const double kSpacing[3] = { 0.8, 1.0, 1.3 };

// Rotation of 30 degrees about z and 20 about x, with x mirrored (determinant -1).
LabelImage::Pointer
MakeLabels(int nx, int ny, int nz)
{
  auto image = LabelImage::New();
  image->SetRegions(LabelImage::SizeType{ { unsigned(nx), unsigned(ny), unsigned(nz) } });
  image->Allocate();
  image->FillBuffer(0);
  image->SetSpacing(kSpacing);
  const double origin[3] = { -12.5, 30.25, 7.0 };
  image->SetOrigin(origin);
  const double a = M_PI / 6, b = M_PI / 9;
  const double rz[3][3] = { { std::cos(a), -std::sin(a), 0 }, { std::sin(a), std::cos(a), 0 }, { 0, 0, 1 } };
  const double rx[3][3] = { { 1, 0, 0 }, { 0, std::cos(b), -std::sin(b) }, { 0, std::sin(b), std::cos(b) } };
  LabelImage::DirectionType direction;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
    {
      double s = 0;
      for (int k = 0; k < 3; ++k)
        s += rz[i][k] * rx[k][j];
      direction[i][j] = j == 0 ? -s : s;
    }
  image->SetDirection(direction);
  return image;
}

void
FillBall(LabelImage * image, double radiusMm, int value)
{
  const auto size = image->GetLargestPossibleRegion().GetSize();
  for (unsigned z = 0; z < size[2]; ++z)
    for (unsigned y = 0; y < size[1]; ++y)
      for (unsigned x = 0; x < size[0]; ++x)
      {
        const double d[3] = { (x - (size[0] - 1) / 2.0) * kSpacing[0],
                              (y - (size[1] - 1) / 2.0) * kSpacing[1],
                              (z - (size[2] - 1) / 2.0) * kSpacing[2] };
        if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] <= radiusMm * radiusMm)
          image->SetPixel({ { x, y, z } }, value);
      }
}

void
FillBox(LabelImage * image, const int lo[3], const int hi[3], int value) // inclusive
{
  for (int z = lo[2]; z <= hi[2]; ++z)
    for (int y = lo[1]; y <= hi[1]; ++y)
      for (int x = lo[0]; x <= hi[0]; ++x)
        image->SetPixel({ { x, y, z } }, value);
}

itk::Point<double, 3>
Centre(const LabelImage * image)
{
  const auto                      size = image->GetLargestPossibleRegion().GetSize();
  itk::ContinuousIndex<double, 3> c;
  for (int k = 0; k < 3; ++k)
    c[k] = (size[k] - 1) / 2.0;
  itk::Point<double, 3> p;
  image->TransformContinuousIndexToPhysicalPoint(c, p);
  return p;
}

TEST(LabelMesh, SphereAreaVolumeAndOutwardNormals)
{
  const double r = 9.0;
  auto         labels = MakeLabels(30, 24, 20);
  FillBall(labels, r, 1);
  const double area = 4 * M_PI * r * r, volume = 4.0 / 3.0 * M_PI * r * r * r;

  const auto raw = canopy::LabelToMesh(labels);
  const auto m = canopy::ComputeMeshMeasures(raw);
  EXPECT_NEAR(m.volumeMm3 / volume, 1.0, 0.03);
  EXPECT_GT(m.areaMm2, area); // staircase surface: larger than the sphere's
  EXPECT_LT(m.areaMm2 / area, 1.15);

  canopy::LabelMeshOptions smooth;
  smooth.smoothingIterations = 20;
  const auto ms = canopy::ComputeMeshMeasures(canopy::LabelToMesh(labels, smooth));
  std::cout << "sphere r = " << r << " mm: area/analytic " << m.areaMm2 / area << " raw, " << ms.areaMm2 / area
            << " smoothed; volume/analytic " << m.volumeMm3 / volume << " raw, " << ms.volumeMm3 / volume
            << " smoothed\n";
  EXPECT_NEAR(ms.areaMm2 / area, 1.0, 0.03);
  EXPECT_NEAR(ms.volumeMm3 / volume, 1.0, 0.03);

  // Every triangle faces away from the centre, despite the mirrored direction.
  const auto c = Centre(labels);
  auto       polys = vtk::TakeSmartPointer(raw->GetPolys()->NewIterator());
  for (polys->GoToFirstCell(); !polys->IsDoneWithTraversal(); polys->GoToNextCell())
  {
    vtkIdType         n;
    const vtkIdType * ids;
    polys->GetCurrentCell(n, ids);
    double a[3], b[3], d[3];
    raw->GetPoint(ids[0], a);
    raw->GetPoint(ids[1], b);
    raw->GetPoint(ids[2], d);
    const double u[3] = { b[0] - a[0], b[1] - a[1], b[2] - a[2] }, v[3] = { d[0] - a[0], d[1] - a[1], d[2] - a[2] };
    const double normal[3] = { u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0] };
    const double out = normal[0] * (a[0] - c[0]) + normal[1] * (a[1] - c[1]) + normal[2] * (a[2] - c[2]);
    ASSERT_GT(out, 0.0);
  }

  canopy::LabelMeshOptions decimated;
  decimated.decimation = 0.75;
  const auto md = canopy::ComputeMeshMeasures(canopy::LabelToMesh(labels, decimated));
  EXPECT_LT(md.triangles, m.triangles / 3);
  EXPECT_NEAR(md.volumeMm3 / volume, 1.0, 0.05);
}

TEST(LabelMesh, PointsAreInPhysicalLPS)
{
  auto      labels = MakeLabels(20, 16, 12);
  const int lo[3] = { 3, 4, 2 }, hi[3] = { 12, 9, 8 };
  FillBox(labels, lo, hi, 5);
  const auto mesh = canopy::LabelToMesh(labels);
  ASSERT_GT(mesh->GetNumberOfPoints(), 0);
  // Back through ITK's own physical -> index mapping, the box surface lies half a voxel outside
  // the labelled voxel centres, and reaches every face.
  double low[3] = { 1e9, 1e9, 1e9 }, high[3] = { -1e9, -1e9, -1e9 };
  for (vtkIdType i = 0; i < mesh->GetNumberOfPoints(); ++i)
  {
    itk::Point<double, 3> p;
    mesh->GetPoint(i, p.GetDataPointer());
    itk::ContinuousIndex<double, 3> index;
    labels->TransformPhysicalPointToContinuousIndex(p, index);
    for (int k = 0; k < 3; ++k)
    {
      low[k] = std::min(low[k], index[k]);
      high[k] = std::max(high[k], index[k]);
    }
  }
  for (int k = 0; k < 3; ++k)
  {
    EXPECT_NEAR(low[k], lo[k] - 0.5, 1e-4) << "axis " << k;
    EXPECT_NEAR(high[k], hi[k] + 0.5, 1e-4) << "axis " << k;
  }
  // Mesh bounds against the physical bounds of the labelled box's corners (the mesh cuts the
  // corners, so it may fall short of them by less than one voxel).
  double bounds[6];
  mesh->GetBounds(bounds);
  for (int k = 0; k < 3; ++k)
  {
    double cornerLow = 1e9, cornerHigh = -1e9;
    for (int corner = 0; corner < 8; ++corner)
    {
      itk::ContinuousIndex<double, 3> index;
      for (int j = 0; j < 3; ++j)
        index[j] = (corner >> j & 1) ? hi[j] + 0.5 : lo[j] - 0.5;
      itk::Point<double, 3> p;
      labels->TransformContinuousIndexToPhysicalPoint(index, p);
      cornerLow = std::min(cornerLow, p[k]);
      cornerHigh = std::max(cornerHigh, p[k]);
    }
    EXPECT_LE(bounds[2 * k], cornerLow + kSpacing[2]);
    EXPECT_GE(bounds[2 * k], cornerLow - 1e-4);
    EXPECT_GE(bounds[2 * k + 1], cornerHigh - kSpacing[2]);
    EXPECT_LE(bounds[2 * k + 1], cornerHigh + 1e-4);
  }
  const auto measures = canopy::ComputeMeshMeasures(mesh);
  EXPECT_NEAR(measures.volumeMm3, 10 * 6 * 7 * kSpacing[0] * kSpacing[1] * kSpacing[2], 0.05 * 10 * 6 * 7);
}

TEST(LabelMesh, MultiLabelAndSingleLabel)
{
  auto      labels = MakeLabels(20, 16, 12);
  const int lo1[3] = { 1, 1, 1 }, hi1[3] = { 6, 6, 6 }, lo2[3] = { 10, 5, 3 }, hi2[3] = { 17, 12, 9 };
  FillBox(labels, lo1, hi1, 1);
  FillBox(labels, lo2, hi2, 2);
  labels->SetPixel({ { 0, 0, 0 } }, 1); // touches the border: still a closed surface

  const auto all = canopy::LabelToMesh(labels);
  auto *     array = all->GetPointData()->GetArray("Label");
  ASSERT_NE(array, nullptr);
  double range[2];
  array->GetRange(range);
  EXPECT_EQ(range[0], 1.0);
  EXPECT_EQ(range[1], 2.0);

  canopy::LabelMeshOptions only2;
  only2.label = 2;
  const auto two = canopy::LabelToMesh(labels, only2);
  two->GetPointData()->GetArray("Label")->GetRange(range);
  EXPECT_EQ(range[0], 2.0);
  EXPECT_EQ(range[1], 2.0);
  EXPECT_LT(two->GetNumberOfPoints(), all->GetNumberOfPoints());
  const double voxel = kSpacing[0] * kSpacing[1] * kSpacing[2];
  EXPECT_NEAR(canopy::ComputeMeshMeasures(two).volumeMm3, 8 * 8 * 7 * voxel, 0.05 * 8 * 8 * 7 * voxel);

  // A binary mask meshes as label 1, like the label map restricted to one label.
  auto mask = itk::Image<unsigned char, 3>::New();
  mask->CopyInformation(labels);
  mask->SetRegions(labels->GetLargestPossibleRegion());
  mask->Allocate();
  for (itk::SizeValueType i = 0; i < labels->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    mask->GetBufferPointer()[i] = labels->GetBufferPointer()[i] == 2 ? 255 : 0;
  EXPECT_EQ(canopy::LabelToMesh(mask)->GetNumberOfPoints(), two->GetNumberOfPoints());
  EXPECT_NEAR(
    canopy::ComputeMeshMeasures(canopy::LabelToMesh(mask)).volumeMm3, canopy::ComputeMeshMeasures(two).volumeMm3, 1e-6);

  canopy::LabelMeshOptions missing;
  missing.label = 7;
  EXPECT_THROW(canopy::LabelToMesh(labels, missing), canopy::Error);
  canopy::LabelMeshOptions bad;
  bad.decimation = 1.0;
  EXPECT_THROW(canopy::LabelToMesh(labels, bad), canopy::Error);
  labels->FillBuffer(0);
  EXPECT_THROW(canopy::LabelToMesh(labels), canopy::Error);
}

std::string
ReadText(const std::string & path, std::size_t bytes)
{
  std::ifstream in(path, std::ios::binary);
  std::string   text(bytes, '\0');
  in.read(&text[0], std::streamsize(bytes));
  text.resize(std::size_t(in.gcount()));
  return text;
}

TEST(MeshIO, RoundTripsAndHeaders)
{
  auto labels = MakeLabels(20, 16, 12);
  FillBall(labels, 5.0, 3);
  const auto mesh = canopy::LabelToMesh(labels);
  for (const std::string ext : { ".vtk", ".vtp", ".stl", ".VTK" })
  {
    const std::string path = canopy::testing::OutputPath(std::string("ball") + ext);
    canopy::WriteMesh(mesh, path);
    const auto back = canopy::ReadMesh(path);
    EXPECT_EQ(back.mesh->GetNumberOfPoints(), mesh->GetNumberOfPoints()) << ext;
    EXPECT_EQ(back.mesh->GetNumberOfPolys(), mesh->GetNumberOfPolys()) << ext;
    EXPECT_EQ(back.spaceInFile, "LPS") << ext;
    EXPECT_FALSE(back.convertedFromRAS);
    double a[6], b[6]; // bounds: STL reading renumbers the points
    mesh->GetBounds(a);
    back.mesh->GetBounds(b);
    for (int k = 0; k < 6; ++k)
      EXPECT_NEAR(a[k], b[k], 1e-4) << ext;
    EXPECT_NEAR(canopy::ComputeMeshMeasures(back.mesh).volumeMm3, canopy::ComputeMeshMeasures(mesh).volumeMm3, 1e-3);
  }
  const std::string head = ReadText(canopy::testing::OutputPath("ball.vtk"), 200);
  EXPECT_EQ(head.rfind("# vtk DataFile Version 4.2\n", 0), 0u) << head.substr(0, 40);
  EXPECT_NE(head.find("SPACE=LPS"), std::string::npos);
  EXPECT_NE(ReadText(canopy::testing::OutputPath("ball.stl"), 80).find("SPACE=LPS"), std::string::npos);
  // ITK 5.2 reads the legacy 4.2 file (it cannot read VTK 9's default 5.1), with the same LPS points.
  auto itkReader = itk::MeshFileReader<itk::Mesh<float, 3>>::New();
  itkReader->SetMeshIO(itk::VTKPolyDataMeshIO::New());
  itkReader->SetFileName(canopy::testing::OutputPath("ball.vtk"));
  itkReader->Update();
  ASSERT_EQ(itkReader->GetOutput()->GetNumberOfPoints(), static_cast<itk::SizeValueType>(mesh->GetNumberOfPoints()));
  EXPECT_EQ(itkReader->GetOutput()->GetNumberOfCells(), static_cast<itk::SizeValueType>(mesh->GetNumberOfPolys()));
  const auto itkPoint = itkReader->GetOutput()->GetPoint(7);
  double     vtkPoint[3];
  mesh->GetPoint(7, vtkPoint);
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(itkPoint[k], vtkPoint[k], 1e-4);
  // No temporary files are left beside the outputs.
  for (const auto & entry :
       std::filesystem::directory_iterator(std::filesystem::path(canopy::testing::OutputPath("x")).parent_path()))
    EXPECT_EQ(entry.path().filename().string().find("RoundTripsAndHeaders.ball.tmp-"), std::string::npos);
}

TEST(MeshIO, RasFilesAndErrors)
{
  auto labels = MakeLabels(16, 16, 12);
  FillBall(labels, 4.0, 1);
  const auto mesh = canopy::LabelToMesh(labels);
  // A file without a SPACE tag, as ITK-SNAP writes them.
  const std::string untagged = canopy::testing::OutputPath("untagged.vtk");
  {
    vtkNew<vtkPolyDataWriter> writer;
    writer->SetInputData(mesh);
    writer->SetFileName(untagged.c_str());
    writer->Write();
  }
  const auto asIs = canopy::ReadMesh(untagged);
  EXPECT_EQ(asIs.spaceInFile, "");
  const auto ras = canopy::ReadMesh(untagged, canopy::MeshSpace::RAS);
  EXPECT_TRUE(ras.convertedFromRAS);
  double p[3], q[3];
  mesh->GetPoint(3, p);
  ras.mesh->GetPoint(3, q);
  EXPECT_NEAR(q[0], -p[0], 1e-4);
  EXPECT_NEAR(q[1], -p[1], 1e-4);
  EXPECT_NEAR(q[2], p[2], 1e-4);

  const std::string tagged = canopy::testing::OutputPath("tagged.vtp");
  canopy::WriteMesh(mesh, tagged);
  const auto taggedRead = canopy::ReadMesh(tagged, canopy::MeshSpace::RAS); // the file's tag wins
  EXPECT_EQ(taggedRead.spaceInFile, "LPS");
  EXPECT_FALSE(taggedRead.convertedFromRAS);
  EXPECT_EQ(canopy::CoordinateSpaceInHeader("3D Slicer output. SPACE=RAS"), "RAS");

  auto expectError = [](auto && call, const std::string & words)
  {
    try
    {
      call();
      ADD_FAILURE() << "no error, expected: " << words;
    }
    catch (const canopy::Error & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find(words), std::string::npos) << e.GetDescription();
    }
  };
  expectError([&] { canopy::WriteMesh(mesh, canopy::testing::OutputPath("m.obj"), "--output"); },
              "unknown mesh format '.obj'");
  expectError([&] { canopy::WriteMesh(mesh, "/nonexistent-dir/m.vtk", "--output"); }, "cannot write the mesh");
  expectError([&] { canopy::ReadMesh("/nonexistent.vtk", canopy::MeshSpace::LPS, "--reference-mesh"); },
              "--reference-mesh /nonexistent.vtk: no such file");
  const std::string text = canopy::testing::OutputPath("notamesh.vtk");
  std::ofstream(text) << "hello\n";
  expectError([&] { canopy::ReadMesh(text); }, "not a legacy VTK file of polygonal data");
  const std::string badStl = canopy::testing::OutputPath("bad.stl");
  std::ofstream(badStl) << "solid x\nfacet nonsense\n";
  EXPECT_THROW(canopy::ReadMesh(badStl), canopy::Error);
}

TEST(MeshDistance, ConcentricSpheresAndIdentity)
{
  auto inner = MakeLabels(36, 30, 24), outer = MakeLabels(36, 30, 24);
  FillBall(inner, 6.0, 1);
  FillBall(outer, 10.0, 1);
  canopy::LabelMeshOptions smooth;
  smooth.smoothingIterations = 20;
  const auto a = canopy::LabelToMesh(inner, smooth), b = canopy::LabelToMesh(outer, smooth);
  const auto d = canopy::ComputeMeshDistances(a, b);
  std::cout << "spheres r = 6, 10 mm: mean " << d.mean << ", HD95 " << d.percentile95 << ", max " << d.maximum
            << " mm\n";
  EXPECT_NEAR(d.mean, 4.0, 0.4);
  EXPECT_NEAR(d.percentile95, 4.0, 0.6);
  EXPECT_NEAR(d.maximum, 4.0, 0.8);
  EXPECT_EQ(d.testSamples, a->GetNumberOfPoints());
  const auto same = canopy::ComputeMeshDistances(a, a);
  EXPECT_LT(same.maximum, 1e-6);
  vtkNew<vtkPolyData> empty;
  EXPECT_TRUE(std::isinf(canopy::ComputeMeshDistances(a, empty).mean));
  EXPECT_THROW(canopy::ComputeMeshDistances(nullptr, a), canopy::Error);
}

// ITK-SNAP's lateral-ventricle mesh (RAS, no tag) against the mesh of label 1 of the same
// segmentation: a check of the RAS handling on real data.
TEST(MeshDistance, ItkSnapVentricleMesh)
{
  const char *                env = std::getenv("CANOPY_DATA_DIR");
  const std::filesystem::path dir = std::filesystem::path(env ? env : CANOPY_DEFAULT_DATA_DIR) / "itksnap-mricrop";
  if (!std::filesystem::exists(dir / "MRIcrop-ventricle-mesh.vtk"))
    GTEST_SKIP() << "no " << (dir / "MRIcrop-ventricle-mesh.vtk") << " (set CANOPY_DATA_DIR)";
  auto reader = itk::ImageFileReader<LabelImage>::New();
  reader->SetFileName((dir / "MRIcrop-seg.nii.gz").string());
  reader->Update();
  canopy::LabelMeshOptions options;
  options.label = 1;
  const auto ours = canopy::LabelToMesh(reader->GetOutput(), options);
  const auto theirs = canopy::ReadMesh((dir / "MRIcrop-ventricle-mesh.vtk").string(), canopy::MeshSpace::RAS);
  const auto asLps = canopy::ReadMesh((dir / "MRIcrop-ventricle-mesh.vtk").string(), canopy::MeshSpace::LPS);
  const auto d = canopy::ComputeMeshDistances(ours, theirs.mesh);
  const auto wrong = canopy::ComputeMeshDistances(ours, asLps.mesh);
  std::cout << "ventricle mesh distance: mean " << d.mean << " mm, HD95 " << d.percentile95 << " mm, max " << d.maximum
            << " mm; read as LPS instead: mean " << wrong.mean << " mm\n";
  EXPECT_LT(d.mean, 1.0);
  EXPECT_GT(wrong.mean, 10 * d.mean);
}

// Oriented boxes (detect --boxes): corners at centre +/- axes x size / 2, outward triangles (the signed
// volume is the box's, also for left-handed axes), structure index, score and names through .vtk and .vtp.
TEST(OrientedBoxMesh, CornersWindingAndCellDataRoundTrip)
{
  const double        c = std::cos(M_PI / 7), s = std::sin(M_PI / 7);
  canopy::OrientedBox turned{
    { { 10.25, -3.5, 40.0 } }, { { { c, s, 0 }, { -s, c, 0 }, { 0, 0, 1 } } }, { { 8, 5, 3 } }, 2, 0.75
  };
  canopy::OrientedBox mirrored{
    { { -1, 2, 3 } }, { { { 0, 1, 0 }, { 1, 0, 0 }, { 0, 0, 1 } } }, { { 2, 4, 6 } }, 0, 0.5
  };
  const auto mesh = canopy::OrientedBoxesMesh({ turned, mirrored }, { "first one", "unused", "third" });
  for (const std::string ext : { ".vtk", ".vtp" })
  {
    const auto path = canopy::testing::OutputPath("boxes" + ext);
    canopy::WriteMesh(mesh, path, "--boxes");
    const auto read = canopy::ReadMesh(path).mesh;
    ASSERT_EQ(read->GetNumberOfPoints(), 16) << ext;
    ASSERT_EQ(read->GetNumberOfPolys(), 24) << ext;
    int box = 0;
    for (const auto & b : { turned, mirrored })
    {
      for (int corner = 0; corner < 8; ++corner)
      {
        double p[3];
        read->GetPoint(8 * box + corner, p);
        for (int d = 0; d < 3; ++d)
        {
          double expected = b.centerMm[d];
          for (int k = 0; k < 3; ++k)
            expected += ((corner >> k) & 1 ? 0.5 : -0.5) * b.sizeMm[k] * b.axes[k][d];
          EXPECT_NEAR(p[d], expected, 1e-12) << ext << " box " << box << " corner " << corner;
        }
      }
      double            volume = 0.0; // divergence theorem over the box's 12 triangles
      vtkNew<vtkIdList> ids;
      for (vtkIdType cell = 12 * box; cell < 12 * box + 12; ++cell)
      {
        read->GetCellPoints(cell, ids);
        double p[3][3];
        for (int v = 0; v < 3; ++v)
          read->GetPoint(ids->GetId(v), p[v]);
        volume +=
          (p[0][0] * (p[1][1] * p[2][2] - p[1][2] * p[2][1]) - p[0][1] * (p[1][0] * p[2][2] - p[1][2] * p[2][0]) +
           p[0][2] * (p[1][0] * p[2][1] - p[1][1] * p[2][0])) /
          6.0;
        EXPECT_EQ(read->GetCellData()->GetArray("StructureIndex")->GetTuple1(cell), b.structure) << ext;
        EXPECT_EQ(read->GetCellData()->GetArray("Score")->GetTuple1(cell), b.score) << ext;
      }
      EXPECT_NEAR(volume, b.sizeMm[0] * b.sizeMm[1] * b.sizeMm[2], 1e-9) << ext << " box " << box;
      ++box;
    }
    auto * names = vtkStringArray::SafeDownCast(read->GetFieldData()->GetAbstractArray("StructureNames"));
    ASSERT_NE(names, nullptr) << ext;
    ASSERT_EQ(names->GetNumberOfValues(), 3) << ext;
    EXPECT_EQ(names->GetValue(0), "first one") << ext;
    EXPECT_EQ(names->GetValue(2), "third") << ext;
  }
}

} // namespace
