// Phantoms and small options shared by the cascade tests (CPU and GPU).
#pragma once

#include "canopyForestCascade.h"
#include "canopyTesting.h"

#include <array>
#include <cmath>
#include <random>
#include <vector>

namespace
{
using namespace canopy;

constexpr int kNx = 44, kNy = 44, kNz = 30;

/** Balls of intensity 1 on 0 with Gaussian noise: class 1 inside balls of radius 7, class 2 inside
 * balls of radius 2.5, placed at random without overlap. */
ForestLabelledImage
SizePhantom(std::uint64_t seed)
{
  auto phantom = canopy::testing::MakeSizeLabelledBalls(kNx, kNy, kNz, seed);
  return { ForestImage::FromChannels({ phantom.image.data() }, kNx, kNy, kNz, nullptr, 1), std::move(phantom.labels) };
}

ForestCascadeOptions
SmallOptions(int stages)
{
  ForestCascadeOptions o;
  o.stages = stages;
  o.folds = 3;
  o.forest.numTrees = 3;
  o.forest.maxDepth = 10;
  o.forest.featureCandidates = 30;
  o.forest.maxOffset = 2; // local features only: a ball's size is beyond what stage 1 sees
  o.forest.maxBoxSize = 3;
  o.forest.threads = 2;
  o.forest.backend = BackendRequest::Parse("cpu");
  o.sampling.samplesPerImage = 1500;
  o.sampling.balanced = true;
  o.prediction.backend = "cpu";
  o.prediction.threads = 2;
  return o;
}

struct Phantoms
{
  std::vector<ForestLabelledImage>         train, test;
  std::vector<const ForestLabelledImage *> trainPointers, testPointers;
  Phantoms()
  {
    for (int i = 0; i < 6; ++i)
      train.push_back(SizePhantom(100 + i));
    for (int i = 0; i < 2; ++i)
      test.push_back(SizePhantom(900 + i));
    for (const auto & p : train)
      trainPointers.push_back(&p);
    for (const auto & p : test)
      testPointers.push_back(&p);
  }
};

const Phantoms &
SharedPhantoms()
{
  static const Phantoms phantoms;
  return phantoms;
}
} // namespace
