// canopyBenchmarkFilterBank: the forest's filter-bank channels (canopy/FilterBank.h) of one volume on
// the CPU (ITK's filters as the forest used them before, the CPU reference on 1 thread and on all
// threads) and the GPU (host to host: upload, every channel, download; and one pass per axis, kernel
// only), with the GPU's largest deviation from the CPU. Default: a colin27-sized volume (181 x 217 x
// 181 at 1 mm) and the bank of the brain experiments. A program, not a test (docs/BENCHMARKS.md).
#include "canopy/Device.h"
#include "canopy/FilterBank.h"
#include "canopy/RecursiveGaussian.h"
#include "canopyBenchmarkUtil.h"
#include "canopyConfigure.h"
#include "canopyForestFilterBank.h"
#include "itkGradientMagnitudeRecursiveGaussianImageFilter.h"
#include "itkLaplacianRecursiveGaussianImageFilter.h"
#include "itkMultiThreaderBase.h"
#include "itkSmoothingRecursiveGaussianImageFilter.h"

#if CANOPY_USE_CUDA
#include "canopy/cuda/DeviceBuffer.h"
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

std::vector<float>
BrainLikeVolume(const FilterBankGrid & g, std::uint64_t seed)
{
  std::mt19937_64                       rng(seed);
  std::uniform_real_distribution<float> noise(-20.0f, 20.0f);
  std::vector<float>                    v(g.Voxels());
  std::int64_t                          i = 0;
  for (int z = 0; z < g.nz; ++z)
    for (int y = 0; y < g.ny; ++y)
      for (int x = 0; x < g.nx; ++x)
      {
        const double dx = (x - g.nx / 2.0) / (0.4 * g.nx), dy = (y - g.ny / 2.0) / (0.45 * g.ny),
                     dz = (z - g.nz / 2.0) / (0.4 * g.nz);
        const bool inside = dx * dx + dy * dy + dz * dz < 1.0;
        v[i++] = (inside ? 80.0f + 30.0f * std::sin(0.3 * x) * std::cos(0.2 * y + 0.1 * z) : 5.0f) + noise(rng);
      }
  return v;
}

itk::Image<float, 3>::Pointer
AsItk(const std::vector<float> & v, const FilterBankGrid & g)
{
  auto image = itk::Image<float, 3>::New();
  image->SetRegions(itk::Size<3>{ { std::size_t(g.nx), std::size_t(g.ny), std::size_t(g.nz) } });
  image->Allocate();
  std::copy(v.begin(), v.end(), image->GetBufferPointer());
  return image;
}

template<typename TFilter>
std::vector<float>
RunItk(const itk::Image<float, 3> * image, double sigma)
{
  auto filter = TFilter::New();
  filter->SetInput(image);
  filter->SetSigma(sigma);
  filter->Update();
  const float * p = filter->GetOutput()->GetBufferPointer();
  return std::vector<float>(p, p + image->GetBufferedRegion().GetNumberOfPixels());
}

/** The bank as the forest computed it before the shared line filter: ITK's filters, ITK's threads. */
std::vector<std::vector<float>>
ItkBank(const itk::Image<float, 3> * image, const std::vector<std::string> & bank)
{
  using Image = itk::Image<float, 3>;
  using Kind = ForestFilterChannel::Kind;
  std::vector<std::vector<float>> channels;
  for (const auto & name : bank)
  {
    const auto c = ForestFilterChannel::Parse(name, "--channels");
    if (c.kind == Kind::Gaussian)
      channels.push_back(RunItk<itk::SmoothingRecursiveGaussianImageFilter<Image, Image>>(image, c.sigma));
    else if (c.kind == Kind::GradientMagnitude)
      channels.push_back(RunItk<itk::GradientMagnitudeRecursiveGaussianImageFilter<Image, Image>>(image, c.sigma));
    else if (c.kind == Kind::LaplacianOfGaussian)
      channels.push_back(RunItk<itk::LaplacianRecursiveGaussianImageFilter<Image, Image>>(image, c.sigma));
    else
      channels.emplace_back(image->GetBufferPointer(),
                            image->GetBufferPointer() + image->GetBufferedRegion().GetNumberOfPixels());
  }
  return channels;
}

} // namespace

