// canopyBenchmarkGraphCut: graph-cut regularisation of a brain probability map (colin27, or a synthetic
// ellipsoid where colin27 is absent, e.g. on the GPU host) — graph size, build and max-flow time, peak
// memory — for the banded and (optionally) full graphs, 6 and 26 neighbourhoods, with Boost.Graph's BK
// max-flow and, when built with CANOPY_BENCHMARK_WITH_MAXFLOW, Boykov & Kolmogorov's maxflow 3.0
// library (Debian libmaxflow-dev, GPL: opt-in) on the same graph.
// Each configuration runs in a forked child so getrusage's peak RSS is its own. A program, not a test.
#include "canopyBenchmarkUtil.h"
#include "canopyGridGraphCut.h"
#include "canopyOverlapMetrics.h"

#include "itkAdditiveGaussianNoiseImageFilter.h"
#include "itkImageFileReader.h"
#include "itkSmoothingRecursiveGaussianImageFilter.h"

#if CANOPY_HAVE_MAXFLOW
#include <maxflow.h>
#endif

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

namespace
{
using namespace canopy;
using FloatImage = itk::Image<float, 3>;
using MaskImage = itk::Image<unsigned char, 3>;

std::int64_t
CurrentRssBytes()
{
  std::ifstream statm("/proc/self/statm");
  std::int64_t  pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

/** Solves the same graph with maxflow 3.0; returns labels (1 = source side) and times. */
#if CANOPY_HAVE_MAXFLOW
std::vector<std::uint8_t>
SolveMaxflowLibrary(GridGraph & graph, GridGraphCutStatistics & statistics)
{
  const auto t0 = std::chrono::steady_clock::now();
  using G = maxflow::Graph<float, float, float>;
  G g(static_cast<int>(graph.numNodes), static_cast<int>(graph.linkA.size()));
  g.add_node(static_cast<int>(graph.numNodes));
  for (std::int64_t u = 0; u < graph.numNodes; ++u)
    g.add_tweights(static_cast<int>(u), graph.sourceCap[u], graph.sinkCap[u]);
  for (std::size_t l = 0; l < graph.linkA.size(); ++l)
    g.add_edge(static_cast<int>(graph.linkA[l]), static_cast<int>(graph.linkB[l]), graph.linkCap[l], graph.linkCap[l]);
  for (auto * v : { &graph.linkA, &graph.linkB })
    std::vector<std::uint32_t>().swap(*v);
  std::vector<float>().swap(graph.linkCap);
  statistics.solverSetupSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  statistics.maxFlow = g.maxflow();
  std::vector<std::uint8_t> labels(graph.numNodes);
  for (std::int64_t u = 0; u < graph.numNodes; ++u)
    labels[u] = g.what_segment(static_cast<int>(u), G::SOURCE) == G::SOURCE; // free nodes -> 1, as Boost
  statistics.maxFlowSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return labels;
}
#endif

struct Config
{
  int         neighborhood;
  bool        banded;
  std::string solver;
};

/** Child process body: one configuration, labels written to labelPath, a JSON line returned. */
nlohmann::json
RunConfig(const FloatImage *  p,
          const MaskImage *   reference,
          const Config &      c,
          double              lambda,
          int                 margin,
          const std::string & labelPath)
{
  const auto             region = p->GetLargestPossibleRegion();
  const int              size[3] = { int(region.GetSize(0)), int(region.GetSize(1)), int(region.GetSize(2)) };
  const double           spacing[3] = { p->GetSpacing()[0], p->GetSpacing()[1], p->GetSpacing()[2] };
  GridGraphCutParameters parameters;
  parameters.lambda = lambda;
  parameters.neighborhood = c.neighborhood;
  parameters.margin = margin;
  parameters.banded = c.banded;
  auto labelImage = MaskImage::New();
  labelImage->CopyInformation(p);
  labelImage->SetRegions(region);
  labelImage->Allocate();
  std::uint8_t *         labels = labelImage->GetBufferPointer();
  GridGraphCutStatistics s;
  const auto             t0 = std::chrono::steady_clock::now();
  if (c.solver == "boost")
    s = RegularizeProbabilities(p->GetBufferPointer(), size, spacing, parameters, labels);
  else
  {
#if CANOPY_HAVE_MAXFLOW
    GridGraph                 graph = BuildGridGraph(p->GetBufferPointer(), size, spacing, parameters, s);
    const auto                nodeLabels = SolveMaxflowLibrary(graph, s);
    std::vector<std::uint8_t> inGraph(graph.fixedLabels.size(), 0);
    for (std::int64_t u = 0; u < graph.numNodes; ++u)
    {
      graph.fixedLabels[graph.voxelOfNode[u]] = nodeLabels[u];
      inGraph[graph.voxelOfNode[u]] = 1;
    }
    std::copy(graph.fixedLabels.begin(), graph.fixedLabels.end(), labels);
    s.energy = ComputeEnergy(
      p->GetBufferPointer(), labels, size, spacing, parameters, &s.borderCuts, c.banded ? inGraph.data() : nullptr);
#endif
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ofstream(labelPath, std::ios::binary).write(reinterpret_cast<const char *>(labels), region.GetNumberOfPixels());
  nlohmann::json j{ { "neighborhood", c.neighborhood },
                    { "banded", c.banded },
                    { "solver", c.solver },
                    { "nodes", s.nodes },
                    { "uncertain", s.uncertain },
                    { "solverSetupSeconds", s.solverSetupSeconds },
                    { "nLinks", s.nLinks },
                    { "arcs", s.arcs },
                    { "graphBytesEstimate", s.graphBytes },
                    { "buildSeconds", s.buildSeconds },
                    { "maxFlowSeconds", s.maxFlowSeconds },
                    { "totalSeconds", total },
                    { "energy", s.energy },
                    { "maxFlow", s.maxFlow },
                    { "borderCuts", s.borderCuts } };
  if (reference)
    j["dice"] = ComputeOverlap(labelImage, reference).dice;
  return j;
}

/** Forks, runs the configuration in the child, returns its JSON plus the child's peak RSS. */
nlohmann::json
RunInChild(const std::function<nlohmann::json()> & body)
{
  int fds[2];
  if (pipe(fds) != 0)
    throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid == 0)
  {
    close(fds[0]);
    std::string text;
    try
    {
      text = body().dump();
    }
    catch (const std::exception & e)
    {
      text = nlohmann::json{ { "error", e.what() } }.dump();
    }
    if (write(fds[1], text.data(), text.size()) < 0)
      _exit(2);
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char        buffer[4096];
  for (ssize_t r; (r = read(fds[0], buffer, sizeof(buffer))) > 0;)
    text.append(buffer, r);
  close(fds[0]);
  int           status = 0;
  struct rusage usage = {};
  wait4(pid, &status, 0, &usage);
  auto j = text.empty() ? nlohmann::json{ { "error", "child died (status " + std::to_string(status) + ")" } }
                        : nlohmann::json::parse(text);
  j["peakRssBytes"] = std::int64_t(usage.ru_maxrss) * 1024;
  j["childCpuSeconds"] =
    usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + 1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  return j;
}

/** p = the reference mask smoothed (sigma 1.5 mm) plus noise (sigma 0.15), clamped to [0, 1]. */
FloatImage::Pointer
ProbabilityFromMask(const MaskImage * reference)
{
  auto binary = FloatImage::New();
  binary->CopyInformation(reference);
  binary->SetRegions(reference->GetLargestPossibleRegion());
  binary->Allocate();
  for (std::size_t i = 0; i < binary->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    binary->GetBufferPointer()[i] = reference->GetBufferPointer()[i] ? 1.0f : 0.0f;
  auto smooth = itk::SmoothingRecursiveGaussianImageFilter<FloatImage, FloatImage>::New();
  smooth->SetInput(binary);
  smooth->SetSigma(1.5);
  auto noise = itk::AdditiveGaussianNoiseImageFilter<FloatImage, FloatImage>::New();
  noise->SetInput(smooth->GetOutput());
  noise->SetStandardDeviation(0.15);
  noise->SetSeed(1);
  noise->SetNumberOfWorkUnits(1);
  noise->Update();
  FloatImage::Pointer p = noise->GetOutput();
  for (std::size_t i = 0; i < p->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    p->GetBufferPointer()[i] = std::min(1.0f, std::max(0.0f, p->GetBufferPointer()[i]));
  return p;
}

/** ch2bet > 0 as the reference mask. */
MaskImage::Pointer
MaskFromFile(const std::string & maskPath)
{
  auto reader = itk::ImageFileReader<FloatImage>::New();
  reader->SetFileName(maskPath);
  reader->Update();
  return ThresholdToMask(reader->GetOutput(), 1e-6f);
}

/** A brain-sized stand-in where colin27 is absent (the GPU host): an ellipsoid filling about the
 * brain's share of the grid (semi-axes 0.39, 0.39, 0.36 of the edges; 1 mm voxels). */
MaskImage::Pointer
EllipsoidMask(const std::vector<int> & size)
{
  auto                mask = MaskImage::New();
  MaskImage::SizeType extent{ { std::size_t(size[0]), std::size_t(size[1]), std::size_t(size[2]) } };
  mask->SetRegions(MaskImage::RegionType(extent));
  mask->Allocate();
  const double   c[3] = { 0.5 * (size[0] - 1), 0.5 * (size[1] - 1), 0.5 * (size[2] - 1) };
  const double   r[3] = { 0.39 * size[0], 0.39 * size[1], 0.36 * size[2] };
  std::uint8_t * out = mask->GetBufferPointer();
  for (int z = 0; z < size[2]; ++z)
    for (int y = 0; y < size[1]; ++y)
      for (int x = 0; x < size[0]; ++x)
      {
        const double dx = (x - c[0]) / r[0], dy = (y - c[1]) / r[1], dz = (z - c[2]) / r[2];
        *out++ = dx * dx + dy * dy + dz * dz <= 1.0 ? 1 : 0;
      }
  return mask;
}
} // namespace

int
main(int argc, char * argv[])
{
  CLI::App         app{ "Graph-cut regularisation benchmark (time, graph size, peak RSS)" };
  std::string      input = "/tmp/demo1/heldout-brain-probability.nii.gz", reference = "/tmp/demo1/heldout-brain.nii.gz";
  std::string      synthetic = "/usr/share/mricron/templates/ch2bet.nii.gz", jsonPath;
  double           lambda = 1.0;
  int              margin = 3;
  bool             full = false;
  std::vector<int> neighborhoods{ 6, 26 }, phantomSize{ 181, 217, 181 }; // colin27's grid
  bool             phantom = false;
  app.add_option("--input", input, "probability map (default: the demo's held-out PBT output)");
  app.add_option("--reference", reference, "reference mask for Dice (optional)");
  app.add_option("--synthetic-from", synthetic, "mask to synthesise p from when --input is absent");
  app.add_flag(
    "--phantom", phantom, "use a synthetic ellipsoid instead of the files (the default when neither file exists)");
  app.add_option("--phantom-size", phantomSize, "phantom grid nx ny nz (1 mm voxels)")
    ->expected(3)
    ->check(CLI::PositiveNumber)
    ->capture_default_str();
  app.add_option("--lambda", lambda, "surface weight in mm");
  app.add_option("--margin", margin, "band margin in voxels");
  app.add_flag("--full", full, "also solve the full graph (every voxel a node)");
  app.add_option("--neighborhoods", neighborhoods, "neighbourhoods to run (6 and/or 26)")->delimiter(',');
  bench::AddJsonOption(app, jsonPath);
  CLI11_PARSE(app, argc, argv);

  try
  {
    FloatImage::Pointer p;
    MaskImage::Pointer  ref;
    std::string         source;
    // Inputs in order: --input, then a mask to synthesise from, then the phantom. A file named on
    // the command line must exist; the defaults may be absent (the GPU host has no colin27).
    for (const auto & [option, path] : { std::pair{ "--input", input }, std::pair{ "--synthetic-from", synthetic } })
      if (!phantom && app.count(option) && !std::filesystem::exists(path))
        throw std::runtime_error(std::string(option) + ": '" + path + "' does not exist");
    if (phantom)
    {
      ref = EllipsoidMask(phantomSize);
      p = ProbabilityFromMask(ref);
      source = "synthetic ellipsoid phantom (smoothed sigma 1.5 mm, noise sigma 0.15)";
    }
    else if (std::filesystem::exists(input))
    {
      auto reader = itk::ImageFileReader<FloatImage>::New();
      reader->SetFileName(input);
      reader->Update();
      p = reader->GetOutput();
      source = input;
      if (std::filesystem::exists(reference))
      {
        auto r = itk::ImageFileReader<FloatImage>::New();
        r->SetFileName(reference);
        r->Update();
        ref = ThresholdToMask(r->GetOutput(), 0.5f);
      }
    }
    else if (std::filesystem::exists(synthetic))
    {
      ref = MaskFromFile(synthetic);
      p = ProbabilityFromMask(ref);
      source = "synthetic from " + synthetic + " (smoothed sigma 1.5 mm, noise sigma 0.15)";
    }
    else
    {
      ref = EllipsoidMask(phantomSize);
      p = ProbabilityFromMask(ref);
      source = "synthetic ellipsoid phantom (smoothed sigma 1.5 mm, noise sigma 0.15)";
      std::cout << "canopyBenchmarkGraphCut: note: neither " << input << " nor " << synthetic
                << " exists (mricron-data not installed?); running on a synthetic ellipsoid phantom instead\n";
    }
    const auto size = p->GetLargestPossibleRegion().GetSize();
    std::cout << "canopyBenchmarkGraphCut " << bench::UtcNow() << ", " << bench::CpuModel() << "\n"
              << "input " << source << ": " << size << " voxels, spacing " << p->GetSpacing() << ", lambda " << lambda
              << " mm, margin " << margin << ", band (0.02, 0.98)\n";
    if (ref)
      std::cout << "Dice of p >= 0.5 vs reference: " << ComputeOverlap(ThresholdToMask(p, 0.5f), ref).dice << "\n";
    const std::int64_t baseline = CurrentRssBytes();
    std::cout << "parent RSS at fork (input images): " << baseline / 1048576 << " MiB\n\n";

    std::vector<Config> configs;
    for (int nb : neighborhoods)
      for (bool banded : { true, false })
      {
        if (!banded && !full)
          continue;
        configs.push_back({ nb, banded, "boost" });
#if CANOPY_HAVE_MAXFLOW
        configs.push_back({ nb, banded, "maxflow" });
#endif
      }
    nlohmann::json all = nlohmann::json::array();
    std::printf("| nbhd | graph | solver | nodes (uncertain) | n-links | build s | solver set-up + max-flow s | peak "
                "RSS MiB (+over parent) | "
                "estimate MiB | child CPU s | energy mm^3 | border cuts | Dice "
                "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::map<std::string, std::vector<char>> labelsOf;
    for (const auto & c : configs)
    {
      const std::string labelPath = std::filesystem::temp_directory_path() /
                                    ("canopy-gc-" + std::to_string(getpid()) + "-" + std::to_string(all.size()));
      auto j = RunInChild([&] { return RunConfig(p, ref, c, lambda, margin, labelPath); });
      if (j.contains("error"))
      {
        std::cout << "error: " << j["error"] << "\n";
        continue;
      }
      std::ifstream     in(labelPath, std::ios::binary);
      std::vector<char> labels(size[0] * size[1] * size[2]);
      in.read(labels.data(), labels.size());
      std::filesystem::remove(labelPath);
      const std::string key = std::to_string(c.neighborhood); // compared with the banded Boost run
      if (labelsOf.count(key))
      {
        std::int64_t differ = 0;
        for (std::size_t i = 0; i < labels.size(); ++i)
          differ += labels[i] != labelsOf[key][i];
        j["labelsDifferFromBandedBoost"] = differ;
      }
      else
        labelsOf[key] = std::move(labels);
      const double mib = 1048576.0;
      std::printf(
        "| %d | %s | %s | %lld (%lld) | %lld | %.2f | %.2f + %.2f | %.0f (+%.0f) | %.0f | %.1f | %.1f | %lld | %s |\n",
        c.neighborhood,
        c.banded ? "banded" : "full",
        c.solver.c_str(),
        (long long)j["nodes"],
        (long long)j["uncertain"],
        (long long)j["nLinks"],
        double(j["buildSeconds"]),
        double(j["solverSetupSeconds"]),
        double(j["maxFlowSeconds"]) - double(j["solverSetupSeconds"]),
        double(j["peakRssBytes"]) / mib,
        (double(j["peakRssBytes"]) - baseline) / mib,
        double(j["graphBytesEstimate"]) / mib,
        double(j["childCpuSeconds"]),
        double(j["energy"]),
        (long long)j["borderCuts"],
        j.contains("dice") ? bench::Fixed(double(j["dice"]), 4).c_str() : "-");
      if (j.contains("labelsDifferFromBandedBoost"))
        std::printf("|   | labels differing from the banded Boost run: %lld | | | | | | | | | | | |\n",
                    (long long)j["labelsDifferFromBandedBoost"]);
      std::fflush(stdout);
      all.push_back(j);
    }
    bench::WriteJson(jsonPath,
                     { { "input", source },
                       { "lambda", lambda },
                       { "margin", margin },
                       { "date", bench::UtcNow() },
                       { "cpu", bench::CpuModel() },
                       { "parentRssBytes", baseline },
                       { "results", all } });
  }
  catch (const std::exception & e)
  {
    std::cerr << "canopyBenchmarkGraphCut: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
