// Phantoms with known poses for the detector's tests: label maps of oriented ellipsoids (a "head"
// holding a large and a small structure, sizes and orientations varying between subjects as anatomy
// does), made into T1-like images by the project's own Synthesis module (class intensities, blur,
// bias field, noise, random similarity transform). Ground truth is PoseFromLabel of the transformed
// label map.
#pragma once

#include "canopyPoseDetector.h"
#include "canopySynthesis.h"

#include "itkImageRegionIteratorWithIndex.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace canopy::posetest
{
constexpr int kHead = 1, kLarge = 2, kSmall = 3;

struct EllipsoidSpec
{
  int   label;
  Vec3d centreMm; // relative to the volume centre
  Vec3d radiiMm;
  Frame axes;
};

inline Frame
Rotation(double xDeg, double yDeg, double zDeg)
{
  const double a = xDeg * M_PI / 180, b = yDeg * M_PI / 180, c = zDeg * M_PI / 180;
  const double rx[3][3] = { { 1, 0, 0 }, { 0, std::cos(a), -std::sin(a) }, { 0, std::sin(a), std::cos(a) } };
  const double ry[3][3] = { { std::cos(b), 0, std::sin(b) }, { 0, 1, 0 }, { -std::sin(b), 0, std::cos(b) } };
  const double rz[3][3] = { { std::cos(c), -std::sin(c), 0 }, { std::sin(c), std::cos(c), 0 }, { 0, 0, 1 } };
  double       m[3][3] = {}, r[3][3] = {};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k)
        m[i][j] += ry[i][k] * rx[k][j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k)
        r[i][j] += rz[i][k] * m[k][j];
  Frame f; // rows = the rotated x, y, z axes
  for (int a2 = 0; a2 < 3; ++a2)
    for (int k = 0; k < 3; ++k)
      f[a2][k] = r[k][a2];
  return f;
}

using ShortLabels = itk::Image<unsigned short, 3>;

/** A label map of n^3 voxels of `spacing` mm: ellipsoids painted in order (later ones on top). */
inline ShortLabels::Pointer
PaintEllipsoids(int n, double spacing, const std::vector<EllipsoidSpec> & ellipsoids)
{
  auto image = ShortLabels::New();
  image->SetRegions(ShortLabels::SizeType{ { std::size_t(n), std::size_t(n), std::size_t(n) } });
  image->SetSpacing(spacing);
  double origin[3] = { -0.5 * (n - 1) * spacing, -0.5 * (n - 1) * spacing, -0.5 * (n - 1) * spacing };
  image->SetOrigin(origin);
  image->Allocate(true);
  itk::ImageRegionIteratorWithIndex<ShortLabels> it(image, image->GetLargestPossibleRegion());
  for (; !it.IsAtEnd(); ++it)
  {
    itk::Point<double, 3> p;
    image->TransformIndexToPhysicalPoint(it.GetIndex(), p);
    for (const auto & e : ellipsoids)
    {
      double r = 0;
      for (int a = 0; a < 3; ++a)
      {
        double t = 0;
        for (int k = 0; k < 3; ++k)
          t += (p[k] - e.centreMm[k]) * e.axes[a][k];
        r += (t / e.radiiMm[a]) * (t / e.radiiMm[a]);
      }
      if (r <= 1.0)
        it.Set(static_cast<unsigned short>(e.label));
    }
  }
  return image;
}

/** Subject `seed`: the two structures jittered in size (+-10%), orientation (+-10 degrees) and place
 * (+-3 mm); withSmall = false leaves the small structure out (it stays head tissue). */
inline std::vector<EllipsoidSpec>
SubjectEllipsoids(std::uint64_t seed, bool withSmall = true)
{
  std::mt19937_64                        rng(seed * 7919 + 13);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto                                   jitter = [&](double v, double share) { return v * (1.0 + share * u(rng)); };
  std::vector<EllipsoidSpec>             out;
  out.push_back({ kHead, { { 0, 0, 0 } }, { { 40, 36, 33 } }, Rotation(0, 0, 0) });
  out.push_back({ kLarge,
                  { { -10 + 3 * u(rng), 8 + 3 * u(rng), 2 + 3 * u(rng) } },
                  { { jitter(15, 0.1), jitter(9, 0.1), jitter(5.5, 0.1) } },
                  Rotation(20 + 10 * u(rng), -15 + 10 * u(rng), 30 + 10 * u(rng)) });
  const EllipsoidSpec small{ kSmall,
                             { { 14 + 3 * u(rng), -10 + 3 * u(rng), -6 + 3 * u(rng) } },
                             { { jitter(10, 0.1), jitter(6.5, 0.1), jitter(4.5, 0.1) } },
                             Rotation(-25 + 10 * u(rng), 10 + 10 * u(rng), -40 + 10 * u(rng)) };
  if (withSmall)
    out.push_back(small);
  return out;
}

