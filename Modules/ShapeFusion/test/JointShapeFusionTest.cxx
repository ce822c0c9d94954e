// Joint fusion of two touching structures: one ellipsoid cut in two (a head and a tail sharing a face, like
// the hippocampus's), each half fitted by an ellipsoid mesh that stops short of the shared face, and a
// noisy 3-class probability map sure of the foreground there but not of which half. Fused one at a time
// each structure leaves the gap between the meshes to neither (its "rest" holds the other structure);
// fused jointly the gap goes to the structures, split by the classifier's first-versus-second evidence and
// the two distances, which per-structure decisions (however their overlaps are merged) cannot do. Also:
// one mesh gives the one-structure fusion exactly; deep inside overlapping meshes the deeper wins.
#include "canopyJointShapeFusion.h"

#include "ShapeFusionTestPhantoms.h"
#include "canopy/Errors.h"
#include "canopyShapeOutputs.h"

#include <gtest/gtest.h>

#include <cmath>

namespace canopy
{
namespace
{
using testing::Ellipsoid;
using testing::EllipsoidDistance;
using testing::EllipsoidMesh;
using FloatImage = itk::Image<float, 3>;
using VectorVolume = itk::VectorImage<float, 3>;
constexpr int kSize = 48;

double
Dice(const LabelImage * a, int labelA, const LabelImage * b, int labelB)
{
  std::int64_t both = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a->GetBufferedRegion().GetNumberOfPixels(); ++i)
  {
    const bool x = a->GetBufferPointer()[i] == labelA, y = b->GetBufferPointer()[i] == labelB;
    both += x && y;
    na += x;
    nb += y;
  }
  return na + nb ? 2.0 * double(both) / double(na + nb) : 1.0;
}

FloatImage::Pointer
Component(const VectorVolume * map, int component)
{
  auto image = FloatImage::New();
  image->CopyInformation(map);
  image->SetRegions(map->GetLargestPossibleRegion());
  image->Allocate();
  const std::size_t n = image->GetBufferedRegion().GetNumberOfPixels(), c = map->GetNumberOfComponentsPerPixel();
  for (std::size_t i = 0; i < n; ++i)
    image->GetBufferPointer()[i] = map->GetBufferPointer()[i * c + std::size_t(component)];
  return image;
}

struct TwoStructures
{
  Ellipsoid                    whole;   // truth: label 1 its part x < 24, label 2 its part x >= 24
  std::vector<FusionStructure> meshes;  // fitted: labels 1 and 2, ellipsoids short of the shared boundary
  LabelImage::Pointer          truth;   // 0, 1, 2
  VectorVolume::Pointer        classes; // background, 1, 2
};

/** One ellipsoid (radii 18, 8, 6 mm) cut in two by the plane x = 24 (a head and a tail sharing a face);
 * each half fitted by an ellipsoid that ends 1 mm short of the plane on the long axis and, being round,
 * farther off it (a gap at the shared face), the second shifted by `secondShiftMm` along x (negative: the
 * meshes overlap). Probabilities: foreground the logistic of twice the distance to the whole ellipsoid,
 * within it the first versus the second the logistic of twice the distance to the plane, each with
 * correlated noise of standard deviation 2 in log-odds: at the shared face the classifier is sure of the
 * foreground and unsure which half, as at the hippocampus's head and tail. */
TwoStructures
MakeTwoStructures(unsigned seed, double secondShiftMm = 0)
{
  TwoStructures t;
  t.whole.centre = { 24, 24, 24 };
  t.whole.radii = { 18, 8, 6 };
  Ellipsoid first, second;
  first.centre = { 14, 24, 24 };
  first.radii = { 9, 7.8, 5.8 };
  second = first;
  second.centre.x() = 34 + secondShiftMm;
  const auto meshA = EllipsoidMesh(first), meshB = EllipsoidMesh(second);
  t.meshes = { { meshA.points, meshA.triangles, 1 }, { meshB.points, meshB.triangles, 2 } };

  const std::vector<float> foregroundNoise = testing::CorrelatedNoise(seed, 2.0, kSize);
  const std::vector<float> splitNoise = testing::CorrelatedNoise(seed + 100, 2.0, kSize);
  t.truth = LabelImage::New();
  t.truth->SetRegions(LabelImage::SizeType{ { kSize, kSize, kSize } });
  t.truth->Allocate();
  t.classes = VectorVolume::New();
  t.classes->SetRegions(VectorVolume::SizeType{ { kSize, kSize, kSize } });
  t.classes->SetNumberOfComponentsPerPixel(3);
  t.classes->Allocate();
  std::size_t i = 0;
  for (int z = 0; z < kSize; ++z)
    for (int y = 0; y < kSize; ++y)
      for (int x = 0; x < kSize; ++x, ++i)
      {
        const double d = EllipsoidDistance(t.whole, Eigen::Vector3d(x, y, z));
        t.truth->GetBufferPointer()[i] = d > 0 ? 0 : x < 24 ? 1 : 2;
        const double foreground = 1.0 / (1.0 + std::exp(2.0 * d - foregroundNoise[i]));
        const double isFirst = 1.0 / (1.0 + std::exp(2.0 * (x + 0.5 - 24) - splitNoise[i]));
        float *      p = t.classes->GetBufferPointer() + 3 * i;
        p[0] = float(1.0 - foreground);
        p[1] = float(foreground * isFirst);
        p[2] = float(foreground * (1.0 - isFirst));
      }
  return t;
}

ShapeFusionParameters
AtLambdaZero(double voxelWeight, double widthMm)
{
  ShapeFusionParameters p;
  p.voxelWeight = voxelWeight;
  p.widthMm = widthMm;
  p.lambda = 0;
  return p;
}

/** Each structure fused alone (one-vs-rest with its own class's probability), as fuse-shape does with
 * one mesh. */
std::vector<LabelImage::Pointer>
SeparateFusions(const TwoStructures & t, const ShapeFusionParameters & parameters)
{
  std::vector<LabelImage::Pointer> fused;
  for (const auto & s : t.meshes)
    fused.push_back(
      FuseMeshWithProbabilities(s.points, s.triangles, Component(t.classes, s.label), s.label, parameters));
  return fused;
}

/** The separate fusions in one map, an overlap going to the mesh the voxel lies deeper in: per-structure
 * decisions with the joint form's own overlap rule, so the joint fusion must beat this too. */
LabelImage::Pointer
MergedByDepth(const TwoStructures & t, const std::vector<LabelImage::Pointer> & separate)
{
  std::vector<std::vector<float>> depth;
  for (const auto & s : t.meshes)
    depth.push_back(
      SignedDistanceToMesh(s.points, s.triangles, VoxelizeMesh(s.points, s.triangles, t.truth, 1), 1e3, true));
  auto merged = LabelImage::New();
  merged->CopyInformation(t.truth);
  merged->SetRegions(t.truth->GetLargestPossibleRegion());
  merged->Allocate();
  for (std::size_t i = 0; i < depth[0].size(); ++i)
  {
    const bool a = separate[0]->GetBufferPointer()[i] != 0, b = separate[1]->GetBufferPointer()[i] != 0;
    merged->GetBufferPointer()[i] = a && b ? (depth[0][i] <= depth[1][i] ? 1 : 2) : a ? 1 : b ? 2 : 0;
  }
  return merged;
}

TEST(JointShapeFusion, BeatsSeparateFusionsAtTheSharedFace)
{
  for (unsigned seed : { 1u, 2u, 3u })
  {
    const TwoStructures t = MakeTwoStructures(seed); // a gap at the shared face, no overlap
    for (const auto & [w, s] : { std::pair{ 1.0, 1.0 }, std::pair{ 0.25, 0.5 } })
    {
      const ShapeFusionParameters            parameters = AtLambdaZero(w, s);
      const std::vector<LabelImage::Pointer> separate = SeparateFusions(t, parameters);
      const LabelImage::Pointer              merged = MergedByDepth(t, separate);
      JointShapeFusionStatistics             statistics;
      const LabelImage::Pointer joint = FuseMeshesWithClassProbabilities(t.meshes, t.classes, parameters, &statistics);

      std::int64_t twice = 0, neither = 0, other = 0;
      for (std::size_t i = 0; i < joint->GetBufferedRegion().GetNumberOfPixels(); ++i)
      {
        const bool a = separate[0]->GetBufferPointer()[i] != 0, b = separate[1]->GetBufferPointer()[i] != 0;
        twice += a && b;
        neither += !a && !b && t.truth->GetBufferPointer()[i] != 0;
        const int v = joint->GetBufferPointer()[i];
        other += v != 0 && v != 1 && v != 2;
      }
      std::cout << "separate fusions overlap in " << twice << " voxels, miss " << neither
                << " of the structures; meshes overlap in " << statistics.overlapVoxels << "\n";
      EXPECT_EQ(other, 0);
      double gain = 0;
      for (const int label : { 1, 2 })
      {
        const double alone = Dice(separate[std::size_t(label - 1)], label, t.truth, label);
        const double byDepth = Dice(merged, label, t.truth, label);
        const double jointly = Dice(joint, label, t.truth, label);
        std::cout << "seed " << seed << ", w " << w << ", s " << s << ", label " << label << ": Dice alone " << alone
                  << ", separate merged by depth " << byDepth << ", joint " << jointly << '\n';
        EXPECT_GT(jointly, alone + 0.003);
        EXPECT_GT(jointly, byDepth + 0.003);
        gain += jointly - std::max(alone, byDepth);
      }
      EXPECT_GT(gain, 0.012); // per-structure decisions gain nothing, whatever merges them
    }
  }
}

TEST(JointShapeFusion, OneStructureIsTheOneStructureFusion)
{
  const TwoStructures   t = MakeTwoStructures(4);
  ShapeFusionParameters shifted = AtLambdaZero(0.25, 0.5); // the offset enters both forms alike
  shifted.offsetMm = 0.4;
  for (const auto & parameters : { AtLambdaZero(1, 1), AtLambdaZero(0.25, 0.5), shifted })
    for (const auto & s : t.meshes)
    {
      const auto alone =
        FuseMeshWithProbabilities(s.points, s.triangles, Component(t.classes, s.label), s.label, parameters);
      const auto joint = FuseMeshesWithClassProbabilities({ s }, t.classes, parameters);
      for (std::size_t i = 0; i < alone->GetBufferedRegion().GetNumberOfPixels(); ++i)
        ASSERT_EQ(joint->GetBufferPointer()[i], alone->GetBufferPointer()[i]) << "label " << s.label << ", voxel " << i;
    }
}

TEST(JointShapeFusion, BeyondTheBandsTheMeshesDecideAndTheDeeperWins)
{
  const TwoStructures             t = MakeTwoStructures(5, -8); // the meshes overlap by 6 mm
  std::vector<std::vector<float>> depth;
  for (const auto & s : t.meshes)
    depth.push_back(
      SignedDistanceToMesh(s.points, s.triangles, VoxelizeMesh(s.points, s.triangles, t.truth, 1), 1e3, true));
  for (const int claimed : { 0, 1, 2 }) // the classifier claims everything for one class
  {
    auto map = VectorVolume::New();
    map->CopyInformation(t.classes);
    map->SetRegions(t.classes->GetLargestPossibleRegion());
    map->SetNumberOfComponentsPerPixel(3);
    map->Allocate();
    for (std::size_t i = 0; i < depth[0].size(); ++i)
      for (int c = 0; c < 3; ++c)
        map->GetBufferPointer()[3 * i + std::size_t(c)] = c == claimed ? 1.0f : 0.0f;
    ShapeFusionParameters parameters = AtLambdaZero(5, 1); // the classifier wins wherever it may
    parameters.bandMm = 1.5;
    const auto   joint = FuseMeshesWithClassProbabilities(t.meshes, map, parameters);
    std::int64_t deepOverlap = 0, inBand = 0, claimedInBand = 0;
    for (std::size_t i = 0; i < depth[0].size(); ++i)
    {
      const float a = depth[0][i], b = depth[1][i];
      const int   v = joint->GetBufferPointer()[i];
      if (a < -1.5f || b < -1.5f)
      {
        const int deeper = a <= b ? 1 : 2;
        ASSERT_EQ(v, deeper) << i;
        deepOverlap += a < 0 && b < 0 && a < -1.5f && b < -1.5f;
      }
      else if (a > 1.5f && b > 1.5f)
        ASSERT_EQ(v, 0) << i;
      else if (claimed == 0 || std::abs(depth[std::size_t(claimed - 1)][i]) <= 1.5f)
      {
        ++inBand; // a voxel in the band of the claimed class (or of any, for the rest): the claim decides
        claimedInBand += v == claimed;
      }
    }
    if (claimed == 0)
      EXPECT_GT(deepOverlap, 20) << "the phantom's meshes overlap beyond both bands";
    EXPECT_GT(inBand, 1000);
    EXPECT_EQ(claimedInBand, inBand);
  }
}

TEST(JointShapeFusion, BadInputIsAnError)
{
  const TwoStructures t = MakeTwoStructures(6);
  const auto          fuse = [&](std::vector<FusionStructure> s, ShapeFusionParameters p, const VectorVolume * map)
  { return FuseMeshesWithClassProbabilities(s, map, p); };
  const ShapeFusionParameters ok = AtLambdaZero(1, 1);
  EXPECT_NO_THROW(fuse(t.meshes, ok, t.classes));
  const auto message = [&](std::vector<FusionStructure> s, ShapeFusionParameters p, const VectorVolume * map)
  {
    try
    {
      fuse(s, p, map);
    }
    catch (const Error & e)
    {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(t.meshes, ShapeFusionParameters(), t.classes).find("lambda must be 0, not 0.3"), std::string::npos);
  auto three = t.meshes;
  three[1].label = 3;
  EXPECT_NE(message(three, ok, t.classes).find("label 3 has no class in the probability image (its 3 components"),
            std::string::npos);
  auto twice = t.meshes;
  twice[1].label = 1;
  EXPECT_NE(message(twice, ok, t.classes).find("label 1 is given to two structures"), std::string::npos);
  auto zero = t.meshes;
  zero[0].label = 0;
  EXPECT_NE(message(zero, ok, t.classes).find("label 0 has no class"), std::string::npos);
  EXPECT_NE(message({}, ok, t.classes).find("no structure"), std::string::npos);

  auto elsewhere = VectorVolume::New(); // the map of another volume: the meshes lie off its grid
  elsewhere->Graft(t.classes);
  VectorVolume::PointType origin;
  origin.Fill(100.0);
  elsewhere->SetOrigin(origin);
  EXPECT_NE(message(t.meshes, ok, elsewhere).find("the mesh of label 1 holds no voxel centre"), std::string::npos);

  t.classes->GetBufferPointer()[3 * (kSize * kSize * 24 + kSize * 24 + 24) + 2] = std::nanf("");
  EXPECT_NE(message(t.meshes, ok, t.classes).find("non-finite probability for label 2"), std::string::npos);
}
} // namespace
} // namespace canopy
