// Forest training from labelled images/volumes: channels through the filter bank, per-class balanced
// or uniform voxel sampling, label scores (Dice, pixel and mean class accuracy) and k-fold
// cross-validation over a grid of training options.
#pragma once

#include "canopy/Device.h"
#include "canopy/IntensityNormalization.h"
#include "canopy/ReferenceFrame.h"
#include "canopyForestImage.h"
#include "canopyForestTraining.h"
#include "itkImage.h"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace canopy
{

/** An image prepared for training or prediction, with its label map (may be empty for prediction). */
struct ForestLabelledImage
{
  ForestImage               image;
  std::vector<std::int32_t> labels; // nx*ny*nz, x fastest; values outside [0, numClasses) are not sampled
  /** Empty, or nx*ny*nz flags: 1 where ForestSamplingOptions::focusShare draws from (an auto-context
   * stage's mistakes, canopyForestCascade.h). */
  std::vector<std::uint8_t> focus;
};

/** The bank's channels of a scalar image (the image itself when the bank is empty), integrated; the
 * bank computed on `filterBackend` (the CPU by default); `reference`: the image's reference pose, for
 * pose channels; `normalization`: the image's intensities mapped first (on a copy; ForestModel::normalization),
 * the intensities mapped to 0 and 1 written to `mappedRange` (may be null). */
template<unsigned int VDimension>
ForestImage
MakeForestImage(const itk::Image<float, VDimension> *         image,
                const std::vector<std::string> &              bank,
                int                                           threads = 0,
                const ResolvedBackend &                       filterBackend = {},
                const ReferenceFrame *                        reference = nullptr,
                const std::optional<IntensityNormalization> & normalization = std::nullopt,
                std::array<double, 2> *                       mappedRange = nullptr);

/** Which voxels train the forest. With a focus share G > 0 and an image with a focus mask
 * (ForestLabelledImage::focus), G of the image's quota is drawn from its focus voxels. With a boundary
 * share F > 0, F of the rest is drawn from the boundary band (voxels whose box of half-width
 * `boundaryBand` voxels holds another label: the voxels within that Chebyshev distance of a class
 * boundary, focus voxels excepted) and the remainder from outside band and focus. Each part is
 * balanced or uniform as `balanced` says; a part short of voxels gives all it has. Without a focus
 * (share 0 or no mask) the draws are those of earlier versions. */
struct ForestSamplingOptions
{
  int           samplesPerImage = 2000;
  bool          balanced = true; // equal quota per class present (a class short of it gives all it has)
  std::uint64_t seed = 1;
  double        boundaryShare = 0.0; // in [0, 1]; 0: no band (the draws of earlier versions)
  int           boundaryBand = 3;    // voxels
  double        focusShare = 0.0;    // in [0, 1]; ignored for images without a focus mask
  /** The focus part uniform whatever `balanced` says: the classes as the focus holds them (an earlier
   * stage's mistakes and their neighbours), so the focus adds samples where the errors are without
   * shifting the class balance there. */
  bool focusUniform = false;
};

/** The boundary band of a label map (ForestSamplingOptions): 1 where the box of half-width `band`
 * voxels around the voxel holds two labels, else 0. `nz` 1 for 2D (no z extent). */
std::vector<std::uint8_t>
LabelBoundaryBand(const std::vector<std::int32_t> & labels, int nx, int ny, int nz, int band);

/** Appends up to samplesPerImage samples of image `imageIndex` (seeded by seed and imageIndex). */
void
SampleForestVoxels(const ForestLabelledImage &   image,
                   int                           imageIndex,
                   int                           numClasses,
                   const ForestSamplingOptions & options,
                   std::vector<ForestSample> &   samples);

/** A training set over `images` (views stay valid while `images` lives). Image i is sampled as image
 * firstImageIndex + i of a larger set (the seed of its draws) and indexed i in the result: a process
 * of a distributed run holding images [first, ...) draws the samples one process draws for them. */
ForestTrainingSet
MakeForestTrainingSet(const std::vector<const ForestLabelledImage *> & images,
                      int                                              numClasses,
                      const ForestSamplingOptions &                    options,
                      int                                              firstImageIndex = 0);

/** The training set of the forest that leaves fold f out, in a k-fold scheme over the images of all
 * the processes of a distributed run (`allFolds`: each image's fold; this process holds images
 * [first, first + images.size())): this process's images outside fold f, in order, each sampled as the
 * image it is among all the images outside fold f (what one process holding every image draws). A
 * process with none of them holds no sample; its first image stands in, for the checks that the
 * processes' images agree. One process: first 0, allFolds of its images. */
ForestTrainingSet
MakeForestFoldTrainingSet(const std::vector<const ForestLabelledImage *> & images,
                          const std::vector<int> &                         allFolds,
                          std::size_t                                      first,
                          int                                              f,
                          int                                              numClasses,
                          const ForestSamplingOptions &                    options);

/** Scores of predicted labels against the truth, accumulated over images. */
struct ForestLabelScores
{
  explicit ForestLabelScores(int numClasses = 0)
    : confusion(std::size_t(numClasses) * numClasses, 0)
    , numClasses(numClasses)
  {
  }
  std::vector<std::int64_t> confusion; // [truth * numClasses + predicted]
  int                       numClasses;

  void   Add(const std::int32_t * predicted, const std::int32_t * truth, std::size_t n); // truth outside range: skipped
  double Dice(int c) const; // NaN when the class is absent from both
  double PixelAccuracy() const;
  double MeanClassAccuracy() const; // over the classes present in the truth
};

/** Predicts the ArgMax labels of an image on the CPU. */
std::vector<std::int32_t>
PredictForestLabelsCPU(const ForestModel & model, const ForestImage & image, int threads = 0);

/** One grid point's k-fold result: the mean over folds of the foreground classes' mean Dice (classes
 * 1..C-1; all classes when C == 1), and of the pixel accuracy. */
struct ForestCrossValidationResult
{
  ForestTrainingOptions options;
  double                meanDice = 0.0, meanAccuracy = 0.0;
  std::vector<double>   foldDice;
};

/** k-fold cross-validation (folds by a seeded permutation of the images; each fold's forest trains on
 * the other folds' images in their order) of every option set in `grid`; `progress` (may be empty)
 * gets the fraction done. Throws when k < 2 or k > images.
 * Distributed (the grid's options share `shards`, docs/DISTRIBUTED.md): this process holds images
 * [firstImage, firstImage + images.size()) of totalImages; the forests train over the shards, each
 * process scores its own held-out images, and the scores (integer counts) are summed, so every
 * process returns what one process holding all the images returns. totalImages 0: one process. */
std::vector<ForestCrossValidationResult>
CrossValidateForest(const std::vector<const ForestLabelledImage *> & images,
                    int                                              numClasses,
                    const ForestSamplingOptions &                    sampling,
                    const std::vector<ForestTrainingOptions> &       grid,
                    int                                              folds,
                    std::uint64_t                                    seed,
                    const std::function<void(double)> &              progress = {},
                    std::size_t                                      firstImage = 0,
                    std::size_t                                      totalImages = 0);

} // namespace canopy
