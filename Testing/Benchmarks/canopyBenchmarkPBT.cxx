// canopyBenchmarkPBT: Birkbeck et al. Table 2's workload — dense PBT classification of a 140x101x144
// volume with a full depth-6 tree (63 inner nodes) of ~40 histogram weak learners per node on random
// Haar features — on the CPU (1 thread, all threads) and the GPU (probabilistic and single descent,
// kernel only and host-to-host with transfers), from one run. Weak-learner evaluations are counted
// by an instrumented CPU pass and divided by each time. A program, not a test (docs/BENCHMARKS.md).
#include "canopy/Device.h"
#include "canopy/IntegralVolume.h"
#include "canopy/PBTEvaluation.h"
#include "canopyBenchmarkUtil.h"
#include "canopyConfigure.h"
#include "canopyHaarFeatureBank.h"
#include "canopyPBTEvaluator.h"
#include "canopyPBTTraining.h"

#if CANOPY_USE_CUDA
#  include "canopy/cuda/DeviceBuffer.h"
#endif

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>

namespace
{
using namespace canopy;
using bench::Fixed;

struct Options
{
  std::vector<int> size{ 140, 101, 144 };
  int              depth = 6;
  int              learners = 40;
  int              features = 2000;
  int              sampleBox = 15;
  float            tableScale = 0.6f;
  std::uint64_t    seed = 1;
  std::string      model = "trained";
  int              trainingSamples = 30000;
  int              gpuRepeats = 30;
  int              cpuRepeats = 3;
  bool             cpu = true;
  bool             cpu1 = true;
  bool             gpu = true;
  std::string      device = "cuda";
  std::string      json;
};

/** An MR-like volume: a bright ellipsoid ("liver", the positive class) with a smooth bias field, two
 * distractor blobs of similar brightness, a graded background and strong noise, so a classifier
 * needs a deep tree (a clean phantom is separated by the root alone). Integer voxel values. */
std::vector<float>
Phantom(int nx, int ny, int nz, std::uint64_t seed)
{
  std::vector<float>              v(static_cast<std::size_t>(nx) * ny * nz);
  std::mt19937_64                 rng(seed);
  std::normal_distribution<float> noise(0.0f, 30.0f);
  auto blob = [](double x, double y, double z, double cx, double cy, double cz, double r) {
    const double d = ((x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz)) / (r * r);
    return d < 1.0;
  };
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
      {
        const double a = (x - 0.55 * nx) / (0.3 * nx), b = (y - 0.45 * ny) / (0.3 * ny), c = (z - 0.5 * nz) / (0.35 * nz);
        const double r = a * a + b * b + c * c;
        float        value = 90.0f + 70.0f * float(y) / ny + 30.0f * std::sin(0.05f * x + 0.03f * z);
        if (r < 1.0)
          value = (r < 0.1 ? 150.0f : 190.0f) + 25.0f * float(z) / nz;
        else if (blob(x, y, z, 0.15 * nx, 0.7 * ny, 0.4 * nz, 0.12 * nx) || blob(x, y, z, 0.8 * nx, 0.85 * ny, 0.7 * nz, 0.1 * nx))
          value = 200.0f;
        v[(std::size_t(z) * ny + y) * nx + x] = std::round(std::max(0.0f, value + noise(rng)));
      }
  return v;
}

bool
InsideLiver(int x, int y, int z, int nx, int ny, int nz)
{
  const double a = (x - 0.55 * nx) / (0.3 * nx), b = (y - 0.45 * ny) / (0.3 * ny), c = (z - 0.5 * nz) / (0.35 * nz);
  return a * a + b * b + c * c < 1.0;
}

/** A PBT trained (TrainPBT) to tell the phantom's ellipsoid from the rest on random Haar features:
 * the workload of Table 2 with a real tree, whose decisions are as spatially coherent as a trained
 * tree's are. Half the samples inside, half outside, a third of those within 4 voxels of the surface. */
PBTModel
TrainedModel(const IntegralVolumeView & volume, const Options & o)
{
  const int       nx = volume.nx, ny = volume.ny, nz = volume.nz;
  std::mt19937_64 rng(o.seed + 11);
  std::vector<VoxelIndex3>  points;
  std::vector<std::int8_t>  labels;
  while (int(points.size()) < o.trainingSamples)
  {
    const VoxelIndex3 p{ int(rng() % nx), int(rng() % ny), int(rng() % nz) };
    const bool        inside = InsideLiver(p.x, p.y, p.z, nx, ny, nz);
    const int         wanted = int(points.size()) % 2 == 0 ? 1 : -1;
    if ((inside ? 1 : -1) != wanted)
      continue;
    if (points.size() % 3 == 0 && InsideLiver(p.x + 4, p.y, p.z, nx, ny, nz) == inside &&
        InsideLiver(p.x - 4, p.y, p.z, nx, ny, nz) == inside && InsideLiver(p.x, p.y + 4, p.z, nx, ny, nz) == inside &&
        InsideLiver(p.x, p.y - 4, p.z, nx, ny, nz) == inside)
      continue; // near the boundary for every third sample
    points.push_back(p);
    labels.push_back(std::int8_t(wanted));
  }
  RandomHaarBankOptions bankOptions;
  bankOptions.count = o.features;
  bankOptions.seed = o.seed;
  PBTModel model;
  model.features = GenerateRandomHaarBank(bankOptions);
  model.sampleBox = { o.sampleBox, o.sampleBox, o.sampleBox };
  const auto     resolved = ResolveHaarBank(model.features, model.sampleBox);
  ResponseMatrix responses;
  responses.numFeatures = int(resolved.size());
  responses.numSamples = std::int64_t(points.size());
  responses.values.resize(resolved.size() * points.size());
  EvaluateHaarAtPointsCPU(volume, resolved.data(), responses.numFeatures, points.data(), responses.numSamples,
                          ResponseLayout{ responses.values.data(), responses.numSamples, 1 }, 0);
  PBTTrainingOptions training;
  training.maxDepth = o.depth;
  training.weakLearnersPerNode = o.learners;
  training.minSamplesToSplit = 4; // grow the tree out, as the paper's depth-6 trees are
  training.purityStop = 1.0;
  training.seed = o.seed;
  PBTModel trained = TrainPBT(responses, labels, {}, training);
  trained.features = model.features;
  trained.sampleBox = model.sampleBox;
  trained.CompactFeatures();
  trained.Validate("canopyBenchmarkPBT trained model");
  return trained;
}

/** Places each histogram over its feature's response range on this volume (2nd..98th percentile of
 * random voxels), as training would, so bins are all in use rather than saturated. */
void
FitBinsToVolume(PBTModel & model, const IntegralVolumeView & volume, std::uint64_t seed)
{
  const auto       features = ResolveHaarBank(model.features, model.sampleBox);
  std::mt19937_64  rng(seed);
  std::vector<VoxelIndex3> points(1024);
  for (auto & p : points)
    p = VoxelIndex3{ int(rng() % volume.nx), int(rng() % volume.ny), int(rng() % volume.nz) };
  std::vector<float> r(points.size());
  for (auto & learner : model.learners)
  {
    for (std::size_t i = 0; i < points.size(); ++i)
      r[i] = float(HaarResponse(volume, features[learner.feature], points[i].x, points[i].y, points[i].z));
    std::sort(r.begin(), r.end());
    const float lo = r[r.size() * 2 / 100], hi = r[r.size() * 98 / 100];
    learner.lo = lo;
    learner.invBinWidth = learner.numBins / std::max(hi - lo, 1e-3f);
  }
}

/** Weak-learner evaluations of the whole volume, counted on all cores (one block of planes each). */
std::int64_t
CountEvaluations(const PBTView & view, const IntegralVolumeView & volume, const HaarFeatureVoxels * features)
{
  const int                 workers = int(bench::LogicalCores());
  std::vector<std::int64_t> counts(workers, 0);
  std::vector<std::thread>  threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      const int z0 = volume.nz * w / workers, z1 = volume.nz * (w + 1) / workers;
      if (z1 > z0)
        counts[w] = CountPBTWeakLearnerEvaluationsCPU(view, volume, features, VoxelBlock{ 0, 0, z0, volume.nx, volume.ny, z1 - z0 });
    });
  for (auto & t : threads)
    t.join();
  std::int64_t total = 0;
  for (auto c : counts)
    total += c;
  return total;
}

