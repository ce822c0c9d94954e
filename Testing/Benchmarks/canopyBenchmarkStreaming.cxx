// canopyBenchmarkStreaming: prequential (test-then-train) throughput of the adaptive random forest of
// Hoeffding trees on the paper's RandomTree stream (Marron et al., Table 4: 1M instances, 100 trees),
// on the CPU with 1 thread and with all threads, and on the GPU (the CUDA forest, which learns the same
// trees), with the GPU's ratios to both and a floor: the bytes per instance per tree its kernels move,
// over the HBM bandwidth. The stream is generated into memory first, so the timing covers the forest
// only. --write-csv writes the same stream for a peer (scripts/bench-streaming-peer).
// A program, not a test (docs/BENCHMARKS.md).
#include "canopy/Device.h"
#include "canopy/StreamingAdwinLaunch.h"
#include "canopyBenchmarkUtil.h"
#include "canopyDeviceStreamingForest.h"
#include "canopyPrequentialEvaluation.h"
#include "canopyStreamGenerators.h"
#include "canopyStreamReaders.h"
#include "canopyStreamingForest.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <type_traits>

namespace
{
using namespace canopy;
using namespace canopy::streaming;

using bench::LoadAverage;
using bench::ProcessCpuSeconds;

/** The device forest's per-step times (--step-times) as JSON, and printed per batch. */
nlohmann::json
StepTimes(const DeviceForestTimings & tm, const char * where)
{
  nlohmann::json j{ { "where", where }, { "span", tm.stepSpan } };
  const double   batches = double(std::max<std::int64_t>(tm.batches, 1));
  std::cout << "  step times (" << where << ", us per batch):";
  for (int k = 0; k < kDeviceForestSteps; ++k)
  {
    const char * name = DeviceForestStepName(DeviceForestStep(k));
    j[name] = tm.stepSeconds[k];
    std::cout << " " << name << " " << bench::Fixed(1e6 * tm.stepSeconds[k] / batches, 1);
  }
  std::cout << "; main stream span " << bench::Fixed(1e6 * tm.stepSpan / batches, 1) << "\n";
  return j;
}

template<typename Forest>
nlohmann::json
Run(Forest &                       forest,
    const InstanceBatch &          all,
    const StreamSchema &           schema,
    const StreamingForestOptions & o,
    int                            batchSize,
    int                            window = 1,
    bool                           completeEachBatch = false)
{
  PrequentialEvaluator                   evaluation(schema.NumberOfClasses(), 10000);
  std::vector<InstanceBatch>             batches(std::size_t(std::max(window, 1)));
  std::vector<std::vector<std::int32_t>> predictions(batches.size());
  for (InstanceBatch & b : batches)
    b.attributes = all.attributes;
  const std::size_t d = std::size_t(all.attributes);
  const double      loadBefore = LoadAverage();
  const double      cpuStart = ProcessCpuSeconds();
  const auto        start = std::chrono::steady_clock::now();
  for (std::size_t first = 0; first < all.Size();)
  {
    // Up to `window` batches per call (the CPU forest's TestThenTrainBatches; one for the device forest).
    std::size_t count = 0, next = first;
    for (; count < batches.size() && next < all.Size(); ++count)
    {
      const std::size_t n = std::min<std::size_t>(batchSize, all.Size() - next);
      batches[count].values.assign(all.values.begin() + next * d, all.values.begin() + (next + n) * d);
      batches[count].labels.assign(all.labels.begin() + next, all.labels.begin() + next + n);
      next += n;
    }
    if constexpr (std::is_same_v<Forest, StreamingForest>)
      forest.TestThenTrainBatches(batches.data(), count, first, predictions.data());
    else
    {
      forest.TestThenTrain(batches[0], first, predictions[0]);
      if (completeEachBatch) // --overlap off: the batch's learning before its predictions are scored
        forest.Finish();
    }
    for (std::size_t k = 0; k < count; ++k)
      for (std::size_t i = 0; i < batches[k].Size(); ++i)
        evaluation.Add(predictions[k][i], batches[k].labels[i]);
    first = next;
  }
  if constexpr (!std::is_same_v<Forest, StreamingForest>)
    forest.Finish(); // the last batch's learning (the device forest completes a batch in the next call)
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpuSeconds = ProcessCpuSeconds() - cpuStart;
  return { { "threads", o.threads },
           { "seconds", seconds },
           { "cpu_seconds", cpuSeconds },
           { "instances_per_cpu_second", double(all.Size()) / cpuSeconds },
           { "load_average_before", loadBefore },
           { "instances_per_second", double(all.Size()) / seconds },
           { "accuracy", evaluation.Accuracy() },
           { "kappa", evaluation.Kappa() },
           { "nodes", forest.TotalNodes() },
           { "drifts", forest.DriftsDetected() } };
}
} // namespace

