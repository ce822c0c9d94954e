// canopyBenchmarkForest: dense decision-forest prediction (Sharp Fig. 10; CURFIL Table 2) on the CPU
// (1 thread, all threads) and the GPU (kernel only; host to host with the image's upload, its
// integration on the device and the result's download), from one run:
//   2D: 640x480, 3 channels, 8 trees of depth 20, 23 classes, every output mode;
//   3D: 256^3, 1 channel, 10 trees of depth 20, 4 classes (CPU timed on a slab of planes, scaled).
// Trees are random and complete to full depth (every voxel walks `depth` levels); thresholds are
// responses at random voxels of the image, so paths are spatially coherent as trained ones are.
// A program, not a test (docs/BENCHMARKS.md).
#include "canopy/Device.h"
#include "canopy/ForestPrediction.h"
#include "canopy/IntegralVolume.h"
#include "canopyBenchmarkUtil.h"
#include "canopyConfigure.h"
#include "canopyForestImage.h"
#include "canopyForestRandom.h"

#if CANOPY_USE_CUDA
#  include "canopy/cuda/DeviceBuffer.h"
#endif

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>

namespace
{
using namespace canopy;
using bench::Fixed;

struct Workload
{
  std::string      name;
  std::vector<int> size;
  int              channels, trees, depth, classes, maxOffset, maxBoxSize;
  int              cpuPlanes; // CPU timings on this many z-planes (0: all), scaled to the whole image
};

std::vector<std::vector<float>>
SmoothChannels(int nx, int ny, int nz, int channels, std::uint64_t seed)
{
  std::mt19937_64                       rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<std::vector<float>>       out;
  for (int c = 0; c < channels; ++c)
  {
    const float fx = 0.01f + 0.05f * u(rng), fy = 0.01f + 0.05f * u(rng), fz = 0.01f + 0.05f * u(rng);
    std::vector<float> v(std::size_t(nx) * ny * nz);
    std::size_t        i = 0;
    for (int z = 0; z < nz; ++z)
      for (int y = 0; y < ny; ++y)
        for (int x = 0; x < nx; ++x)
          v[i++] = 100.0f * std::sin(fx * x + c) * std::cos(fy * y) + 50.0f * std::sin(fz * z + 0.3f * c) +
                   10.0f * u(rng);
    out.push_back(std::move(v));
  }
  return out;
}

struct ModeResult
{
  ForestOutputMode mode;
  double           cpu1 = 0, cpuAll = 0, gpuKernel = 0, gpuHostToHost = 0;
  std::int64_t     mismatches = -1;
  double           maxDiff = -1;
  std::vector<double> shapeMs; // GPU kernel ms with warps of 32 x 1, then 8 x 4 voxels
};

#if CANOPY_USE_CUDA
/** The forest and the image's buffers on the device, for every mode of one workload. */
struct GpuForest
{
  GpuForest(const ForestModel & model, cuda::Stream & stream)
    : nodes(model.nodes.size(), "forest nodes")
    , roots(model.treeRoots.size(), "tree roots")
    , distributions(model.distributions.size(), "distributions")
  {
    nodes.CopyFromHost(model.nodes.data(), model.nodes.size(), stream.get());
    roots.CopyFromHost(model.treeRoots.data(), model.treeRoots.size(), stream.get());
    distributions.CopyFromHost(model.distributions.data(), model.distributions.size(), stream.get());
    stream.Synchronize();
  }
  cuda::DeviceBuffer<ForestNode>   nodes;
  cuda::DeviceBuffer<std::int32_t> roots;
  cuda::DeviceBuffer<float>        distributions;
  cuda::DeviceBuffer<float>        raw;  // one channel's voxels
  cuda::DeviceBuffer<double>       sums; // every channel's table
};
#endif

const char *
ModeName(ForestOutputMode m)
{
  switch (m)
  {
    case ForestOutputMode::Distribution: return "Distribution";
    case ForestOutputMode::ArgMax: return "ArgMax";
    case ForestOutputMode::ForestLeaves: return "ForestLeaves";
    default: return "TreeLeaf";
  }
}

nlohmann::json
RunWorkload(const Workload & w, const std::vector<ForestOutputMode> & modes, bool cpu1, int gpuRepeats,
            const std::string & deviceText, std::uint64_t seed)
{
  const int nx = w.size[0], ny = w.size[1], nz = w.size[2];
  const std::int64_t voxels = std::int64_t(nx) * ny * nz;
  const auto         channels = SmoothChannels(nx, ny, nz, w.channels, seed);
  std::vector<const float *> pointers;
  for (const auto & c : channels)
    pointers.push_back(c.data());
  const ForestImage image = ForestImage::FromChannels(pointers, nx, ny, nz, nullptr, 0);
  RandomForestOptions o;
  o.numTrees = w.trees;
  o.depth = w.depth;
  o.numClasses = w.classes;
  o.numChannels = w.channels;
  o.dimension = nz == 1 ? 2 : 3;
  o.maxOffset = w.maxOffset;
  o.maxBoxSize = w.maxBoxSize;
  o.distributionPool = 4096;
  o.twoSidedFraction = 0.0;
  o.seed = seed;
  const auto   t0 = std::chrono::steady_clock::now();
  const auto   view = image.View();
  const ForestModel model = MakeRandomForest(o, &view);
  const double makeSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const ForestView forest = model.View();
  const std::int64_t visits = voxels * w.trees * w.depth;
  std::cout << "\n## " << w.name << ": " << nx << "x" << ny << "x" << nz << ", " << w.channels << " channel(s), "
            << w.trees << " trees of depth " << w.depth << " (" << model.nodes.size() << " nodes, "
            << Fixed(model.nodes.size() * sizeof(ForestNode) / 1048576.0, 0) << " MiB), " << w.classes
            << " classes; forest made in " << Fixed(makeSeconds, 1) << " s; " << visits / 1e6
            << " M node visits per prediction\n";

  const int        planes = w.cpuPlanes > 0 ? std::min(w.cpuPlanes, nz) : nz;
  const VoxelBlock cpuBlock{ 0, 0, (nz - planes) / 2, nx, ny, planes };
  const double     cpuScale = double(nz) / planes;
  const VoxelBlock whole{ 0, 0, 0, nx, ny, nz };
  const int        allThreads = int(bench::LogicalCores());
  std::vector<ModeResult> results;
  nlohmann::json          report{ { "workload", w.name }, { "size", w.size }, { "trees", w.trees }, { "depth", w.depth },
                                  { "classes", w.classes }, { "channels", w.channels }, { "nodes", model.nodes.size() },
                                  { "cpu_planes", planes } };
#if CANOPY_USE_CUDA
  std::unique_ptr<GpuForest>   gpu;
  std::unique_ptr<cuda::Stream> streamOwner;
  if (!deviceText.empty())
  {
    cuda::ScopedDevice scoped(ResolveBackend(BackendRequest::Parse(deviceText)).deviceIndex);
    streamOwner = std::make_unique<cuda::Stream>();
  }
#endif
  for (auto mode : modes)
  {
#if CANOPY_USE_CUDA
    cuda::Stream * streamPointer = streamOwner.get();
#endif
    ModeResult        r{ mode };
    const int         comps = ForestComponents(forest, mode);
    const bool        isFloat = mode == ForestOutputMode::Distribution;
    const std::size_t cpuCount = std::size_t(cpuBlock.NumberOfVoxels()) * comps;
    std::vector<float>        cpuD(isFloat ? cpuCount : 0);
    std::vector<std::int32_t> cpuI(isFloat ? 0 : cpuCount);
    const ForestOutput        cpuOut{ mode, cpuD.data(), cpuI.data() };
    if (cpu1)
      r.cpu1 = cpuScale * bench::MedianHostMs([&] { PredictForestCPU(forest, view, cpuBlock, cpuOut, 1); }, 1, 1, 0, false);
    r.cpuAll = cpuScale * bench::MedianHostMs([&] { PredictForestCPU(forest, view, cpuBlock, cpuOut, allThreads); }, 1, 3, 3.0, true);
#if CANOPY_USE_CUDA
    if (!deviceText.empty())
    {
      cuda::ScopedDevice scoped(ResolveBackend(BackendRequest::Parse(deviceText)).deviceIndex);
      cuda::Stream & stream = *streamPointer;
      if (!gpu)
      {
        gpu = std::make_unique<GpuForest>(model, stream);
        gpu->raw.Allocate(std::size_t(voxels), "raw channel");
        gpu->sums.Allocate(image.sums.size(), "integral images");
      }
      ForestView device = forest;
      device.nodes = gpu->nodes.data();
      device.treeRoots = gpu->roots.data();
      device.distributions = gpu->distributions.data();
      ForestImagesView dimage = view;
      dimage.sums = gpu->sums.data();
      const std::size_t                count = std::size_t(voxels) * comps;
      cuda::DeviceBuffer<float>        outD(isFloat ? count : 1);
      cuda::DeviceBuffer<std::int32_t> outI(isFloat ? 1 : count);
      const ForestOutput               gpuOut{ mode, isFloat ? outD.data() : nullptr, isFloat ? nullptr : outI.data() };
      std::vector<float>               hostD(isFloat ? count : 0);
      std::vector<std::int32_t>        hostI(isFloat ? 0 : count);
      auto download = [&] {
        if (isFloat)
          outD.CopyToHost(hostD.data(), count, stream.get());
        else
          outI.CopyToHost(hostI.data(), count, stream.get());
        stream.Synchronize();
      };
      cudaEvent_t start, stop;
      CANOPY_CUDA_CHECK(cudaEventCreate(&start));
      CANOPY_CUDA_CHECK(cudaEventCreate(&stop));
      r.mismatches = 0;
      r.maxDiff = 0;
      cuda::ForestLaunchOptions best;
      for (auto shape : { cuda::ForestWarpShape::Row32x1, cuda::ForestWarpShape::Square8x4 })
      {
        const cuda::ForestLaunchOptions options{ cuda::ForestPlacement::Auto, shape };
        // The image's integral tables from its raw channels, on the device.
        for (int c = 0; c < w.channels; ++c)
        {
          gpu->raw.CopyFromHost(channels[c].data(), std::size_t(voxels), stream.get());
          cuda::LaunchIntegralVolume(gpu->raw.data(), nx, ny, nz, gpu->sums.data() + c * view.channelStride, stream.get());
        }
        cuda::LaunchForestPrediction(device, dimage, whole, gpuOut, stream.get(), options); // warm-up
        std::vector<double> times;
        for (int k = 0; k < gpuRepeats; ++k)
        {
          CANOPY_CUDA_CHECK(cudaEventRecord(start, stream.get()));
          cuda::LaunchForestPrediction(device, dimage, whole, gpuOut, stream.get(), options);
          CANOPY_CUDA_CHECK(cudaEventRecord(stop, stream.get()));
          CANOPY_CUDA_CHECK(cudaEventSynchronize(stop));
          float ms = 0;
          CANOPY_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
          times.push_back(ms);
        }
        const double ms = bench::Median(times);
        r.shapeMs.push_back(ms);
        if (r.gpuKernel == 0 || ms < r.gpuKernel)
        {
          r.gpuKernel = ms;
          best = options;
        }
        download();
        // Parity with the CPU on the CPU's block.
        const std::size_t offset = std::size_t(cpuBlock.z0) * nx * ny * comps;
        for (std::size_t i = 0; i < cpuCount; ++i)
        {
          if (isFloat)
            r.maxDiff = std::max(r.maxDiff, std::isnan(hostD[offset + i]) ? INFINITY : std::abs(double(hostD[offset + i]) - cpuD[i]));
          else
            r.mismatches += hostI[offset + i] != cpuI[i];
        }
      }
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
      // Host to host with the faster shape: raw channels up, integration, prediction, result down
      // (pageable host memory; the forest stays resident, as a loaded model does).
      auto hostToHost = [&] {
        for (int c = 0; c < w.channels; ++c)
        {
          gpu->raw.CopyFromHost(channels[c].data(), std::size_t(voxels), stream.get());
          cuda::LaunchIntegralVolume(gpu->raw.data(), nx, ny, nz, gpu->sums.data() + c * view.channelStride, stream.get());
        }
        cuda::LaunchForestPrediction(device, dimage, whole, gpuOut, stream.get(), best);
        download();
      };
      r.gpuHostToHost = bench::MedianHostMs(hostToHost, std::max(3, gpuRepeats / 2), std::max(3, gpuRepeats / 2), 0.0, true);
    }
#endif
    results.push_back(r);
  }
  std::cout << "| mode | CPU 1 thread ms | CPU " << allThreads << " threads ms | GPU kernel ms | GPU host-to-host ms | "
            << "GPU kernel / CPU-1 | GPU kernel / CPU-all | host-to-host / CPU-all | G node visits/s (kernel) | GPU vs CPU |\n"
            << "|---|---|---|---|---|---|---|---|---|---|\n";
  std::ostringstream notes;
  for (const auto & r : results)
  {
    auto ratio = [](double a, double b) { return a > 0 && b > 0 ? a / b : 0.0; };
    const std::int64_t modeVisits = r.mode == ForestOutputMode::TreeLeaf ? voxels * w.depth : visits;
    std::cout << "| " << ModeName(r.mode) << " | " << Fixed(r.cpu1, 0) << " | " << Fixed(r.cpuAll, 1) << " | "
              << Fixed(r.gpuKernel, 3) << " | " << Fixed(r.gpuHostToHost, 3) << " | " << Fixed(ratio(r.cpu1, r.gpuKernel), 0)
              << "x | " << Fixed(ratio(r.cpuAll, r.gpuKernel), 0) << "x | " << Fixed(ratio(r.cpuAll, r.gpuHostToHost), 1)
              << "x | " << Fixed(ratio(modeVisits / 1e6, r.gpuKernel), 1) << " | "
              << (r.mismatches >= 0 ? (r.mode == ForestOutputMode::Distribution ? "max diff " + std::to_string(r.maxDiff)
                                                                                : std::to_string(r.mismatches) + " mismatches")
                                    : std::string("-"))
              << " |\n";
    report["modes"].push_back({ { "mode", ModeName(r.mode) }, { "cpu1_ms", r.cpu1 }, { "cpu_all_ms", r.cpuAll },
                                { "gpu_kernel_ms", r.gpuKernel }, { "gpu_host_to_host_ms", r.gpuHostToHost },
                                { "gpu_kernel_ms_row_square_warps", r.shapeMs },
                                { "mismatches", r.mismatches }, { "max_diff", r.maxDiff } });
    if (r.shapeMs.size() == 2)
      notes << "  " << ModeName(r.mode) << " GPU kernel ms with warps of 32x1 / 8x4 voxels: " << Fixed(r.shapeMs[0], 3)
                << " / " << Fixed(r.shapeMs[1], 3) << "\n";
  }
  std::cout << notes.str();
  if (planes < nz)
    std::cout << "(CPU times measured on " << planes << " of " << nz << " planes and scaled by " << Fixed(cpuScale, 1)
              << "; parity checked on those planes)\n";
  return report;
}

} // namespace

