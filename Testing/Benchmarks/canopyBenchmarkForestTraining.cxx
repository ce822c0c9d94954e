// canopyBenchmarkForestTraining: random-forest training (CURFIL §5, Table 1's MSRC setting) on a
// synthetic workload of that size: 335 RGB images of 320x213, 4,500 samples per image, 21 classes,
// 500 features x 20 thresholds per node, 10 trees of depth 25. From one run:
//   - a reduced workload (default: 1 tree, 20 samples per image) on the CPU with 1 thread, with all
//     threads, and on the GPU, with ratios and the forest compared (CPU and GPU must agree);
//   - the full workload on the GPU.
// Throughput is in evaluations: sample x candidate-feature responses binned into histograms, the
// unit of training work (Stats.evaluations). Images: class regions (a Voronoi map of random cells) of
// class-specific colour with texture and noise, so trees grow deep as on real data.
// With --gpus 1,2,4: the full workload trained distributed over that many GPUs (ranks as threads of
// this process, one GPU each, the consecutive share of the images each, histograms summed through
// NCCL; docs/DISTRIBUTED.md): time, speed-up and efficiency against one GPU, and whether the forest
// equals the one-GPU forest (it must).
// A program, not a test (docs/BENCHMARKS.md).
#include "canopy/Device.h"
#include "canopyBenchmarkUtil.h"
#include "canopyForestImage.h"
#include "canopyForestTraining.h"
#include "canopyNcclReduction.h"
#include "canopyShares.h"
#include "canopyThreadCollective.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <random>

namespace
{
using namespace canopy;
using bench::Fixed;

struct Data
{
  std::vector<ForestImage>      images;
  std::vector<std::vector<int>> labels;
};

Data
MakeImages(int count, int nx, int ny, int classes, std::uint64_t seed)
{
  Data                                  d;
  std::mt19937_64                       rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::normal_distribution<float>       noise(0.0f, 12.0f);
  std::vector<std::array<float, 3>>     colour(classes);
  for (auto & c : colour)
    c = { 255 * u(rng), 255 * u(rng), 255 * u(rng) };
  for (int i = 0; i < count; ++i)
  {
    const int          cells = 12;
    std::vector<float> cx(cells), cy(cells);
    std::vector<int>   cl(cells);
    for (int c = 0; c < cells; ++c)
    {
      cx[c] = nx * u(rng);
      cy[c] = ny * u(rng);
      cl[c] = int(rng() % classes);
    }
    std::vector<float> ch[3];
    std::vector<int>   label(std::size_t(nx) * ny);
    for (auto & v : ch)
      v.resize(label.size());
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
      {
        int best = 0;
        for (int c = 1; c < cells; ++c)
          if ((x - cx[c]) * (x - cx[c]) + (y - cy[c]) * (y - cy[c]) <
              (x - cx[best]) * (x - cx[best]) + (y - cy[best]) * (y - cy[best]))
            best = c;
        const std::size_t p = std::size_t(y) * nx + x;
        label[p] = cl[best];
        for (int k = 0; k < 3; ++k)
          ch[k][p] = colour[cl[best]][k] + 20 * std::sin(0.3f * x * (k + 1) / 3 + cl[best]) + noise(rng);
      }
    d.images.push_back(ForestImage::FromChannels({ ch[0].data(), ch[1].data(), ch[2].data() }, nx, ny, 1));
    d.labels.push_back(std::move(label));
  }
  return d;
}

/** perImage random pixels of each image; in raster order within an image unless `randomOrder`
 * (the order grid sampling gives; neighbouring samples then share cache lines on either device). */
ForestTrainingSet
SamplesOf(const Data & d, int perImage, std::uint64_t seed, bool randomOrder)
{
  ForestTrainingSet set;
  set.numClasses = 0;
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < d.images.size(); ++i)
  {
    const ForestImage & im = d.images[i];
    set.images.push_back(im.View());
    for (int s = 0; s < perImage; ++s)
    {
      const int x = int(rng() % im.nx), y = int(rng() % im.ny), label = d.labels[i][std::size_t(y) * im.nx + x];
      set.samples.push_back(ForestSample{ int(i), x, y, 0, label });
      set.numClasses = std::max(set.numClasses, label + 1);
    }
    if (!randomOrder)
      std::sort(set.samples.end() - perImage,
                set.samples.end(),
                [](const ForestSample & a, const ForestSample & b) { return a.y != b.y ? a.y < b.y : a.x < b.x; });
  }
  return set;
}

