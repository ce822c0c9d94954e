#include "canopy/AtomicFile.h"
#include "canopyPBTClassification.h"
#include "canopyPBTModelFile.h"
#include "canopyPBTVolumeTraining.h"
#include "canopyTesting.h"
#include "itkPBTClassificationImageFilter.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace
{
using namespace canopy;

MaskVolume::Pointer
MaskOf(const FloatVolume * image, float threshold)
{
  auto mask = MaskVolume::New();
  mask->CopyInformation(image);
  mask->SetRegions(image->GetLargestPossibleRegion());
  mask->Allocate();
  const auto n = image->GetLargestPossibleRegion().GetNumberOfPixels();
  for (itk::SizeValueType i = 0; i < n; ++i)
    mask->GetBufferPointer()[i] = image->GetBufferPointer()[i] > threshold;
  return mask;
}

LabelledVolume
Phantom(std::uint64_t seed, double cx)
{
  const double c[3] = { cx, 22, 18 }, r[3] = { 11, 9, 8 };
  auto clean = canopy::testing::MakeEllipsoidPhantom(48, 44, 36, c, r, 100.0f, 20.0f, 0.0f, seed);
  auto noisy = canopy::testing::MakeEllipsoidPhantom(48, 44, 36, c, r, 100.0f, 20.0f, 15.0f, seed);
  return LabelledVolume{ noisy, MaskOf(clean, 60.0f), "phantom" + std::to_string(seed) };
}

PBTVolumeTrainingOptions
SmallOptions()
{
  PBTVolumeTrainingOptions o;
  o.workingSpacing = { 2.0, 2.4, 5.0 }; // the phantom's spacing is 1 x 1.2 x 2.5: halve the resolution
  o.sampling.positivesPerVolume = 600;
  o.sampling.negativesPerVolume = 600;
  o.featureBankSize = 200;
  o.sampleBoxMm = { 24, 24, 30 };
  o.pbt.maxDepth = 3;
  o.pbt.weakLearnersPerNode = 8;
  o.pbt.featureCandidatesPerRound = 50;
  o.pbt.minSamplesToSplit = 50;
  return o;
}

TEST(VolumePreparation, NormalizationMapsPercentilesToUnitRange)
{
  auto image = canopy::testing::MakeRandomVolume<float>(30, 30, 30, 100, 200, 4);
  image->SetPixel({ { 1, 1, 1 } }, std::nanf(""));
  const auto range = NormalizeIntensities(image, [] { IntensityNormalization n; n.lowPercentile = 0.0; n.highPercentile = 100.0; return n; }());
  EXPECT_NEAR(range[0], 100.0, 0.1);
  EXPECT_NEAR(range[1], 200.0, 0.1);
  float lo = 1e9f, hi = -1e9f;
  for (itk::SizeValueType i = 0; i < 27000; ++i)
  {
    ASSERT_TRUE(std::isfinite(image->GetBufferPointer()[i]));
    lo = std::min(lo, image->GetBufferPointer()[i]);
    hi = std::max(hi, image->GetBufferPointer()[i]);
  }
  EXPECT_NEAR(lo, 0.0f, 1e-3f);
  EXPECT_NEAR(hi, 1.0f, 1e-3f);
}

TEST(VolumePreparation, WindowNormalizationClipsAndRoundTrips)
{
  auto image = canopy::testing::MakeRandomVolume<float>(10, 10, 10, -3000, 3000, 6);
  image->SetPixel({ { 0, 0, 0 } }, std::nanf(""));
  IntensityNormalization window;
  window.method = "window";
  window.windowLow = -200;
  window.windowHigh = 300;
  auto copy = canopy::testing::MakeVolume<float>(10, 10, 10);
  std::copy_n(image->GetBufferPointer(), 1000, copy->GetBufferPointer());
  NormalizeIntensities(image, window);
  for (int i = 0; i < 1000; ++i)
  {
    const float in = copy->GetBufferPointer()[i], out = image->GetBufferPointer()[i];
    const float expected = std::isfinite(in) ? (std::min(300.0f, std::max(-200.0f, in)) + 200.0f) / 500.0f : 0.0f;
    ASSERT_NEAR(out, expected, 1e-6f) << in;
  }
  nlohmann::json j;
  ToJson(window, j);
  const auto back = IntensityNormalizationFromJson(j, "test");
  EXPECT_EQ(back.method, "window");
  EXPECT_EQ(back.windowLow, -200.0);
  EXPECT_EQ(back.windowHigh, 300.0);
  EXPECT_THROW(IntensityNormalizationFromJson(nlohmann::json::parse(R"({"method": "window", "windowLow": 5, "windowHigh": 1})"), "m.json"),
               itk::ExceptionObject);
}

TEST(VolumePreparation, ResampleToSpacingCoversTheSameExtent)
{
  auto image = canopy::testing::MakeRandomVolume<float>(40, 30, 20, 0, 1, 2); // spacing 1 x 1.2 x 2.5
  auto coarse = ResampleToSpacing(image, { 2.0, 2.4, 5.0 });
  EXPECT_EQ(coarse->GetLargestPossibleRegion().GetSize()[0], 20u);
  EXPECT_EQ(coarse->GetLargestPossibleRegion().GetSize()[2], 10u);
  EXPECT_EQ(coarse->GetDirection(), image->GetDirection());
  // Physical centre preserved.
  itk::ContinuousIndex<double, 3> a, b;
  for (int d = 0; d < 3; ++d)
  {
    a[d] = (image->GetLargestPossibleRegion().GetSize()[d] - 1) / 2.0;
    b[d] = (coarse->GetLargestPossibleRegion().GetSize()[d] - 1) / 2.0;
  }
  itk::Point<double, 3> pa, pb;
  image->TransformContinuousIndexToPhysicalPoint(a, pa);
  coarse->TransformContinuousIndexToPhysicalPoint(b, pb);
  EXPECT_LT(pa.EuclideanDistanceTo(pb), 1e-6);
  EXPECT_THROW(ResampleToSpacing(image, { 0.0, 1.0, 1.0 }), itk::ExceptionObject);
}

TEST(TrainingSamples, BalancedWithNegativesNearTheBoundary)
{
  const LabelledVolume     v = Phantom(3, 24);
  std::vector<VoxelIndex3> points;
  std::vector<std::int8_t> labels;
  SamplingOptions          options;
  options.positivesPerVolume = 300;
  options.negativesPerVolume = 400;
  options.nearBoundaryFraction = 0.5;
  options.nearBoundaryMm = 3.0;
  DrawTrainingSamples(v.mask, options, 11, points, labels);
  ASSERT_EQ(points.size(), 700u);
  int positives = 0, near = 0;
  for (std::size_t i = 0; i < points.size(); ++i)
  {
    const auto & p = points[i];
    const bool   inside = v.mask->GetPixel({ { p.x, p.y, p.z } }) != 0;
    EXPECT_EQ(inside, labels[i] > 0);
    positives += labels[i] > 0;
    // near: a label voxel within 3 voxels (x) of it
    if (labels[i] < 0)
    {
      bool found = false;
      for (int dz = -2; dz <= 2 && !found; ++dz)
        for (int dy = -3; dy <= 3 && !found; ++dy)
          for (int dx = -3; dx <= 3 && !found; ++dx)
          {
            const int x = p.x + dx, y = p.y + dy, z = p.z + dz;
            found = x >= 0 && y >= 0 && z >= 0 && x < 48 && y < 44 && z < 36 && v.mask->GetPixel({ { x, y, z } });
          }
      near += found;
    }
  }
  EXPECT_EQ(positives, 300);
  EXPECT_GE(near, 200); // half of the negatives at least
  // Same seed, same samples.
  std::vector<VoxelIndex3> again;
  std::vector<std::int8_t> againLabels;
  DrawTrainingSamples(v.mask, options, 11, again, againLabels);
  EXPECT_EQ(std::memcmp(again.data(), points.data(), points.size() * sizeof(VoxelIndex3)), 0);
}

TEST(TrainingSamples, PriorWeightsRestoreTheVolumesClassBalance)
{
  const LabelledVolume     v = Phantom(4, 24);
  std::vector<VoxelIndex3> points;
  std::vector<std::int8_t> labels;
  std::vector<float>       weights;
  SamplingOptions          options;
  options.positivesPerVolume = 200;
  options.negativesPerVolume = 200;
  DrawTrainingSamples(v.mask, options, 5, points, labels, &weights);
  ASSERT_EQ(weights.size(), points.size());
  double positive = 0.0, negative = 0.0;
  for (std::size_t i = 0; i < weights.size(); ++i)
    (labels[i] > 0 ? positive : negative) += weights[i];
  std::int64_t inside = 0;
  const auto   n = v.mask->GetLargestPossibleRegion().GetNumberOfPixels();
  for (itk::SizeValueType i = 0; i < n; ++i)
    inside += v.mask->GetBufferPointer()[i] != 0;
  // Each stratum's weights add up to its voxel count: the weighted sample has the volume's balance.
  EXPECT_NEAR(positive, double(inside), 1e-3 * inside);
  EXPECT_NEAR(negative, double(n - inside), 1e-3 * (n - inside));
}

TEST(TrainingSamples, BalancedClassesWeighTheSame)
{
  const LabelledVolume     v = Phantom(4, 24);
  std::vector<VoxelIndex3> points;
  std::vector<std::int8_t> labels;
  std::vector<float>       weights;
  SamplingOptions          options;
  options.positivesPerVolume = 50;
  options.negativesPerVolume = 400;
  options.balanceClasses = true;
  DrawTrainingSamples(v.mask, options, 5, points, labels, &weights);
  ASSERT_EQ(weights.size(), points.size());
  double positive = 0.0, negative = 0.0;
  for (std::size_t i = 0; i < weights.size(); ++i)
  {
    (labels[i] > 0 ? positive : negative) += weights[i];
    if (labels[i] < 0)
      EXPECT_EQ(weights[i], 1.0f); // without weightByPrior a negative weighs 1
  }
  EXPECT_NEAR(positive, 400.0, 1e-3);
  EXPECT_NEAR(negative, 400.0, 1e-3);
}

TEST(PBTModelFile, RejectsMissingTruncatedAndWrongVersionFiles)
{
  const std::string missing = canopy::testing::OutputPath("does-not-exist.json");
  try
  {
    LoadPBTModelFile(missing);
    FAIL();
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find(missing), std::string::npos);
  }
  const std::string truncated = canopy::testing::OutputPath("truncated.json");
  std::ofstream(truncated) << R"({"format": "canopy-model", "version": 1, "kind": "pbt", "workingSpa)";
  EXPECT_THROW(LoadPBTModelFile(truncated), itk::ExceptionObject);
  const std::string future = canopy::testing::OutputPath("future.json");
  std::ofstream(future) << R"({"format": "canopy-model", "version": 99, "kind": "pbt"})";
  try
  {
    LoadPBTModelFile(future);
    FAIL();
  }
  catch (const itk::ExceptionObject & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("version 99"), std::string::npos) << e.GetDescription();
  }
}

