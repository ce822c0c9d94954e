// canopyBenchmarkAdwin: the adaptive random forest's member ADWIN step alone, as the forests run it
// after each batch (ForestMemberMonitor::ObserveBatch per member, members in parallel on a TBB arena as
// in Modules/Streaming/src/canopyTreeParallel.h), on 0/1 error bits drawn at a fixed rate (counter-based,
// so every run sees the same bits). Prints wall and CPU seconds (getrusage, all threads) and ns per
// member update (one update = both the warning and the drift detector seeing one result) for each
// thread count, with the monitors packed in a std::vector (as the device forest keeps them; monitors are
// cache-line aligned) or each in a heap block of its own, to tell sharing from work. A program, not a
// test (docs/BENCHMARKS.md).
#include "canopy/CounterRandom.h"
#include "canopyBenchmarkUtil.h"
#include "canopyDeviceMemberMonitor.h"
#include "canopyForestMember.h"

#if CANOPY_USE_CUDA
#include "canopy/StreamingAdwinLaunch.h"
#include "canopy/cuda/DeviceBuffer.h"

#include <cuda_runtime.h>
#endif

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>

namespace
{
using namespace canopy;
using namespace canopy::streaming;

using bench::LoadAverage;
using bench::ProcessCpuSeconds;

/** A monitor alone on its cache lines (the "padded" layout). */
struct alignas(64) PaddedMonitor
{
  explicit PaddedMonitor(const DriftSettings & s)
    : monitor(s)
  {
  }
  ForestMemberMonitor monitor;
};

struct Figures
{
  double       wall = 0.0, cpu = 0.0;
  std::int64_t drifts = 0, warnings = 0;
};

/** Runs `batches` batches over `members` monitors on `threads` threads; the bits of batch b are pool
 * batch b % pool (pool: members x batch bytes per batch, member t's results at t * batch). */
template<typename Monitors, typename Get>
Figures
Time(Monitors &                        monitors,
     Get                               get,
     const std::vector<std::uint8_t> & pool,
     int                               poolBatches,
     int                               members,
     int                               batch,
     int                               batches,
     int                               threads)
{
  std::vector<std::vector<std::uint8_t>> events(static_cast<std::size_t>(members));
  auto                                   body = [&](const std::uint8_t * correct, int t)
  {
    auto & e = events[std::size_t(t)];
    e.clear();
    get(monitors, t)
      .ObserveBatch(
        correct + std::size_t(t) * std::size_t(batch),
        std::size_t(batch),
        [&] { e.push_back(0); },
        [&](bool background) { e.push_back(background ? 1 : 2); });
  };
  std::unique_ptr<tbb::task_arena> arena;
  if (threads > 1)
    arena = std::make_unique<tbb::task_arena>(threads);
  Figures    f;
  const auto start = std::chrono::steady_clock::now();
  const auto cpu0 = ProcessCpuSeconds();
  for (int b = 0; b < batches; ++b)
  {
    const std::uint8_t * correct = pool.data() + std::size_t(b % poolBatches) * std::size_t(members) * batch;
    if (!arena)
      for (int t = 0; t < members; ++t)
        body(correct, t);
    else
      arena->execute([&] { tbb::parallel_for(0, members, [&](int t) { body(correct, t); }); });
  }
  f.cpu = ProcessCpuSeconds() - cpu0;
  f.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int t = 0; t < members; ++t)
  {
    f.drifts += get(monitors, t).Drifts();
    f.warnings += get(monitors, t).Warnings();
  }
  return f;
}

#if CANOPY_USE_CUDA
/** The device step (StreamingAdwin.cu, a block per member) on the same bits: `batches` launches timed by
 * CUDA events, then a second pass from fresh members with the kernel's opt-in phase profile. Prints
 * both and the events' counts, which must equal the CPU monitors' (the same step, bit for bit). */
