// Phantoms and small options shared by the PBT cascade tests (CPU and GPU): balls of one intensity
// labelled by their size (radius 7: class 1, radius 2.5: class 2), as ForestCascadeTest's, with a
// Haar sample box of 5 voxels, so stage one cannot tell a big ball's rim from a small ball.
#pragma once

#include "canopyPBTCascade.h"
#include "canopyTesting.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

namespace
{
using namespace canopy;

constexpr int kNx = 44, kNy = 44, kNz = 30;

ClassLabelledVolume
SizePhantom(std::uint64_t seed)
{
  const auto              phantom = canopy::testing::MakeSizeLabelledBalls(kNx, kNy, kNz, seed);
  auto                    image = FloatVolume::New();
  auto                    labels = MaskVolume::New();
  FloatVolume::RegionType region;
  region.SetSize({ { kNx, kNy, kNz } });
  image->SetRegions(region);
  image->Allocate(true);
  labels->SetRegions(region);
  labels->Allocate(true);
  std::copy(phantom.image.begin(), phantom.image.end(), image->GetBufferPointer());
  std::copy(phantom.labels.begin(), phantom.labels.end(), labels->GetBufferPointer());
  return { image, labels, "phantom " + std::to_string(seed) };
}

PBTCascadeTrainingOptions
SmallCascadeOptions(int stages)
{
  PBTCascadeTrainingOptions o;
  o.labels = { 1, 2 };
  o.stages = stages;
  o.folds = 3;
  o.volume.workingSpacing = { { 1.0, 1.0, 1.0 } };
  o.volume.sampleBoxMm = { { 5.0, 5.0, 5.0 } }; // local features only: a ball's size is beyond stage one
  o.volume.featureBankSize = 300;
  o.volume.minimumFeatureSize = 0.2f;
  o.volume.sampling.positivesPerVolume = 400;
  o.volume.sampling.negativesPerVolume = 800;
  o.volume.sampling.nearBoundaryMm = 3.0;
  o.volume.pbt.maxDepth = 3;
  o.volume.pbt.weakLearnersPerNode = 12;
  o.volume.pbt.featureCandidatesPerRound = 60;
  o.volume.pbt.threads = 2;
  o.volume.backend = ResolveBackend(BackendRequest::Parse("cpu"));
  o.evaluation.cpuThreads = 2;
  return o;
}

struct PBTPhantoms
{
  std::vector<ClassLabelledVolume> train, test;
  PBTPhantoms()
  {
    for (int i = 0; i < 6; ++i)
      train.push_back(SizePhantom(100 + i));
    for (int i = 0; i < 2; ++i)
      test.push_back(SizePhantom(900 + i));
  }
};

const PBTPhantoms &
SharedPBTPhantoms()
{
  static const PBTPhantoms phantoms;
  return phantoms;
}

/** Dice of each class, pooled over the test phantoms, of the model cut after `stages` stages. */
std::vector<double>
HeldOutDice(const PBTClassModel & model, int stages, const ResolvedBackend & backend)
{
  std::vector<double> dice;
  for (std::size_t c = 0; c < model.labels.size(); ++c)
  {
    double overlap = 0.0, sizes = 0.0;
    for (const auto & v : SharedPBTPhantoms().test)
    {
      PBTEvaluationOptions options;
      options.cpuThreads = 2;
      const auto posteriors = ClassifyVolumeClasses(v.image, model, backend, options, stages);
      const auto labels = JointLabels(posteriors, model.labels);
      const auto n = labels->GetLargestPossibleRegion().GetNumberOfPixels();
      for (itk::SizeValueType i = 0; i < n; ++i)
      {
        const bool a = labels->GetBufferPointer()[i] == model.labels[c];
        const bool b = v.labels->GetBufferPointer()[i] == model.labels[c];
        overlap += a && b;
        sizes += a + b;
      }
    }
    dice.push_back(sizes > 0 ? 2.0 * overlap / sizes : 1.0);
  }
  return dice;
}
} // namespace
