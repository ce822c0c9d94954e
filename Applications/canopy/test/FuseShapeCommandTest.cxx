// `canopy fuse-shape` end to end on an ellipsoid phantom written here: a mesh off the true surface
// (.vtk) and a 3-class probability map (as predict-forest --mode distribution writes it) whose class 1
// is the true ellipsoid with correlated noise; the fused label map beats the mesh. Bad inputs: a
// component the map lacks, a value outside [0, 1], fusion options without --probabilities; a failed run
// leaves no output. The joint form (two meshes, one --label each, one multi-label map) on two touching
// ellipsoids whose meshes overlap, and its bad inputs.
#include "../../../Modules/ShapeModel/test/ShapeTestPhantoms.h"
#include "canopyMeshIO.h"
#include "canopyShapeOutputs.h"
#include "canopyTesting.h"

#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkVectorImage.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

namespace
{
namespace fs = std::filesystem;
using namespace canopy;
using VectorVolume = itk::VectorImage<float, 3>;
constexpr int kSize = 40;

canopy::testing::CommandRun
Canopy(const std::string & arguments, const std::string & name)
{
  return canopy::testing::RunCommand(CANOPY_EXECUTABLE, arguments, name);
}

double
Dice(const LabelImage * a, const LabelImage * b)
{
  std::int64_t both = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a->GetBufferedRegion().GetNumberOfPixels(); ++i)
  {
    const bool x = a->GetBufferPointer()[i] != 0, y = b->GetBufferPointer()[i] != 0;
    both += x && y;
    na += x;
    nb += y;
  }
  return 2.0 * double(both) / double(na + nb);
}

struct Files
{
  std::string         mesh, probabilities;
  LabelImage::Pointer truth, meshLabels;
};

/** Truth: an ellipsoid (radii 11, 8, 6 mm); the mesh 1.8 mm off (1.5 along x, 1 along y) and 10% too long; class 1 of
 * the map: the logistic of twice the (radial) distance to the truth with noise averaged over 3^3 voxels
 * (standard deviation 2 in log-odds), class 0 its complement, class 2 zero. */
const Files &
Phantom()
{
  static Files f = []
  {
    Files                      files;
    canopy::testing::Ellipsoid truth;
    truth.radii = { 11, 8, 6 };
    truth.centre = { 20, 20, 20 };
    canopy::testing::Ellipsoid fitted = truth;
    fitted.centre += Eigen::Vector3d(1.5, 1.0, 0.0);
    fitted.radii(0) *= 1.1;
    const auto mesh = canopy::testing::AnalyticEllipsoidMesh(fitted);
    files.mesh = canopy::testing::OutputPath("fuse-shape-mesh.vtk");
    WriteMesh(mesh, files.mesh, "mesh");
    files.truth = canopy::testing::MakeEllipsoidLabels(truth, 1, kSize);

    std::mt19937_64                  random(7);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<double>              white(std::size_t(kSize) * kSize * kSize);
    for (auto & w : white)
      w = normal(random);
    auto map = VectorVolume::New();
    map->SetRegions(VectorVolume::SizeType{ { kSize, kSize, kSize } });
    map->SetNumberOfComponentsPerPixel(3);
    map->Allocate();
    std::size_t i = 0;
    for (int z = 0; z < kSize; ++z)
      for (int y = 0; y < kSize; ++y)
        for (int x = 0; x < kSize; ++x, ++i)
        {
          double noise = 0;
          for (int dz = -1; dz <= 1; ++dz)
            for (int dy = -1; dy <= 1; ++dy)
              for (int dx = -1; dx <= 1; ++dx)
              {
                const int u = std::clamp(x + dx, 0, kSize - 1), v = std::clamp(y + dy, 0, kSize - 1),
                          w = std::clamp(z + dz, 0, kSize - 1);
                noise += white[std::size_t(u) + kSize * (std::size_t(v) + kSize * std::size_t(w))];
              }
          const Eigen::Vector3d   local = (Eigen::Vector3d(x, y, z) - truth.centre).cwiseQuotient(truth.radii);
          const double            distance = (local.norm() - 1.0) * truth.radii.minCoeff();
          const float             p = float(1.0 / (1.0 + std::exp(2.0 * distance - 2.0 * noise / std::sqrt(27.0))));
          VectorVolume::PixelType pixel(3);
          pixel[0] = 1.0f - p;
          pixel[1] = p;
          pixel[2] = 0.0f;
          map->SetPixel({ { x, y, z } }, pixel);
        }
    files.probabilities = canopy::testing::OutputPath("fuse-shape-probabilities.nii.gz");
    itk::WriteImage(map, files.probabilities);
    files.meshLabels = VoxelizeMesh(MeshPoints(mesh), MeshTriangles(mesh), map, 1);
    return files;
  }();
  return f;
}

