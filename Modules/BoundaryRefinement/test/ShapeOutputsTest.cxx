// Shape segmentation outputs (issue 10 part 4): the mesh files keep the correspondence ids (.vtk 4.2
// with SPACE=LPS, .vtp), and the voxelised mesh matches the analytic ellipsoid's voxels on a grid with
// its own origin, spacing and direction.
#include "ShapeTestPhantoms.h"
#include "canopy/Errors.h"
#include "canopyMeshIO.h"
#include "canopyShapeOutputs.h"
#include "canopyTesting.h"

#include <gtest/gtest.h>
#include <vtkDataArray.h>
#include <vtkPointData.h>

#include <fstream>

namespace
{
using namespace canopy;
using canopy::testing::Ellipsoid;

TEST(ShapeOutputs, MeshFilesKeepTheCorrespondenceIds)
{
  const auto analytic = canopy::testing::AnalyticEllipsoidMesh(Ellipsoid());
  const auto points = MeshPoints(analytic);
  const auto triangles = MeshTriangles(analytic);
  const auto mesh = CorrespondenceMesh(points, triangles);
  for (const std::string extension : { ".vtk", ".vtp" })
  {
    const std::string path = canopy::testing::OutputPath("shape-outputs" + extension);
    WriteMesh(mesh, path);
    const MeshFile read = ReadMesh(path);
    EXPECT_EQ(read.spaceInFile, "LPS") << extension;
    ASSERT_EQ(read.mesh->GetNumberOfPoints(), points.cols());
    vtkDataArray * ids = read.mesh->GetPointData()->GetArray(kCorrespondenceIdArray);
    ASSERT_NE(ids, nullptr) << extension;
    for (Eigen::Index i = 0; i < points.cols(); i += 97)
      EXPECT_EQ(ids->GetTuple1(i), double(i)) << extension;
  }
  std::ifstream vtk(canopy::testing::OutputPath("shape-outputs.vtk"));
  std::string   version, header;
  std::getline(vtk, version);
  std::getline(vtk, header);
  EXPECT_EQ(version, "# vtk DataFile Version 4.2");
  EXPECT_NE(header.find("SPACE=LPS"), std::string::npos);
}

TEST(ShapeOutputs, VoxelisedMeshMatchesTheAnalyticShapeAndKeepsTheGrid)
{
  Ellipsoid e;
  e.rotation = Eigen::AngleAxisd(0.3, Eigen::Vector3d(1, 0, 1).normalized()).toRotationMatrix();
  // The reference grid: 64^3 voxels of 1 mm at the origin with identity direction (the phantom's), then
  // a second one with another origin, spacing and direction, on which the phantom's voxels are compared
  // through physical points.
  const auto truth = canopy::testing::MakeEllipsoidLabels(e);
  const auto mesh = canopy::testing::AnalyticEllipsoidMesh(e);
  const auto labels = VoxelizeMesh(MeshPoints(mesh), MeshTriangles(mesh), truth, 3);
  EXPECT_EQ(labels->GetLargestPossibleRegion(), truth->GetLargestPossibleRegion());
  std::int64_t both = 0, a = 0, b = 0;
  const int *  t = truth->GetBufferPointer();
  const int *  l = labels->GetBufferPointer();
  for (std::size_t k = 0; k < truth->GetLargestPossibleRegion().GetNumberOfPixels(); ++k)
  {
    a += t[k] != 0;
    b += l[k] != 0;
    both += t[k] != 0 && l[k] == 3;
  }
  const double dice = 2.0 * double(both) / double(a + b);
  std::cout << "Dice of the voxelised analytic mesh vs the analytic voxels: " << dice << '\n';
  EXPECT_GT(dice, 0.97);

  auto other = LabelImage::New();
  other->SetRegions(LabelImage::SizeType{ { 40, 50, 30 } });
  LabelImage::DirectionType direction;
  direction.SetIdentity();
  direction(0, 0) = -1;
  direction(1, 1) = -1; // RAS-like axes: x and y flipped
  other->SetDirection(direction);
  other->SetSpacing(itk::Vector<double, 3>(1.6));
  LabelImage::PointType origin;
  origin[0] = 64;
  origin[1] = 70;
  origin[2] = 5;
  other->SetOrigin(origin);
  const auto onOther = VoxelizeMesh(MeshPoints(mesh), MeshTriangles(mesh), other, 1);
  EXPECT_EQ(onOther->GetDirection(), direction);
  EXPECT_EQ(onOther->GetOrigin(), origin);
  EXPECT_EQ(onOther->GetSpacing(), other->GetSpacing());
  std::int64_t agree = 0, inside = 0, total = 0;
  for (int z = 0; z < 30; ++z)
    for (int y = 0; y < 50; ++y)
      for (int x = 0; x < 40; ++x)
      {
        LabelImage::PointType p;
        onOther->TransformIndexToPhysicalPoint({ { x, y, z } }, p);
        const Eigen::Vector3d local =
          (e.rotation.transpose() * (Eigen::Vector3d(p[0], p[1], p[2]) - e.centre)).cwiseQuotient(e.radii);
        const bool in = local.squaredNorm() <= 1.0, labelled = onOther->GetPixel({ { x, y, z } }) == 1;
        agree += in == labelled;
        inside += in;
        ++total;
      }
  std::cout << "flipped 1.6 mm grid: " << inside << " voxels inside, " << total - agree << " disagree\n";
  EXPECT_GT(inside, 1000);
  EXPECT_LT(double(total - agree), 0.06 * double(inside)); // boundary voxels only

  EXPECT_THROW(VoxelizeMesh(MeshPoints(mesh), MeshTriangles(mesh), nullptr, 1), canopy::Error);
  EXPECT_THROW(VoxelizeMesh(MeshPoints(mesh), MeshTriangles(mesh), truth, 0), canopy::Error);
  Eigen::Matrix3Xd nan = MeshPoints(mesh);
  nan(0, 0) = std::nan("");
  EXPECT_THROW(VoxelizeMesh(nan, MeshTriangles(mesh), truth, 1), canopy::Error);
}
// A structure cut by the volume (the TotalSegmentator liver ends at the top slice) gives a mesh with a
// flat face on or beyond the grid's last slice. No voxel may be labelled far outside the mesh there:
// ITK's scan conversion once filled whole rows of that slice (streaks 150 mm from a liver).
TEST(ShapeOutputs, AMeshCutByTheGridLeavesNoStreaks)
{
  Ellipsoid        e;
  const auto       sphere = canopy::testing::AnalyticEllipsoidMesh(e);
  Eigen::Matrix3Xd points = MeshPoints(sphere);
  const double     cap = e.centre.z() + 5.0; // a flat top 5 mm above the centre: the cut face
  for (Eigen::Index i = 0; i < points.cols(); ++i)
    points(2, i) = std::min(points(2, i), cap);
  for (double offset = -1.0; offset <= 1.0; offset += 0.125) // the last slice's centre this far from the face
  {
    auto      grid = LabelImage::New();
    const int slices = int(std::floor(cap + offset)) + 1;
    grid->SetRegions(LabelImage::SizeType{ { 64, 64, unsigned(slices) } });
    LabelImage::PointType origin;
    origin.Fill(0.0);
    origin[2] = cap + offset - double(slices - 1); // the last slice's centre at cap + offset
    grid->SetOrigin(origin);
    const auto   labels = VoxelizeMesh(points, MeshTriangles(sphere), grid, 1);
    std::int64_t outside = 0, inside = 0;
    for (int z = 0; z < slices; ++z)
      for (int y = 0; y < 64; ++y)
        for (int x = 0; x < 64; ++x)
        {
          if (labels->GetPixel({ { x, y, z } }) == 0)
            continue;
          LabelImage::PointType p;
          labels->TransformIndexToPhysicalPoint({ { x, y, z } }, p);
          const Eigen::Vector3d local = (Eigen::Vector3d(p[0], p[1], p[2]) - e.centre).cwiseQuotient(e.radii);
          ++inside;
          outside += local.norm() > 1.0 + 1.5 / e.radii.minCoeff() || p[2] > cap + 1.5; // > ~1.5 mm outside
        }
    EXPECT_GT(inside, 1000) << "last slice " << offset << " mm from the face";
    EXPECT_EQ(outside, 0) << "last slice " << offset << " mm from the face: " << outside << " of " << inside
                          << " labelled voxels lie more than 1.5 mm outside the mesh";
  }
}
} // namespace