inline SynthesisPriors
PhantomPriors()
{
  SynthesisPriors p;
  p.classes = { { 0, { 0 }, 10, 3, 3, 1 },
                { 1, { kHead }, 80, 8, 8, 2 },
                { 2, { kLarge }, 140, 8, 6, 2 },
                { 3, { kSmall }, 35, 6, 5, 1 } };
  return p;
}

inline PoseLabelMap::Pointer
ToPoseLabels(const ShortLabels * labels)
{
  auto out = PoseLabelMap::New();
  out->CopyInformation(labels);
  out->SetRegions(labels->GetLargestPossibleRegion());
  out->Allocate();
  std::copy_n(
    labels->GetBufferPointer(), labels->GetLargestPossibleRegion().GetNumberOfPixels(), out->GetBufferPointer());
  return out;
}

/** A synthesized subject: 60^3 voxels of 1.5 mm. */
inline DetectorTrainingSubject
MakeSubject(std::uint64_t seed, bool withSmall = true)
{
  SynthesisOptions options;
  options.seed = seed;
  options.maxRotationDegrees = 8.0;
  options.maxTranslationMm = 5.0;
  options.maxNoiseSigma = 6.0;
  const auto pair =
    SynthesizeImage(PaintEllipsoids(60, 1.5, SubjectEllipsoids(seed, withSmall)), PhantomPriors(), options);
  return { pair.image, ToPoseLabels(pair.label), "phantom " + std::to_string(seed) };
}

/** Options sized for a test (seconds on two cores): 3 mm position grid, small banks and trees. */
inline DetectorTrainingOptions
SmallTrainingOptions()
{
  DetectorTrainingOptions o;
  o.position.workingSpacing = { { 3.0, 3.0, 3.0 } };
  o.position.featureBankSize = 400;
  o.position.sampling.positivesPerVolume = 200;
  o.position.sampling.negativesPerVolume = 400;
  o.position.pbt.maxDepth = 3;
  o.position.pbt.weakLearnersPerNode = 15;
  o.position.pbt.featureCandidatesPerRound = 100;
  o.position.pbt.minSamplesToSplit = 40;
  o.position.pbt.threads = 2;
  o.steerable.grid = SteerableGrid{ 5, 1.0f };
  o.steerable.pyramid = SteerablePyramidOptions{ { 1.5, 3.0 }, {} };
  o.steerable.featureBankSize = 800;
  o.steerable.pbt.maxDepth = 4;
  o.steerable.pbt.weakLearnersPerNode = 30;
  o.steerable.pbt.featureCandidatesPerRound = 150;
  o.steerable.pbt.minSamplesToSplit = 40;
  o.steerable.pbt.threads = 2;
  o.candidates = 60;
  o.perturbations = 16;
  o.positivesPerVolume = 100;
  o.negativesPerVolume = 400;
  return o;
}
/** A pose from its parts. */
inline StructurePose
Pose(const Vec3d & centre, const Frame & axes, const Vec3d & size)
{
  StructurePose p;
  p.centerMm = centre;
  p.axes = axes;
  p.sizeMm = size;
  return p;
}

/** Rows of a (parent frame) applied: the world vector with coordinates u in frame f. */
inline Vec3d
InWorld(const Frame & f, const Vec3d & u)
{
  Vec3d out{ { 0, 0, 0 } };
  for (int a = 0; a < 3; ++a)
    for (int k = 0; k < 3; ++k)
      out[k] += u[a] * f[a][k];
  return out;
}

/** Rows of a expressed through b: (A B). */
inline Frame
Times(const Frame & a, const Frame & b)
{
  Frame out{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 3; ++k)
        out[r][c] += a[r][k] * b[k][c];
  return out;
}

} // namespace canopy::posetest
