// The hierarchical network against a decoy (issue 9 part 5): held-out phantoms hold a second copy of
// the small structure (same intensity class, size and orientation) far from where the large structure
// predicts it. Searched on the whole volume, the small structure's position stage ranks the decoy among
// its candidates (it can pick it); searched in the region its parent's pose predicts, the detector must
// find the true one, and its search box must hold the truth and leave the decoy out. A detector trained on phantoms
// without decoys, 12 subjects, network small <- large.
#include "PoseTestPhantoms.h"

#include "canopyTesting.h"

#include <gtest/gtest.h>

#include <iostream>

namespace
{
using namespace canopy;
using namespace canopy::posetest;

constexpr int kDecoy = 4;

/** A held-out phantom with a decoy: label 4, the small structure's intensity class, 30 mm from it along y. */
DetectorTrainingSubject
SubjectWithDecoy(std::uint64_t seed, Vec3d * decoyCentre)
{
  auto          ellipsoids = SubjectEllipsoids(seed);
  EllipsoidSpec decoy = ellipsoids.back(); // the small structure
  decoy.label = kDecoy;
  decoy.centreMm[1] += 30.0;
  ellipsoids.push_back(decoy);
  SynthesisPriors priors = PhantomPriors();
  priors.classes[3].labels.push_back(kDecoy);
  SynthesisOptions options;
  options.seed = seed;
  options.maxRotationDegrees = 8.0;
  options.maxTranslationMm = 5.0;
  options.maxNoiseSigma = 6.0;
  const auto              pair = SynthesizeImage(PaintEllipsoids(60, 1.5, ellipsoids), priors, options);
  DetectorTrainingSubject subject{ pair.image, ToPoseLabels(pair.label), "decoy phantom " + std::to_string(seed) };
  *decoyCentre = PoseFromLabel(subject.labels, kDecoy, subject.name).centerMm;
  return subject;
}

double
Distance(const Vec3d & a, const Vec3d & b)
{
  return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

TEST(NetworkDecoy, ThePriorPicksTheTrueStructureNotTheDecoy)
{
  std::vector<DetectorTrainingSubject> subjects;
  for (std::uint64_t seed = 1; seed <= 12; ++seed)
    subjects.push_back(MakeSubject(seed));
  auto options = SmallTrainingOptions();
  options.backend = ResolveBackend(BackendRequest::Parse("cpu"));
  options.network = { { "small", "large" } };
  const DetectorModel model = TrainDetector(subjects, { { "large", kLarge }, { "small", kSmall } }, options);
  ASSERT_EQ(model.network.size(), 1u);
  const auto & prior = model.network[0];
  std::cout << "prior of small given large: offset " << prior.offsetMm.mean[0] << ", " << prior.offsetMm.mean[1] << ", "
            << prior.offsetMm.mean[2] << " mm, sd " << std::sqrt(prior.offsetMm.covariance[0][0]) << ", "
            << std::sqrt(prior.offsetMm.covariance[1][1]) << ", " << std::sqrt(prior.offsetMm.covariance[2][2])
            << " mm\n";

  DetectionOptions hdn, independent;
  hdn.backend = independent.backend = options.backend;
  independent.useNetwork = false;
  PoseDetector withNetwork(model, hdn), without(model, independent);
  int          decoyInCandidates = 0, independentPickedDecoy = 0;
  for (std::uint64_t seed : { 301, 302, 303 })
  {
    Vec3d      decoy;
    const auto subject = SubjectWithDecoy(seed, &decoy);
    const auto truth = PoseFromLabel(subject.labels, kSmall, subject.name).centerMm;
    ASSERT_GT(Distance(truth, decoy), 25.0);
    without.SetImage(subject.image, subject.name);
    withNetwork.SetImage(subject.image, subject.name);

    // Whole volume: the decoy is a competitor among the position candidates.
    const auto candidates = without.PositionCandidates(1);
    bool       nearDecoy = false;
    for (const auto & c : candidates)
      nearDecoy = nearDecoy || Distance(c.pose.centerMm, decoy) <= 4.5;
    decoyInCandidates += nearDecoy;
    const auto alone = without.DetectAll()[1];
    EXPECT_EQ(alone.searched, "whole volume");
    const bool pickedDecoy = alone.result.found && Distance(alone.result.pose.centerMm, decoy) < 6.0;
    independentPickedDecoy += pickedDecoy;

    const auto all = withNetwork.DetectAll();
    ASSERT_TRUE(all[0].result.found) << subject.name << ": large, score " << all[0].result.score;
    EXPECT_EQ(all[1].searched, "region predicted from parent large");
    ASSERT_TRUE(all[1].result.found) << subject.name << ": small, score " << all[1].result.score;
    const double error = Distance(all[1].result.pose.centerMm, truth);
    std::cout << subject.name << ": independent " << (pickedDecoy ? "picked the DECOY" : "picked the true one")
              << " (decoy among candidates: " << nearDecoy << "); network: " << error << " mm from the truth, "
              << Distance(all[1].result.pose.centerMm, decoy) << " mm from the decoy; searched " << all[1].box.Voxels()
              << " of " << all[1].gridVoxels << " voxels\n";
    EXPECT_LE(error, 4.0) << subject.name;
    // The searched box holds the true centre and leaves the decoy out.
    const auto grid = PrepareVolume(
      subject.image, model.structures[1].position.workingSpacing, model.structures[1].position.normalization);
    auto inBox = [&](const Vec3d & p)
    {
      itk::Point<double, 3> point;
      for (int k = 0; k < 3; ++k)
        point[k] = p[k];
      itk::ContinuousIndex<double, 3> index;
      grid->TransformPhysicalPointToContinuousIndex(point, index);
      bool inside = true;
      for (int d = 0; d < 3; ++d)
        inside = inside && index[d] >= all[1].box.lo[d] - 0.5 && index[d] <= all[1].box.hi[d] + 0.5;
      return inside;
    };
    EXPECT_TRUE(inBox(truth)) << subject.name;
    EXPECT_FALSE(inBox(decoy)) << subject.name;
  }
  std::cout << "independent detection: decoy among the candidates in " << decoyInCandidates
            << " of 3, picked the decoy in " << independentPickedDecoy << " of 3\n";
  EXPECT_GE(decoyInCandidates, 2) << "the decoy must compete on the whole volume, or the test shows nothing";
}

} // namespace
