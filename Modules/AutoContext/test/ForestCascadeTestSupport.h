// Phantoms and small options shared by the cascade tests (CPU and GPU).
#pragma once

#include "canopyForestCascade.h"

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
  std::mt19937_64                        rng(seed);
  std::vector<float>                     image(kNx * kNy * kNz, 0.0f);
  std::vector<std::int32_t>              labels(image.size(), 0);
  std::vector<std::array<double, 4>>     balls; // centre, radius
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int attempt = 0; attempt < 400 && balls.size() < 9; ++attempt)
  {
    const double r = balls.size() < 3 ? 7.0 : 2.5;
    const double c[3] = { r + 1 + u(rng) * (kNx - 2 * r - 2),
                          r + 1 + u(rng) * (kNy - 2 * r - 2),
                          r + 1 + u(rng) * (kNz - 2 * r - 2) };
    bool         free = true;
    for (const auto & b : balls)
      free = free && std::hypot(c[0] - b[0], c[1] - b[1], c[2] - b[2]) > r + b[3] + 3.0;
    if (free)
      balls.push_back({ c[0], c[1], c[2], r });
  }
  std::normal_distribution<float> noise(0.0f, 0.25f);
  for (int z = 0; z < kNz; ++z)
    for (int y = 0; y < kNy; ++y)
      for (int x = 0; x < kNx; ++x)
      {
        const std::size_t i = (std::size_t(z) * kNy + y) * kNx + x;
        for (const auto & b : balls)
          if (std::hypot(x - b[0], y - b[1], z - b[2]) <= b[3])
          {
            image[i] = 1.0f;
            labels[i] = b[3] > 5.0 ? 1 : 2;
          }
        image[i] += noise(rng);
      }
  return { ForestImage::FromChannels({ image.data() }, kNx, kNy, kNz, nullptr, 1), labels };
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