int
main(int argc, char ** argv)
{
  std::vector<int> size{ 181, 217, 181 };
  std::string      channels = "intensity,gaussian:1,gaussian:3,gradient:1,log:2", device = "cuda", json;
  bool             cpu1 = true;
  int              repeats = 5;
  CLI::App         app{ "Canopy filter-bank benchmark: CPU vs GPU (docs/BENCHMARKS.md)" };
  app.add_option("--size", size, "volume size nx ny nz (1 mm voxels)")->expected(3)->capture_default_str();
  app.add_option("--channels", channels, "filter bank, as train-forest --channels")->capture_default_str();
  app.add_option("--repeats", repeats, "timed runs per figure (median)")->capture_default_str();
  app.add_flag("!--no-cpu1", cpu1, "skip the 1-thread CPU timing");
  app.add_option("--device", device, "cuda, cuda:N, or none")->capture_default_str();
  bench::AddJsonOption(app, json);
  CLI11_PARSE(app, argc, argv);
  try
  {
    FilterBankGrid grid;
    grid.nx = size[0], grid.ny = size[1], grid.nz = size[2];
    const auto                         names = ParseForestFilterBank(channels, "--channels");
    std::vector<FilterBankChannelSpec> specs;
    for (const auto & name : names)
      specs.push_back(ForestFilterChannel::Parse(name, "--channels"));
    const auto                      volume = BrainLikeVolume(grid, 1);
    std::vector<std::vector<float>> cpu(specs.size(), std::vector<float>(grid.Voxels()));
    std::vector<float *>            out;
    for (auto & c : cpu)
      out.push_back(c.data());
    const int  threads = int(itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads());
    const auto run = [&](const ResolvedBackend & b, int t)
    { ComputeFilterBank(volume.data(), grid, specs, out, b, t); };

    const std::string deviceText = bench::GpuDeviceText(device);
    ResolvedBackend   gpu;
    if (!deviceText.empty())
      gpu = ResolveBackend(BackendRequest::Parse(deviceText));
    std::cout << "Filter-bank benchmark " << bench::UtcNow() << ", CPU " << bench::CpuModel() << " ("
              << bench::LogicalCores() << " logical cores, " << threads << " threads), GPU "
              << (gpu.useCuda ? gpu.Describe() : "none") << "\n"
              << grid.nx << " x " << grid.ny << " x " << grid.nz << ", channels " << channels << "\n";

    const auto          image = AsItk(volume, grid);
    const double        itkMs = bench::MedianHostMs([&] { ItkBank(image, names); }, 1, repeats, 30.0);
    const double        cpu1Ms = cpu1 ? bench::MedianHostMs([&] { run(ResolvedBackend{}, 1); }, 1, repeats, 60.0) : 0.0;
    const double        cpuMs = bench::MedianHostMs([&] { run(ResolvedBackend{}, threads); }, 1, repeats, 30.0);
    const auto          reference = cpu; // the last CPU run's channels
    double              gpuMs = 0.0, worst = -1.0;
    std::vector<double> passMs;
    if (gpu.useCuda)
    {
      gpuMs = bench::MedianHostMs([&] { run(gpu, 0); }, 3, std::max(3, repeats * 4), 20.0);
      worst = 0.0;
      for (std::size_t k = 0; k < cpu.size(); ++k)
      {
        double scale = 0.0, diff = 0.0;
        for (std::size_t i = 0; i < cpu[k].size(); ++i)
        {
          scale = std::max(scale, double(std::fabs(reference[k][i])));
          diff = std::max(diff, double(std::fabs(cpu[k][i] - reference[k][i])));
          if (std::isnan(cpu[k][i]) != std::isnan(reference[k][i]))
            diff = INFINITY;
        }
        worst = std::max(worst, diff / std::max(scale, 1e-30));
      }
#if CANOPY_USE_CUDA
      cuda::ScopedDevice         scoped(gpu.deviceIndex);
      cuda::Stream               stream;
      cuda::DeviceBuffer<float>  in(grid.Voxels()), res(grid.Voxels());
      cuda::DeviceBuffer<double> scratch(grid.Voxels());
      in.CopyFromHost(volume.data(), grid.Voxels(), stream.get());
      cudaEvent_t start, stop;
      CANOPY_CUDA_CHECK(cudaEventCreate(&start));
      CANOPY_CUDA_CHECK(cudaEventCreate(&stop));
      for (int axis = 0; axis < 3; ++axis)
      {
        const VolumeLines   lines{ grid.nx, grid.ny, grid.nz, axis };
        const auto          c = MakeRecursiveGaussianCoefficients(1.0, 1.0, 0);
        std::vector<double> times;
        for (int r = 0; r < 11; ++r)
        {
          CANOPY_CUDA_CHECK(cudaEventRecord(start, stream.get()));
          cuda::LaunchRecursiveGaussianPass(in.data(), res.data(), scratch.data(), lines, c, stream.get());
          CANOPY_CUDA_CHECK(cudaEventRecord(stop, stream.get()));
          CANOPY_CUDA_CHECK(cudaEventSynchronize(stop));
          float ms = 0;
          CANOPY_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
          if (r > 0)
            times.push_back(ms);
        }
        passMs.push_back(bench::Median(times));
      }
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
#endif
    }
    const auto ratio = [](double a, double b) { return a > 0 && b > 0 ? Fixed(a / b, 1) + "x" : std::string("-"); };
    std::cout << "  ITK filters, " << threads << " threads:      " << Fixed(itkMs) << " ms\n"
              << "  CPU reference, 1 thread:     " << Fixed(cpu1Ms) << " ms\n"
              << "  CPU reference, " << threads << " threads:    " << Fixed(cpuMs) << " ms (" << ratio(cpu1Ms, cpuMs)
              << " of 1 thread; ITK / reference " << ratio(itkMs, cpuMs) << ")\n"
              << "  GPU, host to host:           " << Fixed(gpuMs, 3) << " ms (" << ratio(cpu1Ms, gpuMs)
              << " of 1 thread, " << ratio(cpuMs, gpuMs) << " of " << threads << " threads)\n";
    if (!passMs.empty())
      std::cout << "  GPU one Gaussian pass, kernel only, along x / y / z: " << Fixed(passMs[0], 3) << " / "
                << Fixed(passMs[1], 3) << " / " << Fixed(passMs[2], 3) << " ms\n"
                << "  GPU largest deviation from the CPU (relative to the channel's largest value): " << worst << "\n";
    bench::WriteJson(json,
                     { { "date", bench::UtcNow() },
                       { "cpu", bench::CpuModel() },
                       { "threads", threads },
                       { "device", gpu.useCuda ? gpu.Describe() : "none" },
                       { "size", size },
                       { "channels", channels },
                       { "itk_ms", itkMs },
                       { "cpu1_ms", cpu1Ms },
                       { "cpu_all_ms", cpuMs },
                       { "gpu_host_to_host_ms", gpuMs },
                       { "gpu_pass_kernel_ms_xyz", passMs },
                       { "gpu_max_relative_deviation", worst } });
  }
  catch (const std::exception & e)
  {
    std::cerr << "canopyBenchmarkFilterBank: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
