#include "canopyForestCascade.h"

#include "canopy/Elapsed.h"
#include "canopy/Errors.h"
#include "canopy/FoldAssignment.h"
#include "canopy/GreyMorphology.h"
#include "canopy/IntegralVolume.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>

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

/** The planes a stage adds after `imageChannels` image channels, from the previous stage's `distribution`:
 * one map per class, then per context channel one plane per class. */
std::vector<std::vector<float>>
ProbabilityPlanes(const ForestImage &              image,
                  int                              imageChannels,
                  const std::vector<float> &       distribution,
                  int                              numClasses,
                  int                              threads,
                  const std::vector<std::string> & contextChannels)
{
  const std::size_t voxels = std::size_t(image.nx) * image.ny * image.nz;
  if (numClasses < 1 || distribution.size() != voxels * std::size_t(numClasses))
  {
    CANOPY_THROW("auto-context: " << distribution.size() << " probabilities for " << voxels << " voxels of "
                                  << numClasses << " classes");
  }
  const auto radii = ParseContextChannels(contextChannels, "auto-context");
  const int  added = numClasses * (1 + int(radii.size()));
  if (imageChannels + added > 256)
  {
    CANOPY_THROW("auto-context: " << imageChannels << " image channels and " << added
                                  << " probability and context channels exceed the forest's 256 channels");
  }
  std::vector<std::vector<float>> planes(numClasses, std::vector<float>(voxels));
  for (std::size_t v = 0; v < voxels; ++v)
    for (int c = 0; c < numClasses; ++c)
      planes[c][v] = distribution[v * numClasses + c];
  for (const int radius : radii)
  {
    BoxGrid box;
    box.nx = image.nx;
    box.ny = image.ny;
    box.nz = image.nz;
    for (int a = 0; a < 3; ++a)
      box.radius[a] = (a == 2 && image.nz == 1) ? 0 : radius;
    for (int c = 0; c < numClasses; ++c)
    {
      std::vector<float> topHat(voxels);
      GreyClosing(planes[c].data(), topHat.data(), box, threads);
      for (std::size_t v = 0; v < voxels; ++v)
        topHat[v] -= planes[c][v];
      planes.push_back(std::move(topHat));
    }
  }
  return planes;
}

/** Integrates `planes` into `out`'s tables from channel `first` on (`out` holds them, at one stride). */
void
WritePlaneTables(const std::vector<std::vector<float>> & planes, int first, int threads, ForestImage & out)
{
  const std::size_t stride = std::size_t(PaddedTableSize(out.nx, out.ny, out.nz));
  for (std::size_t c = 0; c < planes.size(); ++c)
    ComputeIntegralVolumeCPU(
      planes[c].data(), out.nx, out.ny, out.nz, out.sums.data() + (std::size_t(first) + c) * stride, threads);
}

/** AppendProbabilityChannels into `out`. With `reuse`, `out` already holds `image`'s tables followed by
 * appended ones of the same shape (the cascade's previous stage on the same image): only the appended
 * tables are recomputed, in place. Otherwise `out` is rebuilt with one copy of `image`'s tables. Copying
 * them twice (copy, then a reallocating insert) and first-touching the new pages took most of the 1.3 s
 * between two stages of a colin27 cascade (docs/BENCHMARKS.md, "Between the stages of a cascade"). */
void
WriteProbabilityChannels(const ForestImage &              image,
                         const std::vector<float> &       distribution,
                         int                              numClasses,
                         int                              threads,
                         const std::vector<std::string> & contextChannels,
                         ForestImage &                    out,
                         bool                             reuse)
{
  const auto planes = ProbabilityPlanes(image, image.numChannels, distribution, numClasses, threads, contextChannels);
  const std::size_t stride = std::size_t(PaddedTableSize(image.nx, image.ny, image.nz));
  const std::size_t head = image.sums.size();
  const std::size_t total = head + stride * planes.size();
  if (!reuse || out.sums.size() != total || out.nx != image.nx || out.ny != image.ny || out.nz != image.nz)
  {
    out = ForestImage();
    out.nx = image.nx;
    out.ny = image.ny;
    out.nz = image.nz;
    out.scale = image.scale;
    out.sums.reserve(total);
    out.sums.assign(image.sums.begin(), image.sums.end());
    out.sums.resize(total, 0.0); // the tables' zero padding, which integration leaves as it is
  }
  out.numChannels = image.numChannels + int(planes.size());
  WritePlaneTables(planes, image.numChannels, threads, out);
}