/** Images [share.begin, share.end) of `set` and their samples (image indices from 0), in order. */
ForestTrainingSet
ShardOf(const ForestTrainingSet & set, ShareRange share)
{
  ForestTrainingSet shard;
  shard.numClasses = set.numClasses;
  shard.images.assign(set.images.begin() + share.begin, set.images.begin() + share.end);
  for (ForestSample s : set.samples)
    if (s.image >= int(share.begin) && s.image < int(share.end))
    {
      s.image -= int(share.begin);
      shard.samples.push_back(s);
    }
  return shard;
}

struct Run
{
  double              seconds = 0;
  ForestTrainingStats stats;
  std::string         json;
  int                 depth = 0;
  std::size_t         nodes = 0;
};

Run
Train(const ForestTrainingSet & set, ForestTrainingOptions o, const std::string & backend, int threads)
{
  o.backend = BackendRequest::Parse(backend);
  o.threads = threads;
  Run        r;
  const auto t0 = std::chrono::steady_clock::now();
  const auto model = TrainForest(set, o, &r.stats);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.json = ForestModelToJsonString(model);
  r.depth = model.Depth();
  r.nodes = model.nodes.size();
  return r;
}

nlohmann::json
ToJson(const char * backend, const Run & r)
{
  return { { "backend", backend },
           { "seconds", r.seconds },
           { "levels", r.stats.levels },
           { "evaluations", r.stats.evaluations },
           { "evaluations_per_second", r.seconds > 0 ? r.stats.evaluations / r.seconds : 0.0 },
           { "depth", r.depth },
           { "nodes", r.nodes } };
}

void
Print(const char * what, const Run & r, nlohmann::json & records)
{
  records.push_back(ToJson(what, r));
  std::cout << "| " << what << " | " << Fixed(r.seconds, 2) << " | " << r.stats.levels << " | "
            << Fixed(r.stats.evaluations / 1e9, 2) << " | " << Fixed(r.stats.evaluations / r.seconds / 1e9, 3) << " | "
            << r.depth << " | " << r.nodes << " |\n";
}

} // namespace

