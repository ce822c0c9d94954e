#include "canopyPBTVolumeTraining.h"

#include "canopy/Collective.h"
#include "canopy/Elapsed.h"
#include "canopy/Errors.h"
#include "canopy/HaarResponseEngine.h"
#include "canopy/IntegralVolume.h"
#include "canopy/IntegralVolumeView.h"
#include "canopy/PortableRandom.h"
#include "canopyHaarChannels.h"
#include "canopyHaarFeatureBank.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

namespace canopy
{
namespace
{
// Up to k distinct entries of `pool`, in random order (partial Fisher-Yates).
std::vector<std::int64_t>
Choose(std::vector<std::int64_t> pool, std::size_t k, std::mt19937_64 & rng)
{
  k = std::min(k, pool.size());
  for (std::size_t i = 0; i < k; ++i)
  {
    std::swap(pool[i], pool[i + UniformIndex(rng, pool.size() - i)]);
  }
  pool.resize(k);
  return pool;
}
} // namespace

FloatVolume::Pointer
PrepareVolume(const FloatVolume * image, const std::array<double, 3> & workingSpacing,
              const IntensityNormalization & normalization)
{
  auto prepared = ResampleToSpacing(image, workingSpacing);
  NormalizeIntensities(prepared, normalization);
  return prepared;
}

std::array<int, 3>
SampleBoxVoxels(const std::array<double, 3> & sampleBoxMm, const std::array<double, 3> & spacing)
{
  std::array<int, 3> box;
  for (int d = 0; d < 3; ++d)
  {
    if (!(sampleBoxMm[d] > 0.0))
    {
      CANOPY_THROW("sample box: size must be positive, got " << sampleBoxMm[d] << " mm on axis " << d);
    }
    box[d] = std::max(1, static_cast<int>(std::lround(sampleBoxMm[d] / spacing[d])));
  }
  return box;
}

void
DrawTrainingSamples(const MaskVolume * mask, const SamplingOptions & options, std::uint64_t seed,
                    std::vector<VoxelIndex3> & points, std::vector<std::int8_t> & labels, std::vector<float> * weights)
{
  const auto size = mask->GetLargestPossibleRegion().GetSize();
  const int  nx = static_cast<int>(size[0]), ny = static_cast<int>(size[1]), nz = static_cast<int>(size[2]);
  const unsigned char * m = mask->GetBufferPointer();
  // "Near the boundary" = outside, with a label voxel in the cube of half-width r around it: one box
  // sum of the mask's integral volume per voxel.
  std::vector<double> table(PaddedTableSize(nx, ny, nz));
  std::vector<unsigned char> binary(static_cast<std::size_t>(nx) * ny * nz);
  for (std::size_t i = 0; i < binary.size(); ++i)
    binary[i] = m[i] != 0;
  ComputeIntegralVolumeCPU(binary.data(), nx, ny, nz, table.data());
  const IntegralVolumeView view{ table.data(), nx, ny, nz };
  int                      r[3];
  for (int d = 0; d < 3; ++d)
    r[d] = std::max(1, static_cast<int>(std::lround(options.nearBoundaryMm / mask->GetSpacing()[d])));

  std::vector<std::int64_t> inside, near, far;
  std::int64_t              i = 0;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x, ++i)
      {
        if (binary[i])
          inside.push_back(i);
        else if (ClippedBoxSum(view, x - r[0], y - r[1], z - r[2], x + r[0] + 1, y + r[1] + 1, z + r[2] + 1) > 0.0)
          near.push_back(i);
        else
          far.push_back(i);
      }
  const double    stratumSize[3] = { double(inside.size()), double(near.size()), double(far.size()) };
  std::mt19937_64 rng(seed);
  const auto      wantNear = static_cast<std::size_t>(std::lround(options.negativesPerVolume * options.nearBoundaryFraction));
  auto            chosenInside = Choose(std::move(inside), options.positivesPerVolume, rng);
  auto            chosenNear = Choose(near, wantNear, rng);
  // Whatever the near band cannot supply comes from far away (and vice versa).
  auto chosenFar = Choose(std::move(far), options.negativesPerVolume - chosenNear.size(), rng);
  if (chosenNear.size() + chosenFar.size() < static_cast<std::size_t>(options.negativesPerVolume))
  {
    chosenNear = Choose(std::move(near), options.negativesPerVolume - chosenFar.size(), rng);
  }
  auto add = [&](const std::vector<std::int64_t> & chosen, std::int8_t label, double stratum) {
    const float weight = chosen.empty() ? 0.0f : static_cast<float>(stratum / chosen.size());
    for (std::int64_t index : chosen)
    {
      const int x = static_cast<int>(index % nx);
      const int y = static_cast<int>((index / nx) % ny);
      const int z = static_cast<int>(index / (static_cast<std::int64_t>(nx) * ny));
      points.push_back(VoxelIndex3{ x, y, z });
      labels.push_back(label);
      if (weights)
        weights->push_back(weight);
    }
  };
  const std::size_t first = labels.size();
  add(chosenInside, 1, stratumSize[0]);
  add(chosenNear, -1, stratumSize[1]);
  add(chosenFar, -1, stratumSize[2]);
  if (weights && options.balanceClasses)
  {
    double positive = 0.0, negative = 0.0;
    for (std::size_t s = first; s < labels.size(); ++s)
      (labels[s] > 0 ? positive : negative) += options.weightByPrior ? (*weights)[s] : 1.0;
    for (std::size_t s = first; s < labels.size(); ++s)
    {
      const double base = options.weightByPrior ? (*weights)[s] : 1.0;
      (*weights)[s] = static_cast<float>(labels[s] > 0 && positive > 0.0 ? base * negative / positive : base);
    }
  }
}

