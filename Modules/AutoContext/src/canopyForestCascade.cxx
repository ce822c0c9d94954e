#include "canopyForestCascade.h"
#include "canopyForestCascadeChannels.h"

#include "canopy/Elapsed.h"
#include "canopy/Errors.h"
#include "canopy/FoldAssignment.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace canopy
{
namespace
{
std::vector<float>
PredictDistribution(const ForestModel & model, const ForestImage & image, ForestDensePredictionOptions options)
{
  options.mode = ForestOutputMode::Distribution;
  options.progress = nullptr;
  std::vector<float> distribution(std::size_t(image.nx) * image.ny * image.nz * model.numClasses);
  PredictForestDense(model, image, options, distribution.data(), nullptr);
  return distribution;
}

std::vector<const ForestLabelledImage *>
Pointers(const std::vector<ForestLabelledImage> & owned, const std::vector<const ForestLabelledImage *> & base)
{
  if (owned.empty())
    return base;
  std::vector<const ForestLabelledImage *> p;
  for (const auto & item : owned)
    p.push_back(&item);
  return p;
}
} // namespace

void
ForestCascade::Validate(const std::string & context) const
{
  if (stages.empty() || stages.size() > std::size_t(kForestCascadeMaxStages))
  {
    CANOPY_THROW(context << ": a cascade has 1 to " << kForestCascadeMaxStages << " stages, not " << stages.size());
  }
  const ForestModel & first = stages.front();
  for (std::size_t k = 0; k < stages.size(); ++k)
  {
    const std::string where = context + ": stage " + std::to_string(k);
    stages[k].Validate(where);
    if (stages[k].numClasses != first.numClasses || stages[k].dimension != first.dimension ||
        stages[k].usesScale != first.usesScale)
    {
      CANOPY_THROW(where << ": classes, dimension or scaling differ from stage 0's");
    }
    const int expected = first.numChannels + (k == 0 ? 0 : ContextChannelsPerStage());
    if (stages[k].numChannels != expected)
    {
      CANOPY_THROW(where << ": reads " << stages[k].numChannels << " channels; a stage after the first reads the "
                         << first.numChannels << " image channels, " << first.numClasses << " probability maps and "
                         << contextChannels.size() << " context channel(s) per map (" << expected << ")");
    }
  }
  if (first.usesScale && stages.size() > 1)
  {
    CANOPY_THROW(context << ": cascades of scaled (depth) forests are not supported");
  }
  ParseContextChannels(contextChannels, context);
  if (!filterBank.empty() && first.numChannels % int(filterBank.size()) != 0)
  {
    CANOPY_THROW(context << ": stage 0 reads " << first.numChannels << " channels, not a multiple of the "
                         << filterBank.size() << " filter-bank channels");
  }
}

namespace
{
/** TrainForestCascade. With `owned` (images[i] is &(*owned)[i]), each stage's maps are appended to the
 * training images themselves instead of to copies of them; with `heldOutOwned` (heldOut[i] is
 * &(*heldOutOwned)[i]), to the held-out images themselves. */
ForestCascade
TrainStages(const std::vector<const ForestLabelledImage *> & images,
            std::vector<ForestLabelledImage> *               owned,
            int                                              numClasses,
            const ForestCascadeOptions &                     options,
            const std::vector<const ForestLabelledImage *> & heldOut,
            std::vector<ForestLabelledImage> *               heldOutOwned,
            std::vector<ForestCascadeStageReport> *          report)
{
  if (options.stages < 1 || options.stages > kForestCascadeMaxStages)
  {
    CANOPY_THROW("--auto-context " << options.stages << ": give 1 to " << kForestCascadeMaxStages << " stages");
  }
  // Distributed: this process's images are [first, first + images.size()) of allImages.
  const std::size_t allImages = options.totalImages > 0 ? options.totalImages : images.size();
  const std::size_t first = options.totalImages > 0 ? options.firstImage : 0;
  if (first + images.size() > allImages || (options.totalImages > 0) != (options.forest.shards != nullptr))
  {
    CANOPY_THROW("auto-context: images [" << first << ", " << first + images.size() << ") of " << allImages
                                          << ": give firstImage and totalImages with shards, and only then");
  }
  if (options.stages > 1 && (options.folds < 2 || std::size_t(options.folds) > allImages))
  {
    CANOPY_THROW("--context-folds " << options.folds << ": needs 2 to " << allImages
                                    << " folds (one training image at least per fold)");
  }
  if (options.stages > 1 && numClasses < 2)
  {
    CANOPY_THROW("auto-context: needs at least 2 classes, got " << numClasses);
  }
  ParseContextChannels(options.contextChannels, "auto-context");
  if (options.focusBand < 0)
  {
    CANOPY_THROW("auto-context: focus band " << options.focusBand << " (expected >= 0 voxels)");
  }
  const int threads = options.forest.threads;
  // A one-stage cascade (a plain forest) has no out-of-fold maps to make, whatever --context-folds says.
  const auto allFolds =
    options.stages > 1 ? AssignFolds(allImages, options.folds, options.foldSeed) : std::vector<int>(allImages, 0);
  const int  trainings = options.stages + (options.stages - 1) * options.folds;
  int        done = 0;
  const auto step = [&](const std::string & what)
  {
    if (options.progress)
      options.progress(what, double(done) / trainings);
  };
  ForestCascade cascade;
  cascade.contextChannels = options.stages > 1 ? options.contextChannels : std::vector<std::string>{};
  std::vector<ForestLabelledImage> stageImages, heldOutImages; // empty at stage 0: the inputs themselves
  const int imageChannels = images.empty() ? 0 : images.front()->image.numChannels; // before any is appended
  const int heldOutChannels = heldOut.empty() ? 0 : heldOut.front()->image.numChannels;
  if (report)
    report->assign(options.stages, {});
  for (int k = 0; k < options.stages; ++k)
  {
    const std::string     stageName = "stage " + std::to_string(k + 1) + " of " + std::to_string(options.stages);
    const auto            train = Pointers(stageImages, images);
    const auto            test = Pointers(heldOutImages, heldOut);
    ForestTrainingOptions forest = options.forest;
    forest.seed = options.forest.seed + 7919ull * std::uint64_t(k); // other trees at every stage

    step(stageName);
    auto       start = std::chrono::steady_clock::now();
    const auto set = MakeForestTrainingSet(train, numClasses, options.sampling, int(first));
    cascade.stages.push_back(TrainForest(set, forest));
    ++done;
    if (report)
    {
      (*report)[k].trainSeconds = SecondsSince(start);
      (*report)[k].samples = set.samples.size();
    }

    // Held-out scores of the cascade cut after this stage, and the maps the next stage reads there.
    std::vector<std::vector<float>> heldOutMaps;
    if (!test.empty())
    {
      ForestLabelScores scores(numClasses);
      for (const auto * item : test)
      {
        heldOutMaps.push_back(PredictDistribution(cascade.stages.back(), item->image, options.prediction));
        auto labels = ArgMaxLabels(heldOutMaps.back(), numClasses);
        scores.Add(labels.data(), item->labels.data(), labels.size());
        if (report && k + 1 == options.stages)
          (*report)[k].heldOutLabels.push_back(std::move(labels));
      }
      if (report)
      {
        for (int c = 0; c < numClasses; ++c)
          (*report)[k].heldOutDice.push_back(scores.Dice(c));
        (*report)[k].heldOutPixelAccuracy = scores.PixelAccuracy();
      }
    }
    if (k + 1 == options.stages)
      break;

    // Out-of-fold maps: image i's map comes from this stage trained on the other folds only.
    start = std::chrono::steady_clock::now();
    std::vector<std::vector<float>> maps(images.size());
    for (int f = 0; f < options.folds; ++f)
    {
      step(stageName + ": out-of-fold maps, fold " + std::to_string(f + 1) + " of " + std::to_string(options.folds));
      ForestTrainingOptions foldForest = forest;
      foldForest.seed = forest.seed + 104729ull * std::uint64_t(f + 1);
      const ForestModel foldModel =
        TrainForest(MakeForestFoldTrainingSet(train, allFolds, first, f, numClasses, options.sampling), foldForest);
      for (std::size_t i = 0; i < train.size(); ++i)
        if (allFolds[first + i] == f)
          maps[i] = PredictDistribution(foldModel, train[i]->image, options.prediction);
      ++done;
    }
    if (report)
      (*report)[k].outOfFoldSeconds = SecondsSince(start);
    if (owned)
      AppendStageChannelsInPlace(*owned, imageChannels, maps, numClasses, threads, cascade.contextChannels, &options);
    else
      WriteStageImages(images, maps, numClasses, threads, cascade.contextChannels, stageImages, &options);
    if (heldOutOwned && !heldOut.empty())
      AppendStageChannelsInPlace(
        *heldOutOwned, heldOutChannels, heldOutMaps, numClasses, threads, cascade.contextChannels, nullptr);
    else if (!heldOut.empty())
      WriteStageImages(heldOut, heldOutMaps, numClasses, threads, cascade.contextChannels, heldOutImages);
  }
  step("done");
  cascade.Validate("auto-context");
  return cascade;
}
} // namespace

ForestCascade
TrainForestCascade(const std::vector<const ForestLabelledImage *> & images,
                   int                                              numClasses,
                   const ForestCascadeOptions &                     options,
                   const std::vector<const ForestLabelledImage *> & heldOut,
                   std::vector<ForestCascadeStageReport> *          report)
{
  return TrainStages(images, nullptr, numClasses, options, heldOut, nullptr, report);
}

ForestCascade
TrainForestCascade(std::vector<ForestLabelledImage> &&              images,
                   int                                              numClasses,
                   const ForestCascadeOptions &                     options,
                   const std::vector<const ForestLabelledImage *> & heldOut,
                   std::vector<ForestCascadeStageReport> *          report)
{
  std::vector<ForestLabelledImage>         owned = std::move(images);
  std::vector<const ForestLabelledImage *> pointers;
  for (const auto & item : owned)
    pointers.push_back(&item);
  return TrainStages(pointers, &owned, numClasses, options, heldOut, nullptr, report);
}

ForestCascade
TrainForestCascade(std::vector<ForestLabelledImage> &&     images,
                   int                                     numClasses,
                   const ForestCascadeOptions &            options,
                   std::vector<ForestLabelledImage> &      heldOut,
                   std::vector<ForestCascadeStageReport> * report)
{
  if (!report && !heldOut.empty())
    CANOPY_THROW("TrainForestCascade: held-out images taken over need a report (their scores and labels)");
  std::vector<ForestLabelledImage>         owned = std::move(images);
  std::vector<const ForestLabelledImage *> pointers, heldOutPointers;
  for (const auto & item : owned)
    pointers.push_back(&item);
  for (const auto & item : heldOut)
    heldOutPointers.push_back(&item);
  return TrainStages(pointers, &owned, numClasses, options, heldOutPointers, &heldOut, report);
}

namespace
{
/** Runs every stage, the first on `first`; `nextImage(distribution)` gives the image of the stage after
 * the one that predicted `distribution`. */
template<typename NextImage>
std::vector<float>
PredictStages(const ForestCascade &                cascade,
              const ForestImage &                  first,
              const ForestDensePredictionOptions & options,
              std::string *                        backendUsed,
              ForestPredictionTimes *              times,
              NextImage &&                         nextImage)
{
  if (times)
  {
    times->forestSeconds.clear();
    times->contextSeconds.clear();
  }
  cascade.Validate("auto-context");
  const int           numClasses = cascade.NumberOfClasses();
  const int           stages = int(cascade.stages.size());
  const ForestImage * current = &first;
  const std::size_t   voxels = std::size_t(first.nx) * first.ny * first.nz;
  std::vector<float>  distribution;
  for (int k = 0; k < stages; ++k)
  {
    ForestDensePredictionOptions stageOptions = options;
    stageOptions.mode = ForestOutputMode::Distribution;
    stageOptions.progress = options.progress ? [&options, k, stages](double f) { options.progress((k + f) / stages); }
                                             : std::function<void(double)>();
    distribution.assign(voxels * numClasses, 0.0f);
    auto       start = std::chrono::steady_clock::now();
    const auto result = PredictForestDense(cascade.stages[k], *current, stageOptions, distribution.data(), nullptr);
    if (times)
      times->forestSeconds.push_back(SecondsSince(start));
    if (backendUsed)
      *backendUsed = result.backendUsed;
    if (k + 1 < stages)
    {
      start = std::chrono::steady_clock::now();
      current = &nextImage(distribution);
      if (times)
        times->contextSeconds.push_back(SecondsSince(start));
    }
  }
  return distribution;
}
} // namespace

std::vector<float>
PredictForestCascade(const ForestCascade &                cascade,
                     const ForestImage &                  image,
                     const ForestDensePredictionOptions & options,
                     std::string *                        backendUsed,
                     ForestPredictionTimes *              times)
{
  ForestImage stageImage;
  bool        reuse = false; // from the third stage on, only the maps' tables change: the image's are in place
  return PredictStages(
    cascade,
    image,
    options,
    backendUsed,
    times,
    [&](const std::vector<float> & distribution) -> const ForestImage &
    {
      WriteProbabilityChannels(
        image, distribution, cascade.NumberOfClasses(), options.threads, cascade.contextChannels, stageImage, reuse);
      reuse = true;
      return stageImage;
    });
}

std::vector<float>
PredictForestCascade(const ForestCascade &                cascade,
                     ForestImage &&                       image,
                     const ForestDensePredictionOptions & options,
                     std::string *                        backendUsed,
                     ForestPredictionTimes *              times)
{
  ForestImage stageImage = std::move(image);
  const int   imageChannels = stageImage.numChannels;
  return PredictStages(
    cascade,
    stageImage,
    options,
    backendUsed,
    times,
    [&](const std::vector<float> & distribution) -> const ForestImage &
    {
      AppendProbabilityChannelsInPlace(
        stageImage, imageChannels, distribution, cascade.NumberOfClasses(), options.threads, cascade.contextChannels);
      return stageImage;
    });
}

std::vector<std::int32_t>
ArgMaxLabels(const std::vector<float> & distribution, int numClasses)
{
  std::vector<std::int32_t> labels(distribution.size() / std::size_t(numClasses));
  for (std::size_t v = 0; v < labels.size(); ++v)
  {
    const float * p = distribution.data() + v * numClasses;
    labels[v] = std::int32_t(std::max_element(p, p + numClasses) - p);
  }
  return labels;
}

} // namespace canopy
