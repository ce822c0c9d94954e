// canopy stream: prequential (test-then-train) learning of an adaptive random forest of Hoeffding
// trees on a stream read from CSV/ARFF (a file or stdin) or generated (Marron et al.; ARF).
#include "canopy/AtomicFile.h"
#include "canopy/Device.h"
#include "canopy/Errors.h"
#include "canopyCommands.h"
#include "canopyCurvePlot.h"
#include "canopyDeviceStreamingForest.h"
#include "canopyPrequentialEvaluation.h"
#include "canopyProgress.h"
#include "canopyStreamGenerators.h"
#include "canopyStreamReaders.h"
#include "canopyStreamingForest.h"
#include "canopyStreamingModelFile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>

namespace canopy::app
{
namespace
{
using namespace canopy::streaming;

struct StreamArguments
{
  std::string input, generator, classAttribute, classes,
    device = "auto", curve, report, leaf = "nba", criterion = "infogain", modelIn, modelOut, plot, plotSize = "800x400";
  bool                   arff = false, noDrift = false, noBackground = false, moaFlatGaussians = false, quiet = false;
  std::int64_t           instances = 0;
  int                    batch = 1000, window = 1000;
  StreamingForestOptions forest;
};

std::vector<std::string>
SplitList(const std::string & text)
{
  std::vector<std::string> items;
  std::istringstream       in(text);
  std::string              item;
  while (std::getline(in, item, ','))
    items.push_back(item);
  return items;
}

/** "WxH" (each 200 to 10000) into plot options; a one-line error naming --plot-size otherwise. */
CurvePlotOptions
ParsePlotSize(const std::string & text)
{
  CurvePlotOptions o;
  char             x = 0, rest = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &o.width, &x, &o.height, &rest) != 3 || (x != 'x' && x != 'X'))
    CANOPY_THROW("--plot-size: '" << text << "' is not WIDTHxHEIGHT (e.g. 800x400)");
  if (o.width < 200 || o.width > 10000 || o.height < 200 || o.height > 10000)
    CANOPY_THROW("--plot-size: " << text << ": width and height must each be 200 to 10000 pixels");
  o.yLabel = "window accuracy";
  return o;
}