PBTModelFile
TrainPBTFromVolumes(const std::vector<LabelledVolume> & volumes, const PBTVolumeTrainingOptions & options,
                    PBTVolumeTrainingReport * report, const TrainingProgress & progress)
{
  if (volumes.empty())
  {
    CANOPY_THROW("training: no labelled volumes given");
  }
  double prepareSeconds = 0.0;
  auto   prepare = [&](std::size_t v)
  {
    const LabelledVolume & lv = volumes[v];
    if (!lv.image || !lv.mask)
    {
      CANOPY_THROW("training: volume " << lv.name << " lacks an image or a label map");
    }
    if (!SameGrid(lv.image, lv.mask))
    {
      CANOPY_THROW(
        "training: " << lv.name
                     << ": the label map's grid (size, spacing, origin, direction) differs from the image's");
    }
    const auto       start = std::chrono::steady_clock::now();
    PreparedChannels prepared;
    prepared.channels.push_back(PrepareVolume(lv.image, options.workingSpacing, options.normalization));
    prepared.mask = ResampleMaskLike(lv.mask, prepared.channels.front());
    prepared.name = lv.name;
    prepareSeconds += SecondsSince(start);
    return prepared;
  };
  RandomHaarBankOptions bankOptions;
  bankOptions.count = options.featureBankSize;
  bankOptions.seed = options.pbt.seed * 7919 + 1;
  bankOptions.minimumSize = options.minimumFeatureSize;
  PBTModelFile model;
  model.tree =
    TrainPBTOnChannels(volumes.size(), prepare, 1, GenerateRandomHaarBank(bankOptions), options, report, progress);
  if (report)
  {
    report->prepareSeconds += prepareSeconds;
  }
  model.workingSpacing = options.workingSpacing;
  model.normalization = options.normalization;
  return model;
}

