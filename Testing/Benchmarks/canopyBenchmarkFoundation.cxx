// canopyBenchmarkFoundation: summed-volume tables (SAT) and Haar feature-bank evaluation on the CPU
// (1 thread, all threads) and the GPU (kernel only; and the host-to-host path with its transfers),
// from one run, with ratios and throughput. A program, not a test. See docs/BENCHMARKS.md.
#include "canopy/Device.h"
#include "canopy/HaarEvaluation.h"
#include "canopy/HaarResponseEngine.h"
#include "canopy/IntegralVolume.h"
#include "canopy/IntegralVolumeDispatch.h"
#include "canopyBenchmarkUtil.h"
#include "canopyConfigure.h"
#include "canopyHaarFeatureBank.h"
#include "itkMultiThreaderBase.h"

#if CANOPY_USE_CUDA
#  include "canopy/cuda/DeviceBuffer.h"
#endif

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>
#include <random>

namespace
{
using namespace canopy;
using bench::Fixed;

struct Options
{
  std::vector<int> satSizes{ 256, 512 };
  int              haarVolume = 256;
  int              haarBlock = 100; // dense cube of points: 100^3 = 1M
  int              features = 2000;
  int              sampleBox = 24;
  std::uint64_t    seed = 1;
  int              cpuHaarPoints = 2048; // 1-thread subset; all threads use this times the thread count
  int              gpuRepeats = 20;
  int              cpuRepeats = 3;
  bool             cpu = true;
  bool             gpu = true;
  bool             transfers = true;
  bool             sat = true;
  bool             haar = true;
  std::string      device = "cuda";
  std::string      json;
};

nlohmann::json g_Records = nlohmann::json::array();

void
Record(nlohmann::json record)
{
  g_Records.push_back(std::move(record));
}

std::vector<short>
RandomCt(int nx, int ny, int nz, std::uint64_t seed)
{
  std::vector<short>                 v(static_cast<std::size_t>(nx) * ny * nz);
  std::mt19937_64                    rng(seed);
  std::uniform_int_distribution<int> value(-1024, 3071);
  for (auto & x : v)
  {
    x = static_cast<short>(value(rng));
  }
  return v;
}

void
PrintRow(const std::string & what, const std::string & backend, double ms, const std::string & rate,
         const std::string & extra)
{
  std::printf("  %-22s %-26s %11s ms  %-24s %s\n", what.c_str(), backend.c_str(), Fixed(ms, 3).c_str(), rate.c_str(),
              extra.c_str());
}

#if CANOPY_USE_CUDA
/** Median milliseconds of `launch` between two events on `stream`, after one warm-up launch. */
template <typename TLaunch>
double
MedianGpuMs(cudaStream_t stream, int maxRepeats, double budgetSeconds, TLaunch && launch)
{
  cudaEvent_t start, stop;
  CANOPY_CUDA_CHECK(cudaEventCreate(&start));
  CANOPY_CUDA_CHECK(cudaEventCreate(&stop));
  launch();
  CANOPY_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> times;
  double              spent = 0.0;
  for (int r = 0; r < maxRepeats && (r < 3 || spent < budgetSeconds * 1e3); ++r)
  {
    CANOPY_CUDA_CHECK(cudaEventRecord(start, stream));
    launch();
    CANOPY_CUDA_CHECK(cudaEventRecord(stop, stream));
    CANOPY_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.f;
    CANOPY_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms);
    spent += ms;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return bench::Median(times);
}

/** Device-to-device copy of 1 GiB, counting bytes read plus written: the practical bandwidth ceiling. */
double
MeasureCopyBandwidthGBs(cudaStream_t stream)
{
  const std::size_t       bytes = std::size_t{ 1 } << 30;
  cuda::DeviceBuffer<char> a(bytes, "bandwidth probe"), b(bytes, "bandwidth probe");
  CANOPY_CUDA_CHECK(cudaMemsetAsync(a.data(), 1, bytes, stream));
  const double ms = MedianGpuMs(stream, 20, 1.0, [&] {
    CANOPY_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice, stream));
  });
  return 2.0 * bytes / (ms * 1e-3) / 1e9;
}
#endif