TEST(FuseShapeCommand, FusedLabelBeatsTheMesh)
{
  const Files &     f = Phantom();
  const std::string output = canopy::testing::OutputPath("fuse-shape-fused.nii.gz");
  const std::string report = canopy::testing::OutputPath("fuse-shape-report.json");
  fs::remove(output);
  const auto run = Canopy("fuse-shape --mesh " + f.mesh + " --probabilities " + f.probabilities +
                            " --label 1 --output " + output + " --report " + report,
                          "fuse-shape-ok");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto   fused = itk::ReadImage<LabelImage>(output);
  const double meshDice = Dice(f.meshLabels, f.truth), fusedDice = Dice(fused, f.truth);
  std::cout << "Dice mesh " << meshDice << ", fused " << fusedDice << '\n';
  EXPECT_GT(fusedDice, meshDice + 0.01);
  EXPECT_TRUE(fs::exists(report));

  // Class 2 is empty: fused with a confident "nowhere", the label shrinks but the far inside stays.
  const std::string output2 = canopy::testing::OutputPath("fuse-shape-fused2.nii.gz");
  const auto        run2 = Canopy("fuse-shape --mesh " + f.mesh + " --probabilities " + f.probabilities +
                             " --label 2 --fusion-band 2 --output " + output2,
                           "fuse-shape-label2");
  ASSERT_EQ(run2.status, 0) << run2.err;
  const auto shrunk = itk::ReadImage<LabelImage>(output2);
  int        value = 0;
  for (std::size_t i = 0; i < shrunk->GetBufferedRegion().GetNumberOfPixels(); ++i)
    value = std::max(value, shrunk->GetBufferPointer()[i]);
  EXPECT_EQ(value, 2);
}

TEST(FuseShapeCommand, BadInputIsAnErrorAndLeavesNoOutput)
{
  const Files &     f = Phantom();
  const std::string output = canopy::testing::OutputPath("fuse-shape-never.nii.gz");
  fs::remove(output);
  auto run = Canopy("fuse-shape --mesh " + f.mesh + " --probabilities " + f.probabilities +
                      " --probability-component 3 --output " + output,
                    "fuse-shape-component");
  EXPECT_NE(run.status, 0);
  EXPECT_LT(run.status, 128);
  EXPECT_NE(run.err.find("no component 3 (the file has 3"), std::string::npos) << run.err;
  run = Canopy("fuse-shape --mesh " + f.mesh + " --probabilities " + f.probabilities + " --label 4 --output " + output,
               "fuse-shape-label");
  EXPECT_NE(run.err.find("no component 4"), std::string::npos) << run.err;
  run = Canopy("fuse-shape --mesh " + f.mesh + " --probabilities " + f.probabilities + " --fusion-width 0 --output " +
                 output,
               "fuse-shape-width");
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.err.find("--fusion-width"), std::string::npos) << run.err;
  run =
    Canopy("segment-shape --shape s.json --input i.nii.gz --output o.nii.gz --fusion-lambda 1", "segment-shape-fusion");
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.err.find("--fusion-lambda requires --probabilities"), std::string::npos) << run.err;

  // Not a probability: the intensity volume given by mistake.
  auto image = itk::Image<float, 3>::New();
  image->SetRegions(itk::Image<float, 3>::SizeType{ { kSize, kSize, kSize } });
  image->Allocate();
  image->FillBuffer(120.0f);
  const std::string intensities = canopy::testing::OutputPath("fuse-shape-intensities.nii.gz");
  itk::WriteImage(image, intensities);
  run = Canopy("fuse-shape --mesh " + f.mesh + " --probabilities " + intensities + " --output " + output,
               "fuse-shape-intensities");
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.err.find("is not a probability (120"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(output));
}

