#include "canopyPBTCascade.h"

#include "canopy/Elapsed.h"
#include "canopy/Errors.h"
#include "canopy/FoldAssignment.h"
#include "canopyHaarFeatureBank.h"

#include <chrono>
#include <random>

namespace canopy
{
namespace
{
struct PreparedVolume
{
  FloatVolume::Pointer image;  // working grid, normalised
  MaskVolume::Pointer  labels; // working grid
  std::string          name;
};

/** The bank of stage k: the binary trainer's bank (same seed), each feature given a channel at random
 * on later stages (intensity or one of the class maps, uniformly). */
std::vector<HaarFeature>
StageBank(const PBTCascadeTrainingOptions & options, int stage, int channels)
{
  RandomHaarBankOptions bank;
  bank.count = options.volume.featureBankSize;
  bank.seed = options.volume.pbt.seed * 7919 + 1 + std::uint64_t(stage) * 104729;
  bank.minimumSize = options.volume.minimumFeatureSize;
  std::vector<HaarFeature> features = GenerateRandomHaarBank(bank);
  std::mt19937_64          rng(bank.seed ^ 0x5bd1e995u);
  for (auto & f : features)
    f.channel = channels == 1 ? 0 : int(rng() % std::uint64_t(channels));
  return features;
}

/** The PBTs of one stage, trained on the volumes `use` with context maps `maps` (empty at stage 0). */
std::vector<PBTModel>
TrainStage(const std::vector<PreparedVolume> &                      prepared,
           const std::vector<std::size_t> &                         use,
           const std::vector<std::vector<FloatVolume::Pointer>> &   maps,
           const PBTCascadeTrainingOptions &                        options,
           int                                                      stage,
           std::uint64_t                                            seedOffset,
           std::vector<PBTVolumeTrainingReport> *                   reports,
           const std::function<void(double, const std::string &)> & notify)
{
  const int                      channels = stage == 0 ? 1 : 1 + int(options.labels.size());
  const std::vector<HaarFeature> bank = StageBank(options, stage, channels);
  std::vector<PBTModel>          trees;
  for (std::size_t c = 0; c < options.labels.size(); ++c)
  {
    const int label = options.labels[c];
    auto      prepare = [&](std::size_t i)
    {
      const PreparedVolume & v = prepared[use[i]];
      PreparedChannels       out;
      out.channels.push_back(v.image);
      if (stage > 0)
        out.channels.insert(out.channels.end(), maps[use[i]].begin(), maps[use[i]].end());
      out.mask = MaskVolume::New();
      out.mask->CopyInformation(v.labels);
      out.mask->SetRegions(v.labels->GetLargestPossibleRegion());
      out.mask->Allocate();
      const auto n = v.labels->GetLargestPossibleRegion().GetNumberOfPixels();
      for (itk::SizeValueType j = 0; j < n; ++j)
        out.mask->GetBufferPointer()[j] = v.labels->GetBufferPointer()[j] == label;
      out.name = v.name + " (class " + std::to_string(label) + ")";
      return out;
    };
    PBTVolumeTrainingOptions o = options.volume;
    o.pbt.seed += seedOffset + 7 * c;
    o.sampling.seed = o.pbt.seed;
    PBTVolumeTrainingReport report;
    trees.push_back(TrainPBTOnChannels(use.size(),
                                       prepare,
                                       channels,
                                       bank,
                                       o,
                                       &report,
                                       [&](double f, const std::string & what)
                                       { notify((c + f) / options.labels.size(), what); }));
    if (reports)
      reports->push_back(report);
  }
  return trees;
}
} // namespace

PBTClassModel
TrainPBTCascade(const std::vector<ClassLabelledVolume> & volumes,
                const PBTCascadeTrainingOptions &        options,
                std::vector<PBTCascadeStageReport> *     report,
                const TrainingProgress &                 progress)
{
  if (volumes.empty())
    CANOPY_THROW("train-pbt: no labelled volumes given");
  if (options.labels.empty() || options.labels.size() > 255)
    CANOPY_THROW("train-pbt: give 1 to 255 class labels, not " << options.labels.size());
  if (options.stages < 1 || options.stages > kPBTCascadeMaxStages)
    CANOPY_THROW("--auto-context: " << options.stages << " stages; give 1 to " << kPBTCascadeMaxStages);
  if (options.stages > 1 && (options.folds < 2 || std::size_t(options.folds) > volumes.size()))
    CANOPY_THROW("--context-folds: " << options.folds << " folds for " << volumes.size()
                                     << " training volumes; give 2 to the number of volumes");
  auto notify = [&progress](double f, const std::string & what)
  {
    if (progress)
      progress(f, what);
  };
  PBTClassModel model;
  model.workingSpacing = options.volume.workingSpacing;
  model.normalization = options.volume.normalization;
  model.labels = options.labels;

  std::vector<PreparedVolume> prepared;
  for (const auto & v : volumes)
  {
    if (!v.image || !v.labels || !SameGrid(v.image, v.labels))
      CANOPY_THROW("train-pbt: " << v.name << ": no image, no label map, or their grids differ");
    auto image = PrepareVolume(v.image, options.volume.workingSpacing, options.volume.normalization);
    prepared.push_back({ image, ResampleMaskLike(v.labels, image), v.name });
  }
  std::vector<std::size_t> all(volumes.size());
  for (std::size_t i = 0; i < all.size(); ++i)
    all[i] = i;
  const std::vector<int> fold = AssignFolds(volumes.size(), options.folds, options.foldSeed);
  // Trainings: one per stage on all volumes, plus F per stage before the last (out-of-fold maps).
  const double                                   total = options.stages + (options.stages - 1) * options.folds;
  double                                         done = 0.0;
  std::vector<std::vector<FloatVolume::Pointer>> maps(volumes.size());
  for (int k = 0; k < options.stages; ++k)
  {
    PBTCascadeStageReport stageReport;
    const std::string     name = "stage " + std::to_string(k + 1) + " of " + std::to_string(options.stages);
    auto                  start = std::chrono::steady_clock::now();
    model.stages.push_back(TrainStage(prepared,
                                      all,
                                      maps,
                                      options,
                                      k,
                                      std::uint64_t(k) * 1000,
                                      &stageReport.classes,
                                      [&](double f, const std::string & what)
                                      { notify((done + f) / total, name + ": " + what); }));
    done += 1.0;
    stageReport.trainSeconds = SecondsSince(start);
    if (k + 1 < options.stages)
    {
      // Out-of-fold maps of stage k for stage k + 1.
      start = std::chrono::steady_clock::now();
      std::vector<std::vector<FloatVolume::Pointer>> next(volumes.size());
      for (int f = 0; f < options.folds; ++f)
      {
        std::vector<std::size_t> in, out;
        for (std::size_t i = 0; i < volumes.size(); ++i)
          (fold[i] == f ? out : in).push_back(i);
        PBTClassModel partial = model;
        partial.stages.back() =
          TrainStage(prepared,
                     in,
                     maps,
                     options,
                     k,
                     std::uint64_t(k) * 1000 + 100 * (f + 1),
                     nullptr,
                     [&](double g, const std::string & what)
                     { notify((done + g) / total, name + ", fold " + std::to_string(f + 1) + ": " + what); });
        done += 1.0;
        // Volume i's stage-k input is its own out-of-fold maps of stage k - 1, as at prediction.
        for (std::size_t i : out)
          next[i] = PredictPBTStage(
            partial.stages.back(), prepared[i].image, maps[i], options.volume.backend, options.evaluation);
      }
      maps = std::move(next);
      stageReport.outOfFoldSeconds = SecondsSince(start);
    }
    if (report)
      report->push_back(stageReport);
  }
  model.Validate("train-pbt");
  notify(1.0, "done");
  return model;
}

} // namespace canopy
