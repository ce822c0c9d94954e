// Random geometric and intensity augmentation of a volume and its label map, for training on few
// subjects (the demo trains on transformed copies of colin27) and for held-out test copies.
#pragma once

#include "itkImage.h"
#include "itkSimilarity3DTransform.h"

#include <nlohmann/json.hpp>

#include <cstdint>

namespace canopy
{

/** Ranges of the random draws; every value must be finite and >= 0. Setting a range to 0 disables
 * that change (the draws are still made, so the other parameters do not depend on it). */
struct AugmentationOptions
{
  double        maxRotationDegrees = 10.0; // per axis, uniform in [-max, max] (<= 180)
  double        maxTranslationMm = 8.0;    // per axis
  double        maxScale = 0.05;           // isotropic scale in [1-max, 1+max] (< 1)
  double        maxGainLog = 0.2;          // intensity gain exp(U[-max,max])
  double        maxOffsetFraction = 0.05;  // offset as fraction of the image's intensity range (p99-p1)
  double        maxGammaLog = 0.2;         // gamma exp(U[-max,max]) applied on the normalised range
  double        maxBiasField = 0.15;       // smooth multiplicative field 1 + sum of low-order polynomial terms, amplitude up to this (< 1)
  double        noiseSigmaFraction = 0.01; // Gaussian noise, fraction of (p99-p1)
  std::uint64_t seed = 1;
};

/** An augmented image, its label (null when no label was given) and the parameters drawn:
 * {"seed", "options", "transform": {...}, "intensity": {...}} (see AugmentVolume). */
struct AugmentedPair
{
  itk::Image<float, 3>::Pointer         image;
  itk::Image<unsigned char, 3>::Pointer label;
  nlohmann::json                        parameters; // the drawn transform and intensity parameters
};

/** The random similarity transform drawn for `options` about the centre of `grid`: the same
 * transform AugmentVolume applies for the same options and grid (same draws, same seed), with its
 * description as in AugmentVolume's parameters["transform"]. For callers that transform other
 * volumes with it (e.g. label maps of any integer type, or images synthesized after the transform). */
struct SimilarityDraw
{
  itk::Similarity3DTransform<double>::Pointer transform;
  nlohmann::json                              parameters;
};
SimilarityDraw
DrawSimilarityTransform(const itk::ImageBase<3> * grid, const AugmentationOptions & options);

/** Nearest-neighbour resampling of a label map through `transform` onto its own grid (outside = 0). */
itk::Image<unsigned short, 3>::Pointer
ResampleLabelMap(const itk::Image<unsigned short, 3> * labels, const itk::Similarity3DTransform<double> * transform);

/** Random similarity transform about the image centre (same output grid as the input: origin,
 * spacing, direction, size), linear interpolation for the image (outside = the image's minimum),
 * nearest neighbour for the label (outside = 0), then the intensity changes on the image. Same
 * seed, same result. label may be null (then the result's label is null); otherwise it must be on
 * the image's grid (canopy::Error naming the mismatch).
 *
 * Geometry: an itk::Similarity3DTransform with centre = the image centre (mm), rotation
 * R = Rz(c) Ry(b) Rx(a) of the drawn angles (a, b, c), isotropic scale s and translation t. As
 * ResampleImageFilter uses it, it maps points of the augmented image to points of the input;
 * parameters["transform"] holds the angles, t, s, the centre, the matrix, the offset and ITK's
 * parameters / fixed parameters, so the transform can be rebuilt exactly.
 *
 * Intensity, with p1, p99 the 1st and 99th percentiles of the input and r = p99 - p1 (1 if 0), per
 * voxel x of the resampled image v: n = (v - p1) / r, n' = sign(n) |n|^gamma,
 * v' = p1 + r n' * gain * bias(x) + offset + noise, where bias(x) = 1 + sum_k c_k t_k(u) over the nine
 * polynomial terms u, v, w, u^2, v^2, w^2, uv, uw, vw of the voxel's index coordinates mapped to
 * [-1, 1], with sum |c_k| = the drawn amplitude A ~ U[0, maxBiasField] (so |bias - 1| <= A), and
 * noise ~ N(0, (noiseSigmaFraction r)^2). The noise of each z-slice comes from its own seeded
 * generator, so results do not depend on the number of threads. */
AugmentedPair
AugmentVolume(const itk::Image<float, 3> * image, const itk::Image<unsigned char, 3> * label,
              const AugmentationOptions & options);

} // namespace canopy