/** Two touching structures: truth 1 an ellipsoid, truth 2 a second ellipsoid cut back by the first; class
 * probabilities the logistic of twice the distance (3 classes, no noise); mesh 1 shifted 2 mm into
 * structure 2, mesh 2 the whole second ellipsoid (so the meshes overlap where 1 and 2 touch). `origin`:
 * the map's origin (another volume's grid when not 0). */
struct TwoStructureFiles
{
  std::string         meshA, meshB, probabilities, elsewhere;
  LabelImage::Pointer truth;
};

const TwoStructureFiles &
TwoStructures()
{
  static TwoStructureFiles f = []
  {
    TwoStructureFiles          files;
    canopy::testing::Ellipsoid a, b;
    a.centre = { 15, 20, 20 };
    a.radii = { 8, 7, 6 };
    b.centre = { 28, 20, 20 };
    b.radii = { 8, 6, 5 };
    canopy::testing::Ellipsoid fittedA = a;
    fittedA.centre.x() += 2.0;
    files.meshA = canopy::testing::OutputPath("fuse-shape-joint-a.vtk");
    files.meshB = canopy::testing::OutputPath("fuse-shape-joint-b.vtk");
    WriteMesh(canopy::testing::AnalyticEllipsoidMesh(fittedA, 4), files.meshA, "mesh");
    WriteMesh(canopy::testing::AnalyticEllipsoidMesh(b, 4), files.meshB, "mesh");
    files.truth = LabelImage::New();
    files.truth->SetRegions(LabelImage::SizeType{ { kSize, kSize, kSize } });
    files.truth->Allocate();
    auto map = VectorVolume::New();
    map->SetRegions(VectorVolume::SizeType{ { kSize, kSize, kSize } });
    map->SetNumberOfComponentsPerPixel(3);
    map->Allocate();
    const auto distance = [](const canopy::testing::Ellipsoid & e, const Eigen::Vector3d & x)
    { return ((x - e.centre).cwiseQuotient(e.radii).norm() - 1.0) * e.radii.minCoeff(); };
    std::size_t i = 0;
    for (int z = 0; z < kSize; ++z)
      for (int y = 0; y < kSize; ++y)
        for (int x = 0; x < kSize; ++x, ++i)
        {
          const double da = distance(a, Eigen::Vector3d(x, y, z)), db = distance(b, Eigen::Vector3d(x, y, z));
          files.truth->GetBufferPointer()[i] = da <= 0 ? 1 : db <= 0 ? 2 : 0;
          const double foreground = 1.0 / (1.0 + std::exp(2.0 * std::min(da, db)));
          const double isA = 1.0 / (1.0 + std::exp(2.0 * da));
          float *      p = map->GetBufferPointer() + 3 * i;
          p[0] = float(1.0 - foreground);
          p[1] = float(foreground * isA);
          p[2] = float(foreground * (1.0 - isA));
        }
    files.probabilities = canopy::testing::OutputPath("fuse-shape-joint-probabilities.nii.gz");
    itk::WriteImage(map, files.probabilities);
    VectorVolume::PointType origin;
    origin.Fill(200.0);
    map->SetOrigin(origin);
    files.elsewhere = canopy::testing::OutputPath("fuse-shape-joint-elsewhere.nii.gz");
    itk::WriteImage(map, files.elsewhere);
    return files;
  }();
  return f;
}

double
ClassDice(const LabelImage * a, const LabelImage * b, int label)
{
  std::int64_t both = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a->GetBufferedRegion().GetNumberOfPixels(); ++i)
  {
    const bool x = a->GetBufferPointer()[i] == label, y = b->GetBufferPointer()[i] == label;
    both += x && y;
    na += x;
    nb += y;
  }
  return 2.0 * double(both) / double(na + nb);
}

