// Shape prior + voxel evidence on ellipsoid phantoms: a mesh slightly off the true surface and a noisy
// probability map of the true structure; the fused label must beat each of them alone.
#include "canopyShapePriorFusion.h"

#include "ShapeFusionTestPhantoms.h"
#include "canopy/Errors.h"
#include "canopyShapeOutputs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

namespace canopy
{
namespace
{
using testing::Ellipsoid;
using FloatImage = itk::Image<float, 3>;
constexpr int kSize = 48;

FloatImage::Pointer
MakeProbability(const std::function<float(const Eigen::Vector3d &)> & value)
{
  auto image = FloatImage::New();
  image->SetRegions(FloatImage::SizeType{ { kSize, kSize, kSize } });
  image->Allocate();
  float * p = image->GetBufferPointer();
  for (int z = 0; z < kSize; ++z)
    for (int y = 0; y < kSize; ++y)
      for (int x = 0; x < kSize; ++x)
        *p++ = value(Eigen::Vector3d(x, y, z));
  return image;
}

using testing::CorrelatedNoise;
using testing::EllipsoidDistance;
using testing::EllipsoidMesh;

double
Dice(const LabelImage * a, const LabelImage * b)
{
  std::int64_t both = 0, na = 0, nb = 0;
  const int *  pa = a->GetBufferPointer();
  const int *  pb = b->GetBufferPointer();
  for (std::size_t i = 0; i < a->GetBufferedRegion().GetNumberOfPixels(); ++i)
  {
    both += pa[i] != 0 && pb[i] != 0;
    na += pa[i] != 0;
    nb += pb[i] != 0;
  }
  return na + nb ? 2.0 * double(both) / double(na + nb) : 1.0;
}

LabelImage::Pointer
Threshold(const FloatImage * p)
{
  auto labels = LabelImage::New();
  labels->CopyInformation(p);
  labels->SetRegions(p->GetLargestPossibleRegion());
  labels->Allocate();
  for (std::size_t i = 0; i < p->GetBufferedRegion().GetNumberOfPixels(); ++i)
    labels->GetBufferPointer()[i] = p->GetBufferPointer()[i] >= 0.5f;
  return labels;
}

struct Phantom
{
  Ellipsoid           truth, fitted;
  Eigen::Matrix3Xd    points;
  Eigen::Matrix3Xi    triangles;
  LabelImage::Pointer truthLabels;
  FloatImage::Pointer probability;
};

/** The true ellipsoid (radii 12, 8, 6 mm); the mesh 1.5 mm off along x and 1 mm along y and 10 % too
 * large along its long axis (a fit that its shape space or its start kept off); the voxel map: the
 * logistic of twice the true signed distance (mm) with correlated noise of standard deviation 2 in
 * log-odds. */
Phantom
MakePhantom(unsigned seed)
{
  Phantom p;
  p.truth.radii = { 12, 8, 6 };
  p.truth.centre = { 24, 24, 24 };
  p.fitted = p.truth;
  p.fitted.centre += Eigen::Vector3d(1.5, 1.0, 0.0);
  p.fitted.radii(0) *= 1.1;
  const auto mesh = EllipsoidMesh(p.fitted);
  p.points = mesh.points;
  p.triangles = mesh.triangles;
  p.truthLabels = testing::MakeEllipsoidLabels(p.truth, 1, kSize);
  const std::vector<float> noise = CorrelatedNoise(seed, 2.0, kSize);
  std::size_t              i = 0;
  p.probability =
    MakeProbability([&](const Eigen::Vector3d & x)
                    { return float(1.0 / (1.0 + std::exp(2.0 * EllipsoidDistance(p.truth, x) - noise[i++]))); });
  return p;
}

TEST(ShapePriorFusion, SignedDistanceMatchesASphere)
{
  Ellipsoid sphere;
  sphere.radii = { 10, 10, 10 };
  sphere.centre = { 24, 24, 24 };
  const auto   mesh = EllipsoidMesh(sphere);
  const auto & points = mesh.points;
  const auto & triangles = mesh.triangles;
  const auto   inside = VoxelizeMesh(points, triangles, testing::MakeEllipsoidLabels(sphere, 1, kSize), 1);
  const auto   distance = SignedDistanceToMesh(points, triangles, inside, 4.0);
  std::size_t  i = 0, measured = 0;
  for (int z = 0; z < kSize; ++z)
    for (int y = 0; y < kSize; ++y)
      for (int x = 0; x < kSize; ++x, ++i)
      {
        const double exact = (Eigen::Vector3d(x, y, z) - sphere.centre).norm() - 10.0;
        if (std::abs(exact) < 3.9)
        {
          ++measured;
          ASSERT_NEAR(distance[i], exact, 0.05) << x << ' ' << y << ' ' << z;
        }
        else if (std::abs(exact) > 4.1)
          ASSERT_EQ(distance[i], exact < 0 ? -4.0f : 4.0f) << x << ' ' << y << ' ' << z;
      }
  EXPECT_GT(measured, 9000u);
}

TEST(ShapePriorFusion, FusedLabelBeatsTheMeshAndTheVoxelMap)
{
  for (unsigned seed : { 1u, 2u, 3u })
  {
    const Phantom p = MakePhantom(seed);
    const auto    mesh = VoxelizeMesh(p.points, p.triangles, p.probability, 1);
    const double  meshDice = Dice(mesh, p.truthLabels);
    const double  voxelDice = Dice(Threshold(p.probability), p.truthLabels);

    ShapeFusionParameters voxelOnly; // the voxel map's own graph cut, for comparison: no shape at all
    voxelOnly.widthMm = 1e6;
    voxelOnly.bandMm = 1e6;
    const double cutDice =
      Dice(FuseMeshWithProbabilities(p.points, p.triangles, p.probability, 1, voxelOnly), p.truthLabels);

    ShapeFusionStatistics statistics;
    const double          fusedDice =
      Dice(FuseMeshWithProbabilities(p.points, p.triangles, p.probability, 1, ShapeFusionParameters(), &statistics),
           p.truthLabels);
    std::cout << "seed " << seed << ": Dice mesh " << meshDice << ", voxel map >= 0.5 " << voxelDice
              << ", voxel map graph cut " << cutDice << ", fused " << fusedDice << " (" << statistics.addedVoxels
              << " voxels added, " << statistics.removedVoxels << " removed)\n";
    EXPECT_GT(fusedDice, meshDice + 0.02);
    EXPECT_GT(fusedDice, voxelDice + 0.02);
    EXPECT_GT(fusedDice, cutDice);
    EXPECT_GT(statistics.addedVoxels, 0);
    EXPECT_GT(statistics.removedVoxels, 0);
  }
}

TEST(ShapePriorFusion, BeyondTheBandTheMeshLabelStands)
{
  const Phantom p = MakePhantom(4);
  const auto    mesh = VoxelizeMesh(p.points, p.triangles, p.probability, 1);
  const auto    distance = SignedDistanceToMesh(p.points, p.triangles, mesh, 10.0);
  for (const float everywhere : { 0.0f, 1.0f }) // the voxel map claims nothing / everything
  {
    const auto            voxel = MakeProbability([&](const Eigen::Vector3d &) { return everywhere; });
    ShapeFusionParameters parameters;
    parameters.bandMm = 2.0;
    parameters.voxelWeight = 5.0; // the voxel map wins wherever it may
    const auto   labels = FuseMeshWithProbabilities(p.points, p.triangles, voxel, 2, parameters);
    std::int64_t changedInBand = 0;
    for (std::size_t i = 0; i < distance.size(); ++i)
    {
      const int meshLabel = mesh->GetBufferPointer()[i] ? 2 : 0;
      if (std::abs(distance[i]) > 2.0f + 1.8f) // beyond the band and the graph cut's reach from it
        ASSERT_EQ(labels->GetBufferPointer()[i], meshLabel) << i;
      else
        changedInBand += labels->GetBufferPointer()[i] != meshLabel;
    }
    EXPECT_GT(changedInBand, 500);
  }
}

TEST(ShapePriorFusion, WithoutVoxelWeightAndGraphCutTheMeshLabelStands)
{
  const Phantom         p = MakePhantom(5);
  ShapeFusionParameters parameters;
  parameters.voxelWeight = 0;
  parameters.lambda = 0;
  const auto mesh = VoxelizeMesh(p.points, p.triangles, p.probability, 1);
  const auto fused = FuseMeshWithProbabilities(p.points, p.triangles, p.probability, 1, parameters);
  for (std::size_t i = 0; i < mesh->GetBufferedRegion().GetNumberOfPixels(); ++i)
    ASSERT_EQ(fused->GetBufferPointer()[i], mesh->GetBufferPointer()[i]) << i;
}

TEST(ShapePriorFusion, TheOffsetMovesThePriorsLevelOutward)
{
  // Without voxel weight and graph cut the fused label is {d < o}: the mesh grown (o > 0) or shrunk (o < 0)
  // by o mm, exactly the voxels whose signed distance lies below the offset.
  const Phantom p = MakePhantom(7);
  const auto    mesh = VoxelizeMesh(p.points, p.triangles, p.probability, 1);
  const auto    distance = SignedDistanceToMesh(p.points, p.triangles, mesh, 4.0);
  std::int64_t  meshVoxels = 0;
  for (std::size_t i = 0; i < distance.size(); ++i)
    meshVoxels += distance[i] < 0;
  for (const double offset : { -0.8, 0.6 })
  {
    ShapeFusionParameters parameters;
    parameters.voxelWeight = 0;
    parameters.lambda = 0;
    parameters.offsetMm = offset;
    const auto   fused = FuseMeshWithProbabilities(p.points, p.triangles, p.probability, 1, parameters);
    std::int64_t fusedVoxels = 0;
    for (std::size_t i = 0; i < distance.size(); ++i)
    {
      if (std::abs(distance[i] - offset) > 1e-3) // a voxel on the moved level may go either way in float
        ASSERT_EQ(fused->GetBufferPointer()[i], distance[i] < offset ? 1 : 0) << i << ' ' << distance[i];
      fusedVoxels += fused->GetBufferPointer()[i] != 0;
    }
    EXPECT_TRUE(offset > 0 ? fusedVoxels > meshVoxels + 200 : fusedVoxels < meshVoxels - 200)
      << offset << ": " << fusedVoxels << " voxels against the mesh's " << meshVoxels;
  }
}

TEST(ShapePriorFusion, BadInputIsAnError)
{
  const Phantom p = MakePhantom(6);
  const auto    fuse = [&](auto change)
  {
    ShapeFusionParameters parameters;
    change(parameters);
    return FuseMeshWithProbabilities(p.points, p.triangles, p.probability, 1, parameters);
  };
  EXPECT_THROW(fuse([](auto & q) { q.widthMm = 0; }), Error);
  EXPECT_THROW(fuse([](auto & q) { q.voxelWeight = -1; }), Error);
  EXPECT_THROW(fuse([](auto & q) { q.bandMm = std::nan(""); }), Error);
  EXPECT_THROW(fuse([](auto & q) { q.lambda = -0.1; }), Error);
  EXPECT_THROW(fuse([](auto & q) { q.probabilityFloor = 0.5; }), Error);
  EXPECT_THROW(fuse([](auto & q) { q.offsetMm = 3.5; }), Error); // beyond the 3 mm band
  EXPECT_THROW(fuse([](auto & q) { q.offsetMm = std::nan(""); }), Error);
  EXPECT_THROW(FuseMeshWithProbabilities(p.points, p.triangles, p.probability, 0, ShapeFusionParameters()), Error);
  p.probability->GetBufferPointer()[kSize * kSize * 24 + kSize * 24 + 24] = std::nanf("");
  EXPECT_THROW(FuseMeshWithProbabilities(p.points, p.triangles, p.probability, 1, ShapeFusionParameters()), Error);
}
} // namespace
} // namespace canopy