/** Largest |a-b| / max(1, |a|) over two tables; NaN counts as infinite. */
template <typename T>
double
WorstRelativeError(const T * a, const T * b, std::size_t n)
{
  double worst = 0.0;
  for (std::size_t i = 0; i < n; ++i)
  {
    const double e = std::abs(double(a[i]) - double(b[i])) / std::max(1.0, std::abs(double(a[i])));
    worst = std::isnan(e) ? INFINITY : std::max(worst, e);
  }
  return worst;
}

void
BenchmarkSat(const Options & o, int n, const ResolvedBackend & gpu, double bandwidthGBs, unsigned threads)
{
  const auto         voxels = RandomCt(n, n, n, o.seed + n);
  const std::int64_t cells = PaddedTableSize(n, n, n);
  const double       inBytes = double(voxels.size()) * sizeof(short), tableBytes = double(cells) * sizeof(double);
  const double       floorMs = bandwidthGBs > 0 ? (inBytes + tableBytes) / (bandwidthGBs * 1e9) * 1e3 : 0.0;
  const std::string  size = std::to_string(n) + "^3 int16";
  std::vector<double> cpuTable(cells, 0.0);
  auto rate = [&](double ms) { return Fixed(tableBytes / (ms * 1e-3) / 1e9, 1) + " GB/s written"; };
  double cpu1 = 0, cpuAll = 0;
  if (o.cpu)
  {
    cpu1 = bench::MedianHostMs([&] { ComputeIntegralVolumeCPU(voxels.data(), n, n, n, cpuTable.data(), 1); },
                               1, o.cpuRepeats, 5.0, false);
    PrintRow(size, "cpu, 1 thread", cpu1, rate(cpu1), "");
    cpuAll = bench::MedianHostMs(
      [&] { ComputeIntegralVolumeCPU(voxels.data(), n, n, n, cpuTable.data(), int(threads)); }, 3, 10, 3.0);
    PrintRow(size, "cpu, " + std::to_string(threads) + " threads", cpuAll, rate(cpuAll),
             "CPU1/CPUall " + Fixed(cpu1 / cpuAll, 1) + "x");
    Record({ { "section", "sat" }, { "size", n }, { "backend", "cpu1" }, { "ms", cpu1 } });
    Record({ { "section", "sat" }, { "size", n }, { "backend", "cpu_all" }, { "threads", threads }, { "ms", cpuAll } });
  }
  auto ratios = [&](double ms) {
    return o.cpu ? "CPU1/GPU " + Fixed(cpu1 / ms, 0) + "x, CPUall/GPU " + Fixed(cpuAll / ms, 1) + "x" : std::string();
  };
#if CANOPY_USE_CUDA
  if (!gpu.useCuda)
  {
    return;
  }
  cuda::ScopedDevice         scoped(gpu.deviceIndex);
  cuda::Stream               stream;
  cuda::DeviceBuffer<short>  dVoxels(voxels.size(), "SAT input");
  cuda::DeviceBuffer<double> dTable(cells, "SAT table");
  dVoxels.CopyFromHost(voxels.data(), voxels.size(), stream.get());
  CANOPY_CUDA_CHECK(cudaMemsetAsync(dTable.data(), 0xff, dTable.bytes(), stream.get())); // NaN: unwritten shows
  const double kernel = MedianGpuMs(stream.get(), o.gpuRepeats, 2.0, [&] {
    cuda::LaunchIntegralVolume(dVoxels.data(), n, n, n, dTable.data(), stream.get());
  });
  std::vector<double> gpuTable(cells);
  dTable.CopyToHost(gpuTable.data(), cells, stream.get());
  stream.Synchronize();
  const std::string check = o.cpu ? ", max rel. diff to CPU " + std::to_string(WorstRelativeError(cpuTable.data(), gpuTable.data(), cells)) : "";
  PrintRow(size, "gpu kernel (device-resident)", kernel, rate(kernel),
           ratios(kernel) + "; floor " + Fixed(floorMs, 3) + " ms (" + Fixed(kernel / floorMs, 1) + "x)" + check);
  Record({ { "section", "sat" }, { "size", n }, { "backend", "gpu_kernel" }, { "ms", kernel }, { "floor_ms", floorMs } });
  if (o.transfers)
  {
    const double e2e = bench::MedianHostMs(
      [&] { ComputeIntegralVolume(voxels.data(), n, n, n, gpuTable.data(), gpu); }, 3, 10, 3.0);
    PrintRow(size, "gpu incl. alloc+transfers", e2e, rate(e2e), ratios(e2e));
    Record({ { "section", "sat" }, { "size", n }, { "backend", "gpu_end_to_end" }, { "ms", e2e } });
  }
#else
  (void)gpu;
  (void)ratios;
  (void)floorMs;
#endif
}