PBTModel
TrainPBTOnChannels(std::size_t                                          numVolumes,
                   const std::function<PreparedChannels(std::size_t)> & prepare,
                   int                                                  channels,
                   const std::vector<HaarFeature> &                     bank,
                   const PBTVolumeTrainingOptions &                     options,
                   PBTVolumeTrainingReport *                            report,
                   const TrainingProgress &                             progress)
{
  if (numVolumes == 0)
  {
    CANOPY_THROW("training: no labelled volumes given");
  }
  PBTVolumeTrainingReport local;
  PBTVolumeTrainingReport & out = report ? *report : local;
  out.backend = options.backend.Describe();
  auto notify = [&progress](double fraction, const std::string & stage) {
    if (progress)
      progress(fraction, stage);
  };
  const std::array<int, 3> sampleBox = SampleBoxVoxels(options.sampleBoxMm, options.workingSpacing);
  const int                numFeatures = static_cast<int>(bank.size());

  // Responses, volume by volume (each volume's integral volume lives on the device only while used).
  ResponseMatrix                  responses;
  std::vector<std::int8_t>        labels;
  std::vector<float>              weights;
  std::vector<std::vector<float>> perVolume;
  std::vector<std::int64_t>       counts;
  HaarResponseEngine              engine(options.backend, options.pbt.threads);
  for (std::size_t v = 0; v < numVolumes; ++v)
  {
    notify(0.3 * v / numVolumes, "preparing volume " + std::to_string(v + 1));
    const PreparedChannels prepared = prepare(v);
    if (static_cast<int>(prepared.channels.size()) != channels)
    {
      CANOPY_THROW("training: " << prepared.name << ": " << prepared.channels.size() << " channels, expected "
                                << channels);
    }
    auto                     start = std::chrono::steady_clock::now();
    std::vector<VoxelIndex3> points;
    const std::size_t        before = labels.size();
    DrawTrainingSamples(prepared.mask,
                        options.sampling,
                        options.sampling.seed * 1000003 + (options.firstVolume + v),
                        points,
                        labels,
                        options.sampling.weightByPrior || options.sampling.balanceClasses ? &weights : nullptr);
    if (std::count(labels.begin() + before, labels.end(), 1) == 0)
    {
      CANOPY_THROW("training: " << prepared.name << ": the label map has no positive voxels at the working spacing");
    }
    out.prepareSeconds += SecondsSince(start);

    start = std::chrono::steady_clock::now();
    const auto size = prepared.channels.front()->GetLargestPossibleRegion().GetSize();
    const int  nx = int(size[0]), ny = int(size[1]), nz = int(size[2]);
    if (channels == 1)
    {
      const auto resolved = ResolveHaarBank(bank, sampleBox);
      engine.SetFeatures(resolved.data(), numFeatures);
      engine.SetVolumeFromVoxels(prepared.channels.front()->GetBufferPointer(), nx, ny, nz);
    }
    else
    {
      // Channels stacked along z; each feature's channel folded into its offsets (canopyHaarChannels.h).
      int                        stride = 0;
      const auto                 resolved = ResolveHaarBankOnChannels(bank, sampleBox, channels, nz, &stride);
      std::vector<const float *> pointers;
      for (const auto & channel : prepared.channels)
        pointers.push_back(channel->GetBufferPointer());
      const std::vector<float> stack = StackHaarChannels(pointers, nx, ny, nz, stride);
      engine.SetFeatures(resolved.data(), numFeatures);
      engine.SetVolumeFromVoxels(stack.data(), nx, ny, HaarStackPlanes(channels, nz, stride));
    }
    perVolume.emplace_back(std::size_t(numFeatures) * points.size());
    engine.EvaluateAtPoints(points.data(), static_cast<std::int64_t>(points.size()), perVolume.back().data());
    counts.push_back(static_cast<std::int64_t>(points.size()));
    out.responseSeconds += SecondsSince(start);
  }
  // Gather into one feature-major matrix.
  responses.numFeatures = numFeatures;
  responses.numSamples = static_cast<std::int64_t>(labels.size());
  responses.values.resize(static_cast<std::size_t>(responses.numFeatures) * responses.numSamples);
  std::int64_t column = 0;
  for (std::size_t v = 0; v < perVolume.size(); ++v)
  {
    for (int f = 0; f < responses.numFeatures; ++f)
    {
      std::copy_n(perVolume[v].data() + f * counts[v], counts[v],
                  responses.values.data() + f * responses.numSamples + column);
    }
    column += counts[v];
    std::vector<float>().swap(perVolume[v]);
  }

  const auto start = std::chrono::steady_clock::now();
  PBTModel   tree = TrainPBT(responses,
                           labels,
                           weights,
                           options.pbt,
                           [&notify](double f, const std::string & stage) { notify(0.3 + 0.7 * f, stage); });
  out.trainSeconds = SecondsSince(start);
  const std::vector<float> posterior = EvaluatePBTOnMatrix(tree, responses, options.pbt.threads);
  std::int64_t             tally[2] = { 0, static_cast<std::int64_t>(labels.size()) }; // correct, samples
  for (std::size_t s = 0; s < labels.size(); ++s)
    tally[0] += (posterior[s] >= 0.5f) == (labels[s] > 0);
  if (options.pbt.shards)
    options.pbt.shards->SumInPlace(tally, 2);
  out.trainingAccuracy = tally[1] == 0 ? 0.0 : double(tally[0]) / tally[1];

  tree.features = bank;
  tree.sampleBox = sampleBox;
  tree.CompactFeatures();
  out.samples = tally[1];
  out.candidateFeatures = responses.numFeatures;
  out.featuresUsed = static_cast<int>(tree.features.size());
  out.depth = tree.Depth();
  out.nodes = static_cast<int>(tree.nodes.size());
  notify(1.0, "done");
  return tree;
}

} // namespace canopy