TEST(AtomicFile, FailedWriteLeavesNothingBehind)
{
  const std::string path = canopy::testing::OutputPath("atomic.txt");
  std::filesystem::remove(path);
  EXPECT_THROW(WriteFileAtomically(path, [](std::ostream &) { throw std::runtime_error("boom"); }), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(TemporaryPathFor(path)));
  WriteFileAtomically(path, [](std::ostream & out) { out << "ok"; });
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(TemporaryPathFor("/a/b/c.nii.gz").substr(0, 7), "/a/b/.c");
  EXPECT_NE(TemporaryPathFor("/a/b/c.nii.gz").find(".nii.gz"), std::string::npos);
}

// End to end on phantoms: train on two, classify a third with the ellipsoid elsewhere.
TEST(PBTVolumeClassification, TrainsAndSegmentsAPhantom)
{
  const std::vector<LabelledVolume> training{ Phantom(1, 20), Phantom(2, 28) };
  PBTVolumeTrainingReport           report;
  const PBTModelFile                model = TrainPBTFromVolumes(training, SmallOptions(), &report);
  EXPECT_GT(report.trainingAccuracy, 0.95);
  EXPECT_GT(report.featuresUsed, 0);

  const std::string path = canopy::testing::OutputPath("phantom-model.json");
  SavePBTModelFile(model, path);
  const auto loaded = std::make_shared<const PBTModelFile>(LoadPBTModelFile(path));

  const LabelledVolume test = Phantom(9, 24);
  auto filter = itk::PBTClassificationImageFilter<FloatVolume>::New();
  filter->SetInput(test.image);
  filter->SetModel(loaded);
  filter->SetBackend("cpu");
  filter->Update();
  auto * probability = filter->GetOutput();
  ASSERT_TRUE(SameGrid(probability, test.image));
  std::int64_t tp = 0, fp = 0, fn = 0;
  const auto   n = probability->GetLargestPossibleRegion().GetNumberOfPixels();
  for (itk::SizeValueType i = 0; i < n; ++i)
  {
    const float p = probability->GetBufferPointer()[i];
    ASSERT_TRUE(p >= 0.0f && p <= 1.0f) << p;
    const bool predicted = p >= 0.5f, truth = test.mask->GetBufferPointer()[i] != 0;
    tp += predicted && truth;
    fp += predicted && !truth;
    fn += !predicted && truth;
  }
  const double dice = 2.0 * tp / (2.0 * tp + fp + fn);
  EXPECT_GT(dice, 0.85) << "tp " << tp << " fp " << fp << " fn " << fn;
}

} // namespace