VoxelIndex3
BlockPoint(const VoxelBlock & b, std::int64_t p)
{
  const std::int64_t plane = std::int64_t(b.sx) * b.sy;
  return VoxelIndex3{ b.x0 + int(p % b.sx), b.y0 + int((p % plane) / b.sx), b.z0 + int(p / plane) };
}

void
BenchmarkHaar(const Options & o, const ResolvedBackend & gpu, double bandwidthGBs, unsigned threads)
{
  const int  n = o.haarVolume;
  const auto voxels = RandomCt(n, n, n, o.seed + 7);
  RandomHaarBankOptions bankOptions;
  bankOptions.count = o.features;
  bankOptions.seed = o.seed;
  const auto resolved = ResolveHaarBank(GenerateRandomHaarBank(bankOptions), { o.sampleBox, o.sampleBox, o.sampleBox });
  const int  F = int(resolved.size());
  double     cuboidsPerPoint = 0;
  for (const auto & f : resolved)
  {
    cuboidsPerPoint += f.numCuboids;
  }
  const int          b = std::min(o.haarBlock, n);
  const VoxelBlock   block{ (n - b) / 2, (n - b) / 2, (n - b) / 2, b, b, b };
  const std::int64_t N = block.NumberOfVoxels();
  std::printf("\nHaar: %d features (random bank, seed %llu, %.2f cuboids/feature), sample box %d^3, volume %d^3 "
              "int16; points: dense %d^3 block (%lld points) at the centre\n",
              F, (unsigned long long)o.seed, cuboidsPerPoint / F, o.sampleBox, n, b, (long long)N);
  std::printf("  one box sum = one cuboid of one feature at one point (8 table loads)\n");
  auto rate = [&](double ms, double points) {
    const double s = ms * 1e-3;
    return Fixed(points * F / s / 1e9, 3) + " G eval/s, " + Fixed(points * cuboidsPerPoint / s / 1e9, 2) + " G box/s";
  };
  // CPU throughput on a strided subset of the block's points (the whole 2G evaluations would take minutes).
  auto subset = [&](std::int64_t k) {
    std::vector<VoxelIndex3> pts(k);
    for (std::int64_t i = 0; i < k; ++i)
    {
      pts[i] = BlockPoint(block, i * N / k);
    }
    return pts;
  };
  std::vector<double> table(PaddedTableSize(n, n, n));
  ComputeIntegralVolumeCPU(voxels.data(), n, n, n, table.data(), int(threads));
  const IntegralVolumeView view{ table.data(), n, n, n };
  const auto               pts1 = subset(std::min<std::int64_t>(N, o.cpuHaarPoints));
  const auto               ptsAll = subset(std::min<std::int64_t>(N, std::int64_t(o.cpuHaarPoints) * threads));
  std::vector<float>       cpuOut1(pts1.size() * F), cpuOutAll(ptsAll.size() * F);
  double                   cpu1PerPoint = 0, cpuAllPerPoint = 0; // ms per point
  if (o.cpu)
  {
    const auto k1 = std::int64_t(pts1.size()), kAll = std::int64_t(ptsAll.size());
    const double ms1 = bench::MedianHostMs(
      [&] { EvaluateHaarAtPointsCPU(view, resolved.data(), F, pts1.data(), k1, { cpuOut1.data(), k1, 1 }, 1); }, 1,
      o.cpuRepeats, 5.0, false);
    const double msAll = bench::MedianHostMs(
      [&] { EvaluateHaarAtPointsCPU(view, resolved.data(), F, ptsAll.data(), kAll, { cpuOutAll.data(), kAll, 1 }, int(threads)); },
      1, o.cpuRepeats, 5.0);
    cpu1PerPoint = ms1 / k1;
    cpuAllPerPoint = msAll / kAll;
    PrintRow("subset " + std::to_string(k1) + " pts", "cpu, 1 thread", ms1, rate(ms1, k1),
             "=> " + Fixed(cpu1PerPoint * N * 1e-3, 1) + " s for all points (extrapolated)");
    PrintRow("subset " + std::to_string(kAll) + " pts", "cpu, " + std::to_string(threads) + " threads", msAll,
             rate(msAll, kAll), "=> " + Fixed(cpuAllPerPoint * N * 1e-3, 2) + " s for all points (extrapolated)");
    Record({ { "section", "haar" }, { "backend", "cpu1" }, { "points", k1 }, { "ms", ms1 } });
    Record({ { "section", "haar" }, { "backend", "cpu_all" }, { "threads", threads }, { "points", kAll }, { "ms", msAll } });
  }
  auto ratios = [&](double ms, double points) {
    const double perPoint = ms / points;
    return o.cpu ? "CPU1/GPU " + Fixed(cpu1PerPoint / perPoint, 0) + "x, CPUall/GPU " + Fixed(cpuAllPerPoint / perPoint, 1) + "x"
                 : std::string();
  };
#if CANOPY_USE_CUDA
  if (!gpu.useCuda)
  {
    return;
  }
  cuda::ScopedDevice                    scoped(gpu.deviceIndex);
  cuda::Stream                          stream;
  cuda::DeviceBuffer<short>             dVoxels(voxels.size(), "Haar input");
  cuda::DeviceBuffer<double>            dTable(table.size(), "Haar table");
  cuda::DeviceBuffer<HaarFeatureVoxels> dFeatures(F, "feature bank");
  cuda::DeviceBuffer<float>             dOut(std::size_t(N) * F, "responses");
  dVoxels.CopyFromHost(voxels.data(), voxels.size(), stream.get());
  dFeatures.CopyFromHost(resolved.data(), F, stream.get());
  cuda::LaunchIntegralVolume(dVoxels.data(), n, n, n, dTable.data(), stream.get());
  CANOPY_CUDA_CHECK(cudaMemsetAsync(dOut.data(), 0xff, dOut.bytes(), stream.get()));
  const IntegralVolumeView dView{ dTable.data(), n, n, n };
  const double             dense = MedianGpuMs(stream.get(), o.gpuRepeats, 3.0, [&] {
    cuda::LaunchHaarDense(dView, dFeatures.data(), F, block, { dOut.data(), N, 1 }, stream.get());
  });
  // Parity on the first 256 subset points: gather their columns of the feature-major matrix.
  const std::int64_t check = std::min<std::int64_t>(256, pts1.size());
  std::vector<float> gpuCols(check * F), cpuCols(check * F);
  for (std::int64_t k = 0; k < check; ++k)
  {
    const std::int64_t p = k * N / std::int64_t(pts1.size());
    CANOPY_CUDA_CHECK(cudaMemcpy2DAsync(&gpuCols[k], check * sizeof(float), dOut.data() + p, N * sizeof(float),
                                        sizeof(float), F, cudaMemcpyDeviceToHost, stream.get()));
    for (int f = 0; f < F; ++f)
    {
      cpuCols[f * check + k] = o.cpu ? cpuOut1[f * pts1.size() + k]
                                     : float(HaarResponse(view, resolved[f], pts1[k].x, pts1[k].y, pts1[k].z));
    }
  }
  stream.Synchronize();
  const double parity = WorstRelativeError(cpuCols.data(), gpuCols.data(), cpuCols.size());
  // Writing the responses once is the memory floor (the table reads mostly hit the caches).
  const double writeFloorMs = bandwidthGBs > 0 ? double(N) * F * sizeof(float) / (bandwidthGBs * 1e9) * 1e3 : 0.0;
  PrintRow("dense " + std::to_string(N) + " pts", "gpu kernel (device-resident)", dense, rate(dense, N),
           ratios(dense, N) + "; write floor " + Fixed(writeFloorMs, 2) + " ms; max rel. diff to CPU " +
             std::to_string(parity) + " (" + std::to_string(check) + " pts)");
  Record({ { "section", "haar" }, { "backend", "gpu_kernel_dense" }, { "points", N }, { "ms", dense },
           { "box_sums_per_s", N * cuboidsPerPoint / (dense * 1e-3) }, { "parity", parity } });

  // Random points over the whole volume: no spatial coherence, borders clipped.
  std::vector<VoxelIndex3> random(N);
  std::mt19937_64          rng(o.seed + 11);
  for (auto & q : random)
  {
    q = VoxelIndex3{ int(rng() % n), int(rng() % n), int(rng() % n) };
  }
  cuda::DeviceBuffer<VoxelIndex3> dPoints(N, "random points");
  dPoints.CopyFromHost(random.data(), N, stream.get());
  const double scattered = MedianGpuMs(stream.get(), o.gpuRepeats, 3.0, [&] {
    cuda::LaunchHaarAtPoints(dView, dFeatures.data(), F, dPoints.data(), N, { dOut.data(), N, 1 }, stream.get());
  });
  PrintRow("random " + std::to_string(N) + " pts", "gpu kernel (device-resident)", scattered, rate(scattered, N),
           ratios(scattered, N));
  Record({ { "section", "haar" }, { "backend", "gpu_kernel_random" }, { "points", N }, { "ms", scattered },
           { "box_sums_per_s", N * cuboidsPerPoint / (scattered * 1e-3) } });
  if (o.transfers)
  {
    // Every entry of the dense run, for the check below (after it, the random run overwrote dOut,
    // so the dense launch runs once more first).
    cuda::LaunchHaarDense(dView, dFeatures.data(), F, block, { dOut.data(), N, 1 }, stream.get());
    std::vector<float> dense(std::size_t(N) * F);
    dOut.CopyToHost(dense.data(), dense.size(), stream.get());
    stream.Synchronize();
    // The host-to-host path: voxels up, SAT on the device, points up, 4*N*F bytes of responses down.
    dOut.Release();
    std::vector<VoxelIndex3> blockPoints(N);
    for (std::int64_t p = 0; p < N; ++p)
    {
      blockPoints[p] = BlockPoint(block, p);
    }
    std::vector<float> hostOut(std::size_t(N) * F, 0.f);
    const double       e2e = bench::MedianHostMs(
      [&] {
        HaarResponseEngine engine(gpu, 0, std::size_t{ 2 } << 30);
        engine.SetVolumeFromVoxels(voxels.data(), n, n, n);
        engine.SetFeatures(resolved.data(), F);
        engine.EvaluateAtPoints(blockPoints.data(), N, hostOut.data());
      },
      1, 2, 1.0, false);
    PrintRow("dense " + std::to_string(N) + " pts", "gpu incl. transfers (engine)", e2e, rate(e2e, N),
             ratios(e2e, N) + "; " + Fixed(double(N) * F * 4 / 1e9, 1) + " GB of responses to the host");
    // Dense kernel and point-list kernel must agree on every entry (same math), none left unwritten.
    std::size_t differ = 0, notFinite = 0;
    for (std::size_t i = 0; i < dense.size(); ++i)
    {
      differ += dense[i] != hostOut[i];
      notFinite += !std::isfinite(dense[i]);
    }
    std::printf("  check: all %zu dense responses finite: %s; equal to the point-list path: %s\n", dense.size(),
                notFinite ? "NO" : "yes", differ ? ("NO (" + std::to_string(differ) + " differ)").c_str() : "yes");
    Record({ { "section", "haar" }, { "check", "dense_vs_points" }, { "differ", differ }, { "not_finite", notFinite } });
    Record({ { "section", "haar" }, { "backend", "gpu_end_to_end" }, { "points", N }, { "ms", e2e } });
  }
#else
  (void)gpu;
  (void)ratios;
  (void)bandwidthGBs;
#endif
}

} // namespace