nlohmann::json
TimeDevice(const std::vector<std::uint8_t> & pool,
           int                               poolBatches,
           int                               members,
           int                               batch,
           int                               batches,
           int                               teamThreads)
{
  const AdwinMonitorSettings             settings = DeviceMonitorSettings(DriftSettings{});
  cuda::Stream                           stream;
  const std::size_t                      M = std::size_t(members);
  cuda::DeviceBuffer<std::uint8_t>       dPool(pool.size(), "pool");
  cuda::DeviceBuffer<AdwinMemberData>    dState(M, "members");
  const int                              capacity = StreamAdwinEventCapacity(batch, settings.clock);
  cuda::DeviceBuffer<std::uint8_t>       dEvents(M * std::size_t(capacity), "events");
  cuda::DeviceBuffer<AdwinMemberSummary> dSummaries(M, "summaries");
  cuda::DeviceBuffer<unsigned long long> dProfile(2 * kAdwinPhases, "profile");
  dPool.CopyFromHost(pool.data(), pool.size(), stream.get());
  std::vector<AdwinMemberSummary> summaries(M);
  StreamAdwinArgs                 a;
  a.settings = settings;
  a.members = members;
  a.n = batch;
  a.state = dState.data();
  a.events = dEvents.data();
  a.eventCapacity = capacity;
  a.summaries = dSummaries.data();
  a.teamThreads = teamThreads;
  cudaEvent_t start, stop;
  CANOPY_CUDA_CHECK(cudaEventCreate(&start));
  CANOPY_CUDA_CHECK(cudaEventCreate(&stop));
  std::int64_t drifts = 0, warnings = 0, overflows = 0;
  float        ms = 0.0f;
  auto         run = [&](bool profile)
  {
    std::vector<AdwinMemberData> fresh(M);
    for (auto & m : fresh)
      AdwinMemberReset(settings, m);
    dState.CopyFromHost(fresh.data(), M, stream.get());
    a.profile = profile ? dProfile.data() : nullptr;
    if (profile)
      CANOPY_CUDA_CHECK(
        cudaMemsetAsync(dProfile.data(), 0, 2 * kAdwinPhases * sizeof(unsigned long long), stream.get()));
    CANOPY_CUDA_CHECK(cudaEventRecord(start, stream.get()));
    for (int b = 0; b < batches; ++b)
    {
      a.correct = dPool.data() + std::size_t(b % poolBatches) * M * std::size_t(batch);
      cuda::LaunchStreamAdwinStep(a, stream.get());
    }
    CANOPY_CUDA_CHECK(cudaEventRecord(stop, stream.get()));
    dSummaries.CopyToHost(summaries.data(), M, stream.get());
    stream.Synchronize();
    CANOPY_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    drifts = warnings = overflows = 0;
    for (const auto & s : summaries)
    {
      drifts += std::int64_t(s.drifts);
      warnings += std::int64_t(s.warnings);
      overflows += s.overflow ? 1 : 0;
    }
  };
  run(false);
  const double seconds = 1e-3 * double(ms);
  std::cout << "device step (" << members << " blocks of " << teamThreads << " threads): " << bench::Fixed(seconds, 3)
            << " s, " << bench::Fixed(1e6 * seconds / batches, 1) << " us per batch; drifts " << drifts << ", warnings "
            << warnings << (overflows ? ", OVERFLOWS " + std::to_string(overflows) : std::string()) << "\n";
  nlohmann::json out{ { "team_threads", teamThreads },
                      { "seconds", seconds },
                      { "us_per_batch", 1e6 * seconds / batches },
                      { "drifts", drifts },
                      { "warnings", warnings },
                      { "overflows", overflows } };
  run(true);
  std::vector<unsigned long long> profile(2 * kAdwinPhases);
  dProfile.CopyToHost(profile.data(), profile.size(), stream.get());
  stream.Synchronize();
  int clockKHz = 0, device = 0;
  CANOPY_CUDA_CHECK(cudaGetDevice(&device));
  CANOPY_CUDA_CHECK(cudaDeviceGetAttribute(&clockKHz, cudaDevAttrClockRate, device));
  static const char * names[kAdwinPhases] = {
    "copy in",   "errors' prefix", "old boundaries' table",          "checks and the first cut",
    "insertion", "window sums",    "monitor (scans, drops, events)", "copy out"
  };
  double total = 0.0;
  for (int k = 0; k < kAdwinPhases; ++k)
    total += double(profile[std::size_t(k)]);
  const double perMemberBatch = double(members) * batches;
  std::cout << "  profile (thread 0's clock64 per member and batch; " << clockKHz / 1000 << " MHz; with profiling "
            << bench::Fixed(1e-3 * ms, 3) << " s): total " << bench::Fixed(total / perMemberBatch, 0) << " cycles, "
            << bench::Fixed(total / perMemberBatch / (clockKHz * 1e-3), 1) << " us\n";
  for (int k = 0; k < kAdwinPhases; ++k)
  {
    const double cycles = double(profile[std::size_t(k)]) / perMemberBatch;
    const double count = double(profile[std::size_t(kAdwinPhases + k)]) / perMemberBatch;
    std::cout << "    " << names[k] << ": " << bench::Fixed(cycles, 0) << " cycles ("
              << bench::Fixed(total > 0 ? 100.0 * double(profile[std::size_t(k)]) / total : 0.0, 1) << "%), "
              << bench::Fixed(count, 2) << " times\n";
    out["profile"].push_back({ { "phase", names[k] }, { "cycles_per_member_batch", cycles }, { "times", count } });
  }
  out["clock_mhz"] = clockKHz / 1000;
  CANOPY_CUDA_CHECK(cudaEventDestroy(start));
  CANOPY_CUDA_CHECK(cudaEventDestroy(stop));
  return out;
}
#endif
} // namespace