TEST(FuseShapeCommand, JointFusionOfTwoMeshesIsOneMapBetterThanEachAlone)
{
  const TwoStructureFiles & f = TwoStructures();
  const std::string         options = " --probabilities " + f.probabilities + " --fusion-lambda 0";
  const std::string         output = canopy::testing::OutputPath("fuse-shape-joint.nii.gz");
  const std::string         report = canopy::testing::OutputPath("fuse-shape-joint-report.json");
  fs::remove(output);
  const auto run = Canopy("fuse-shape --mesh " + f.meshA + " --label 1 --mesh " + f.meshB + " --label 2" + options +
                            " --output " + output + " --report " + report,
                          "fuse-shape-joint");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("meshes overlap in "), std::string::npos) << run.out;
  const auto    joint = itk::ReadImage<LabelImage>(output);
  std::ifstream reportStream(report);
  const auto    json = nlohmann::json::parse(reportStream);
  EXPECT_EQ(json["structures"].size(), 2u);
  EXPECT_GT(json["fusion"]["overlapVoxels"].get<int>(), 50);
  for (const int label : { 1, 2 })
  {
    const std::string alone = canopy::testing::OutputPath("fuse-shape-alone" + std::to_string(label) + ".nii.gz");
    const auto        separate = Canopy("fuse-shape --mesh " + (label == 1 ? f.meshA : f.meshB) + " --label " +
                                   std::to_string(label) + options + " --output " + alone,
                                 "fuse-shape-alone" + std::to_string(label));
    ASSERT_EQ(separate.status, 0) << separate.err;
    const double aloneDice = ClassDice(itk::ReadImage<LabelImage>(alone), f.truth, label);
    const double jointDice = ClassDice(joint, f.truth, label);
    std::cout << "label " << label << ": Dice alone " << aloneDice << ", joint " << jointDice << '\n';
    EXPECT_GT(jointDice, aloneDice + 0.004);
  }
}

std::int64_t
Labelled(const LabelImage * a, int label)
{
  std::int64_t n = 0;
  for (std::size_t i = 0; i < a->GetBufferedRegion().GetNumberOfPixels(); ++i)
    n += a->GetBufferPointer()[i] == label;
  return n;
}

TEST(FuseShapeCommand, JointFusionOffsetEnsembleAndSmoothing)
{
  const TwoStructureFiles & f = TwoStructures();
  const std::string         two =
    "fuse-shape --mesh " + f.meshA + " --label 1 --mesh " + f.meshB + " --label 2 --fusion-lambda 0";
  const auto fuse = [&](const std::string & options, const std::string & name)
  {
    const std::string output = canopy::testing::OutputPath("fuse-shape-" + name + ".nii.gz");
    const std::string report = canopy::testing::OutputPath("fuse-shape-" + name + ".json");
    const auto        run =
      Canopy(two + " --probabilities " + f.probabilities + options + " --output " + output + " --report " + report,
             "fuse-shape-" + name);
    EXPECT_EQ(run.status, 0) << name << ": " << run.err;
    std::ifstream reportStream(report);
    return std::pair{ itk::ReadImage<LabelImage>(output), nlohmann::json::parse(reportStream) };
  };
  // The mean of a map and itself is the map: the ensemble's labels are the single map's.
  const auto [plain, plainReport] = fuse("", "plain");
  const auto [same, sameReport] = fuse(" --ensemble-probabilities " + f.probabilities, "ensemble-self");
  for (std::size_t i = 0; i < plain->GetBufferedRegion().GetNumberOfPixels(); ++i)
    ASSERT_EQ(same->GetBufferPointer()[i], plain->GetBufferPointer()[i]) << i;
  EXPECT_EQ(sameReport["fusion"]["ensembleProbabilities"].size(), 1u);

  // The offset grows (> 0) or shrinks (< 0) both structures; without voxel weight by exactly the meshes' shift.
  const auto [grown, grownReport] = fuse(" --fusion-voxel-weight 0 --fusion-offset 0.6", "offset-grown");
  const auto [mesh, meshReport] = fuse(" --fusion-voxel-weight 0", "offset-none");
  const auto [shrunk, shrunkReport] = fuse(" --fusion-voxel-weight 0 --fusion-offset -0.6", "offset-shrunk");
  EXPECT_EQ(grownReport["fusion"]["offsetMm"].get<double>(), 0.6);
  for (const int label : { 1, 2 })
  {
    EXPECT_GT(Labelled(grown, label), Labelled(mesh, label) + 100) << label;
    EXPECT_LT(Labelled(shrunk, label), Labelled(mesh, label) - 100) << label;
  }

  // Smoothing the class maps keeps both structures and is reported.
  const auto [smoothed, smoothedReport] = fuse(" --probability-smoothing 1", "smoothed");
  EXPECT_EQ(smoothedReport["fusion"]["probabilitySmoothingMm"].get<double>(), 1.0);
  for (const int label : { 1, 2 })
    EXPECT_NEAR(
      double(Labelled(smoothed, label)), double(Labelled(plain, label)), 0.2 * double(Labelled(plain, label)));

  // A map of another grid is an error naming it.
  const auto run = Canopy(two + " --probabilities " + f.probabilities + " --ensemble-probabilities " + f.elsewhere +
                            " --output " + canopy::testing::OutputPath("fuse-shape-ensemble-never.nii.gz"),
                          "fuse-shape-ensemble-grid");
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.err.find("--ensemble-probabilities " + f.elsewhere + ": not on the grid of --probabilities"),
            std::string::npos)
    << run.err;
}