void
RunStream(StreamArguments & a)
{
  RunReport  report("stream");
  const auto start = std::chrono::steady_clock::now();
  if (a.input.empty() == a.generator.empty())
    CANOPY_THROW("give exactly one of --input FILE|- and --generator SPEC");
  CurvePlotOptions plot = ParsePlotSize(a.plotSize); // checked before the stream is read
  if (a.leaf != "mc" && a.leaf != "nb" && a.leaf != "nba")
    CANOPY_THROW("--leaf: '" << a.leaf << "' is not mc, nb or nba");
  if (a.criterion != "infogain" && a.criterion != "gini")
    CANOPY_THROW("--criterion: '" << a.criterion << "' is not infogain or gini");
  a.forest.tree.leafPrediction = a.leaf == "mc"   ? LeafPrediction::MajorityClass
                                 : a.leaf == "nb" ? LeafPrediction::NaiveBayes
                                                  : LeafPrediction::NaiveBayesAdaptive;
  a.forest.tree.criterion = a.criterion == "gini" ? SplitCriterion::Gini : SplitCriterion::InfoGain;
  a.forest.driftDetection = !a.noDrift;
  a.forest.backgroundTrees = !a.noBackground;
  a.forest.tree.skipFlatGaussians = !a.moaFlatGaussians;
  // A saved forest brings its options (all but the threads) and the stream position it reached.
  std::unique_ptr<StreamingModel> model;
  if (!a.modelIn.empty())
  {
    model = std::make_unique<StreamingModel>(LoadStreamingModel(a.modelIn));
    const int threads = a.forest.threads;
    a.forest = model->options;
    a.forest.threads = threads;
  }

  std::unique_ptr<InstanceStream> stream;
  std::int64_t                    limit = a.instances;
  if (!a.generator.empty())
  {
    stream = MakeGenerator(a.generator, a.forest.seed);
    if (limit == 0)
      limit = 100000; // generators never end
  }
  else
  {
    StreamReaderOptions o;
    o.classAttribute = a.classAttribute;
    if (!a.classes.empty())
      o.classes = SplitList(a.classes);
    else if (model)
      o.classes = model->schema.classes; // in the model's order, whatever order the file shows them in
    stream = OpenInstanceStream(a.input, o, a.arff);
    if (limit == 0)
      limit = std::numeric_limits<std::int64_t>::max();
  }
  const StreamSchema & schema = stream->Schema();
  std::uint64_t        index = 0; // the stream position: the next instance's index (keys the Poisson draws)
  if (model)
  {
    RequireSameSchema(
      model->schema, schema, "--model-in " + a.modelIn + ": " + (a.input.empty() ? a.generator : a.input));
    index = model->instances;
    if (!a.generator.empty()) // a generator continues where the model stopped: skip what it learnt
    {
      InstanceBatch skipped;
      for (std::uint64_t k = 0, n = 1; k < index && n > 0; k += n)
        n = stream->NextBatch(skipped, std::size_t(std::min<std::uint64_t>(100000, index - k)));
    }
  }
  const std::uint64_t firstIndex = index;
  // auto: the GPU when usable, else the CPU with one warning (ResolveBackend); cuda without one: an error.
  const ResolvedBackend backend = ResolveBackend(BackendRequest::Parse(a.device));
  // The same learner on either: the CUDA forest learns the CPU forest's trees (DeviceStreamingForest).
  std::unique_ptr<StreamingForest>       cpuForest;
  std::unique_ptr<DeviceStreamingForest> gpuForest;
  if (backend.useCuda)
    gpuForest = std::make_unique<DeviceStreamingForest>(
      schema, a.forest, DeviceStreamingForest::Executor::Cuda, backend.deviceIndex);
  else
    cpuForest = std::make_unique<StreamingForest>(schema, a.forest);
  if (model)
    gpuForest ? gpuForest->Restore(model->state) : cpuForest->Restore(model->state);
  PrequentialEvaluator evaluation(schema.NumberOfClasses(), a.window);

  // The CPU forest takes up to ~10,000 instances of batches per call (TestThenTrainBatches: the same
  // forest and predictions, without a barrier between its trees per batch); the device forest one batch.
  const std::size_t window = gpuForest ? 1 : std::size_t(std::max(1, 10000 / std::max(1, a.batch)));
  std::vector<InstanceBatch>             batches(window);
  std::vector<std::vector<std::int32_t>> predictions(window);
  std::vector<std::int64_t>              driftsAfter(window);
  double                                 readSeconds = 0.0, learnSeconds = 0.0;
  ProgressBar               bar("stream", a.quiet || !a.input.empty());
  const std::clock_t        cpuStart = std::clock(); // all threads' CPU time, for shared machines
  std::int64_t              driftsSoFar = gpuForest ? gpuForest->DriftsDetected() : cpuForest->DriftsDetected();
  std::uint64_t             gpuBatchEnd = index; // the device forest's last batch's end (its drifts come later)
  auto                      markDrifts = [&](std::int64_t driftsAfterBatch, std::uint64_t batchEnd)
  {
    if (driftsAfterBatch > driftsSoFar) // a tree was replaced after this batch: a marker on the plot
      plot.markers.push_back(double(batchEnd - firstIndex));
    driftsSoFar = driftsAfterBatch;
  };
  for (bool more = true; more && std::int64_t(index - firstIndex) < limit;)
  {
    const auto    t0 = std::chrono::steady_clock::now();
    std::size_t   count = 0;
    std::uint64_t read = index;
    for (; count < window && std::int64_t(read - firstIndex) < limit; ++count)
    {
      const std::size_t n = stream->NextBatch(
        batches[count], std::size_t(std::min<std::int64_t>(a.batch, limit - std::int64_t(read - firstIndex))));
      if (n == 0)
      {
        more = false;
        break;
      }
      read += n;
    }
    const auto t1 = std::chrono::steady_clock::now();
    if (count == 0)
      break;
    if (gpuForest)
    {
      // The previous batch's learning completes here (DriftsDetected: its drifts, a marker at its end);
      // this batch's goes on on the device while the loop scores its predictions and reads the next.
      markDrifts(gpuForest->DriftsDetected(), gpuBatchEnd);
      gpuForest->TestThenTrain(batches[0], index, predictions[0]);
      gpuBatchEnd = index + batches[0].Size();
      driftsAfter[0] = -1;
    }
    else
      cpuForest->TestThenTrainBatches(batches.data(), count, index, predictions.data(), driftsAfter.data());
    learnSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    readSeconds += std::chrono::duration<double>(t1 - t0).count();
    for (std::size_t k = 0; k < count; ++k)
    {
      for (std::size_t i = 0; i < batches[k].Size(); ++i)
        evaluation.Add(predictions[k][i], batches[k].labels[i]);
      index += batches[k].Size();
      if (driftsAfter[k] >= 0)
        markDrifts(driftsAfter[k], index);
    }
    if (a.input.empty())
      bar.Update(double(index - firstIndex) / double(limit));
  }
  if (gpuForest) // the last batch's learning
  {
    const auto t = std::chrono::steady_clock::now();
    markDrifts(gpuForest->DriftsDetected(), gpuBatchEnd);
    learnSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }
  bar.Finish();
  if (index == firstIndex)
    CANOPY_THROW("--input " << a.input << ": the stream has no instances");
  const std::uint64_t learnt = index - firstIndex;
  evaluation.Finish();

  const double total = SecondsSince(start);
  report["cpu_seconds"] = double(std::clock() - cpuStart) / CLOCKS_PER_SEC;
  report["source"] = a.input.empty() ? "generator " + a.generator : a.input;
  report["device"] = backend.Describe();
  report["instances"] = learnt;
  report["first_instance"] = firstIndex;
  if (model)
    report["model_in"] = a.modelIn;
  if (!a.modelOut.empty())
    report["model_out"] = a.modelOut;
  report["attributes"] = schema.NumberOfAttributes();
  report["classes"] = schema.NumberOfClasses();
  report["accuracy"] = evaluation.Accuracy();
  report["kappa"] = evaluation.Kappa();
  report["instances_per_second"] = learnSeconds > 0 ? double(learnt) / learnSeconds : 0.0;
  report["seconds"] = { { "total", total }, { "read", readSeconds }, { "test_then_train", learnSeconds } };
  report["parameters"] = { { "trees", a.forest.trees },
                           { "batch", a.batch },
                           { "lambda", a.forest.lambda },
                           { "subspace", a.forest.subspaceSize },
                           { "grace_period", a.forest.tree.gracePeriod },
                           { "split_confidence", a.forest.tree.splitConfidence },
                           { "tie_threshold", a.forest.tree.tieThreshold },
                           { "leaf", a.leaf },
                           { "criterion", a.criterion },
                           { "skip_flat_gaussians", a.forest.tree.skipFlatGaussians },
                           { "drift_detection", a.forest.driftDetection },
                           { "background_trees", a.forest.backgroundTrees },
                           { "seed", a.forest.seed },
                           { "threads", a.forest.threads } };
  const std::int64_t drifts = gpuForest ? gpuForest->DriftsDetected() : cpuForest->DriftsDetected();
  report["drifts"] = drifts;
  report["warnings"] = gpuForest ? gpuForest->WarningsDetected() : cpuForest->WarningsDetected();
  report["nodes"] = gpuForest ? gpuForest->TotalNodes() : cpuForest->TotalNodes();
  if (!a.modelOut.empty())
  {
    StreamingModel out{ schema, a.forest, index, report["source"].get<std::string>(), {} };
    out.state = gpuForest ? gpuForest->State() : cpuForest->State();
    if (model && !model->source.empty() && model->source != out.source)
      out.source = model->source + " + " + out.source;
    SaveStreamingModel(out, a.modelOut);
  }
  if (!a.curve.empty())
  {
    WriteFileAtomically(a.curve,
                        [&](std::ostream & out)
                        {
                          out << "instances,window_accuracy,accuracy,kappa\n" << std::setprecision(6);
                          for (const auto & p : evaluation.Curve())
                            out << p.instances << ',' << p.window << ',' << p.accuracy << ',' << p.kappa << '\n';
                        });
  }
  if (!a.plot.empty())
  {
    std::vector<double> x, y;
    for (const auto & p : evaluation.Curve())
      x.push_back(double(p.instances)), y.push_back(p.window);
    WriteCurvePlot(a.plot, x, y, plot);
    report["plot"] = a.plot;
  }
  if (!a.report.empty())
    report.Write(a.report);
  if (!a.quiet)
    std::cout << "instances " << learnt << "  accuracy " << std::fixed << std::setprecision(4) << evaluation.Accuracy()
              << "  kappa " << evaluation.Kappa() << "  " << std::setprecision(0)
              << (learnSeconds > 0 ? double(learnt) / learnSeconds : 0.0) << " instances/s  drifts " << drifts << " ("
              << backend.Describe() << ")\n";
}
} // namespace