/** The same without a copy: `image` holds `imageChannels` channels of its own, followed (after the first
 * call) by the previous stage's appended tables, which are rewritten. The first call grows `sums`, within
 * its capacity when FromChannels reserved the room. */
void
AppendProbabilityChannelsInPlace(ForestImage &                    image,
                                 int                              imageChannels,
                                 const std::vector<float> &       distribution,
                                 int                              numClasses,
                                 int                              threads,
                                 const std::vector<std::string> & contextChannels)
{
  const auto planes = ProbabilityPlanes(image, imageChannels, distribution, numClasses, threads, contextChannels);
  const std::size_t stride = std::size_t(PaddedTableSize(image.nx, image.ny, image.nz));
  image.sums.resize(stride * (std::size_t(imageChannels) + planes.size()), 0.0); // new tables' padding: zero
  image.numChannels = imageChannels + int(planes.size());
  WritePlaneTables(planes, imageChannels, threads, image);
}

/** A stage's training images, written into `out`: the image channels, then the previous stage's maps;
 * with a focus share, each image's focus is its mistakes in those maps (StageMistakeFocus). When `out`
 * already holds the previous stage's images of the same inputs, their tables are rewritten in place: a
 * new set beside the old one held three copies of the image tables at the change of stage. */
void
WriteStageImages(const std::vector<const ForestLabelledImage *> & images,
                 const std::vector<std::vector<float>> &          maps,
                 int                                              numClasses,
                 int                                              threads,
                 const std::vector<std::string> &                 contextChannels,
                 std::vector<ForestLabelledImage> &               out,
                 const ForestCascadeOptions *                     focusFrom = nullptr)
{
  const bool reuse = out.size() == images.size();
  if (!reuse)
    out.assign(images.size(), ForestLabelledImage{});
  for (std::size_t i = 0; i < images.size(); ++i)
  {
    const auto & image = images[i]->image;
    WriteProbabilityChannels(image, maps[i], numClasses, threads, contextChannels, out[i].image, reuse);
    if (!reuse)
      out[i].labels = images[i]->labels;
    if (focusFrom && focusFrom->sampling.focusShare > 0.0)
      out[i].focus =
        StageMistakeFocus(images[i]->labels, maps[i], numClasses, image.nx, image.ny, image.nz, focusFrom->focusBand);
  }
}

/** WriteStageImages without a copy: `images` (each holding `imageChannels` channels of its own, then the
 * previous stage's appended ones) get the maps' tables after their own, in place. */