int
main(int argc, char * argv[])
{
  Options  o;
  CLI::App app{ "Canopy foundation benchmark: SAT and Haar evaluation, CPU vs GPU (see docs/BENCHMARKS.md)" };
  app.add_option("--sat-sizes", o.satSizes, "cube edges of the SAT volumes")->capture_default_str();
  app.add_option("--haar-volume", o.haarVolume, "cube edge of the Haar volume")->capture_default_str();
  app.add_option("--haar-block", o.haarBlock, "edge of the dense cube of Haar points")->capture_default_str();
  app.add_option("--features", o.features, "random Haar bank size")->capture_default_str();
  app.add_option("--sample-box", o.sampleBox, "sample box edge in voxels")->capture_default_str();
  app.add_option("--seed", o.seed, "seed of volumes, bank and points")->capture_default_str();
  app.add_option("--cpu-haar-points", o.cpuHaarPoints, "CPU 1-thread Haar subset (times threads for all threads)")
    ->capture_default_str();
  app.add_option("--gpu-repeats", o.gpuRepeats, "most timed GPU repeats (median reported)")->capture_default_str();
  app.add_option("--cpu-repeats", o.cpuRepeats, "most timed CPU repeats (median reported)")->capture_default_str();
  app.add_flag("!--no-cpu", o.cpu, "skip CPU runs");
  app.add_flag("!--no-gpu", o.gpu, "skip GPU runs");
  app.add_flag("!--no-transfers", o.transfers, "skip the GPU runs that include host transfers");
  app.add_flag("!--no-sat", o.sat, "skip the SAT section");
  app.add_flag("!--no-haar", o.haar, "skip the Haar section");
  app.add_option("--device", o.device, "cuda or cuda:N")->capture_default_str();
  bench::AddJsonOption(app, o.json);
  CLI11_PARSE(app, argc, argv);

  try
  {
    const unsigned threads = bench::LogicalCores();
    itk::MultiThreaderBase::SetGlobalDefaultNumberOfThreads(threads);
    ResolvedBackend gpu;
    std::string     deviceText = "none (" + WhyNoCudaDevice() + ")";
    if (o.gpu && !UsableCudaDevices().empty())
    {
      gpu = ResolveBackend(BackendRequest::Parse(o.device));
      deviceText = gpu.Describe();
    }
    double bandwidth = 0.0;
#if CANOPY_USE_CUDA
    if (gpu.useCuda)
    {
      cuda::ScopedDevice scoped(gpu.deviceIndex);
      cuda::Stream       stream;
      bandwidth = MeasureCopyBandwidthGBs(stream.get());
    }
#endif
    std::printf("Canopy foundation benchmark, %s\n", bench::UtcNow().c_str());
    std::printf("host: %s, %u logical cores (ITK threads %u)\n", bench::CpuModel().c_str(), threads,
                itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads());
    std::printf("device: %s; device-to-device copy %s GB/s (read+write)\n", deviceText.c_str(), Fixed(bandwidth, 0).c_str());
    std::printf("times are medians; ratios are CPU time / GPU time for the same work\n\n");
    std::printf("SAT (padded double table; floor = input read once + table written once at the copy bandwidth)\n");
    for (int n : o.sat ? o.satSizes : std::vector<int>{})
    {
      BenchmarkSat(o, n, gpu, bandwidth, threads);
    }
    if (o.haar)
    {
      BenchmarkHaar(o, gpu, bandwidth, threads);
    }
    if (!o.json.empty())
    {
      nlohmann::json doc = { { "date", bench::UtcNow() }, { "device", deviceText }, { "cpu", bench::CpuModel() },
                             { "logical_cores", threads }, { "copy_bandwidth_GBs", bandwidth }, { "records", g_Records } };
      bench::WriteJson(o.json, doc);
    }
  }
  catch (const std::exception & e)
  {
    std::cerr << "canopyBenchmarkFoundation: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
