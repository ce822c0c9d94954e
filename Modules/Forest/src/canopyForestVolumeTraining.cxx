#include "canopyForestVolumeTraining.h"

#include "canopy/Errors.h"
#include "canopy/ForestPrediction.h"
#include "canopy/GreyMorphology.h"
#include "canopyForestFilterBank.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace canopy
{

template<unsigned int D>
ForestImage
MakeForestImage(const itk::Image<float, D> *                  image,
                const std::vector<std::string> &              bank,
                int                                           threads,
                const ResolvedBackend &                       filterBackend,
                const ReferenceFrame *                        reference,
                const std::optional<IntensityNormalization> & normalization,
                std::array<double, 2> *                       mappedRange)
{
  using Image = itk::Image<float, D>;
  typename Image::Pointer normalized;
  if (normalization)
  {
    normalized = Image::New();
    normalized->CopyInformation(image);
    normalized->SetRegions(image->GetBufferedRegion());
    normalized->Allocate();
    const std::int64_t voxels = std::int64_t(image->GetBufferedRegion().GetNumberOfPixels());
    std::copy_n(image->GetBufferPointer(), voxels, normalized->GetBufferPointer());
    const auto range = NormalizeIntensities(normalized->GetBufferPointer(), voxels, *normalization);
    if (mappedRange)
      *mappedRange = range;
    image = normalized.GetPointer();
  }
  const auto size = image->GetBufferedRegion().GetSize();
  const int  nz = D == 3 ? int(size[D - 1]) : 1;
  if (bank.empty())
    return ForestImage::FromChannels({ image->GetBufferPointer() }, int(size[0]), int(size[1]), nz, nullptr, threads);
  const auto                 channels = ComputeForestFilterBank<D>(image, bank, filterBackend, threads, reference);
  std::vector<const float *> pointers;
  for (const auto & c : channels)
    pointers.push_back(c.data());
  return ForestImage::FromChannels(pointers, int(size[0]), int(size[1]), nz, nullptr, threads);
}
template ForestImage
MakeForestImage<2>(const itk::Image<float, 2> *,
                   const std::vector<std::string> &,
                   int,
                   const ResolvedBackend &,
                   const ReferenceFrame *,
                   const std::optional<IntensityNormalization> &,
                   std::array<double, 2> *);
template ForestImage
MakeForestImage<3>(const itk::Image<float, 3> *,
                   const std::vector<std::string> &,
                   int,
                   const ResolvedBackend &,
                   const ReferenceFrame *,
                   const std::optional<IntensityNormalization> &,
                   std::array<double, 2> *);

std::vector<std::uint8_t>
LabelBoundaryBand(const std::vector<std::int32_t> & labels, int nx, int ny, int nz, int band)
{
  const BoxGrid      box = BoxGrid::Cube(nx, ny, nz, band);
  std::vector<float> high(labels.begin(), labels.end()), low(high); // labels are exact in float up to 2^24
  BoxExtremum(high.data(), high.data(), box, true);
  BoxExtremum(low.data(), low.data(), box, false);
  std::vector<std::uint8_t> inBand(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i)
    inBand[i] = high[i] != low[i];
  return inBand;
}

void
SampleForestVoxels(const ForestLabelledImage &   image,
                   int                           imageIndex,
                   int                           numClasses,
                   const ForestSamplingOptions & options,
                   std::vector<ForestSample> &   samples)
{
  const auto &      im = image.image;
  const std::size_t n = std::size_t(im.nx) * im.ny * im.nz;
  if (image.labels.size() != n)
  {
    CANOPY_THROW("forest sampling: image " << imageIndex << " has " << image.labels.size() << " labels for " << n
                                           << " voxels");
  }
  if (!(options.boundaryShare >= 0.0 && options.boundaryShare <= 1.0) || options.boundaryBand < 1)
  {
    CANOPY_THROW("forest sampling: boundary share " << options.boundaryShare << " (expected [0, 1]) or band "
                                                    << options.boundaryBand << " (expected >= 1)");
  }
  if (!(options.focusShare >= 0.0 && options.focusShare <= 1.0))
  {
    CANOPY_THROW("forest sampling: focus share " << options.focusShare << " (expected [0, 1])");
  }
  const bool withFocus = options.focusShare > 0.0 && !image.focus.empty();
  if (withFocus && image.focus.size() != n)
  {
    CANOPY_THROW("forest sampling: image " << imageIndex << " has " << image.focus.size() << " focus flags for " << n
                                           << " voxels");
  }
  // Part 0: outside the boundary band and the focus (everything without them); part 1: the band
  // (focus excepted); part 2: the focus.
  const bool                withBand = options.boundaryShare > 0.0;
  std::vector<std::uint8_t> inBand;
  if (withBand)
    inBand = LabelBoundaryBand(image.labels, im.nx, im.ny, im.nz, options.boundaryBand);
  std::vector<std::vector<std::int64_t>> byClass(std::size_t(numClasses) * 3);
  for (std::size_t i = 0; i < n; ++i)
  {
    const auto l = image.labels[i];
    const int  part = withFocus && image.focus[i] ? 2 : withBand && inBand[i] ? 1 : 0;
    if (l >= 0 && l < numClasses)
      byClass[std::size_t(part) * numClasses + l].push_back(std::int64_t(i));
  }
  std::mt19937_64           rng(options.seed * 0x9E3779B97F4A7C15ull + std::uint64_t(imageIndex));
  std::vector<std::int64_t> chosen;
  const auto                take = [&](std::vector<std::int64_t> & pool, std::size_t count)
  {
    count = std::min(count, pool.size());
    for (std::size_t k = 0; k < count; ++k) // partial Fisher-Yates: the first `count` are a uniform draw
    {
      std::uniform_int_distribution<std::size_t> pick(k, pool.size() - 1);
      std::swap(pool[k], pool[pick(rng)]);
      chosen.push_back(pool[k]);
    }
  };
  const auto drawPart = [&](std::vector<std::int64_t> * pools, std::size_t quota, bool balanced)
  {
    if (balanced)
    {
      int present = 0;
      for (int c = 0; c < numClasses; ++c)
        present += !pools[c].empty();
      for (int c = 0; c < numClasses; ++c)
        if (!pools[c].empty())
          take(pools[c], quota / present);
      return;
    }
    std::vector<std::int64_t> all;
    for (int c = 0; c < numClasses; ++c)
      all.insert(all.end(), pools[c].begin(), pools[c].end());
    std::sort(all.begin(), all.end());
    take(all, quota);
  };
  const std::size_t quota = std::size_t(options.samplesPerImage);
  const std::size_t focusQuota = withFocus ? std::size_t(std::llround(options.focusShare * double(quota))) : 0;
  const std::size_t rest = quota - focusQuota;
  const std::size_t bandQuota = withBand ? std::size_t(std::llround(options.boundaryShare * double(rest))) : 0;
  drawPart(byClass.data(), rest - bandQuota, options.balanced); // the order of earlier versions, the focus last
  if (withBand)
    drawPart(byClass.data() + numClasses, bandQuota, options.balanced);
  if (withFocus)
    drawPart(byClass.data() + 2 * numClasses, focusQuota, options.balanced && !options.focusUniform);
  const std::int64_t plane = std::int64_t(im.nx) * im.ny;
  for (const auto i : chosen)
    samples.push_back(ForestSample{ imageIndex,
                                    std::int32_t(i % im.nx),
                                    std::int32_t(i / im.nx % im.ny),
                                    std::int32_t(i / plane),
                                    image.labels[std::size_t(i)] });
}

ForestTrainingSet
MakeForestFoldTrainingSet(const std::vector<const ForestLabelledImage *> & images,
                          const std::vector<int> &                         allFolds,
                          std::size_t                                      first,
                          int                                              f,
                          int                                              numClasses,
                          const ForestSamplingOptions &                    options)
{
  if (images.empty() || first + images.size() > allFolds.size())
    CANOPY_THROW("fold training set: images [" << first << ", " << first + images.size() << ") of " << allFolds.size()
                                               << " (a process needs one image at least)");
  const int before = int(std::count_if(allFolds.begin(), allFolds.begin() + first, [f](int k) { return k != f; }));
  std::vector<const ForestLabelledImage *> others;
  for (std::size_t i = 0; i < images.size(); ++i)
    if (allFolds[first + i] != f)
      others.push_back(images[i]);
  if (!others.empty())
    return MakeForestTrainingSet(others, numClasses, options, before);
  ForestTrainingSet standIn = MakeForestTrainingSet({ images.front() }, numClasses, options, before);
  standIn.samples.clear();
  return standIn;
}

ForestTrainingSet
MakeForestTrainingSet(const std::vector<const ForestLabelledImage *> & images,
                      int                                              numClasses,
                      const ForestSamplingOptions &                    options,
                      int                                              firstImageIndex)
{
  ForestTrainingSet set;
  set.numClasses = numClasses;
  for (std::size_t i = 0; i < images.size(); ++i)
  {
    set.images.push_back(images[i]->image.View());
    const std::size_t first = set.samples.size();
    SampleForestVoxels(*images[i], firstImageIndex + int(i), numClasses, options, set.samples);
    for (std::size_t k = first; k < set.samples.size(); ++k)
      set.samples[k].image = int(i);
  }
  return set;
}

void
ForestLabelScores::Add(const std::int32_t * predicted, const std::int32_t * truth, std::size_t n)
{
  for (std::size_t i = 0; i < n; ++i)
    if (truth[i] >= 0 && truth[i] < numClasses && predicted[i] >= 0 && predicted[i] < numClasses)
      ++confusion[std::size_t(truth[i]) * numClasses + predicted[i]];
}

double
ForestLabelScores::Dice(int c) const
{
  std::int64_t truthC = 0, predC = 0;
  for (int k = 0; k < numClasses; ++k)
  {
    truthC += confusion[std::size_t(c) * numClasses + k];
    predC += confusion[std::size_t(k) * numClasses + c];
  }
  if (truthC + predC == 0)
    return std::numeric_limits<double>::quiet_NaN();
  return 2.0 * confusion[std::size_t(c) * numClasses + c] / double(truthC + predC);
}

double
ForestLabelScores::PixelAccuracy() const
{
  std::int64_t right = 0, all = 0;
  for (int c = 0; c < numClasses; ++c)
    for (int k = 0; k < numClasses; ++k)
    {
      all += confusion[std::size_t(c) * numClasses + k];
      right += c == k ? confusion[std::size_t(c) * numClasses + k] : 0;
    }
  return all ? double(right) / all : std::numeric_limits<double>::quiet_NaN();
}

double
ForestLabelScores::MeanClassAccuracy() const
{
  double sum = 0.0;
  int    present = 0;
  for (int c = 0; c < numClasses; ++c)
  {
    std::int64_t row = 0;
    for (int k = 0; k < numClasses; ++k)
      row += confusion[std::size_t(c) * numClasses + k];
    if (row == 0)
      continue;
    sum += double(confusion[std::size_t(c) * numClasses + c]) / row;
    ++present;
  }
  return present ? sum / present : std::numeric_limits<double>::quiet_NaN();
}

std::vector<std::int32_t>
PredictForestLabelsCPU(const ForestModel & model, const ForestImage & image, int threads)
{
  std::vector<std::int32_t> labels(std::size_t(image.nx) * image.ny * image.nz);
  PredictForestCPU(model.View(),
                   image.View(),
                   VoxelBlock{ 0, 0, 0, image.nx, image.ny, image.nz },
                   ForestOutput{ ForestOutputMode::ArgMax, nullptr, labels.data() },
                   threads);
  return labels;
}

std::vector<ForestCrossValidationResult>
CrossValidateForest(const std::vector<const ForestLabelledImage *> & images,
                    int                                              numClasses,
                    const ForestSamplingOptions &                    sampling,
                    const std::vector<ForestTrainingOptions> &       grid,
                    int                                              folds,
                    std::uint64_t                                    seed,
                    const std::function<void(double)> &              progress,
                    std::size_t                                      firstImage,
                    std::size_t                                      totalImages)
{
  const bool        distributed = totalImages > 0;
  const std::size_t all = distributed ? totalImages : images.size();
  const std::size_t first = distributed ? firstImage : 0;
  for (const auto & options : grid)
    if ((options.shards != nullptr) != distributed)
      CANOPY_THROW("CrossValidateForest: give totalImages with shards (every grid point's), and only then");
  if (folds < 2 || folds > int(all))
  {
    CANOPY_THROW("--cv " << folds << ": needs 2 to " << all << " folds (one image at least per fold)");
  }
  std::vector<std::size_t> order(all);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  std::vector<int> allFolds(all); // image -> fold: its place in the permutation, mod k
  for (std::size_t i = 0; i < all; ++i)
    allFolds[order[i]] = int(i % folds);
  std::vector<ForestCrossValidationResult> results;
  for (std::size_t g = 0; g < grid.size(); ++g)
  {
    ForestCrossValidationResult r;
    r.options = grid[g];
    r.options.shards = nullptr; // a result outlives the run's processes
    for (int f = 0; f < folds; ++f)
    {
      const ForestModel model =
        TrainForest(MakeForestFoldTrainingSet(images, allFolds, first, f, numClasses, sampling), grid[g]);
      ForestLabelScores scores(numClasses);
      for (std::size_t i = 0; i < images.size(); ++i) // this process's held-out images
        if (allFolds[first + i] == f)
        {
          const auto * t = images[i];
          scores.Add(
            PredictForestLabelsCPU(model, t->image, grid[g].threads).data(), t->labels.data(), t->labels.size());
        }
      if (distributed) // integer counts: exact in any order
        grid[g].shards->SumInPlace(scores.confusion.data(), scores.confusion.size());
      double dice = 0.0;
      int    counted = 0;
      for (int c = numClasses > 1 ? 1 : 0; c < numClasses; ++c)
        if (!std::isnan(scores.Dice(c)))
        {
          dice += scores.Dice(c);
          ++counted;
        }
      r.foldDice.push_back(counted ? dice / counted : 0.0);
      r.meanDice += r.foldDice.back() / folds;
      r.meanAccuracy += scores.PixelAccuracy() / folds;
      if (progress)
        progress(double(g * folds + f + 1) / double(grid.size() * folds));
    }
    results.push_back(std::move(r));
  }
  return results;
}

} // namespace canopy