/** a / b, or 0 (printed "-") when either is missing. */
double
Ratio(double a, double b)
{
  return a > 0 && b > 0 ? a / b : 0.0;
}

#if CANOPY_USE_CUDA
struct Variant
{
  const char *           name;
  cuda::PBTLaunchOptions options;
  bool                   corners;     // precomputed corner offsets (HaarFeatureCorners)
  bool                   packed = false; // packed learners and cuboids (PackPBTLearners, PackHaarCuboids)
};
/** A grouped-kernel variant: perThread voxels along z per thread, register cap for minBlocks blocks/SM. */
constexpr cuda::PBTLaunchOptions
Grouped(int perThread, int minBlocks)
{
  cuda::PBTLaunchOptions o{};
  o.voxelsPerThread = perThread;
  o.compactIndexing = true;
  o.minBlocksPerMultiprocessor = minBlocks;
  return o;
}
/** The per-voxel kernel of Fig. 2 (PbtPosteriorStack, one voxel per thread). */
constexpr cuda::PBTLaunchOptions
Fig2()
{
  cuda::PBTLaunchOptions o{};
  o.voxelsPerThread = 1;
  o.compactIndexing = false;
  o.minBlocksPerMultiprocessor = 0;
  return o;
}
const Variant kVariants[] = {
  { "independent (Fig. 2), clipped", Fig2(), false },
  { "grouped 1/thread (32-bit indices, __ldg)", Grouped(1, 0), false },
  { "grouped 2/thread", Grouped(2, 0), false },
  { "grouped 2/thread, <= 64 registers", Grouped(2, 8), false },
  { "grouped 4/thread, <= 80 registers", Grouped(4, 6), false },
  { "packed, grouped 1/thread", Grouped(1, 0), false, true },
  { "packed, grouped 1/thread, <= 64 registers", Grouped(1, 8), false, true },
  { "packed, grouped 2/thread", Grouped(2, 0), false, true },
  { "packed, grouped 2/thread, <= 64 registers", Grouped(2, 8), false, true },
  { "packed, grouped 4/thread", Grouped(4, 0), false, true },
  { "packed, grouped 4/thread, <= 80 registers", Grouped(4, 6), false, true },
  { "independent, corners", Fig2(), true },
  { "warp-synchronous, clipped", { cuda::PBTTreePlacement::Global, cuda::PBTTraversal::WarpSynchronous }, false },
  { "warp-synchronous, corners", { cuda::PBTTreePlacement::Global, cuda::PBTTraversal::WarpSynchronous }, true },
  { "warp-synchronous, corners, nodes in shared", { cuda::PBTTreePlacement::SharedNodes, cuda::PBTTraversal::WarpSynchronous }, true },
};
#endif

