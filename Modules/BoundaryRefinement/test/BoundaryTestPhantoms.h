// Ellipsoid phantoms for the boundary classifier and refinement tests: a shape model of random
// ellipsoids (ShapeModel's phantoms), images whose intensity steps smoothly across the analytic
// surface (sub-voxel boundary information, noise), and boundary classifiers trained on them.
#pragma once

#include "ShapeTestPhantoms.h"
#include "canopyBoundaryClassifier.h"
#include "canopyPBTEvaluator.h" // MakeRandomPBTModel
#include "canopyShapeTraining.h"
#include "canopySteerableFeatureBank.h"

#include <cmath>
#include <random>

namespace canopy::boundarytest
{
using canopy::testing::Ellipsoid;
using ImageType = SteerablePyramid::ImageType;

/** size^3 voxels of 1 mm: 60 outside, 140 inside, a tanh step of width ~1 mm across the surface (the
 * signed distance approximated to first order), Gaussian noise of sd `noise`. */
inline ImageType::Pointer
MakeEllipsoidImage(const Ellipsoid & e, std::uint64_t seed, double noise = 6.0, int size = 64)
{
  auto image = ImageType::New();
  image->SetRegions(ImageType::SizeType{ { unsigned(size), unsigned(size), unsigned(size) } });
  image->Allocate();
  std::mt19937_64                  random(seed);
  std::normal_distribution<double> gauss(0.0, noise);
  float *                          p = image->GetBufferPointer();
  for (int z = 0; z < size; ++z)
    for (int y = 0; y < size; ++y)
      for (int x = 0; x < size; ++x, ++p)
      {
        const Eigen::Vector3d q =
          (e.rotation.transpose() * (Eigen::Vector3d(x, y, z) - e.centre)).cwiseQuotient(e.radii);
        const double r = std::max(q.norm(), 1e-9);
        const double gradient = (e.rotation * q.cwiseQuotient(e.radii)).norm() / r; // |grad |q||
        const double distance = (r - 1.0) / gradient;
        *p = float(100.0 - 40.0 * std::tanh(distance) + gauss(random));
      }
  return image;
}

/** A trained shape model of `count` random ellipsoids, their images and corresponded meshes. */
struct EllipsoidTrainingData
{
  std::vector<Ellipsoid>               ellipsoids;
  ShapeTrainingResult                  shape;
  std::vector<BoundaryTrainingSubject> subjects;
};

inline EllipsoidTrainingData
MakeEllipsoidTrainingData(int count, std::uint64_t seed)
{
  EllipsoidTrainingData             data;
  std::mt19937_64                   random(seed);
  std::vector<ShapeTrainingSubject> surfaces;
  for (int s = 0; s < count; ++s)
  {
    data.ellipsoids.push_back(canopy::testing::RandomEllipsoid(random));
    surfaces.push_back({ "ellipsoid-" + std::to_string(s),
                         TrainingSurface(canopy::testing::MakeEllipsoidLabels(data.ellipsoids.back()), 1, "phantom") });
  }
  ShapeTrainingOptions options;
  options.levelVertices = { 150, 300, 600 }; // small: a fast test
  options.threads = 2;
  data.shape = TrainShapeModel(surfaces, "ellipsoid", 1, options);
  for (int s = 0; s < count; ++s)
  {
    const Eigen::Map<const Eigen::Matrix3Xd> aligned(
      data.shape.alignedShapes.col(s).data(), 3, data.shape.alignedShapes.rows() / 3);
    data.subjects.push_back({ surfaces[std::size_t(s)].name,
                              MakeEllipsoidImage(data.ellipsoids[std::size_t(s)], seed + 100 + s),
                              data.shape.subjects[std::size_t(s)].pose.Apply(Eigen::Matrix3Xd(aligned)) });
  }
  return data;
}

/** Small and fast classifier options for the phantoms. */
inline BoundaryClassifierOptions
SmallClassifierOptions()
{
  BoundaryClassifierOptions o;
  o.pyramid = SteerablePyramidOptions{ { 1.0, 2.0 }, {} };
  o.searchMm = { 6.0, 4.5, 3.0 };
  o.maxVerticesPerSubject = 150;
  o.featureBankSize = 600;
  o.pbt.maxDepth = 3;
  o.pbt.weakLearnersPerNode = 20;
  o.pbt.featureCandidatesPerRound = 150;
  o.pbt.threads = 2;
  return o;
}
/** A random full boundary PBT on a random steerable bank (the benchmark's fixed-work model, smaller):
 * deep enough that the displacements of one vertex part ways in the tree. */
inline PBTModel
RandomBoundaryPBT(const SteerableGrid & grid, const SteerablePyramidOptions & pyramid, std::uint64_t seed)
{
  RandomPBTModelOptions random;
  random.depth = 5;
  random.learnersPerNode = 6;
  random.numFeatures = 300;
  random.responseLow = -3.0f; // z-scored intensities; gradients of a fraction per mm
  random.responseHigh = 3.0f;
  random.seed = seed;
  PBTModel model = MakeRandomPBTModel(random);
  model.featureFamily = PBTFeatureFamily::Steerable;
  model.features.clear();
  model.steerable.grid = grid;
  model.steerable.pyramid = pyramid;
  model.steerable.features =
    RandomSteerableFeatures(grid, int(pyramid.levelSpacingsMm.size()), random.numFeatures, seed + 1);
  model.Validate("random boundary PBT");
  return model;
}

/** `count` vertex frames at random points of a size^3 1 mm volume (a margin of 4 mm outside it, so
 * some samples are clamped) with random unit normals. */
inline std::vector<SteerablePose>
RandomVertexFrames(int count, int size, double scale, std::uint64_t seed)
{
  std::mt19937_64                        random(seed);
  std::uniform_real_distribution<double> at(-4.0, size + 4.0);
  std::normal_distribution<double>       direction;
  Eigen::Matrix3Xd                       points(3, count), normals(3, count);
  for (int i = 0; i < count; ++i)
  {
    points.col(i) = Eigen::Vector3d(at(random), at(random), at(random));
    Eigen::Vector3d n(direction(random), direction(random), direction(random));
    normals.col(i) = n.normalized();
  }
  return BoundaryVertexFrames(points, normals, scale);
}
} // namespace canopy::boundarytest