int
main(int argc, char ** argv)
{
  std::string            generator = "randomtree", json, csv;
  std::string            device = "cuda";
  std::size_t            instances = 1000000, csvInstances = 0;
  int                    batchSize = 1000;
  double                 hbmGBps = 3350.0;
  std::vector<int>       threads{ 1, 0 };
  StreamingForestOptions o;
  CLI::App               app{ "Canopy streaming forest benchmark: prequential instances/s (docs/BENCHMARKS.md)" };
  app.add_option("--generator", generator, "Stream spec (canopy stream --generator)")->capture_default_str();
  app.add_option("--instances", instances)->capture_default_str();
  app.add_option("--trees", o.trees)->capture_default_str();
  app.add_option("--batch", batchSize)->capture_default_str();
  app.add_option("--lambda", o.lambda)->capture_default_str();
  app.add_option("--threads", threads, "Thread counts to time (0: all)")->delimiter(',')->capture_default_str();
  app.add_option("--seed", o.seed)->capture_default_str();
  app.add_option("--write-csv", csv, "Write the stream's first --csv-instances as CSV here, then time");
  app.add_option("--csv-instances", csvInstances, "Instances in the CSV (0: --instances)");
  app.add_option("--device", device, "GPU run: cuda, cuda:N, or none")->capture_default_str();
  app.add_option("--hbm-gbps", hbmGBps, "GPU memory bandwidth for the floor, GB/s (H100 SXM: 3350; H200: 4800)")
    ->capture_default_str();
  app.add_option("--json", json, "also write the figures as JSON");
  bool emulate = false;
  app.add_flag("--emulate",
               emulate,
               "Also time the device forest's host emulation (its schedule and host steps without a GPU; "
               "ADWIN on all threads)");
  std::string adwin = "device";
  app
    .add_option("--adwin",
                adwin,
                "Where the device forest's ADWIN step runs: device (a warp per member; only events come "
                "back) or host (threads, over the results copied back each batch)")
    ->check(CLI::IsMember({ "device", "host" }))
    ->capture_default_str();
  int adwinTeam = kStreamAdwinBlockThreads;
  app.add_option("--adwin-team", adwinTeam, "The device ADWIN step's block per member, in threads")
    ->check(CLI::IsMember({ 256, 512, 1024 }))
    ->capture_default_str();
  std::string graphs = "off";
  app
    .add_option("--graphs",
                graphs,
                "CUDA graphs for the device forest's batches: on (a batch's fixed part captured once, relaunched "
                "with one call) or off (queued call by call; the default: the graphs measured no faster)")
    ->check(CLI::IsMember({ "on", "off" }))
    ->capture_default_str();
  std::string cpuWorkers = "same";
  app
    .add_option("--cpu-workers",
                cpuWorkers,
                "How the CPU forest hands its trees to threads each batch: free (one tree at a time to any idle "
                "thread) or same (each tree to the thread that had it last batch, TBB's affinity partitioner)")
    ->check(CLI::IsMember({ "free", "same" }))
    ->capture_default_str();
  int cpuWindow = 0;
  app
    .add_option("--cpu-window",
                cpuWindow,
                "Batches per call of the CPU forest (TestThenTrainBatches: each tree runs through them without "
                "waiting for the others; the same forest and predictions); 0: max(1, 10000 / batch)")
    ->capture_default_str();
  std::string cpuAdwin = "beside";
  app
    .add_option("--cpu-adwin",
                cpuAdwin,
                "Where the CPU forest's members read their results: beside (a second task per member and batch an "
                "idle worker may take while the trees learn) or after (on the member's worker, after its trees)")
    ->check(CLI::IsMember({ "beside", "after" }))
    ->capture_default_str();
  std::string overlap = "on";
  app
    .add_option("--overlap",
                overlap,
                "The device forest's learning of a batch while the caller scores its predictions and reads the "
                "next (on, as TestThenTrain does), or completed in each call (off: Finish after it)")
    ->check(CLI::IsMember({ "on", "off" }))
    ->capture_default_str();
  bool stepTimes = false;
  app.add_flag("--step-times",
               stepTimes,
               "Time each device step of a batch (CUDA events around each; the emulation: host wall time) and "
               "print them per batch beside the host's split");
  CLI11_PARSE(app, argc, argv);
  if (cpuWindow <= 0)
    cpuWindow = std::max(1, 10000 / std::max(batchSize, 1));
  try
  {
    auto          stream = MakeGenerator(generator, o.seed);
    InstanceBatch all;
    stream->NextBatch(all, instances);
    if (!csv.empty())
    {
      auto          again = MakeGenerator(generator, o.seed);
      std::ofstream out(csv);
      WriteCsv(*again, csvInstances ? csvInstances : instances, out);
      if (!out)
        throw std::runtime_error("cannot write " + csv);
    }
    std::cout << "Streaming benchmark " << bench::UtcNow() << ", CPU " << bench::CpuModel() << " ("
              << bench::LogicalCores() << " logical cores)\n"
              << generator << ", " << instances << " instances, " << o.trees << " trees, batch " << batchSize
              << ", lambda " << o.lambda << ", CPU workers " << cpuWorkers << ", CPU window " << cpuWindow
              << " batches per call, CPU ADWIN " << cpuAdwin << "\n";
    nlohmann::json report{
      { "date", bench::UtcNow() },   { "cpu", bench::CpuModel() }, { "cores", bench::LogicalCores() },
      { "generator", generator },    { "instances", instances },   { "trees", o.trees },
      { "batch", batchSize },        { "lambda", o.lambda },       { "adwin", adwin },
      { "adwin_team", adwinTeam },   { "graphs", graphs },         { "step_times", stepTimes },
      { "cpu_workers", cpuWorkers }, { "cpu_window", cpuWindow },  { "cpu_adwin", cpuAdwin }
    };
    std::vector<double> cpuRates;
    for (int t : threads)
    {
      o.threads = t;
      StreamingForest forest(stream->Schema(), o);
      forest.SetSameWorkers(cpuWorkers == "same");
      forest.SetAdwinBeside(cpuAdwin == "beside");
      const auto r = Run(forest, all, stream->Schema(), o, batchSize, cpuWindow);
      cpuRates.push_back(r["instances_per_second"]);
      std::cout << "threads " << (t == 0 ? std::string("all") : std::to_string(t)) << ": "
                << bench::Fixed(r["seconds"], 2) << " s, " << bench::Fixed(r["instances_per_second"], 0)
                << " instances/s (" << bench::Fixed(r["cpu_seconds"], 2) << " CPU s, load "
                << bench::Fixed(r["load_average_before"], 1) << "), accuracy " << bench::Fixed(r["accuracy"], 4)
                << ", nodes " << r["nodes"] << "\n";
      report["runs"].push_back(r);
    }
    for (std::size_t k = 1; k < cpuRates.size(); ++k)
      std::cout << "CPU threads " << (threads[k] == 0 ? std::string("all") : std::to_string(threads[k])) << " / "
                << (threads[0] == 0 ? std::string("all") : std::to_string(threads[0])) << ": "
                << bench::Fixed(cpuRates[k] / cpuRates[0], 1) << "x\n";
    if (emulate)
    {
      o.threads = 0;
      DeviceStreamingForest forest(stream->Schema(), o, DeviceStreamingForest::Executor::HostEmulation);
      forest.SetAdwinOnDevice(adwin == "device");
      forest.SetAdwinTeamThreads(adwinTeam);
      forest.SetStepTimes(stepTimes);
      auto         r = Run(forest, all, stream->Schema(), o, batchSize);
      const auto & tm = forest.Timings();
      // The device-side step is timed only with --step-times (the host threads' step always).
      const bool   timed = adwin == "host" || stepTimes;
      const double adwinSeconds = adwin == "device" ? tm.driftDevice : tm.drift;
      std::cout << "host emulation of the device forest: " << bench::Fixed(r["seconds"], 2) << " s, accuracy "
                << bench::Fixed(r["accuracy"], 4) << ", nodes " << r["nodes"] << "; ADWIN step (" << adwin << ") "
                << (timed ? bench::Fixed(adwinSeconds, 3) + " s (" +
                              bench::Fixed(1e9 * adwinSeconds / double(all.Size() * o.trees), 1) +
                              " ns per member update, wall)"
                          : std::string("not timed (--step-times)"))
                << "\n";
      r["timings"] = {
        { "drift", tm.drift }, { "drift_step", tm.driftDevice }, { "votes", tm.votes }, { "device", tm.device }
      };
      if (stepTimes)
        r["step_times"] = StepTimes(tm, "host wall time of the emulation's loops");
      report["emulation"] = r;
    }
    const std::string deviceText = bench::GpuDeviceText(device);
    if (!deviceText.empty())
    {
      const ResolvedBackend gpu = ResolveBackend(BackendRequest::Parse(deviceText));
      o.threads = 0; // ADWIN's host step
      DeviceStreamingForest forest(stream->Schema(), o, DeviceStreamingForest::Executor::Cuda, gpu.deviceIndex);
      forest.SetAdwinOnDevice(adwin == "device");
      forest.SetAdwinTeamThreads(adwinTeam);
      forest.SetStepTimes(stepTimes);
      forest.SetCudaGraphs(graphs == "on");
      auto         r = Run(forest, all, stream->Schema(), o, batchSize, 1, overlap == "off");
      const auto & tm = forest.Timings();
      r["device"] = gpu.Describe();
      r["overlap"] = overlap == "on";
      r["graphs"] = { { "on", graphs == "on" }, { "captures", tm.graphCaptures }, { "nodes", tm.graphNodes } };
      r["timings"] = { { "upload", tm.upload },     { "votes", tm.votes },
                       { "drift", tm.drift },       { "drift_kernel", tm.driftDevice },
                       { "device", tm.device },     { "splits", tm.splits },
                       { "updates", tm.updates },   { "batches", tm.batches },
                       { "api_calls", tm.apiCalls } };
      // The floor: bytes per instance per tree the kernels read or write at least once in DRAM (route:
      // leaf 4, score 1, weight 4, key 4, index 4; votes written and summed 2 * 8 C, correct 1; CUB's
      // radix sort of 8-byte pairs, 3 passes of read + write plus one key read for its histograms;
      // learn: sorted key, index, weight, score 13), over the bandwidth. Tree statistics and the batch
      // are read through the caches and not counted: it is a floor.
      const int    C = stream->Schema().NumberOfClasses();
      const double bytes = 17.0 + 16.0 * C + 1.0 + 3 * 16.0 + 4.0 + 13.0;
      const double floorSeconds = bytes * double(all.Size()) * double(o.trees) / (hbmGBps * 1e9);
      r["floor"] = { { "bytes_per_instance_per_tree", bytes },
                     { "hbm_gb_per_s", hbmGBps },
                     { "seconds", floorSeconds } };
      const double rate = r["instances_per_second"];
      std::cout << "GPU " << gpu.Describe() << ": " << bench::Fixed(r["seconds"], 3) << " s, " << bench::Fixed(rate, 0)
                << " instances/s, accuracy " << bench::Fixed(r["accuracy"], 4) << ", nodes " << r["nodes"]
                << "\n  host time: staging " << bench::Fixed(tm.upload, 3)
                << " s, queueing and route and vote (until back) " << bench::Fixed(tm.votes, 3) << " s, "
                << (adwin == "device" ? std::string("ADWIN on the device: ") +
                                          (stepTimes ? "step " + bench::Fixed(tm.driftDevice, 3) + " s (CUDA events), "
                                                     : std::string()) +
                                          "waiting for its events "
                                      : std::string("ADWIN on host threads (while the device learns) "))
                << bench::Fixed(tm.drift, 3) << " s, rest of learn and split checks " << bench::Fixed(tm.device, 3)
                << " s, splits and resets " << bench::Fixed(tm.splits, 3) << " s, updates "
                << bench::Fixed(tm.updates, 3) << " s (" << tm.batches << " batches, "
                << bench::Fixed(double(tm.apiCalls) / double(std::max<std::int64_t>(tm.batches, 1)), 1)
                << " CUDA runtime calls per batch; graphs " << graphs;
      if (graphs == "on")
        std::cout << ": " << tm.graphCaptures << " captures, " << tm.graphNodes << " nodes in the last";
      std::cout << ")\n";
      if (stepTimes)
        r["step_times"] = StepTimes(tm, "CUDA events");
      std::cout << "  floor: " << bench::Fixed(bytes, 0) << " bytes per instance per tree / "
                << bench::Fixed(hbmGBps, 0) << " GB/s = " << bench::Fixed(floorSeconds * 1e3, 2)
                << " ms for the stream (" << bench::Fixed(r["seconds"].get<double>() / floorSeconds, 1)
                << "x the floor)\n";
      for (std::size_t k = 0; k < threads.size(); ++k)
      {
        const std::string name = threads[k] == 0 ? "all threads" : std::to_string(threads[k]) + " thread(s)";
        std::cout << "  GPU / CPU " << name << ": " << bench::Fixed(rate / cpuRates[k], 1) << "x\n";
        r["ratio_to_cpu_threads_" + std::to_string(threads[k])] = rate / cpuRates[k];
      }
      report["gpu"] = r;
    }
    if (!json.empty())
      std::ofstream(json) << report.dump(2) << "\n";
  }
  catch (const std::exception & e)
  {
    std::cerr << "canopyBenchmarkStreaming: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
