// T1-like images from label maps with SynthSeg's generative model (Billot et al. 2023): a random
// similarity transform of the label map, per-class Gaussian intensities drawn from priors, blur,
// a smooth multiplicative bias field and noise. Training images for structures whose label maps
// exist without images (../shared/data/synthseg-label-maps).
#pragma once

#include "canopyAugmentation.h"

#include "itkImage.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace canopy
{

/** One class of the generative model: the labels it covers share one intensity mean and spread per
 * image, mean ~ N(meanMean, meanStd^2), spread ~ N(stdMean, stdStd^2), both truncated at 0. */
struct SynthesisClass
{
  int              id = 0;
  std::vector<int> labels;
  double           meanMean = 0, meanStd = 0, stdMean = 0, stdStd = 0;
};

struct SynthesisPriors
{
  std::vector<SynthesisClass> classes;
};

/** Reads SynthSeg's priors JSON ({"classes": [{"class", "labels", "intensity_mean_prior": {"mean",
 * "std"}, "intensity_std_prior": {"mean", "std"}}]}); canopy::Error naming the file and the field on a
 * missing file, bad JSON, a missing or non-finite field, a negative std, or a label in two classes. */
SynthesisPriors
ReadSynthesisPriors(const std::string & path);
SynthesisPriors
ParseSynthesisPriors(const nlohmann::json & document, const std::string & source);

/** Ranges of the random draws (all finite, >= 0; a 0 range disables that step but the draw is still
 * made, so the other steps do not depend on it). Intensities are on the priors' 0..255 T1 scale. */
struct SynthesisOptions
{
  double maxRotationDegrees = 10.0; // similarity transform, as canopy::AugmentVolume draws it
  double maxTranslationMm = 8.0;
  double maxScale = 0.05;
  double minBlurSigmaMm = 0.3; // Gaussian blur, sigma per axis ~ U[min, max] mm
  double maxBlurSigmaMm = 1.0;
  double maxBiasFieldStd = 0.3; // log bias on a 4^3 grid ~ N(0, s^2), s ~ U[0, max]
  int    biasGridSize = 4;      // control points per axis (>= 2)
  double maxNoiseSigma = 4.0;   // additive Gaussian noise, sigma ~ U[0, max]
  /** Widens the class means' priors: mu_c = prior mean + contrastSpread x prior std x N(0, 1) (1: the
   * priors as given; 2: contrasts twice as varied, for training detectors that meet contrasts their few
   * training draws did not cover; 0: every class at its prior mean). Same seed, same other draws. */
  double        contrastSpread = 1.0;
  std::uint64_t seed = 1;
};

struct SynthesizedPair
{
  itk::Image<float, 3>::Pointer          image;
  itk::Image<unsigned short, 3>::Pointer label;      // the transformed label map, on the same grid
  nlohmann::json                         parameters; // seed, options, transform, class draws, blur, bias, noise
};

/** Synthesizes one image from a label map, on the label map's grid:
 *  1. the label map is resampled (nearest neighbour, outside = 0) through the similarity transform
 *     canopy::DrawSimilarityTransform draws for (maxRotationDegrees, maxTranslationMm, maxScale, seed);
 *     the image is generated from the transformed map, so image and labels stay aligned exactly;
 *  2. each class c draws mu_c and sigma_c from its priors (truncated at 0); voxel v of label l in c
 *     gets max(0, mu_c + sigma_c n_v), n_v ~ N(0, 1);
 *  3. Gaussian blur with sigma_a ~ U[minBlurSigmaMm, maxBlurSigmaMm] mm per axis;
 *  4. multiplication by exp(B(x)), B trilinearly interpolated from a biasGridSize^3 grid of
 *     N(0, s^2) values spanning the volume, s ~ U[0, maxBiasFieldStd];
 *  5. additive noise N(0, sigma_n^2), sigma_n ~ U[0, maxNoiseSigma], then clamping at 0.
 * Same labels, priors and options: same result, whatever the thread count (per-slice generators
 * seeded from the seed). A label present in the map but in no class of the priors is an error
 * naming it. */
SynthesizedPair
SynthesizeImage(const itk::Image<unsigned short, 3> * labels,
                const SynthesisPriors &               priors,
                const SynthesisOptions &              options);

} // namespace canopy
