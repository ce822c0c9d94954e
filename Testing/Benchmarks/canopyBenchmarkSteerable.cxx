// canopyBenchmarkSteerable: steerable-feature responses of pose hypotheses (Birkbeck Table 1) on the
// CPU (1 thread, all threads) and the GPU (kernel only, device-resident poses and responses; and host
// to host through SteerableResponseEngine: poses up, feature-major responses down), from one run.
// Workload: a smooth synthetic 256^3 volume at 1 mm with a 1/2/4 mm pyramid and the hypotheses of an
// orientation stage (100 candidate positions x 1,000 random orientations, random sizes),
// and two banks: a random one (7^3 grid, 3 levels) and the exhaustive 5^3 x 24 x 3 one, whose sorted
// order lets each grid point's sample serve its 24 types. CPU timings use a subset of the poses and
// are scaled. Then the same hypotheses scored by a steerable-feature PBT (issue 9 part 2: the generic
// traversal, PBTHypotheses.h) on the CPU (1 thread, all threads) and the GPU (kernel only; host to host
// through SteerableResponseEngine::EvaluatePBT), with the weak learners evaluated per hypothesis.
// A program, not a test (docs/BENCHMARKS.md).
#include "canopy/Device.h"
#include "canopy/PBTEvaluation.h"
#include "canopy/PBTHypotheses.h"
#include "canopy/SteerableEvaluation.h"
#include "canopyBenchmarkUtil.h"
#include "canopyConfigure.h"
#include "canopyPBTEvaluator.h"
#include "canopySteerableFeatureBank.h"
#include "canopySteerablePBT.h"
#include "canopySteerablePyramid.h"
#include "canopySteerableResponseEngine.h"

#if CANOPY_USE_CUDA
#include "canopy/cuda/DeviceBuffer.h"
#endif

#include "itkMultiThreaderBase.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <random>

namespace
{
using namespace canopy;
using bench::Fixed;
using Clock = std::chrono::steady_clock;

itk::Image<float, 3>::Pointer
SmoothVolume(int n, std::uint64_t seed)
{
  auto                image = itk::Image<float, 3>::New();
  itk::ImageRegion<3> region;
  region.SetSize(
    { { static_cast<itk::SizeValueType>(n), static_cast<itk::SizeValueType>(n), static_cast<itk::SizeValueType>(n) } });
  image->SetRegions(region);
  image->Allocate();
  std::mt19937_64                       rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const float fx = 0.02f + 0.05f * u(rng), fy = 0.02f + 0.05f * u(rng), fz = 0.02f + 0.05f * u(rng);
  float *     p = image->GetBufferPointer();
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x)
        *p++ = 100.0f + 60.0f * std::sin(fx * x) * std::cos(fy * y) + 30.0f * std::sin(fz * z) + 5.0f * u(rng);
  return image;
}

// An orientation stage: `positions` candidate centres (and sizes), each with `orientations` random
// orientations; the hypotheses of one position are adjacent, as a detector lays them out.
std::vector<SteerablePose>
OrientationHypotheses(std::int64_t positions, std::int64_t orientations, int n, std::uint64_t seed)
{
  std::mt19937_64                        rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double>       g(0.0, 1.0);
  std::vector<SteerablePose>             poses(static_cast<std::size_t>(positions * orientations));
  for (std::int64_t k = 0; k < positions; ++k)
  {
    SteerablePose base{};
    for (int a = 0; a < 3; ++a)
    {
      base.center[a] = static_cast<float>((0.15 + 0.7 * u(rng)) * (n - 1));
      base.scale[a] = static_cast<float>(2.0 + 4.0 * u(rng)); // structures of a few cm: grid steps of 2-6 mm
    }
    for (std::int64_t o = 0; o < orientations; ++o)
    {
      double q[4], norm = 0;
      for (double & v : q)
        norm += (v = g(rng)) * v;
      norm = std::sqrt(norm);
      const double    w = q[0] / norm, x = q[1] / norm, y = q[2] / norm, z = q[3] / norm;
      const double    R[3][3] = { { 1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y) },
                                  { 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x) },
                                  { 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y) } };
      SteerablePose & pose = poses[static_cast<std::size_t>(k * orientations + o)];
      pose = base;
      for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 3; ++c)
          pose.axes[a][c] = static_cast<float>(R[a][c]);
    }
  }
  return poses;
}

