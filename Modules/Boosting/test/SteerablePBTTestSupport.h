// Shared pieces of the steerable-PBT tests: oriented-ellipsoid phantoms with known poses, true and
// wrong orientation hypotheses (wrong = far from every pose that images the same ellipsoid), random
// steerable PBT models, and the area under the ROC curve.
#pragma once

#include "SteerableFeaturesTestSupport.h" // RandomRotation, MakePose (Modules/SteerableFeatures/test)
#include "canopyPBTEvaluator.h"
#include "canopySteerableFeatureBank.h"
#include "canopySteerablePBT.h"
#include "canopySteerablePyramid.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

namespace canopy::steerablepbttest
{
using testing::Vec3;
using Axes = std::array<Vec3, 3>;

constexpr double kRadiiMm[3] = { 13.0, 7.0, 4.0 }; // distinct, so the orientation is defined up to axis signs
constexpr double kPoseScale = 0.6;                 // grid scale per axis = 0.6 radius: a 5^3 grid spans 1.2 radii

/** One volume: an oriented ellipsoid (random axes, centre near the middle), its pyramid and true pose. */
struct EllipsoidCase
{
  testing::OrientedEllipsoidPhantom phantom;
  std::unique_ptr<SteerablePyramid> pyramid;
  Axes                              axes;
  SteerablePose                     truth;
};

inline SteerablePyramidOptions
PyramidOptions()
{
  return SteerablePyramidOptions{ { 1.0, 2.0 }, {} };
}

inline EllipsoidCase
MakeEllipsoidCase(std::uint64_t seed, int n = 44)
{
  std::mt19937_64                        rng(seed);
  std::uniform_real_distribution<double> jitter(-2.0, 2.0);
  EllipsoidCase                          c;
  c.axes = testing::RandomRotation(rng);
  double axes[3][3], centre[3];
  for (int a = 0; a < 3; ++a)
  {
    centre[a] = 0.5 * (n - 1) + jitter(rng);
    for (int k = 0; k < 3; ++k)
      axes[a][k] = c.axes[a][k];
  }
  c.phantom = testing::MakeOrientedEllipsoidPhantom(n, n, n, 1.0, centre, axes, kRadiiMm, 1.0f, 0.0f, 0.15f, seed + 7);
  c.pyramid = std::make_unique<SteerablePyramid>(SteerablePyramid::Build(c.phantom.image, PyramidOptions(), 1));
  const Vec3 scale{ kPoseScale * kRadiiMm[0], kPoseScale * kRadiiMm[1], kPoseScale * kRadiiMm[2] };
  c.truth = testing::MakePose({ c.phantom.centerMm[0], c.phantom.centerMm[1], c.phantom.centerMm[2] }, c.axes, scale);
  return c;
}

/** Angle (degrees) between two frames, modulo the ellipsoid's symmetries (flipping two axes). */
inline double
OrientationErrorDegrees(const Axes & a, const Axes & b)
{
  static const double signs[4][3] = { { 1, 1, 1 }, { -1, -1, 1 }, { -1, 1, -1 }, { 1, -1, -1 } };
  double              best = 180.0;
  for (const auto & s : signs)
  {
    double trace = 0.0; // trace(A (S B)^T) = sum_a s_a <a_a, b_a>
    for (int i = 0; i < 3; ++i)
      trace += s[i] * (a[i][0] * b[i][0] + a[i][1] * b[i][1] + a[i][2] * b[i][2]);
    best = std::min(best, std::acos(std::clamp((trace - 1.0) / 2.0, -1.0, 1.0)) * 180.0 / M_PI);
  }
  return best;
}

/** `frame` turned by a random rotation of at most maxDegrees (Rodrigues). */
inline Axes
Perturbed(const Axes & frame, double maxDegrees, std::mt19937_64 & rng)
{
  std::normal_distribution<double>       g(0.0, 1.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Vec3                                   k{ g(rng), g(rng), g(rng) };
  const double                           norm = std::sqrt(k[0] * k[0] + k[1] * k[1] + k[2] * k[2]);
  for (double & v : k)
    v /= norm;
  const double theta = maxDegrees * u(rng) * M_PI / 180.0, c = std::cos(theta), s = std::sin(theta);
  Axes         out;
  for (int a = 0; a < 3; ++a)
  {
    const Vec3 & v = frame[a];
    const double kv = k[0] * v[0] + k[1] * v[1] + k[2] * v[2];
    const Vec3   cross{ k[1] * v[2] - k[2] * v[1], k[2] * v[0] - k[0] * v[2], k[0] * v[1] - k[1] * v[0] };
    for (int i = 0; i < 3; ++i)
      out[a][i] = v[i] * c + cross[i] * s + k[i] * kv * (1 - c);
  }
  return out;
}

inline SteerablePose
WithAxes(const SteerablePose & pose, const Axes & axes)
{
  SteerablePose out = pose;
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < 3; ++k)
      out.axes[a][k] = static_cast<float>(axes[a][k]);
  return out;
}

inline Axes
AxesOf(const SteerablePose & pose)
{
  Axes axes;
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < 3; ++k)
      axes[a][k] = pose.axes[a][k];
  return axes;
}

