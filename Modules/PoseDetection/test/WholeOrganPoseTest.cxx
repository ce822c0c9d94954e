// A whole-organ structure trained from few subjects (issue 9): an ellipsoid "organ" filling most of a
// body-filled volume, in four randomly moved training copies, with the PBT's default minimum sample
// count. The position stage's positives are the few working-grid voxels near the centre (about 5 per
// volume), so its root's effective sample count is about 4 x 20 = 80, below the default 100: before the
// position stage retrained such a root (2ff808c), the root was a leaf answering 0.5 everywhere
// (training accuracy = the positives' share, 0.2%) and the organ was never found (score 0). The
// same held for the brain mask of colin27 (docs/ACCURACY.md) and for small structures from 4 subjects.
#include "PoseTestPhantoms.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>

namespace
{
using namespace canopy;
using namespace canopy::posetest;

constexpr int kBody = 2, kOrgan = 1;

/** 48^3 voxels of 2 mm (96 mm): a body of radii 44/40/36 mm holding an organ of about 34/24/18 mm
 * (140 of the volume's 885 cm^3), off-centre and turned, jittered per subject; the synthesis then moves
 * each copy by up to 10 degrees and 8 mm. */
DetectorTrainingSubject
MakeOrganSubject(std::uint64_t seed)
{
  std::mt19937_64                        rng(seed * 104729 + 7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto                                   jitter = [&](double v) { return v * (1.0 + 0.08 * u(rng)); };
  const std::vector<EllipsoidSpec>       ellipsoids{ { kBody, { { 0, 0, 0 } }, { { 44, 40, 36 } }, Rotation(0, 0, 0) },
                                               { kOrgan,
                                                       { { 5 + 2 * u(rng), -4 + 2 * u(rng), 2 + 2 * u(rng) } },
                                                       { { jitter(34), jitter(24), jitter(18) } },
                                                       Rotation(15 + 5 * u(rng), -10 + 5 * u(rng), 25 + 5 * u(rng)) } };
  SynthesisPriors                        priors;
  priors.classes = { { 0, { 0 }, 10, 3, 3, 1 }, { 1, { kBody }, 60, 8, 8, 2 }, { 2, { kOrgan }, 120, 8, 6, 2 } };
  SynthesisOptions options;
  options.seed = seed;
  options.maxRotationDegrees = 10.0;
  options.maxTranslationMm = 8.0;
  options.maxNoiseSigma = 6.0;
  const auto pair = SynthesizeImage(PaintEllipsoids(48, 2.0, ellipsoids), priors, options);
  return { pair.image, ToPoseLabels(pair.label), "organ phantom " + std::to_string(seed) };
}

TEST(WholeOrganPose, FoundFromFourSubjectsWithDefaultMinimumSamples)
{
  std::vector<DetectorTrainingSubject> subjects;
  for (std::uint64_t seed = 1; seed <= 4; ++seed)
    subjects.push_back(MakeOrganSubject(seed));
  auto options = SmallTrainingOptions();
  options.position.pbt.minSamplesToSplit = PBTTrainingOptions{}.minSamplesToSplit; // the library's 100
  options.position.sampling.negativesPerVolume = 2000;
  options.backend = ResolveBackend(BackendRequest::Parse("cpu"));
  const DetectorModel model = TrainDetector(subjects, { { "organ", kOrgan } }, options);
  const auto &        training = model.structures.at(0).training;
  std::cout << "position samples " << training["positionSamples"] << ", training accuracy "
            << training["positionTrainingAccuracy"] << "\n";
  EXPECT_GE(training["positionTrainingAccuracy"].get<double>(), 0.9);

  DetectionOptions detection;
  detection.backend = options.backend;
  // Four subjects give less confident pose stages than the SynthSeg ones the default 0.05 was set on
  // (2026-11-24, CPU: 0.049 and 0.146 here; the brain from 4 colin27 copies: 0.05-0.2); before the fix
  // the best score was 0 (the brain: 1e-5), so 0.02 still tells found from not.
  detection.thresholdOverride = 0.02;
  PoseDetector detector(model, detection);
  for (std::uint64_t seed : { 101, 102 })
  {
    const auto subject = MakeOrganSubject(seed);
    detector.SetImage(subject.image, subject.name);
    const auto truth = PoseFromLabel(subject.labels, kOrgan, subject.name);
    const auto found = detector.Detect(0);
    ASSERT_TRUE(found.found) << subject.name << ": score " << found.score;
    double centreMm = 0.0, size = 0.0; // mm; largest relative axis error, %
    for (int k = 0; k < 3; ++k)
    {
      centreMm += (found.pose.centerMm[k] - truth.centerMm[k]) * (found.pose.centerMm[k] - truth.centerMm[k]);
      size = std::max(size, 100.0 * std::abs(found.pose.sizeMm[k] / truth.sizeMm[k] - 1.0));
    }
    centreMm = std::sqrt(centreMm);
    const double orientation = OrientationErrorDegrees(found.pose.axes, truth.axes);
    std::cout << subject.name << ": centre " << centreMm << " mm, orientation " << orientation << " deg, size " << size
              << " %, score " << found.score << "\n";
    // Tolerances: two position-grid voxels (3 mm) for the centre (measured 2.0 and 3.5 mm); orientation
    // and size from 4 training orientations and sizes only (measured 5.8 and 21 degrees, 11 and 13%).
    EXPECT_LE(centreMm, 6.0) << subject.name;
    EXPECT_LE(orientation, 25.0) << subject.name;
    EXPECT_LE(size, 22.0) << subject.name;
  }
}
} // namespace