double
SecondsOf(const std::function<void()> & body, int repeats)
{
  return bench::MedianHostMs(body, repeats, repeats, 1e9) / 1000.0;
}

#if CANOPY_USE_CUDA
/** The pyramid's levels on the device and a view of them (kernel-only timings). */
struct DevicePyramid
{
  std::vector<cuda::DeviceBuffer<SteerableVoxel>> levels;
  SteerablePyramidView                            view;

  DevicePyramid(const SteerablePyramid & pyramid, const cuda::Stream & stream)
    : view(pyramid.GetView())
  {
    for (int k = 0; k < view.numLevels; ++k)
    {
      const auto & v = pyramid.GetLevelVoxels(k);
      levels.emplace_back(v.size(), "level");
      levels.back().CopyFromHost(v.data(), v.size(), stream.get());
      view.levels[k].voxels = levels.back().data();
    }
    stream.Synchronize();
  }
};
#endif

nlohmann::json
RunBank(const std::string &                   name,
        const SteerablePyramid &              pyramid,
        const SteerableGrid &                 grid,
        const std::vector<SteerableFeature> & bank,
        const std::vector<SteerablePose> &    poses,
        std::int64_t                          cpuPoses,
        bool                                  cpu1,
        const std::string &                   device,
        int                                   gpuRepeats)
{
  const auto         view = pyramid.GetView();
  const auto         nf = static_cast<int>(bank.size());
  const auto         np = static_cast<std::int64_t>(poses.size());
  const auto         cp = std::min(cpuPoses, np);
  const double       responses = static_cast<double>(nf) * np;
  nlohmann::json     run{ { "bank", name },   { "grid", grid.size }, { "grid_spacing_mm", grid.spacingMm },
                      { "features", nf }, { "hypotheses", np },  { "cpu_hypotheses_timed", cp } };
  std::vector<float> out(static_cast<std::size_t>(nf) * cp);
  auto               cpuSeconds = [&](int threads)
  {
    const double s = SecondsOf(
      [&] {
        EvaluateSteerableCPU(
          view, grid, bank.data(), nf, poses.data(), cp, ResponseLayout{ out.data(), cp, 1 }, threads);
      },
      1);
    return s * static_cast<double>(np) / static_cast<double>(cp); // scaled to all hypotheses
  };
  const int    cores = static_cast<int>(itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads());
  const double cpu1s = cpu1 ? cpuSeconds(1) : 0.0;
  const double cpuAll = cpuSeconds(cores);
  run["cpu1_s"] = cpu1s;
  run["cpu_all_s"] = cpuAll;
  run["cpu_threads"] = cores;
  double kernel = 0, hostToHost = 0;
#if CANOPY_USE_CUDA
  if (!device.empty())
  {
    const auto backend = ResolveBackend(BackendRequest::Parse(device));
    // Kernel only: pyramid, bank, poses and responses resident on the device.
    cuda::ScopedDevice                   scoped(backend.deviceIndex);
    cuda::Stream                         stream;
    const DevicePyramid                  devicePyramid(pyramid, stream);
    const SteerablePyramidView &         deviceView = devicePyramid.view;
    cuda::DeviceBuffer<SteerableFeature> dBank(bank.size(), "bank");
    dBank.CopyFromHost(bank.data(), bank.size(), stream.get());
    cuda::DeviceBuffer<SteerablePose> dPoses(poses.size(), "poses");
    dPoses.CopyFromHost(poses.data(), poses.size(), stream.get());
    cuda::DeviceBuffer<float> dOut(static_cast<std::size_t>(responses), "responses");
    stream.Synchronize();
    kernel = SecondsOf(
      [&]
      {
        cuda::LaunchSteerable(
          deviceView, grid, dBank.data(), nf, dPoses.data(), np, ResponseLayout{ dOut.data(), np, 1 }, stream.get());
        stream.Synchronize();
      },
      gpuRepeats);
    dOut.Release();
    // Host to host through the engine (pyramid and bank already resident, as in a detector).
    SteerableResponseEngine engine(backend);
    engine.SetPyramid(pyramid);
    engine.SetFeatures(grid, bank);
    std::vector<float> all(static_cast<std::size_t>(responses));
    hostToHost = SecondsOf([&] { engine.Evaluate(poses.data(), np, ResponseLayout{ all.data(), np, 1 }); }, gpuRepeats);
    run["device"] = backend.Describe();
  }
#endif
  run["gpu_kernel_s"] = kernel;
  run["gpu_host_to_host_s"] = hostToHost;
  auto rate = [](double count, double s) { return s > 0 ? count / s : 0.0; };
  run["hypotheses_per_s"] = { { "cpu1", rate(np, cpu1s) },
                              { "cpu_all", rate(np, cpuAll) },
                              { "gpu_kernel", rate(np, kernel) },
                              { "gpu_host_to_host", rate(np, hostToHost) } };
  run["responses_per_s"] = { { "cpu1", rate(responses, cpu1s) },
                             { "cpu_all", rate(responses, cpuAll) },
                             { "gpu_kernel", rate(responses, kernel) },
                             { "gpu_host_to_host", rate(responses, hostToHost) } };
  run["speedup"] = { { "cpu1_over_gpu_kernel", kernel > 0 ? cpu1s / kernel : 0.0 },
                     { "cpu_all_over_gpu_kernel", kernel > 0 ? cpuAll / kernel : 0.0 },
                     { "cpu1_over_gpu_host_to_host", hostToHost > 0 ? cpu1s / hostToHost : 0.0 },
                     { "cpu_all_over_gpu_host_to_host", hostToHost > 0 ? cpuAll / hostToHost : 0.0 } };
  std::cout << name << ": " << nf << " features x " << np << " hypotheses\n"
            << "  seconds     CPU-1 " << Fixed(cpu1s, 3) << "  CPU-" << cores << " " << Fixed(cpuAll, 3)
            << "  GPU kernel " << Fixed(kernel, 4) << "  GPU host-to-host " << Fixed(hostToHost, 4) << "\n"
            << "  hyp/s       CPU-1 " << Fixed(rate(np, cpu1s), 0) << "  CPU-all " << Fixed(rate(np, cpuAll), 0)
            << "  GPU kernel " << Fixed(rate(np, kernel), 0) << "  GPU h2h " << Fixed(rate(np, hostToHost), 0) << "\n"
            << "  features/s  CPU-1 " << Fixed(rate(responses, cpu1s) / 1e6, 1) << "M  CPU-all "
            << Fixed(rate(responses, cpuAll) / 1e6, 1) << "M  GPU kernel " << Fixed(rate(responses, kernel) / 1e6, 1)
            << "M  GPU h2h " << Fixed(rate(responses, hostToHost) / 1e6, 1) << "M\n"
            << "  ratios      CPU-1/GPU kernel " << Fixed(kernel > 0 ? cpu1s / kernel : 0, 1)
            << "x  CPU-all/GPU kernel " << Fixed(kernel > 0 ? cpuAll / kernel : 0, 1) << "x  CPU-1/GPU h2h "
            << Fixed(hostToHost > 0 ? cpu1s / hostToHost : 0, 1) << "x  CPU-all/GPU h2h "
            << Fixed(hostToHost > 0 ? cpuAll / hostToHost : 0, 1) << "x\n";
  return run;
}