/** `count` poses at the true centre and size whose orientation is at least minDegrees from the truth. */
inline std::vector<SteerablePose>
WrongOrientations(const EllipsoidCase & c, int count, double minDegrees, std::mt19937_64 & rng)
{
  std::vector<SteerablePose> out;
  while (static_cast<int>(out.size()) < count)
  {
    const Axes axes = testing::RandomRotation(rng);
    if (OrientationErrorDegrees(axes, c.axes) >= minDegrees)
      out.push_back(WithAxes(c.truth, axes));
  }
  return out;
}

/** `count` poses within maxDegrees and maxShiftMm of the truth. */
inline std::vector<SteerablePose>
NearTruth(const EllipsoidCase & c, int count, double maxDegrees, double maxShiftMm, std::mt19937_64 & rng)
{
  std::uniform_real_distribution<double> shift(-maxShiftMm, maxShiftMm);
  std::vector<SteerablePose>             out;
  for (int i = 0; i < count; ++i)
  {
    SteerablePose pose = WithAxes(c.truth, Perturbed(c.axes, maxDegrees, rng));
    for (float & v : pose.center)
      v += static_cast<float>(shift(rng));
    out.push_back(pose);
  }
  return out;
}

/** P(score of a random positive > score of a random negative), ties counting half; NaN scores count
 * against the classifier (a NaN positive never wins, a NaN negative always does). */
inline double
AreaUnderRoc(const std::vector<float> & positives, const std::vector<float> & negatives)
{
  double wins = 0.0;
  for (float p : positives)
    for (float n : negatives)
      wins += std::isnan(p) || std::isnan(n) ? 0.0 : (p > n ? 1.0 : (p == n ? 0.5 : 0.0));
  return wins / (static_cast<double>(positives.size()) * negatives.size());
}

/** The tests' steerable PBT: ellipsoid volumes of seeds 1..6 (kept in `cases`: the sets point to
 * their pyramids), each giving 40 poses within 5 degrees and 1 mm of the truth (+1) and 300
 * orientations at least 10 degrees from it (-1); a 600-feature bank on a 5^3 grid of 1/2 mm; depth 3,
 * all 20 boosting rounds per node (the set is separable after a few; more rounds widen the margin). */
inline PBTModel
TrainOnEllipsoids(const ResolvedBackend &      backend,
                  std::vector<EllipsoidCase> & cases,
                  SteerablePBTTrainingReport * report = nullptr)
{
  cases.clear();
  for (std::uint64_t seed = 1; seed <= 6; ++seed)
    cases.push_back(MakeEllipsoidCase(seed));
  std::mt19937_64                   rng(99);
  std::vector<SteerableTrainingSet> sets;
  for (std::size_t k = 0; k < cases.size(); ++k)
  {
    SteerableTrainingSet set;
    set.pyramid = cases[k].pyramid.get();
    set.name = "ellipsoid " + std::to_string(k + 1);
    set.poses = NearTruth(cases[k], 40, 5.0, 1.0, rng);
    set.labels.assign(set.poses.size(), 1);
    const auto wrong = WrongOrientations(cases[k], 300, 10.0, rng);
    set.poses.insert(set.poses.end(), wrong.begin(), wrong.end());
    set.labels.resize(set.poses.size(), -1);
    sets.push_back(std::move(set));
  }
  SteerablePBTTrainingOptions options;
  options.grid = SteerableGrid{ 5, 1.0f };
  options.pyramid = PyramidOptions();
  options.featureBankSize = 600;
  options.pbt.maxDepth = 3;
  options.pbt.weakLearnersPerNode = 20;
  options.pbt.featureCandidatesPerRound = 150;
  options.pbt.minSamplesToSplit = 40;
  options.pbt.earlyStopError = -1.0;
  options.pbt.seed = 5;
  options.pbt.threads = 2;
  options.backend = backend;
  return TrainSteerablePBT(sets, options, report);
}

/** A random tree (MakeRandomPBTModel) reading a random steerable bank: for parity tests, no training. */
inline PBTModel
MakeRandomSteerablePBTModel(RandomPBTModelOptions options, const SteerableGrid & grid, int numLevels)
{
  options.sampleBox = { { 3, 3, 3 } };
  PBTModel model = MakeRandomPBTModel(options);
  model.featureFamily = PBTFeatureFamily::Steerable;
  model.features.clear();
  model.steerable.grid = grid;
  model.steerable.pyramid =
    SteerablePyramidOptions{ std::vector<double>(static_cast<std::size_t>(numLevels), 1.0), {} };
  model.steerable.features = RandomSteerableFeatures(grid, numLevels, options.numFeatures, options.seed + 11);
  model.Validate("random steerable PBT");
  return model;
}

} // namespace canopy::steerablepbttest
