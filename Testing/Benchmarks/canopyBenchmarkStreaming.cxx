// canopyBenchmarkStreaming: prequential (test-then-train) throughput of the adaptive random forest of
// Hoeffding trees on the paper's RandomTree stream (Marron et al., Table 4: 1M instances, 100 trees),
// on the CPU with 1 thread and with all threads. The stream is generated into memory first, so the
// timing covers the forest only. --write-csv writes the same stream for a peer (scripts/bench-streaming-peer).
// A program, not a test (docs/BENCHMARKS.md).
#include "canopyBenchmarkUtil.h"
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

namespace
{
using namespace canopy;
using namespace canopy::streaming;

/** CPU seconds this process has used (all threads): on a shared machine the wall time includes waiting
 * for the cores, this does not. */
double
ProcessCpuSeconds()
{
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double
LoadAverage()
{
  double load[1] = { 0.0 };
  return getloadavg(load, 1) == 1 ? load[0] : -1.0;
}

nlohmann::json
Run(const InstanceBatch & all, const StreamSchema & schema, StreamingForestOptions o, int batchSize)
{
  StreamingForest           forest(schema, o);
  PrequentialEvaluator      evaluation(schema.NumberOfClasses(), 10000);
  InstanceBatch             batch;
  std::vector<std::int32_t> predictions;
  batch.attributes = all.attributes;
  const std::size_t d = std::size_t(all.attributes);
  const double      loadBefore = LoadAverage();
  const double      cpuStart = ProcessCpuSeconds();
  const auto        start = std::chrono::steady_clock::now();
  for (std::size_t first = 0; first < all.Size(); first += batchSize)
  {
    const std::size_t n = std::min<std::size_t>(batchSize, all.Size() - first);
    batch.values.assign(all.values.begin() + first * d, all.values.begin() + (first + n) * d);
    batch.labels.assign(all.labels.begin() + first, all.labels.begin() + first + n);
    forest.TestThenTrain(batch, first, predictions);
    for (std::size_t i = 0; i < n; ++i)
      evaluation.Add(predictions[i], batch.labels[i]);
  }
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
  std::size_t            instances = 1000000, csvInstances = 0;
  int                    batchSize = 1000;
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
  app.add_option("--json", json, "also write the figures as JSON");
  CLI11_PARSE(app, argc, argv);
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
              << ", lambda " << o.lambda << "\n";
    nlohmann::json report{
      { "date", bench::UtcNow() }, { "cpu", bench::CpuModel() }, { "cores", bench::LogicalCores() },
      { "generator", generator },  { "instances", instances },   { "trees", o.trees },
      { "batch", batchSize },      { "lambda", o.lambda }
    };
    for (int t : threads)
    {
      o.threads = t;
      const auto r = Run(all, stream->Schema(), o, batchSize);
      std::cout << "threads " << (t == 0 ? std::string("all") : std::to_string(t)) << ": "
                << bench::Fixed(r["seconds"], 2) << " s, " << bench::Fixed(r["instances_per_second"], 0)
                << " instances/s (" << bench::Fixed(r["cpu_seconds"], 2) << " CPU s, load "
                << bench::Fixed(r["load_average_before"], 1) << "), accuracy " << bench::Fixed(r["accuracy"], 4)
                << ", nodes " << r["nodes"] << "\n";
      report["runs"].push_back(r);
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