// A random depth-`depth` tree with `learners` weak learners per node on a random 7^3 x 3-level bank
// (no training: the speed of the traversal and its feature reads, as canopyBenchmarkPBT's random model).
nlohmann::json
RunPBT(const SteerablePyramid &           pyramid,
       const std::vector<SteerablePose> & poses,
       std::int64_t                       cpuPoses,
       bool                               cpu1,
       const std::string &                device,
       int                                gpuRepeats,
       int                                depth,
       int                                learners,
       int                                features,
       std::uint64_t                      seed)
{
  const SteerableGrid   grid{ 7, 1.0f };
  RandomPBTModelOptions options;
  options.depth = depth;
  options.learnersPerNode = learners;
  options.numFeatures = features;
  options.responseLow = -50.0f; // intensities 40-200, gradients of a few units per mm
  options.responseHigh = 200.0f;
  options.seed = seed;
  PBTModel model = MakeRandomPBTModel(options);
  model.featureFamily = PBTFeatureFamily::Steerable;
  model.features.clear();
  model.steerable.grid = grid;
  model.steerable.pyramid = SteerablePyramidOptions{ { 1.0, 2.0, 4.0 }, {} };
  model.steerable.features = RandomSteerableFeatures(grid, 3, features, seed + 1);
  model.Validate("benchmark steerable PBT");

  const auto                 np = static_cast<std::int64_t>(poses.size());
  const auto                 cp = std::min(cpuPoses, np);
  const auto                 view = pyramid.GetView();
  const SteerableFeatureFunc hostFunc{ view, grid, model.steerable.features.data() };
  const PBTView              tree = model.View();
  std::vector<float>         out(static_cast<std::size_t>(np));
  // Weak learners evaluated (= feature responses read) per hypothesis, on the CPU subset.
  std::int64_t evaluations = 0;
  for (std::int64_t p = 0; p < cp; ++p)
  {
    PBTHypothesisResponse<SteerableFeatureFunc>                   inner{ hostFunc, poses[p] };
    CountingResponse<PBTHypothesisResponse<SteerableFeatureFunc>> counting{ inner, &evaluations };
    PbtPosteriorStack<kPBTHypothesisStack>(tree, counting);
  }
  auto cpuSeconds = [&](int threads)
  {
    const double s =
      SecondsOf([&] { EvaluatePBTAtHypothesesCPU(tree, hostFunc, poses.data(), cp, out.data(), threads); }, 1);
    return s * static_cast<double>(np) / static_cast<double>(cp);
  };
  const int      cores = static_cast<int>(itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads());
  const double   cpu1s = cpu1 ? cpuSeconds(1) : 0.0;
  const double   cpuAll = cpuSeconds(cores);
  double         kernel = 0, hostToHost = 0;
  nlohmann::json run{ { "bank", "steerable-pbt" },
                      { "grid", grid.size },
                      { "features", features },
                      { "depth", depth },
                      { "nodes", static_cast<int>(model.nodes.size()) },
                      { "learners_per_node", learners },
                      { "hypotheses", np },
                      { "cpu_hypotheses_timed", cp },
                      { "weak_learners_per_hypothesis", cp > 0 ? double(evaluations) / cp : 0.0 },
                      { "cpu_threads", cores } };
#if CANOPY_USE_CUDA
  if (!device.empty())
  {
    const auto                           backend = ResolveBackend(BackendRequest::Parse(device));
    cuda::ScopedDevice                   scoped(backend.deviceIndex);
    cuda::Stream                         stream;
    const DevicePyramid                  devicePyramid(pyramid, stream);
    cuda::DeviceBuffer<SteerableFeature> dBank(model.steerable.features.size(), "bank");
    dBank.CopyFromHost(model.steerable.features.data(), model.steerable.features.size(), stream.get());
    cuda::DeviceBuffer<PBTNodeFlat> dNodes(model.nodes.size(), "nodes");
    dNodes.CopyFromHost(model.nodes.data(), model.nodes.size(), stream.get());
    cuda::DeviceBuffer<PBTWeakLearnerFlat> dLearners(model.learners.size(), "learners");
    dLearners.CopyFromHost(model.learners.data(), model.learners.size(), stream.get());
    cuda::DeviceBuffer<float> dTables(model.tables.size(), "tables");
    dTables.CopyFromHost(model.tables.data(), model.tables.size(), stream.get());
    cuda::DeviceBuffer<SteerablePose> dPoses(poses.size(), "poses");
    dPoses.CopyFromHost(poses.data(), poses.size(), stream.get());
    cuda::DeviceBuffer<float> dOut(poses.size(), "scores");
    stream.Synchronize();
    PBTView deviceTree = tree;
    deviceTree.nodes = dNodes.data();
    deviceTree.learners = dLearners.data();
    deviceTree.tables = dTables.data();
    const SteerableFeatureFunc deviceFunc{ devicePyramid.view, grid, dBank.data() };
    kernel = SecondsOf(
      [&]
      {
        cuda::LaunchPBTAtHypotheses(deviceTree, deviceFunc, dPoses.data(), np, dOut.data(), stream.get());
        stream.Synchronize();
      },
      gpuRepeats);
    // Host to host: poses up, scores down; pyramid, bank and tree resident (as in a detector).
    SteerableResponseEngine engine(backend);
    engine.SetPyramid(pyramid);
    SetSteerablePBT(engine, model);
    hostToHost = SecondsOf([&] { engine.EvaluatePBT(poses.data(), np, out.data()); }, gpuRepeats);
    run["device"] = backend.Describe();
  }
#endif
  auto rate = [](double count, double s) { return s > 0 ? count / s : 0.0; };
  run["cpu1_s"] = cpu1s;
  run["cpu_all_s"] = cpuAll;
  run["gpu_kernel_s"] = kernel;
  run["gpu_host_to_host_s"] = hostToHost;
  run["hypotheses_per_s"] = { { "cpu1", rate(np, cpu1s) },
                              { "cpu_all", rate(np, cpuAll) },
                              { "gpu_kernel", rate(np, kernel) },
                              { "gpu_host_to_host", rate(np, hostToHost) } };
  run["speedup"] = { { "cpu1_over_gpu_kernel", kernel > 0 ? cpu1s / kernel : 0.0 },
                     { "cpu_all_over_gpu_kernel", kernel > 0 ? cpuAll / kernel : 0.0 },
                     { "cpu1_over_gpu_host_to_host", hostToHost > 0 ? cpu1s / hostToHost : 0.0 },
                     { "cpu_all_over_gpu_host_to_host", hostToHost > 0 ? cpuAll / hostToHost : 0.0 } };
  std::cout << "steerable PBT (random tree, depth " << depth << ", " << model.nodes.size() << " nodes, " << learners
            << " learners/node, " << features << " features): " << np << " hypotheses, "
            << Fixed(cp > 0 ? double(evaluations) / cp : 0.0, 1) << " weak learners per hypothesis\n"
            << "  seconds     CPU-1 " << Fixed(cpu1s, 3) << "  CPU-" << cores << " " << Fixed(cpuAll, 3)
            << "  GPU kernel " << Fixed(kernel, 4) << "  GPU host-to-host " << Fixed(hostToHost, 4) << "\n"
            << "  hyp/s       CPU-1 " << Fixed(rate(np, cpu1s), 0) << "  CPU-all " << Fixed(rate(np, cpuAll), 0)
            << "  GPU kernel " << Fixed(rate(np, kernel), 0) << "  GPU h2h " << Fixed(rate(np, hostToHost), 0) << "\n"
            << "  ratios      CPU-1/GPU kernel " << Fixed(kernel > 0 ? cpu1s / kernel : 0, 1)
            << "x  CPU-all/GPU kernel " << Fixed(kernel > 0 ? cpuAll / kernel : 0, 1) << "x  CPU-all/GPU h2h "
            << Fixed(hostToHost > 0 ? cpuAll / hostToHost : 0, 1) << "x\n";
  return run;
}

} // namespace