void
RegisterStreamCommand(CLI::App & app)
{
  auto   a = std::make_shared<StreamArguments>();
  auto & f = a->forest;
  auto * c = app.add_subcommand("stream", "Prequential learning of an adaptive random forest of Hoeffding trees");
  c->add_option("--input", a->input, "CSV or ARFF stream (ARFF by the .arff extension; - for stdin)");
  c->add_option(
    "--generator", a->generator, "Synthetic stream: randomtree, sea, hyperplane, rbf, led or agrawal[:key=value,...]");
  c->add_flag("--arff", a->arff, "Read --input as ARFF whatever its name (e.g. stdin)");
  c->add_option("--class", a->classAttribute, "Class attribute or column (default: the last)");
  c->add_option(
    "--classes", a->classes, "CSV: the class values, comma-separated (default: those in the first 1000 rows)");
  c->add_option("--instances", a->instances, "Stop after this many (0: the whole input; generators: 100000)")
    ->capture_default_str()
    ->check(CLI::NonNegativeNumber);
  c->add_option("--trees", f.trees, "Trees")->capture_default_str()->check(CLI::Range(1, 100000));
  c->add_option("--batch", a->batch, "Instances tested, then learnt, together")
    ->capture_default_str()
    ->check(CLI::Range(1, 10000000));
  c->add_option("--lambda", f.lambda, "Poisson rate of online bagging")
    ->capture_default_str()
    ->check(CLI::Range(0.01, 30.0));
  c->add_option("--subspace", f.subspaceSize, "Attributes per leaf (-1: round(sqrt(d)), 0: all)")
    ->capture_default_str()
    ->check(CLI::Range(-1, 1000000));
  c->add_option("--grace-period", f.tree.gracePeriod, "Weight a leaf sees between split attempts")
    ->capture_default_str()
    ->check(CLI::Range(1, 1000000000));
  c->add_option("--split-confidence", f.tree.splitConfidence, "delta of the Hoeffding bound")
    ->capture_default_str()
    ->check(CLI::Range(1e-300, 0.999));
  c->add_option("--tie-threshold", f.tree.tieThreshold, "tau")->capture_default_str()->check(CLI::Range(0.0, 1.0));
  c->add_option("--leaf", a->leaf, "Leaf prediction: mc (majority class), nb (naive Bayes), nba (adaptive)")
    ->capture_default_str();
  c->add_option("--criterion", a->criterion, "infogain or gini")->capture_default_str();
  c->add_flag("--moa-flat-gaussians", a->moaFlatGaussians,
              "Naive Bayes: a class's Gaussian without spread gives 0 away from its mean (MOA), not no factor (river)");
  c->add_flag("--no-drift-detection", a->noDrift, "No ADWIN: trees are never replaced");
  c->add_flag("--no-background-trees", a->noBackground, "A drifting tree is replaced by a fresh one");
  c->add_option("--seed", f.seed, "Seed of the forest (and of a generator without seed=)")->capture_default_str();
  c->add_option("--threads", f.threads, "CPU threads of the CPU forest (0: all)")
    ->capture_default_str()
    ->check(CLI::Range(0, 4096));
  c->add_option("--device", a->device, "auto (the GPU when usable), cpu, cuda or cuda:N")->capture_default_str();
  c->add_option("--curve", a->curve, "Write the learning curve (CSV: accuracy per window) here");
  c->add_option("--plot", a->plot, "Draw the learning curve (window accuracy, drifts in red) as a PNG here");
  c->add_option("--plot-size", a->plotSize, "--plot's WIDTHxHEIGHT in pixels")->capture_default_str();
  c->add_option("--window", a->window, "Instances per curve window")
    ->capture_default_str()
    ->check(CLI::Range(1, 1000000000));
  c->add_option("--report", a->report, "Write the JSON report here");
  c->add_option("--model-out", a->modelOut, "Save the forest here at the end (JSON; docs/MODEL_FORMAT.md)");
  c->add_option("--model-in",
                a->modelIn,
                "Resume from a saved forest: its options and stream position are used (a generator skips the "
                "instances it learnt; a file is the stream's continuation)");
  c->add_flag("--quiet", a->quiet, "No progress or summary");
  c->callback([a] { RunStream(*a); });
}
} // namespace canopy::app