void
AppendStageChannelsInPlace(std::vector<ForestLabelledImage> &      images,
                           int                                     imageChannels,
                           const std::vector<std::vector<float>> & maps,
                           int                                     numClasses,
                           int                                     threads,
                           const std::vector<std::string> &        contextChannels,
                           const ForestCascadeOptions &            focusFrom)
{
  for (std::size_t i = 0; i < images.size(); ++i)
  {
    auto & item = images[i];
    AppendProbabilityChannelsInPlace(item.image, imageChannels, maps[i], numClasses, threads, contextChannels);
    item.focus =
      focusFrom.sampling.focusShare > 0.0
        ? StageMistakeFocus(
            item.labels, maps[i], numClasses, item.image.nx, item.image.ny, item.image.nz, focusFrom.focusBand)
        : std::vector<std::uint8_t>(); // as a stage image written afresh
  }
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

std::vector<int>
ParseContextChannels(const std::vector<std::string> & names, const std::string & context)
{
  std::vector<int> radii;
  for (const auto & name : names)
  {
    const std::string prefix = "tophat:";
    const std::string digits = name.substr(std::min(name.size(), prefix.size()));
    const bool        whole = name.compare(0, prefix.size(), prefix) == 0 && !digits.empty() && digits.size() <= 2 &&
                       std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    const int radius = whole ? std::stoi(digits) : 0;
    if (radius < 1 || radius > 32 || std::to_string(radius) != digits)
    {
      CANOPY_THROW(context << ": context channel \"" << name << "\" is not tophat:R (R whole voxels, 1 to 32)");
    }
    if (std::find(radii.begin(), radii.end(), radius) != radii.end())
    {
      CANOPY_THROW(context << ": context channel \"" << name << "\" is given twice");
    }
    radii.push_back(radius);
  }
  return radii;
}

ForestImage
AppendProbabilityChannels(const ForestImage &              image,
                          const std::vector<float> &       distribution,
                          int                              numClasses,
                          int                              threads,
                          const std::vector<std::string> & contextChannels)
{
  if (distribution.empty())
    return image;
  ForestImage out;
  WriteProbabilityChannels(image, distribution, numClasses, threads, contextChannels, out, false);
  return out;
}

namespace
{
/** TrainForestCascade. With `owned` (images[i] is &(*owned)[i]), each stage's maps are appended to the
 * training images themselves instead of to copies of them. */
ForestCascade
TrainStages(const std::vector<const ForestLabelledImage *> & images,
            std::vector<ForestLabelledImage> *               owned,
            int                                              numClasses,
            const ForestCascadeOptions &                     options,
            const std::vector<const ForestLabelledImage *> & heldOut,
            std::vector<ForestCascadeStageReport> *          report)
{
  if (options.stages < 1 || options.stages > kForestCascadeMaxStages)
  {
    CANOPY_THROW("--auto-context " << options.stages << ": give 1 to " << kForestCascadeMaxStages << " stages");
  }
  if (options.stages > 1 && (options.folds < 2 || options.folds > int(images.size())))
  {
    CANOPY_THROW("--context-folds " << options.folds << ": needs 2 to " << images.size()
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
  const auto fold = options.stages > 1 ? AssignFolds(images.size(), options.folds, options.foldSeed)
                                       : std::vector<int>(images.size(), 0);
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
    const auto set = MakeForestTrainingSet(train, numClasses, options.sampling);
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
        const auto labels = ArgMaxLabels(heldOutMaps.back(), numClasses);
        scores.Add(labels.data(), item->labels.data(), labels.size());
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
      std::vector<const ForestLabelledImage *> others;
      for (std::size_t i = 0; i < train.size(); ++i)
        if (fold[i] != f)
          others.push_back(train[i]);
      ForestTrainingOptions foldForest = forest;
      foldForest.seed = forest.seed + 104729ull * std::uint64_t(f + 1);
      const ForestModel foldModel =
        TrainForest(MakeForestTrainingSet(others, numClasses, options.sampling), foldForest);
      for (std::size_t i = 0; i < train.size(); ++i)
        if (fold[i] == f)
          maps[i] = PredictDistribution(foldModel, train[i]->image, options.prediction);
      ++done;
    }
    if (report)
      (*report)[k].outOfFoldSeconds = SecondsSince(start);
    if (owned)
      AppendStageChannelsInPlace(*owned, imageChannels, maps, numClasses, threads, cascade.contextChannels, options);
    else
      WriteStageImages(images, maps, numClasses, threads, cascade.contextChannels, stageImages, &options);
    if (!heldOut.empty())
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
  return TrainStages(images, nullptr, numClasses, options, heldOut, report);
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
  return TrainStages(pointers, &owned, numClasses, options, heldOut, report);
}

std::vector<std::uint8_t>
StageMistakeFocus(const std::vector<std::int32_t> & labels,
                  const std::vector<float> &        distribution,
                  int                               numClasses,
                  int                               nx,
                  int                               ny,
                  int                               nz,
                  int                               band)
{
  const std::size_t voxels = std::size_t(nx) * ny * nz;
  if (numClasses < 1 || labels.size() != voxels || distribution.size() != voxels * std::size_t(numClasses) || band < 0)
  {
    CANOPY_THROW("auto-context focus: " << labels.size() << " labels and " << distribution.size()
                                        << " probabilities for " << voxels << " voxels of " << numClasses
                                        << " classes, band " << band);
  }
  const auto         predicted = ArgMaxLabels(distribution, numClasses);
  std::vector<float> mistake(voxels);
  for (std::size_t v = 0; v < voxels; ++v)
    mistake[v] = labels[v] >= 0 && labels[v] < numClasses && predicted[v] != labels[v] ? 1.0f : 0.0f;
  if (band > 0)
  {
    BoxGrid box;
    box.nx = nx;
    box.ny = ny;
    box.nz = nz;
    for (int a = 0; a < 3; ++a)
      box.radius[a] = (a == 2 && nz == 1) ? 0 : band;
    BoxExtremum(mistake.data(), mistake.data(), box, true); // dilation: the mistakes' neighbours too
  }
  return std::vector<std::uint8_t>(mistake.begin(), mistake.end());
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