int
main(int argc, char ** argv)
{
  int           size = 256, randomFeatures = 1000, gpuRepeats = 10, pbtDepth = 6, pbtLearners = 40;
  std::int64_t  positions = 100, orientations = 1000, cpuHypotheses = 5000;
  bool          cpu1 = true;
  std::string   device = "cuda", json;
  std::uint64_t seed = 1;
  CLI::App      app{ "Canopy steerable-feature benchmark: CPU vs GPU (docs/BENCHMARKS.md)" };
  app.add_option("--size", size, "volume side in voxels (1 mm)")->capture_default_str();
  app.add_option("--positions", positions, "candidate positions")->capture_default_str();
  app.add_option("--orientations", orientations, "orientation hypotheses per position")->capture_default_str();
  app.add_option("--cpu-hypotheses", cpuHypotheses, "CPU timing on this many hypotheses, scaled")
    ->capture_default_str();
  app.add_option("--random-features", randomFeatures, "size of the random bank")->capture_default_str();
  app.add_option("--gpu-repeats", gpuRepeats)->capture_default_str();
  app.add_option("--pbt-depth", pbtDepth, "depth of the steerable PBT scored (0: skip)")->capture_default_str();
  app.add_option("--pbt-learners", pbtLearners, "weak learners per node of that PBT")->capture_default_str();
  app.add_flag("!--no-cpu1", cpu1, "skip 1-thread CPU timings");
  app.add_option("--device", device, "cuda, cuda:N, or none")->capture_default_str();
  app.add_option("--seed", seed)->capture_default_str();
  bench::AddJsonOption(app, json);
  CLI11_PARSE(app, argc, argv);
  try
  {
    const std::string deviceText = bench::GpuDeviceText(device);
    std::string       deviceName = "none";
    if (!deviceText.empty())
      deviceName = ResolveBackend(BackendRequest::Parse(deviceText)).Describe();
    std::cout << "Steerable benchmark " << bench::UtcNow() << ", CPU " << bench::CpuModel() << " ("
              << bench::LogicalCores() << " logical cores), GPU " << deviceName << "\n";
    const auto   image = SmoothVolume(size, seed);
    const auto   t0 = Clock::now();
    const auto   pyramid = SteerablePyramid::Build(image, SteerablePyramidOptions{ { 1.0, 2.0, 4.0 }, {} });
    const double pyramidSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
    std::cout << "pyramid 1/2/4 mm of " << size
              << "^3 (smoothing, resampling, gradients; CPU all threads): " << Fixed(pyramidSeconds, 3) << " s\n";
    const auto          poses = OrientationHypotheses(positions, orientations, size, seed + 1);
    const std::int64_t  hypotheses = positions * orientations;
    nlohmann::json      report{ { "date", bench::UtcNow() },   { "cpu", bench::CpuModel() },
                           { "device", deviceName },      { "volume", size },
                           { "pyramid_mm", { 1, 2, 4 } }, { "pyramid_build_s", pyramidSeconds } };
    const SteerableGrid randomGrid{ 7, 1.0f }, exhaustiveGrid{ 5, 1.0f };
    report["runs"].push_back(RunBank("random",
                                     pyramid,
                                     randomGrid,
                                     RandomSteerableFeatures(randomGrid, 3, randomFeatures, seed + 2),
                                     poses,
                                     cpuHypotheses,
                                     cpu1,
                                     deviceText,
                                     gpuRepeats));
    // The exhaustive bank is 9000 features: the first 25,000 hypotheses keep its response matrix near 1 GB.
    const std::vector<SteerablePose> fewer(poses.begin(), poses.begin() + std::min<std::int64_t>(hypotheses, 25000));
    report["runs"].push_back(RunBank("exhaustive",
                                     pyramid,
                                     exhaustiveGrid,
                                     ExhaustiveSteerableFeatures(exhaustiveGrid, 3),
                                     fewer,
                                     std::max<std::int64_t>(1, cpuHypotheses / 4),
                                     cpu1,
                                     deviceText,
                                     gpuRepeats));
    if (pbtDepth > 0)
      report["runs"].push_back(RunPBT(
        pyramid, poses, cpuHypotheses, cpu1, deviceText, gpuRepeats, pbtDepth, pbtLearners, randomFeatures, seed + 3));
    if (!json.empty())
      bench::WriteJson(json, report);
  }
  catch (const std::exception & e)
  {
    std::cerr << "canopyBenchmarkSteerable: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