int
main(int argc, char ** argv)
{
  int              members = 100, batch = 1000, batches = 1000, poolBatches = 50;
  double           errorRate = 0.25;
  std::vector<int> threads{ 1, 2 };
  std::string      json;
  bool             padded = true, packed = true;
  CLI::App         app{ "Canopy ADWIN step benchmark: the forest members' drift detectors alone (docs/BENCHMARKS.md)" };
  app.add_option("--members", members)->capture_default_str();
  app.add_option("--batch", batch)->capture_default_str();
  app.add_option("--batches", batches, "Batches per run (1000 x 1000: the 1M-instance stream)")->capture_default_str();
  app.add_option("--pool", poolBatches, "Distinct batches of bits, cycled")->capture_default_str();
  app.add_option("--error-rate", errorRate, "Probability of an error bit")->capture_default_str();
  double curve = 0.0;
  app
    .add_option("--learning-curve",
                curve,
                "Instances over which the error rate falls from 0.5 towards --error-rate (exp(-i/N); 0: "
                "constant), as members' errors do while their trees learn; set --pool to --batches")
    ->capture_default_str();
  app.add_option("--threads", threads, "Thread counts to time")->delimiter(',')->capture_default_str();
  app.add_option("--packed", packed, "Time monitors packed in a std::vector")->capture_default_str();
  app.add_option("--padded", padded, "Time monitors on cache lines of their own")->capture_default_str();
  app.add_option("--json", json, "also write the figures as JSON");
  bool             device = false;
  std::vector<int> teamThreads{ kStreamAdwinBlockThreads };
  app.add_option("--team-threads", teamThreads, "Device step: the block sizes to time (256, 512, 1024)")
    ->delimiter(',')
    ->capture_default_str();
  app.add_flag("--device", device, "also time the device step (a block per member) and profile its phases");
  CLI11_PARSE(app, argc, argv);

  std::vector<std::uint8_t> pool(std::size_t(poolBatches) * members * batch);
  for (std::size_t k = 0; k < pool.size(); ++k)
  {
    const std::size_t b = k / (std::size_t(members) * batch), t = k / batch % members, i = k % batch;
    const double      rate =
      curve > 0.0 ? errorRate + (0.5 - errorRate) * std::exp(-double(b * batch + i) / curve) : errorRate;
    pool[k] = CounterUniform(1, t, b * batch + i) < rate ? 0 : 1; // 1: the member was right
  }
  const double updates = double(members) * batch * batches;
  std::cout << "ADWIN step benchmark " << bench::UtcNow() << ", CPU " << bench::CpuModel() << " ("
            << bench::LogicalCores() << " logical cores)\n"
            << members << " members, " << batches << " batches of " << batch << ", error rate " << errorRate
            << (curve > 0.0 ? " after a learning curve" : "") << " (" << updates
            << " member updates, each two ADWIN updates)\n";
  nlohmann::json report{ { "date", bench::UtcNow() }, { "cpu", bench::CpuModel() }, { "cores", bench::LogicalCores() },
                         { "members", members },      { "batch", batch },           { "batches", batches },
                         { "error_rate", errorRate }, { "learning_curve", curve },  { "member_updates", updates } };
  for (const char * layout : { "packed", "padded" })
  {
    const bool isPacked = std::string(layout) == "packed";
    if ((isPacked && !packed) || (!isPacked && !padded))
      continue;
    for (int t : threads)
    {
      const double loadBefore = LoadAverage();
      Figures      f;
      if (isPacked)
      {
        std::vector<ForestMemberMonitor> monitors(std::size_t(members), ForestMemberMonitor(DriftSettings{}));
        f = Time(
          monitors,
          [](auto & m, int i) -> ForestMemberMonitor & { return m[std::size_t(i)]; },
          pool,
          poolBatches,
          members,
          batch,
          batches,
          t);
      }
      else
      {
        std::vector<std::unique_ptr<PaddedMonitor>> monitors;
        for (int i = 0; i < members; ++i)
          monitors.push_back(std::make_unique<PaddedMonitor>(DriftSettings{}));
        f = Time(
          monitors,
          [](auto & m, int i) -> ForestMemberMonitor & { return m[std::size_t(i)]->monitor; },
          pool,
          poolBatches,
          members,
          batch,
          batches,
          t);
      }
      std::cout << layout << ", " << t << " thread(s): wall " << bench::Fixed(f.wall, 3) << " s, CPU "
                << bench::Fixed(f.cpu, 3) << " s (load " << bench::Fixed(loadBefore, 1) << "); "
                << bench::Fixed(1e9 * f.cpu / updates, 2) << " CPU ns and " << bench::Fixed(1e9 * f.wall / updates, 2)
                << " wall ns per member update; drifts " << f.drifts << ", warnings " << f.warnings << "\n";
      report["runs"].push_back({ { "layout", layout },
                                 { "threads", t },
                                 { "seconds", f.wall },
                                 { "cpu_seconds", f.cpu },
                                 { "load_average_before", loadBefore },
                                 { "cpu_ns_per_member_update", 1e9 * f.cpu / updates },
                                 { "wall_ns_per_member_update", 1e9 * f.wall / updates },
                                 { "drifts", f.drifts },
                                 { "warnings", f.warnings } });
    }
  }
  if (device)
  {
#if CANOPY_USE_CUDA
    for (int threads : teamThreads)
      report["device"].push_back(TimeDevice(pool, poolBatches, members, batch, batches, threads));
#else
    std::cerr << "canopyBenchmarkAdwin: --device: this build has no CUDA\n";
    return 2;
#endif
  }
  if (!json.empty())
    std::ofstream(json) << report.dump(2) << "\n";
  return 0;
}