double
MaxDifference(const std::vector<float> & a, const std::vector<float> & b)
{
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::isnan(b[i]) ? INFINITY : std::abs(double(a[i]) - double(b[i])));
  return worst;
}

} // namespace

int
main(int argc, char ** argv)
{
  Options  o;
  CLI::App app{ "Canopy PBT benchmark: Birkbeck et al. Table 2 workload, CPU vs GPU (see docs/BENCHMARKS.md)" };
  app.add_option("--size", o.size, "volume size nx ny nz")->expected(3)->capture_default_str();
  app.add_option("--depth", o.depth, "depth of the full tree")->capture_default_str();
  app.add_option("--learners", o.learners, "histogram weak learners per node")->capture_default_str();
  app.add_option("--features", o.features, "random Haar bank size")->capture_default_str();
  app.add_option("--sample-box", o.sampleBox, "sample box edge in voxels")->capture_default_str();
  app.add_option("--table-scale", o.tableScale, "weak-learner confidences in [-s, s] (larger: surer nodes)")
    ->capture_default_str();
  app.add_option("--seed", o.seed, "seed of volume and model")->capture_default_str();
  app.add_option("--model", o.model, "trained (TrainPBT on the phantom) or random (random tables)")
    ->check(CLI::IsMember({ "trained", "random" }))
    ->capture_default_str();
  app.add_option("--training-samples", o.trainingSamples, "samples for the trained model")->capture_default_str();
  app.add_option("--gpu-repeats", o.gpuRepeats, "timed GPU repeats (median reported)")->capture_default_str();
  app.add_option("--cpu-repeats", o.cpuRepeats, "most timed all-thread CPU repeats (median)")->capture_default_str();
  app.add_flag("!--no-cpu", o.cpu, "skip all CPU timings");
  app.add_flag("!--no-cpu1", o.cpu1, "skip the 1-thread CPU timings (the slowest part)");
  app.add_flag("!--no-gpu", o.gpu, "skip GPU runs");
  app.add_option("--device", o.device, "cuda or cuda:N")->capture_default_str();
  bench::AddJsonOption(app, o.json);
  CLI11_PARSE(app, argc, argv);

  try
  {
    const int nx = o.size[0], ny = o.size[1], nz = o.size[2];
    const std::int64_t voxels = std::int64_t(nx) * ny * nz;
    const auto         volumeVoxels = Phantom(nx, ny, nz, o.seed);
    std::vector<double> table(std::size_t(PaddedTableSize(nx, ny, nz)));
    ComputeIntegralVolumeCPU(volumeVoxels.data(), nx, ny, nz, table.data(), 0);
    const IntegralVolumeView hostVolume{ table.data(), nx, ny, nz };

    RandomPBTModelOptions modelOptions;
    modelOptions.depth = o.depth;
    modelOptions.learnersPerNode = o.learners;
    modelOptions.numFeatures = o.features;
    modelOptions.tableScale = o.tableScale;
    modelOptions.sampleBox = { o.sampleBox, o.sampleBox, o.sampleBox };
    modelOptions.seed = o.seed;
    PBTModel model;
    const auto trainStart = std::chrono::steady_clock::now();
    if (o.model == "trained")
    {
      model = TrainedModel(hostVolume, o);
    }
    else
    {
      model = MakeRandomPBTModel(modelOptions);
      FitBinsToVolume(model, hostVolume, o.seed + 1);
    }
    const double trainSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - trainStart).count();
    int          innerNodes = 0;
    for (const auto & n : model.nodes)
      innerNodes += IsLeaf(n) ? 0 : 1;
    const auto features = ResolveHaarBank(model.features, model.sampleBox);
    double     cuboids = 0;
    for (const auto & l : model.learners)
      cuboids += features[l.feature].numCuboids;
    cuboids /= double(model.learners.size());

    nlohmann::json report;
    report["date"] = bench::UtcNow();
    report["cpu"] = bench::CpuModel();
    report["cores"] = bench::LogicalCores();
    report["volume"] = o.size;
    report["model"] = o.model;
    report["inner_nodes"] = innerNodes;
    report["model_depth"] = model.Depth();
    report["learners_per_node"] = o.learners;
    report["mean_cuboids_per_learner"] = cuboids;
    std::cout << "PBT benchmark " << bench::UtcNow() << ": " << nx << "x" << ny << "x" << nz << " (" << voxels
              << " voxels), " << o.model << " model (" << Fixed(trainSeconds, 1) << " s): depth " << model.Depth() << ", "
              << innerNodes << " inner nodes, " << o.learners << " learners/node, "
              << Fixed(cuboids, 2) << " cuboids/learner, CPU " << bench::CpuModel() << " (" << bench::LogicalCores()
              << " logical cores)\n";

    struct Mode
    {
      const char *       name;
      bool               probabilistic;
      PBTView            view;
      std::int64_t       evaluations = 0;
      std::vector<float> cpuResult;
      double             cpu1 = 0, cpuAll = 0, gpuKernel = 0, gpuEndToEnd = 0, maxDiff = -1;
      std::vector<double> variantMs;  // kernel time of each launch variant (kVariants)
      std::vector<double> endToEndMs; // host to host: independent, warp-synchronous
    };
    Mode modes[2] = { { "PBT (probabilistic)", true, model.View() }, { "Tree (single descent)", false, model.View() } };
    int  insideCount = 0, agree = 0; // how well the model classifies (threshold 0.5), a sanity check
    modes[1].view.epsilon1 = 0.5f;
    const VoxelBlock whole{ 0, 0, 0, nx, ny, nz };
    const int        allThreads = int(bench::LogicalCores());
    for (auto & m : modes)
    {
      m.evaluations = CountEvaluations(m.view, hostVolume, features.data());
      m.cpuResult.assign(std::size_t(voxels), 0.0f);
      if (o.cpu && o.cpu1)
        m.cpu1 = bench::MedianHostMs([&] { EvaluatePBTDenseCPU(m.view, hostVolume, features.data(), whole, m.cpuResult.data(), 1); },
                                     1, 1, 0.0, false);
      if (o.cpu)
        m.cpuAll = bench::MedianHostMs(
          [&] { EvaluatePBTDenseCPU(m.view, hostVolume, features.data(), whole, m.cpuResult.data(), allThreads); }, 1,
          o.cpuRepeats, 5.0, true);
      else
        EvaluatePBTDenseCPU(m.view, hostVolume, features.data(), whole, m.cpuResult.data(), allThreads);
      if (m.probabilistic)
        for (int z = 0; z < nz; ++z)
          for (int y = 0; y < ny; ++y)
            for (int x = 0; x < nx; ++x)
            {
              const bool inside = InsideLiver(x, y, z, nx, ny, nz);
              insideCount += inside;
              agree += inside == (m.cpuResult[(std::size_t(z) * ny + y) * nx + x] > 0.5f);
            }
    }
    std::cout << "voxel accuracy of the probabilistic tree at 0.5: " << Fixed(100.0 * agree / voxels, 2) << "% ("
              << insideCount << " voxels inside)\n";
    report["voxel_accuracy"] = double(agree) / voxels;

#if CANOPY_USE_CUDA
    std::string deviceName = "none";
    if (o.gpu)
    {
      const ResolvedBackend backend = ResolveBackend(BackendRequest::Parse(o.device));
      deviceName = backend.Describe();
      cuda::ScopedDevice                    scoped(backend.deviceIndex);
      cuda::Stream                          stream;
      cuda::DeviceBuffer<PBTNodeFlat>        nodes(model.nodes.size());
      cuda::DeviceBuffer<PBTWeakLearnerFlat> learners(model.learners.size());
      cuda::DeviceBuffer<float>              tables(model.tables.size());
      cuda::DeviceBuffer<HaarFeatureVoxels>  deviceFeatures(features.size());
      std::vector<HaarFeatureCorners>        corners;
      for (const auto & f : features)
        corners.push_back(MakeHaarFeatureCorners(hostVolume, f));
      cuda::DeviceBuffer<HaarFeatureCorners> deviceCorners(corners.size());
      deviceCorners.CopyFromHost(corners.data(), corners.size(), stream.get());
      const auto packedLearners =
        PackPBTLearners(model.learners.data(), int(model.learners.size()), features.data(), int(features.size()));
      const auto packedCuboids = PackHaarCuboids(features.data(), int(features.size()));
      cuda::DeviceBuffer<PBTPackedLearner> devicePackedLearners(packedLearners.size());
      cuda::DeviceBuffer<PBTPackedCuboid>  devicePackedCuboids(packedCuboids.size());
      devicePackedLearners.CopyFromHost(packedLearners.data(), packedLearners.size(), stream.get());
      devicePackedCuboids.CopyFromHost(packedCuboids.data(), packedCuboids.size(), stream.get());
      cuda::DeviceBuffer<double>             deviceTable(table.size());
      cuda::DeviceBuffer<float>              out(static_cast<std::size_t>(voxels));
      const auto preorder = PBTNodesInPreorder(model.nodes.data(), int(model.nodes.size()));
      nodes.CopyFromHost(preorder.data(), preorder.size(), stream.get());
      learners.CopyFromHost(model.learners.data(), model.learners.size(), stream.get());
      tables.CopyFromHost(model.tables.data(), model.tables.size(), stream.get());
      deviceFeatures.CopyFromHost(features.data(), features.size(), stream.get());
      deviceTable.CopyFromHost(table.data(), table.size(), stream.get());
      cudaEvent_t start, stop;
      CANOPY_CUDA_CHECK(cudaEventCreate(&start));
      CANOPY_CUDA_CHECK(cudaEventCreate(&stop));
      std::vector<float> gpuResult(static_cast<std::size_t>(voxels));
      for (auto & m : modes)
      {
        PBTView view = m.view;
        view.nodes = nodes.data();
        view.learners = learners.data();
        view.tables = tables.data();
        for (const auto & variant : kVariants)
        {
          cuda::PBTLaunchOptions options = variant.options;
          if (variant.packed)
          {
            options.packedLearners = devicePackedLearners.data();
            options.packedCuboids = devicePackedCuboids.data();
          }
          auto launch = [&] {
            cuda::LaunchPBTDense(view, int(model.learners.size()), IntegralVolumeView{ deviceTable.data(), nx, ny, nz },
                                 deviceFeatures.data(), variant.corners ? deviceCorners.data() : nullptr, whole,
                                 out.data(), stream.get(), options);
          };
          launch(); // warm-up
          std::vector<double> times;
          for (int r = 0; r < o.gpuRepeats; ++r)
          {
            CANOPY_CUDA_CHECK(cudaEventRecord(start, stream.get()));
            launch();
            CANOPY_CUDA_CHECK(cudaEventRecord(stop, stream.get()));
            CANOPY_CUDA_CHECK(cudaEventSynchronize(stop));
            float ms = 0;
            CANOPY_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            times.push_back(ms);
          }
          m.variantMs.push_back(bench::Median(times));
          m.gpuKernel = m.gpuKernel > 0 ? std::min(m.gpuKernel, m.variantMs.back()) : m.variantMs.back();
          std::fill(gpuResult.begin(), gpuResult.end(), std::nanf(""));
          out.CopyToHost(gpuResult.data(), gpuResult.size(), stream.get());
          stream.Synchronize();
          m.maxDiff = std::max(m.maxDiff, MaxDifference(m.cpuResult, gpuResult));
        }
        // Host to host: voxel upload, integral volume on the device, kernel, probabilities back; both
        // traversals, the faster reported.
        for (bool warpSynchronous : { false, true })
        {
          PBTEvaluationOptions options;
          options.probabilistic = m.probabilistic;
          options.warpSynchronous = warpSynchronous;
          PBTVolumeEvaluator evaluator(model, backend, options);
          const double       ms = bench::MedianHostMs(
            [&] { evaluator.Evaluate(volumeVoxels.data(), nx, ny, nz, gpuResult.data()); }, o.gpuRepeats, o.gpuRepeats, 0.0);
          m.gpuEndToEnd = m.gpuEndToEnd > 0 ? std::min(m.gpuEndToEnd, ms) : ms;
          m.endToEndMs.push_back(ms);
          m.maxDiff = std::max(m.maxDiff, MaxDifference(m.cpuResult, gpuResult));
        }
      }
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
    }
    report["device"] = deviceName;
#endif

#if CANOPY_USE_CUDA
    std::cout << "\nGPU kernel variants (ms, median of " << o.gpuRepeats << "), " << deviceName << "\n| mode |";
    for (const auto & v : kVariants)
      std::cout << " " << v.name << " |";
    std::cout << "\n|---|" << std::string(std::size(kVariants) * 4, '-') << "\n";
    for (auto & m : modes)
    {
      std::cout << "| " << m.name << " |";
      for (double ms : m.variantMs)
        std::cout << " " << Fixed(ms, 3) << " (" << Fixed(Ratio(m.evaluations / 1e6, ms), 1) << " GWL/s) |";
      std::cout << "\n";
    }
#endif
    std::cout << "\n| mode | WL evals/voxel | CPU 1 thread ms | CPU " << allThreads
              << " threads ms | GPU kernel ms (best variant) | GPU host-to-host ms | GPU/CPU-1 | "
                 "GPU/CPU-all | GPU GWL/s | max |GPU-CPU| |\n|---|---|---|---|---|---|---|---|---|---|\n";
    for (auto & m : modes)
    {
      const double best = m.gpuKernel;
      std::cout << "| " << m.name << " | " << Fixed(double(m.evaluations) / voxels, 1) << " | " << Fixed(m.cpu1, 0)
                << " | " << Fixed(m.cpuAll, 1) << " | " << Fixed(m.gpuKernel, 3)
                << " | " << Fixed(m.gpuEndToEnd, 3) << " | " << Fixed(Ratio(m.cpu1, m.gpuEndToEnd), 0) << "x (kernel "
                << Fixed(Ratio(m.cpu1, best), 0) << "x) | " << Fixed(Ratio(m.cpuAll, m.gpuEndToEnd), 1) << "x (kernel "
                << Fixed(Ratio(m.cpuAll, best), 1) << "x) | " << Fixed(Ratio(m.evaluations / 1e6, best), 1) << " | "
                << (m.maxDiff >= 0 ? std::to_string(m.maxDiff) : std::string("-")) << " |\n";
      std::cout << "  CPU all-thread rate " << Fixed(Ratio(m.evaluations / 1e6, m.cpuAll), 2) << " GWL/s; CPU 1-thread rate "
                << Fixed(Ratio(m.evaluations / 1e6, m.cpu1), 3) << " GWL/s; GPU host-to-host ms (independent, warp-sync):";
      for (double ms : m.endToEndMs)
        std::cout << " " << Fixed(ms, 3);
      std::cout << "\n";
      report["modes"].push_back({ { "mode", m.name }, { "weak_learner_evaluations", m.evaluations },
                                  { "cpu1_ms", m.cpu1 }, { "cpu_all_ms", m.cpuAll }, { "cpu_threads", allThreads },
                                  { "gpu_kernel_ms", m.gpuKernel }, { "gpu_kernel_variants_ms", m.variantMs },
                                  { "gpu_host_to_host_independent_warpsync_ms", m.endToEndMs },
                                  { "gpu_host_to_host_ms", m.gpuEndToEnd }, { "max_abs_diff_gpu_cpu", m.maxDiff } });
    }
    bench::WriteJson(o.json, report);
  }
  catch (const std::exception & e)
  {
    std::cerr << "canopyBenchmarkPBT: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