TEST(FuseShapeCommand, JointFusionBadInputIsAnErrorAndLeavesNoOutput)
{
  const TwoStructureFiles & f = TwoStructures();
  const std::string         output = canopy::testing::OutputPath("fuse-shape-joint-never.nii.gz");
  const std::string         report = canopy::testing::OutputPath("fuse-shape-joint-never.json");
  fs::remove(output);
  fs::remove(report);
  const std::string two = "fuse-shape --mesh " + f.meshA + " --mesh " + f.meshB;
  const auto        expect = [&](const std::string & arguments, const std::string & name, const std::string & message)
  {
    const auto run = Canopy(arguments + " --output " + output + " --report " + report, name);
    EXPECT_NE(run.status, 0) << name;
    EXPECT_LT(run.status, 128) << name;
    EXPECT_NE(run.err.find(message), std::string::npos) << name << ": " << run.err;
    EXPECT_FALSE(fs::exists(output)) << name;
    EXPECT_FALSE(fs::exists(report)) << name;
  };
  expect(two + " --label 1 --probabilities " + f.probabilities + " --fusion-lambda 0",
         "fuse-shape-joint-count",
         "--label: 1 value(s) for 2 --mesh; give one --label per --mesh");
  expect(two + " --label 1 --label 3 --probabilities " + f.probabilities + " --fusion-lambda 0",
         "fuse-shape-joint-class",
         "--label 3 (of --mesh " + f.meshB + "): --probabilities " + f.probabilities + " has no class 3");
  expect(two + " --label 1 --label 1 --probabilities " + f.probabilities + " --fusion-lambda 0",
         "fuse-shape-joint-twice",
         "label 1 is given to two structures");
  expect(two + " --label 1 --label 2 --probabilities " + f.elsewhere + " --fusion-lambda 0",
         "fuse-shape-joint-grid",
         "with --probabilities " + f.elsewhere + ": joint shape fusion: the mesh of label 1 holds no voxel centre");
  expect(two + " --label 1 --label 2 --probabilities " + f.probabilities,
         "fuse-shape-joint-lambda",
         "--fusion-lambda: must be 0 with several --mesh, not 0.3");
  expect(two + " --label 1 --label 2 --probabilities " + f.probabilities +
           " --fusion-lambda 0 --probability-component 1",
         "fuse-shape-joint-component",
         "--probability-component: only with one --mesh");
}
} // namespace
