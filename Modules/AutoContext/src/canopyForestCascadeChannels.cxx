// The channels an auto-context stage adds (canopyForestCascadeChannels.h), their names, and the focus of a
// stage's sampling on the previous stage's mistakes.
#include "canopyForestCascadeChannels.h"

#include "canopy/Errors.h"
#include "canopy/GreyMorphology.h"
#include "canopy/IntegralVolume.h"

#include <algorithm>
#include <utility>

namespace canopy
{
namespace
{
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
    const BoxGrid box = BoxGrid::Cube(image.nx, image.ny, image.nz, radius);
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

} // namespace

// One copy of the image's tables, reserved at its full size: copying them twice (copy, then a reallocating
// insert) and first-touching the new pages took most of the 1.3 s between two stages of a colin27 cascade
// (docs/BENCHMARKS.md, "Between the stages of a cascade").
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

// The first call grows `sums`, within its capacity when FromChannels reserved the room.
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

// When `out` already holds the previous stage's images of the same inputs, their tables are rewritten in
// place: a new set beside the old one held three copies of the image tables at the change of stage.
void
WriteStageImages(const std::vector<const ForestLabelledImage *> & images,
                 const std::vector<std::vector<float>> &          maps,
                 int                                              numClasses,
                 int                                              threads,
                 const std::vector<std::string> &                 contextChannels,
                 std::vector<ForestLabelledImage> &               out,
                 const ForestCascadeOptions *                     focusFrom)
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

void
AppendStageChannelsInPlace(std::vector<ForestLabelledImage> &      images,
                           int                                     imageChannels,
                           const std::vector<std::vector<float>> & maps,
                           int                                     numClasses,
                           int                                     threads,
                           const std::vector<std::string> &        contextChannels,
                           const ForestCascadeOptions *            focusFrom)
{
  for (std::size_t i = 0; i < images.size(); ++i)
  {
    auto & item = images[i];
    AppendProbabilityChannelsInPlace(item.image, imageChannels, maps[i], numClasses, threads, contextChannels);
    item.focus =
      focusFrom && focusFrom->sampling.focusShare > 0.0
        ? StageMistakeFocus(
            item.labels, maps[i], numClasses, item.image.nx, item.image.ny, item.image.nz, focusFrom->focusBand)
        : std::vector<std::uint8_t>(); // as a stage image written afresh
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
  if (band > 0) // dilation: the mistakes' neighbours too
    BoxExtremum(mistake.data(), mistake.data(), BoxGrid::Cube(nx, ny, nz, band), true);
  return std::vector<std::uint8_t>(mistake.begin(), mistake.end());
}

} // namespace canopy