int
main(int argc, char ** argv)
{
  Workload two{ "2D", { 640, 480, 1 }, 3, 8, 20, 23, 30, 12, 0 };
  Workload three{ "3D", { 256, 256, 256 }, 1, 10, 20, 4, 12, 6, 8 };
  int           gpuRepeats = 20;
  bool          cpu1 = true, run2 = true, run3 = true;
  std::string   device = "cuda", json;
  std::uint64_t seed = 1;
  CLI::App      app{ "Canopy forest prediction benchmark: CPU vs GPU (docs/BENCHMARKS.md)" };
  app.add_option("--size2d", two.size, "2D image size nx ny 1")->expected(3)->capture_default_str();
  app.add_option("--trees2d", two.trees)->capture_default_str();
  app.add_option("--depth2d", two.depth)->capture_default_str();
  app.add_option("--classes2d", two.classes)->capture_default_str();
  app.add_option("--size3d", three.size, "3D volume size")->expected(3)->capture_default_str();
  app.add_option("--trees3d", three.trees)->capture_default_str();
  app.add_option("--depth3d", three.depth)->capture_default_str();
  app.add_option("--cpu-planes3d", three.cpuPlanes, "CPU timing on this many planes, scaled")->capture_default_str();
  app.add_option("--gpu-repeats", gpuRepeats)->capture_default_str();
  app.add_flag("!--no-cpu1", cpu1, "skip 1-thread CPU timings");
  app.add_flag("!--no-2d", run2);
  app.add_flag("!--no-3d", run3);
  app.add_option("--device", device, "cuda, cuda:N, or none")->capture_default_str();
  app.add_option("--seed", seed)->capture_default_str();
  bench::AddJsonOption(app, json);
  CLI11_PARSE(app, argc, argv);
  try
  {
    const std::string deviceText = bench::GpuDeviceText(device);
    std::string deviceName = "none";
    if (!deviceText.empty())
      deviceName = ResolveBackend(BackendRequest::Parse(deviceText)).Describe();
    std::cout << "Forest benchmark " << bench::UtcNow() << ", CPU " << bench::CpuModel() << " (" << bench::LogicalCores()
              << " logical cores), GPU " << deviceName << "\n";
    nlohmann::json report{ { "date", bench::UtcNow() }, { "cpu", bench::CpuModel() }, { "device", deviceName } };
    if (run2)
      report["runs"].push_back(RunWorkload(two, { ForestOutputMode::Distribution, ForestOutputMode::ArgMax,
                                                  ForestOutputMode::ForestLeaves, ForestOutputMode::TreeLeaf },
                                           cpu1, gpuRepeats, deviceText, seed));
    if (run3)
      report["runs"].push_back(RunWorkload(three, { ForestOutputMode::ArgMax, ForestOutputMode::Distribution }, cpu1,
                                           gpuRepeats, deviceText, seed + 1));
    bench::WriteJson(json, report);
  }
  catch (const std::exception & e)
  {
    std::cerr << "canopyBenchmarkForest: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
