// Regression on colin27's brain mask (Debian mricron-data): Dice between the mask and its augmented
// copy behaves as the transform size says.
#include "canopyAugmentation.h"
#include "canopyOverlapMetrics.h"
#include "canopyTesting.h"

#include "itkImageFileReader.h"

#include <cmath>
#include <filesystem>
#include <iostream>

namespace
{

const char * const kBrain = "/usr/share/mricron/templates/ch2bet.nii.gz";

canopy::AugmentationOptions
GeometryOnly(double rotationDegrees, double translationMm, std::uint64_t seed)
{
  canopy::AugmentationOptions o;
  o.maxRotationDegrees = rotationDegrees;
  o.maxTranslationMm = translationMm;
  o.maxScale = 0;
  o.maxGainLog = o.maxOffsetFraction = o.maxGammaLog = o.maxBiasField = o.noiseSigmaFraction = 0;
  o.seed = seed;
  return o;
}

TEST(AugmentationColin27, DiceOfTheBrainMaskFollowsTheTransform)
{
  if (!std::filesystem::exists(kBrain))
    GTEST_SKIP() << kBrain << " is absent (install Debian's mricron-data)";
  const auto image = itk::ReadImage<itk::Image<float, 3>>(kBrain);
  const auto mask = canopy::ThresholdToMask(image, std::nextafter(0.0f, 1.0f)); // brain = ch2bet > 0
  const auto brain = canopy::ComputeOverlap(mask, mask);
  ASSERT_GT(brain.volumeReferenceMm3, 1.0e6) << "a brain is over a litre";
  ASSERT_LT(brain.volumeReferenceMm3, 2.0e6);

  const auto identity = canopy::AugmentVolume(image, mask, GeometryOnly(0, 0, 1));
  EXPECT_DOUBLE_EQ(canopy::ComputeOverlap(identity.label, mask).dice, 1.0);

  // Up to 10 degrees about each axis: clearly moved, still mostly overlapping.
  for (std::uint64_t seed : { 1u, 2u })
  {
    const auto   rotated = canopy::AugmentVolume(image, mask, GeometryOnly(10, 0, seed));
    const double dice = canopy::ComputeOverlap(rotated.label, mask).dice;
    std::cout << "rotation up to 10 degrees, seed " << seed << ": Dice " << dice << '\n';
    EXPECT_LT(dice, 0.99) << "seed " << seed << ": " << rotated.parameters.at("transform").dump();
    EXPECT_GT(dice, 0.8) << "seed " << seed << ": " << rotated.parameters.at("transform").dump();
    // The brain volume is kept by a rigid transform (up to nearest-neighbour resampling).
    EXPECT_NEAR(canopy::ComputeOverlap(rotated.label, rotated.label).volumeReferenceMm3, brain.volumeReferenceMm3,
                0.01 * brain.volumeReferenceMm3);
  }

  // Larger transforms overlap less: 2 mm shifts versus 8 mm shifts with the same seed.
  const double small = canopy::ComputeOverlap(canopy::AugmentVolume(image, mask, GeometryOnly(0, 2, 3)).label, mask).dice;
  const double large = canopy::ComputeOverlap(canopy::AugmentVolume(image, mask, GeometryOnly(0, 8, 3)).label, mask).dice;
  std::cout << "shifts up to 2 mm: Dice " << small << "; up to 8 mm: Dice " << large << '\n';
  EXPECT_LT(small, 1.0);
  EXPECT_GT(small, large);
  EXPECT_GT(large, 0.7);
}

} // namespace