int
main(int argc, char ** argv)
{
  int                   images = 335, nx = 320, ny = 213, perImage = 4500, classes = 21;
  int                   reducedTrees = 1, reducedPerImage = 20;
  bool                  cpu1 = true, full = true, reducedRun = true, randomOrder = false;
  std::string           device = "cuda", json;
  std::uint64_t         seed = 1;
  ForestTrainingOptions o;
  o.numTrees = 10;
  o.maxDepth = 25;
  o.featureCandidates = 500;
  o.thresholdCandidates = 20;
  o.maxOffset = 95; // CURFIL's MSRC box radius
  o.maxBoxSize = 24;
  o.minSamplesToSplit = 50;
  o.baggingFraction = 1.0; // every tree sees all samples (CURFIL draws samples per tree)
  CLI::App app{ "Canopy forest training benchmark: CPU vs GPU on a CURFIL-MSRC-sized workload (docs/BENCHMARKS.md)" };
  app.add_option("--images", images)->capture_default_str();
  app.add_option("--size", nx)->capture_default_str();
  app.add_option("--height", ny)->capture_default_str();
  app.add_option("--samples", perImage, "samples per image")->capture_default_str();
  app.add_option("--classes", classes)->capture_default_str();
  app.add_option("--trees", o.numTrees)->capture_default_str();
  app.add_option("--depth", o.maxDepth)->capture_default_str();
  app.add_option("--features", o.featureCandidates)->capture_default_str();
  app.add_option("--thresholds", o.thresholdCandidates)->capture_default_str();
  app.add_option("--min-samples", o.minSamplesToSplit)->capture_default_str();
  app.add_option("--reduced-trees", reducedTrees)->capture_default_str();
  app.add_option("--reduced-samples", reducedPerImage, "samples per image of the reduced workload")
    ->capture_default_str();
  app.add_flag("!--no-cpu1", cpu1, "skip the 1-thread CPU run");
  app.add_flag("!--no-full", full, "skip the full GPU workload");
  app.add_flag("!--no-reduced", reducedRun, "skip the reduced CPU/GPU comparison");
  app.add_flag("--random-order", randomOrder, "keep each image's samples in random order (default: raster order)");
  app.add_option("--device", device, "cuda, cuda:N, or none")->capture_default_str();
  app.add_option("--seed", seed)->capture_default_str();
  std::vector<int> gpuCounts;
  app.add_option("--gpus", gpuCounts, "also train the full workload distributed over these GPU counts (e.g. 1,2,4)")
    ->delimiter(',');
  bench::AddJsonOption(app, json);
  // speed-up and efficiency are against the first count given (give 1 first for the 1-GPU baseline)
  CLI11_PARSE(app, argc, argv);
  try
  {
    const bool        gpu = device != "none" && !UsableCudaDevices().empty();
    const std::string deviceText = gpu ? ResolveBackend(BackendRequest::Parse(device)).Describe() : "none";
    std::cout << "# forest training, " << bench::UtcNow() << "\n# host: " << bench::CpuModel() << ", "
              << bench::LogicalCores() << " logical cores; device: " << deviceText << "\n";
    nlohmann::json report{ { "date", bench::UtcNow() },
                           { "cpu", bench::CpuModel() },
                           { "logical_cores", bench::LogicalCores() },
                           { "device", deviceText },
                           { "workload",
                             { { "images", images },
                               { "width", nx },
                               { "height", ny },
                               { "classes", classes },
                               { "samples_per_image", perImage },
                               { "trees", o.numTrees },
                               { "depth", o.maxDepth },
                               { "features", o.featureCandidates },
                               { "thresholds", o.thresholdCandidates },
                               { "reduced_trees", reducedTrees },
                               { "reduced_samples_per_image", reducedPerImage },
                               { "random_order", randomOrder },
                               { "seed", seed } } },
                           { "reduced", nlohmann::json::array() },
                           { "full", nlohmann::json::array() } };
    const auto     t0 = std::chrono::steady_clock::now();
    const Data     data = MakeImages(images, nx, ny, classes, seed);
    std::cout << "# images made and integrated in "
              << Fixed(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1) << " s\n";

    if (reducedRun)
    {
      ForestTrainingOptions reduced = o;
      reduced.numTrees = reducedTrees;
      const ForestTrainingSet small = SamplesOf(data, reducedPerImage, seed + 1, randomOrder);
      std::cout << "\n## reduced: " << images << " images " << nx << "x" << ny << ", " << reducedPerImage
                << " samples/image, " << small.numClasses << " classes, " << reducedTrees << " tree(s), depth "
                << o.maxDepth << ", " << o.featureCandidates << " x " << o.thresholdCandidates << " candidates\n\n"
                << "| backend | s | levels | evaluations (1e9) | 1e9 evaluations/s | depth | nodes "
                   "|\n|---|---|---|---|---|---|---|\n";
      Run one, all, dev;
      if (cpu1)
      {
        one = Train(small, reduced, "cpu", 1);
        Print("CPU 1 thread", one, report["reduced"]);
      }
      all = Train(small, reduced, "cpu", 0);
      Print("CPU all threads", all, report["reduced"]);
      if (gpu)
      {
        Train(small, reduced, device, 0); // warm-up: context creation
        dev = Train(small, reduced, device, 0);
        Print("GPU", dev, report["reduced"]);
        std::cout << "\nratios: GPU vs CPU all threads " << Fixed(all.seconds / dev.seconds, 1) << "x";
        if (cpu1)
          std::cout << ", vs CPU 1 thread " << Fixed(one.seconds / dev.seconds, 1) << "x, CPU all vs 1 thread "
                    << Fixed(one.seconds / all.seconds, 1) << "x";
        std::cout << "\nGPU forest " << (dev.json == all.json ? "==" : "!=") << " CPU forest\n";
        report["gpu_forest_equals_cpu_forest"] = dev.json == all.json;
      }
    }
    if (gpu && full)
    {
      const ForestTrainingSet big = SamplesOf(data, perImage, seed + 2, randomOrder);
      std::cout << "\n## full: " << big.samples.size() << " samples, " << o.numTrees << " trees, samples in "
                << (randomOrder ? "random" : "raster") << " order per image\n\n"
                << "| backend | s | levels | evaluations (1e9) | 1e9 evaluations/s | depth | nodes "
                   "|\n|---|---|---|---|---|---|---|\n";
      const Run r = Train(big, o, device, 0);
      Print("GPU", r, report["full"]);
      report["full"].back().update({ { "node_batches", r.stats.nodeBatches },
                                     { "slices", r.stats.slices },
                                     { "image_uploads", r.stats.imageUploads },
                                     { "gpu_pick_seconds", r.stats.gpuPickSeconds },
                                     { "gpu_histogram_seconds", r.stats.gpuHistogramSeconds },
                                     { "gpu_score_seconds", r.stats.gpuScoreSeconds },
                                     { "gpu_partition_seconds", r.stats.gpuPartitionSeconds } });
      std::cout << "\nGPU: node batches " << r.stats.nodeBatches << ", slices " << r.stats.slices << ", image uploads "
                << r.stats.imageUploads << ", cache slots " << r.stats.cacheSlots << ", threshold passes "
                << r.stats.thresholdPasses << "\nGPU device time: features and picks " << Fixed(r.stats.gpuPickSeconds)
                << " s, histograms " << Fixed(r.stats.gpuHistogramSeconds) << " s, scores "
                << Fixed(r.stats.gpuScoreSeconds) << " s, partition " << Fixed(r.stats.gpuPartitionSeconds)
                << " s; the rest of the wall time is the host (level bookkeeping, slice records)\n";
    }
    const auto  devices = UsableCudaDevices();
    double      baseSeconds = 0; // the first distributed run (1 GPU when --gpus starts with 1)
    int         baseGpus = 0;
    std::string baseForest;
    for (std::size_t k = 0; gpu && k < gpuCounts.size(); ++k)
    {
      const int g = gpuCounts[k];
      if (g < 1 || g > int(devices.size()))
      {
        std::cout << "\n# --gpus " << g << ": skipped (" << devices.size() << " usable GPUs)\n";
        continue;
      }
      const bool nccl = NcclReduction::Available(); // else the sums go through host memory
      if (k == 0)
        std::cout << "\n## distributed: the full workload over G GPUs (ranks as threads; sums through "
                  << (nccl ? std::string("NCCL") : "host memory: " + NcclReduction::WhyUnavailable()) << ")\n\n"
                  << "| GPUs | scores | s | speed-up | efficiency | bytes summed per rank | forest == 1 GPU |\n"
                  << "|---|---|---|---|---|---|---|\n";
      const ForestTrainingSet big = SamplesOf(data, perImage, seed + 2, randomOrder);
      // on several GPUs: each process scoring its part of the nodes (the default), then every process
      // scoring every node (ForestTrainingOptions::gpuScatterScores)
      for (const bool scatter : g > 1 && nccl ? std::vector<bool>{ true, false } : std::vector<bool>{ true })
      {
        std::vector<std::string> forests(g);
        std::int64_t             bytes = 0;
        ForestTrainingStats      rank0;
        const auto               start = std::chrono::steady_clock::now();
        RunThreadCollective(g,
                            [&](Collective & host)
                            {
                              std::unique_ptr<NcclCollective> device;
                              if (nccl)
                                device = std::make_unique<NcclCollective>(host, devices[host.Rank()].index);
                              Collective &          sums = device ? static_cast<Collective &>(*device) : host;
                              ForestTrainingOptions mine = o;
                              mine.backend =
                                BackendRequest::Parse("cuda:" + std::to_string(devices[host.Rank()].index));
                              mine.threads = std::max(1, int(bench::LogicalCores()) / g);
                              mine.shards = &sums;
                              mine.gpuScatterScores = scatter;
                              ForestTrainingStats stats;
                              forests[host.Rank()] = ForestModelToJsonString(TrainForest(
                                ShardOf(big, ContiguousShare(big.images.size(), host.Rank(), g)), mine, &stats));
                              if (host.Rank() == 0)
                              {
                                bytes = sums.BytesReduced();
                                rank0 = stats;
                              }
                            });
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (baseGpus == 0)
        {
          baseSeconds = seconds;
          baseGpus = g;
          baseForest = forests[0];
        }
        const bool same =
          std::all_of(forests.begin(), forests.end(), [&](const std::string & f) { return f == baseForest; });
        const double      speedUp = baseSeconds / seconds;
        const std::string scores = g == 1 ? "all" : scatter ? "own part" : "all (summed everywhere)";
        std::cout << "| " << g << " | " << scores << " | " << Fixed(seconds, 2) << " | " << Fixed(speedUp, 2) << " | "
                  << Fixed(100.0 * speedUp * baseGpus / g, 0) << "% | " << bytes << " | " << (same ? "yes" : "NO")
                  << " |\n";
        // where rank 0's time went: device phases (the sums sit inside picks and histograms), the rest host
        std::cout << "|   | rank 0: picks " << Fixed(rank0.gpuPickSeconds) << " s, histograms + sums "
                  << Fixed(rank0.gpuHistogramSeconds) << " s, scores " << Fixed(rank0.gpuScoreSeconds)
                  << " s, partition " << Fixed(rank0.gpuPartitionSeconds) << " s | | | | | |\n";
        report["distributed"].push_back({ { "gpus", g },
                                          { "scatter_scores", scatter },
                                          { "seconds", seconds },
                                          { "bytes_summed_per_rank", bytes },
                                          { "forest_equals_first", same },
                                          { "nccl", nccl },
                                          { "rank0_gpu_pick_seconds", rank0.gpuPickSeconds },
                                          { "rank0_gpu_histogram_seconds", rank0.gpuHistogramSeconds },
                                          { "rank0_gpu_score_seconds", rank0.gpuScoreSeconds },
                                          { "rank0_gpu_partition_seconds", rank0.gpuPartitionSeconds } });
      }
    }
    bench::WriteJson(json, report);
  }
  catch (const std::exception & e)
  {
    std::cerr << "canopyBenchmarkForestTraining: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
