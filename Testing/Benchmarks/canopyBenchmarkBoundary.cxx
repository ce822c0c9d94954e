// canopyBenchmarkBoundary: boundary detection with a shape model (issue 10; Birkbeck §4.3, Table 4):
// all vertices x displacements of the finest level (default 2,402 x 32) scored by a boundary PBT on
// the CPU (1 thread, all threads) and the GPU (kernel only: frames, hypotheses and scores resident;
// and host to host through PBTBoundaryScorer), then a whole coarse-to-fine refinement (602 / 1,202 /
// 2,402 vertices, fixed iteration counts) host to host on each. Workload: a 128^3 1 mm phantom of an
// ellipsoid (radii 40, 30, 25 mm, a smooth step of 80 and noise of sd 25), the template hierarchy of its surface, three
// axis-scaling modes, boundary PBTs (depth 6, 40 weak learners per node) trained on it on the CPU.
// A program, not a test (docs/BENCHMARKS.md).
#include "BoundaryTestPhantoms.h"
#include "canopy/PBTBoundaryVariants.h"
#include "canopy/PBTEvaluation.h" // PBTNodesInPreorder: the node order the engine uploads
#include "canopy/PBTHypotheses.h"
#include "canopyBenchmarkFloor.h"
#include "canopyBenchmarkUtil.h"
#include "canopyBoundaryRefinement.h"
#include "canopyConfigure.h"
#include "canopyPBTEvaluator.h" // MakeRandomPBTModel
#include "canopyShapeTemplate.h"
#include "canopySteerableFeatureBank.h"

#if CANOPY_USE_CUDA
#include "canopy/cuda/DeviceBuffer.h"
#endif

#include "itkMultiThreaderBase.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace
{
using namespace canopy;
using bench::Fixed;
using Clock = std::chrono::steady_clock;

double
SecondsOf(const std::function<void()> & body, int repeats)
{
  return bench::MedianHostMs(body, repeats, repeats, 1e9) / 1000.0;
}

/** The template hierarchy of the phantom's surface (centred) and three orthonormal axis-scaling modes. */
ShapeModel
PhantomModel(const canopy::testing::Ellipsoid & e, int size, const std::vector<int> & levels)
{
  ShapeModel model;
  model.structure = "ellipsoid";
  model.label = 1;
  model.levels =
    BuildTemplateHierarchy(TrainingSurface(canopy::testing::MakeEllipsoidLabels(e, 1, size), 1, "phantom"), levels);
  const Eigen::Vector3d centroid = model.Finest().mean.rowwise().mean();
  for (auto & level : model.levels)
    level.mean.colwise() -= centroid;
  const Eigen::Matrix3Xd & mean = model.Finest().mean;
  Eigen::MatrixXd          modes = Eigen::MatrixXd::Zero(mean.size(), 3);
  for (Eigen::Index i = 0; i < mean.cols(); ++i)
    for (int a = 0; a < 3; ++a)
      modes(3 * i + a, a) = mean(a, i);
  model.variances.resize(3);
  for (int a = 0; a < 3; ++a)
  {
    model.variances(a) = std::pow(0.05 * modes.col(a).norm(), 2); // 3 sigma = a 15% stretch
    modes.col(a).normalize();
  }
  model.modes = modes;
  model.spectrum = model.variances;
  model.UpdateLevelModes();
  model.Validate("benchmark model");
  return model;
}
/** What teams of T lanes per hypothesis (PBTBoundaryVariants.h) should change, replayed on the CPU over
 * up to 256 vertices' hypotheses (consecutive groups of `perVertex`, as listed). A warp holds 32 / T
 * hypotheses; a node of n learners takes ceil(n / T) rounds, round k giving lane r of the team learner
 * k * T + r; the warp's lanes run their r-th rounds together (a lower bound on divergence: lanes are
 * taken to stay in step) until its longest hypothesis is done. Counted per 32 hypotheses: learner
 * rounds (issue slots of the learner loop) with the share of busy lanes, and L1 wavefronts (distinct
 * 128-byte lines per load instruction over the warp's busy lanes) of the 8 corner gathers and of the
 * learner records: unpacked, five 4-byte learner loads, five 1-byte feature loads and the table
 * entry; packed, one 16-byte record and the table entry. */
nlohmann::json
TeamReplay(const PBTView &                         tree,
           const BoundaryFeatureFunc &             func,
           const std::vector<BoundaryHypothesis> & list,
           int                                     perVertex)
{
  struct Expanded
  {
    int first, count; // the node's learners
  };
  const std::int64_t count = std::min<std::int64_t>(std::int64_t(list.size()), 256 * std::int64_t(perVertex));
  std::vector<std::vector<Expanded>> expanded(static_cast<std::size_t>(count));
  std::vector<SteerablePose>         poses(static_cast<std::size_t>(count));
  std::int64_t                       learners = 0;
  for (std::int64_t h = 0; h < count; ++h)
  {
    poses[std::size_t(h)] = func.Prepare(list[std::size_t(h)]);
    auto responseOf = [&](int f) { return func.Response(poses[std::size_t(h)], f); };
    PbtPosteriorStackWith<kPBTHypothesisStack>(
      tree,
      [&](const PBTNodeFlat & node)
      {
        learners += node.numLearners;
        expanded[std::size_t(h)].push_back({ node.firstLearner, node.numLearners });
        return StrongClassifierProbability(tree, node, responseOf);
      });
  }
  nlohmann::json out = nlohmann::json::array();
  std::cout << "team replay (" << count << " hypotheses, "
            << Fixed(double(learners) / std::max<std::int64_t>(count, 1), 1)
            << " learners each), per 32 hypotheses: learner rounds (busy lanes), gather wavefronts, record "
               "wavefronts unpacked / packed\n";
  const double              per32 = 32.0 / double(std::max<std::int64_t>(count, 1));
  std::vector<std::int64_t> lines;
  auto                      distinct = [&lines]
  {
    std::sort(lines.begin(), lines.end());
    const auto n = std::unique(lines.begin(), lines.end()) - lines.begin();
    lines.clear();
    return std::int64_t(n);
  };
  for (int team : { 1, 2, 4, 8, 16 })
  {
    const int    perWarp = 32 / team;
    std::int64_t rounds = 0, gathers = 0, unpacked = 0, packed = 0;
    for (std::int64_t first = 0; first < count; first += perWarp)
    {
      // Each hypothesis' rounds: (first learner of the round, learners in it).
      std::vector<std::vector<Expanded>> warp;
      std::size_t                        most = 0;
      for (std::int64_t h = first; h < std::min(count, first + perWarp); ++h)
      {
        std::vector<Expanded> r;
        for (const Expanded & node : expanded[std::size_t(h)])
          for (int k = 0; k < node.count; k += team)
            r.push_back({ node.first + k, std::min(team, node.count - k) });
        most = std::max(most, r.size());
        warp.push_back(std::move(r));
      }
      rounds += std::int64_t(most);
      for (std::size_t r = 0; r < most; ++r)
      {
        // The busy lanes of round r: (hypothesis in the warp, learner).
        std::vector<std::pair<std::size_t, int>> busy;
        for (std::size_t w = 0; w < warp.size(); ++w)
          if (r < warp[w].size())
            for (int lane = 0; lane < warp[w][r].count; ++lane)
              busy.push_back({ w, warp[w][r].first + lane });
        std::vector<SteerableCell> cells;
        std::vector<int>           levels;
        for (const auto & [w, l] : busy)
        {
          const SteerableFeature & f = func.features[tree.learners[l].feature];
          float                    p[3];
          SteerableSamplePoint(poses[std::size_t(first) + w], func.grid, f, p);
          cells.push_back(SteerableSampleCell(func.pyramid.levels[f.level], p));
          levels.push_back(f.level);
        }
        for (int corner = 0; corner < 8; ++corner)
        {
          for (std::size_t k = 0; k < cells.size(); ++k)
          {
            const SteerableCell & c = cells[k];
            const std::int64_t    index =
              c.index + ((corner & 1) ? c.sx : 0) + ((corner & 2) ? c.sy : 0) + ((corner & 4) ? c.sz : 0);
            lines.push_back((std::int64_t(levels[k]) << 56) | (index * std::int64_t(sizeof(SteerableVoxel)) / 128));
          }
          gathers += distinct();
        }
        auto recordLines = [&](auto lineOf)
        {
          for (const auto & [w, l] : busy)
            lines.push_back(lineOf(w, l));
          return distinct();
        };
        const std::int64_t learnerLines = recordLines(
          [](std::size_t, int l) { return std::int64_t(l) * std::int64_t(sizeof(PBTWeakLearnerFlat)) / 128; });
        const std::int64_t featureLines = recordLines(
          [&](std::size_t, int l)
          { return std::int64_t(tree.learners[l].feature) * std::int64_t(sizeof(SteerableFeature)) / 128; });
        const std::int64_t tableLines = recordLines(
          [&](std::size_t w, int l)
          {
            const PBTWeakLearnerFlat & learner = tree.learners[l];
            const float                response = func.Response(poses[std::size_t(first) + w], learner.feature);
            return std::int64_t(learner.tableOffset + WeakLearnerBin(learner, response)) * 4 / 128;
          });
        unpacked += 5 * learnerLines + 5 * featureLines + tableLines;
        packed += recordLines([](std::size_t, int l) { return std::int64_t(l) * 16 / 128; }) + tableLines;
      }
    }
    std::cout << "  T=" << team << ": " << Fixed(rounds * per32, 0) << " rounds ("
              << Fixed(100.0 * double(learners) / (double(rounds) * 32.0), 1) << "% busy), "
              << Fixed(gathers * per32, 0) << " gather, " << Fixed(unpacked * per32, 0) << " / "
              << Fixed(packed * per32, 0) << " record wavefronts\n";
    out.push_back({ { "team", team },
                    { "rounds_per_32_hypotheses", rounds * per32 },
                    { "busy_lane_share", double(learners) / (double(rounds) * 32.0) },
                    { "gather_wavefronts_per_32_hypotheses", gathers * per32 },
                    { "record_wavefronts_unpacked_per_32_hypotheses", unpacked * per32 },
                    { "record_wavefronts_packed_per_32_hypotheses", packed * per32 } });
  }
  return out;
}

/** |a - b|; 0 when both are NaN, infinite when one is. */
double
ScoreDistance(float a, float b)
{
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b) ? 0.0 : INFINITY;
  return std::fabs(double(a) - double(b));
}

#if CANOPY_USE_CUDA
/** Times the boundary kernel variants of `list` one after another on the same resident data (CUDA
 * events around each launch: median and mean of `repeats`, after two warm-up launches), the baseline
 * again at the end (drift), and checks every variant's scores against the baseline kernel's (bit for
 * bit) and the CPU reference's. Prints a table; returns it as JSON. */
nlohmann::json
TimeVariants(const std::string &                      list,
             const PBTView &                          tree,
             const BoundaryFeatureFunc &              func,
             const std::vector<PBTSteerableLearner> & packedHost,
             const BoundaryHypothesis *               dHypotheses,
             const PBTView &                          hostTree,
             const BoundaryFeatureFunc &              hostFunc,
             const std::vector<BoundaryHypothesis> &  hostList,
             int                                      cores,
             int                                      repeats,
             cudaStream_t                             stream)
{
  std::vector<BoundaryKernelVariant> variants;
  if (list == "all")
    variants = BuiltBoundaryKernelVariants();
  else
  {
    std::stringstream in(list);
    for (std::string name; std::getline(in, name, ',');)
      variants.push_back(BoundaryKernelVariant::Parse(name));
  }
  variants.push_back(BoundaryKernelVariant{}); // the baseline again: clock drift over the run
  const std::int64_t count = std::int64_t(hostList.size());
  std::vector<float> reference(hostList.size()), baseline, scores(hostList.size());
  EvaluatePBTAtHypothesesCPU(hostTree, hostFunc, hostList.data(), count, reference.data(), cores);
  cuda::DeviceBuffer<PBTSteerableLearner> dPacked(std::max<std::size_t>(packedHost.size(), 1), "packed learners");
  if (!packedHost.empty())
    dPacked.CopyFromHost(packedHost.data(), packedHost.size(), stream);
  cuda::DeviceBuffer<float> dOut(hostList.size(), "variant scores");
  cudaEvent_t               start, stop;
  CANOPY_CUDA_CHECK(cudaEventCreate(&start));
  CANOPY_CUDA_CHECK(cudaEventCreate(&stop));
  // The baseline kernel's scores: what every variant must equal bit for bit.
  cuda::LaunchBoundaryPBTVariant(BoundaryKernelVariant{}, tree, func, nullptr, dHypotheses, count, dOut.data(), stream);
  baseline.resize(hostList.size());
  dOut.CopyToHost(baseline.data(), baseline.size(), stream);
  CANOPY_CUDA_CHECK(cudaStreamSynchronize(stream));
  nlohmann::json out = nlohmann::json::array();
  std::cout << "boundary kernel variants (" << count << " hypotheses; CUDA events, " << repeats
            << " launches each; 'differing' = scores not bit-equal to the baseline kernel's):\n"
            << "  variant      median ms   mean ms  regs  local B  blocks/SM  differing  max|d| baseline  max|d| CPU\n";
  for (const auto & v : variants)
  {
    if (v.packed && packedHost.empty())
    {
      std::cout << "  " << v.Name() << ": skipped (the model's learners do not pack)\n";
      continue;
    }
    auto launch = [&]
    { cuda::LaunchBoundaryPBTVariant(v, tree, func, dPacked.data(), dHypotheses, count, dOut.data(), stream); };
    launch();
    launch();
    std::vector<float> ms;
    for (int r = 0; r < repeats; ++r)
    {
      CANOPY_CUDA_CHECK(cudaEventRecord(start, stream));
      launch();
      CANOPY_CUDA_CHECK(cudaEventRecord(stop, stream));
      CANOPY_CUDA_CHECK(cudaEventSynchronize(stop));
      float t = 0;
      CANOPY_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
      ms.push_back(t);
    }
    dOut.CopyToHost(scores.data(), scores.size(), stream);
    CANOPY_CUDA_CHECK(cudaStreamSynchronize(stream));
    std::int64_t differing = 0;
    double       toBaseline = 0, toCpu = 0;
    for (std::size_t i = 0; i < scores.size(); ++i)
    {
      if (std::memcmp(&scores[i], &baseline[i], sizeof(float)) != 0)
        ++differing;
      toBaseline = std::max(toBaseline, ScoreDistance(scores[i], baseline[i]));
      toCpu = std::max(toCpu, ScoreDistance(scores[i], reference[i]));
    }
    std::vector<float> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    double       mean = 0;
    for (float t : ms)
      mean += t / ms.size();
    const cuda::KernelResources r = cuda::BoundaryVariantResources(v);
    std::cout << "  " << std::left << std::setw(12) << v.Name() << std::right << std::setw(10) << Fixed(median, 3)
              << std::setw(10) << Fixed(mean, 3) << std::setw(6) << r.registers << std::setw(9) << r.localBytes
              << std::setw(11) << r.blocksPerMultiprocessor << std::setw(11) << differing << std::setw(18) << toBaseline
              << std::setw(12) << toCpu << "\n";
    out.push_back({ { "variant", v.Name() },
                    { "team", v.team },
                    { "packed", v.packed },
                    { "min_blocks", v.minBlocks },
                    { "median_ms", median },
                    { "mean_ms", mean },
                    { "registers", r.registers },
                    { "local_bytes", r.localBytes },
                    { "blocks_per_sm", r.blocksPerMultiprocessor },
                    { "differing_from_baseline", differing },
                    { "max_abs_diff_baseline", toBaseline },
                    { "max_abs_diff_cpu", toCpu } });
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return out;
}
#endif
} // namespace

int
main(int argc, char ** argv)
{
  int              size = 128, displacements = 32, depth = 6, learners = 40, features = 1000, trainVertices = 400;
  int              cpuRepeats = 3, gpuRepeats = 20, iterations = 4;
  double           noise = 25.0;
  std::string      treeKind = "random";
  std::vector<int> levels{ 602, 1202, 2402 };
  bool             cpu1 = true, floorOnly = false;
  std::string      device = "cuda", json, variantList = "all";
  CLI::App         app{ "Canopy boundary benchmark: vertices x displacements and refinement, CPU vs GPU" };
  app.add_option("--size", size, "phantom side in voxels (1 mm); radii scale with it")->capture_default_str();
  app.add_option("--levels", levels, "vertex counts of the hierarchy")->delimiter(',')->capture_default_str();
  app.add_option("--displacements", displacements)->capture_default_str();
  app
    .add_option("--model",
                treeKind,
                "random: a full depth-d tree of l learners per node on a random bank (fixed "
                "work, as canopyBenchmarkSteerable); trained: PBTs trained on the phantom (small: it is easy)")
    ->check(CLI::IsMember({ "random", "trained" }))
    ->capture_default_str();
  app.add_option("--noise", noise, "noise sd of the phantom (step 80)")->capture_default_str();
  app.add_option("--pbt-depth", depth)->capture_default_str();
  app.add_option("--pbt-learners", learners, "weak learners per node")->capture_default_str();
  app.add_option("--features", features, "candidate features in training")->capture_default_str();
  app.add_option("--train-vertices", trainVertices)->capture_default_str();
  app.add_option("--iterations", iterations, "refinement iterations per level")->capture_default_str();
  app.add_option("--cpu-repeats", cpuRepeats)->capture_default_str();
  app.add_option("--gpu-repeats", gpuRepeats)->capture_default_str();
  app.add_flag("!--no-cpu1", cpu1, "skip 1-thread CPU timings");
  app.add_flag("--floor-only", floorOnly, "only the floor counts (CPU, no timings)");
  app.add_option("--device", device, "cuda, cuda:N, or none")->capture_default_str();
  app
    .add_option("--variants",
                variantList,
                "boundary kernel variants to time after the kernel figure (PBTBoundaryVariants.h): all, none, "
                "or a comma list of baseline / t<team>[p][b<blocks>]")
    ->capture_default_str();
  bench::AddJsonOption(app, json);
  CLI11_PARSE(app, argc, argv);
  try
  {
    const std::string deviceText = bench::GpuDeviceText(device);
    std::string       deviceName = "none";
    if (!deviceText.empty())
      deviceName = ResolveBackend(BackendRequest::Parse(deviceText)).Describe();
    const int cores = static_cast<int>(itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads());
    std::cout << "Boundary benchmark " << bench::UtcNow() << ", CPU " << bench::CpuModel() << " ("
              << bench::LogicalCores() << " logical cores), GPU " << deviceName << "\n";
    canopy::testing::Ellipsoid e;
    const double               k = size / 128.0;
    e.radii = Eigen::Vector3d(40, 30, 25) * k;
    e.centre = Eigen::Vector3d::Constant(size / 2.0);
    const ShapeModel model = PhantomModel(e, size, levels);
    const auto       image = boundarytest::MakeEllipsoidImage(e, 3, noise, size);

    // Boundary PBTs trained on the phantom itself (its mean mesh at the centre is the true boundary).
    BoundaryClassifierOptions options;
    options.pyramid = SteerablePyramidOptions{ { 1.0, 2.0, 4.0 }, {} };
    options.featureBankSize = features;
    options.maxVerticesPerSubject = trainVertices;
    options.pbt.maxDepth = depth;
    options.pbt.weakLearnersPerNode = learners;
    options.pbt.minSamplesToSplit = 20;
    options.pbt.earlyStopError = -1.0; // --model trained: every node gets its learners
    options.pbt.purityStop = 1.0;      // and splits until pure (the phantom is easy: shallow trees)
    options.backend = ResolveBackend(BackendRequest::Parse("cpu"));
    Similarity truth;
    truth.translation = e.centre;
    const auto t0 = Clock::now();
    auto       classifiers =
      TrainBoundaryClassifiers(model, { { "phantom", image, truth.Apply(model.Finest().mean) } }, options);
    const double trainSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (treeKind == "random")
      for (std::size_t l = 0; l < classifiers.levels.size(); ++l)
      {
        RandomPBTModelOptions random;
        random.depth = depth;
        random.learnersPerNode = learners;
        random.numFeatures = features;
        random.responseLow = -3.0f; // z-scored intensities; gradients of a fraction per mm
        random.responseHigh = 3.0f;
        random.seed = 17 + l;
        PBTModel model = MakeRandomPBTModel(random);
        model.featureFamily = PBTFeatureFamily::Steerable;
        model.features.clear();
        model.steerable.grid = options.grid;
        model.steerable.pyramid = options.pyramid;
        model.steerable.features = RandomSteerableFeatures(options.grid, 3, features, random.seed + 1);
        model.Validate("benchmark boundary PBT");
        classifiers.levels[l].pbt = model;
      }
    const auto pyramid = SteerablePyramid::Build(NormalizeBoundaryIntensities(image, "zscore"), classifiers.Pyramid());
    std::vector<double> ranges;
    for (const auto & l : classifiers.levels)
      ranges.push_back(l.searchMm);
    const std::size_t finest = model.levels.size() - 1;
    const auto &      pbt = classifiers.levels[finest].pbt;
    std::cout << "model: levels";
    for (const auto & l : model.levels)
      std::cout << ' ' << l.Vertices();
    std::cout << "; boundary PBTs trained in " << Fixed(trainSeconds, 1) << " s (CPU); finest: depth " << pbt.Depth()
              << ", " << pbt.nodes.size() << " nodes, " << pbt.learners.size() << " weak learners (" << treeKind
              << ")\n";

    // The finest level placed 2 mm off and 5% too large: what one refinement iteration scores.
    Similarity start = truth;
    start.translation += Eigen::Vector3d(2.0, -1.0, 1.0);
    start.scale = 1.05;
    const Eigen::Matrix3Xd    points = ShapeInstance(model, finest, {}, start);
    const Eigen::Matrix3Xd    normals = VertexNormals(points, model.Finest().triangles);
    const std::vector<double> offsets = RefinementOffsets(displacements, ranges[finest]);
    const std::int64_t        hypotheses = points.cols() * std::int64_t(displacements);
    Eigen::MatrixXf           scores;
    const auto                cpu = ResolveBackend(BackendRequest::Parse("cpu"));
    ShapeRefinementOptions    refinement;
    refinement.displacements = displacements;
    refinement.iterationsPerLevel = iterations;
    refinement.convergenceMm = 0; // fixed work: every iteration runs
    auto scoreSeconds = [&](const ResolvedBackend & backend, int threads, int repeats)
    {
      PBTBoundaryScorer scorer(classifiers, pyramid, backend, threads);
      return SecondsOf([&] { scorer.Score(finest, points, normals, offsets, scores); }, repeats);
    };
    auto refineSeconds = [&](const ResolvedBackend & backend, int threads, int repeats, double * scoring)
    {
      PBTBoundaryScorer     scorer(classifiers, pyramid, backend, threads);
      ShapeRefinementResult result;
      const double s = SecondsOf([&] { result = RefineShape(model, scorer, start, refinement, ranges); }, repeats);
      double       scoringTotal = 0;
      for (const auto & l : result.levels)
        scoringTotal += l.scoringSeconds;
      *scoring = scoringTotal;
      return s;
    };
    nlohmann::json report{ { "date", bench::UtcNow() },
                           { "cpu", bench::CpuModel() },
                           { "cpu_threads", cores },
                           { "device", deviceName },
                           { "vertices", points.cols() },
                           { "displacements", displacements },
                           { "hypotheses", hypotheses },
                           { "pbt_model", treeKind },
                           { "pbt_depth", pbt.Depth() },
                           { "pbt_nodes", pbt.nodes.size() },
                           { "pbt_learners", pbt.learners.size() },
                           { "iterations_per_level", iterations } };
    // The floor: weak learners, bytes and operations per hypothesis, counted on the CPU (canopyBenchmarkFloor.h).
    const auto hostFrames = BoundaryVertexFrames(points, normals, classifiers.levels[finest].frameScale);
    std::vector<BoundaryHypothesis> hostList;
    for (Eigen::Index i = 0; i < points.cols(); ++i)
      for (double o : offsets)
        hostList.push_back({ std::int32_t(i), float(o) });
    // Nodes in preorder, as ResponseEngine::SetTree uploads them (posteriors unchanged).
    const std::vector<PBTNodeFlat> preorder = PBTNodesInPreorder(pbt.nodes.data(), int(pbt.nodes.size()));
    PBTView                        hostTree = pbt.View();
    hostTree.nodes = preorder.data();
    hostTree.numNodes = int(preorder.size());
    const BoundaryFeatureFunc hostFunc{
      pyramid.GetView(), pbt.steerable.grid, pbt.steerable.features.data(), hostFrames.data()
    };
    const bench::HypothesisWork work =
      bench::CountHypothesisWork(hostTree, hostFunc, hostList.data(), std::int64_t(hostList.size()));
    report["team_replay"] = TeamReplay(hostTree, hostFunc, hostList, displacements);
    if (floorOnly)
    {
      std::cout << "floor: " << Fixed(work.learnersPerHypothesis, 1) << " weak learners and "
                << Fixed(work.nodesPerHypothesis, 2) << " nodes per hypothesis\n";
      if (!json.empty())
        bench::WriteJson(json, report);
      return 0;
    }
    double cpu1Score = 0, cpu1Refine = 0, cpu1Scoring = 0, scoringPart = 0;
    if (cpu1)
    {
      cpu1Score = scoreSeconds(cpu, 1, cpuRepeats);
      cpu1Refine = refineSeconds(cpu, 1, 1, &cpu1Scoring);
    }
    const double cpuAllScore = scoreSeconds(cpu, cores, cpuRepeats);
    double       cpuAllScoring = 0;
    const double cpuAllRefine = refineSeconds(cpu, cores, cpuRepeats, &cpuAllScoring);
    double       kernel = 0, baselineKernel = 0, gpuScore = 0, gpuRefine = 0, gpuScoring = 0;
#if CANOPY_USE_CUDA
    if (!deviceText.empty())
    {
      const auto backend = ResolveBackend(BackendRequest::Parse(deviceText));
      gpuScore = scoreSeconds(backend, 0, gpuRepeats);
      gpuRefine = refineSeconds(backend, 0, gpuRepeats, &gpuScoring);
      // Kernel only: pyramid, bank, tree, frames, hypotheses and scores resident on the device.
      cuda::ScopedDevice                              scoped(backend.deviceIndex);
      cuda::Stream                                    stream;
      const SteerablePyramidView                      host = pyramid.GetView();
      SteerablePyramidView                            view = host;
      std::vector<cuda::DeviceBuffer<SteerableVoxel>> levelBuffers;
      for (int l = 0; l < host.numLevels; ++l)
      {
        const auto & v = pyramid.GetLevelVoxels(l);
        levelBuffers.emplace_back(v.size(), "level");
        levelBuffers.back().CopyFromHost(v.data(), v.size(), stream.get());
        view.levels[l].voxels = levelBuffers.back().data();
      }
      auto upload = [&](const auto & vector, const char * what)
      {
        using T = typename std::decay_t<decltype(vector)>::value_type;
        cuda::DeviceBuffer<T> buffer(vector.size(), what);
        buffer.CopyFromHost(vector.data(), vector.size(), stream.get());
        return buffer;
      };
      auto       dBank = upload(pbt.steerable.features, "bank");
      auto       dNodes = upload(preorder, "nodes");
      auto       dLearners = upload(pbt.learners, "learners");
      auto       dTables = upload(pbt.tables, "tables");
      const auto frames = BoundaryVertexFrames(points, normals, classifiers.levels[finest].frameScale);
      std::vector<BoundaryHypothesis> list;
      for (Eigen::Index i = 0; i < points.cols(); ++i)
        for (double o : offsets)
          list.push_back({ std::int32_t(i), float(o) });
      auto                      dFrames = upload(frames, "frames");
      auto                      dHypotheses = upload(list, "hypotheses");
      cuda::DeviceBuffer<float> dOut(list.size(), "scores");
      stream.Synchronize();
      PBTView tree = hostTree;
      tree.nodes = dNodes.data();
      tree.learners = dLearners.data();
      tree.tables = dTables.data();
      const BoundaryFeatureFunc func{ view, pbt.steerable.grid, dBank.data(), dFrames.data() };
      // Kernel only, the one EvaluateBoundaryPBT runs (kDefaultBoundaryKernel, packed learner records as
      // the engine uploads them), and the baseline kernel beside it.
      const std::vector<PBTSteerableLearner> packedHost = PackSteerableLearners(pbt.learners.data(),
                                                                                int(pbt.learners.size()),
                                                                                pbt.steerable.features.data(),
                                                                                int(pbt.steerable.features.size()));
      cuda::DeviceBuffer<PBTSteerableLearner> dPacked(std::max<std::size_t>(packedHost.size(), 1), "packed learners");
      if (!packedHost.empty())
        dPacked.CopyFromHost(packedHost.data(), packedHost.size(), stream.get());
      stream.Synchronize();
      kernel = SecondsOf(
        [&]
        {
          cuda::LaunchBoundaryPBTVariant(
            kDefaultBoundaryKernel, tree, func, dPacked.data(), dHypotheses.data(), hypotheses, dOut.data(), stream.get());
          stream.Synchronize();
        },
        gpuRepeats);
      baselineKernel = SecondsOf(
        [&]
        {
          cuda::LaunchPBTAtHypotheses(tree, func, dHypotheses.data(), hypotheses, dOut.data(), stream.get());
          stream.Synchronize();
        },
        gpuRepeats);
      if (variantList != "none")
        report["variants"] = TimeVariants(variantList,
                                          tree,
                                          func,
                                          PackSteerableLearners(pbt.learners.data(),
                                                                int(pbt.learners.size()),
                                                                pbt.steerable.features.data(),
                                                                int(pbt.steerable.features.size())),
                                          dHypotheses.data(),
                                          hostTree,
                                          hostFunc,
                                          hostList,
                                          cores,
                                          std::max(gpuRepeats, 50),
                                          stream.get());
    }
#endif
    (void)scoringPart;
    auto ms = [](double s) { return Fixed(1000.0 * s, 3) + " ms"; };
    auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
    std::cout << points.cols() << " vertices x " << displacements << " displacements (" << hypotheses
              << " hypotheses), finest level:\n"
              << "  CPU 1 thread " << ms(cpu1Score) << "  CPU " << cores << " threads " << ms(cpuAllScore)
              << "  GPU kernel " << ms(kernel) << " (" << kDefaultBoundaryKernel.Name() << "; baseline "
              << ms(baselineKernel) << ")  GPU host-to-host " << ms(gpuScore) << "\n"
              << "  ratios CPU-1/GPU kernel " << Fixed(ratio(cpu1Score, kernel), 1) << "x  CPU-all/GPU kernel "
              << Fixed(ratio(cpuAllScore, kernel), 1) << "x  CPU-1/CPU-all " << Fixed(ratio(cpu1Score, cpuAllScore), 1)
              << "x\n"
              << "whole refinement (" << model.levels.size() << " levels x " << iterations
              << " iterations, host to host):\n"
              << "  CPU 1 thread " << ms(cpu1Refine) << " (scoring " << ms(cpu1Scoring) << ")  CPU " << cores
              << " threads " << ms(cpuAllRefine) << " (scoring " << ms(cpuAllScoring) << ")  GPU " << ms(gpuRefine)
              << " (scoring " << ms(gpuScoring) << ")\n"
              << "  ratios CPU-1/GPU " << Fixed(ratio(cpu1Refine, gpuRefine), 1) << "x  CPU-all/GPU "
              << Fixed(ratio(cpuAllRefine, gpuRefine), 1) << "x\n";
    // What the kernel time means against the work: loads and operations per second it reaches.
    const double loadBytes = work.bytesPerHypothesis * double(hypotheses);
    const double ops = work.opsPerHypothesis * double(hypotheses);
    std::cout << "floor: " << Fixed(work.learnersPerHypothesis, 1) << " weak learners and "
              << Fixed(work.nodesPerHypothesis, 2)
              << " nodes per hypothesis = " << Fixed(work.bytesPerHypothesis / 1024.0, 1) << " KiB loaded ("
              << Fixed(work.learnersPerHypothesis * 8, 0) << " 16-byte voxel gathers) and about "
              << Fixed(work.opsPerHypothesis, 0) << " operations; all hypotheses: " << Fixed(loadBytes / 1e9, 2)
              << " GB of loads (mostly L1/L2 hits), " << Fixed(ops / 1e9, 2) << " G operations";
    if (kernel > 0)
      std::cout << "; the kernel reaches " << Fixed(loadBytes / kernel / 1e12, 2) << " TB/s of loads and "
                << Fixed(ops / kernel / 1e12, 2) << " T operations/s";
    std::cout << "\n";
    report["floor"] = { { "learners_per_hypothesis", work.learnersPerHypothesis },
                        { "nodes_per_hypothesis", work.nodesPerHypothesis },
                        { "bytes_per_hypothesis", work.bytesPerHypothesis },
                        { "ops_per_hypothesis", work.opsPerHypothesis },
                        { "kernel_load_TBps", kernel > 0 ? loadBytes / kernel / 1e12 : 0.0 },
                        { "kernel_TOps", kernel > 0 ? ops / kernel / 1e12 : 0.0 } };
    report["score_s"] = {
      { "cpu1", cpu1Score },
      { "cpu_all", cpuAllScore },
      { "gpu_kernel", kernel },
      { "gpu_kernel_variant", kDefaultBoundaryKernel.Name() },
      { "gpu_kernel_baseline", baselineKernel },
      { "gpu_host_to_host", gpuScore }
    };
    report["refine_s"] = { { "cpu1", cpu1Refine }, { "cpu_all", cpuAllRefine }, { "gpu", gpuRefine } };
    report["refine_scoring_s"] = { { "cpu1", cpu1Scoring }, { "cpu_all", cpuAllScoring }, { "gpu", gpuScoring } };
    report["train_s"] = trainSeconds;
    if (!json.empty())
      bench::WriteJson(json, report);
  }
  catch (const std::exception & e)
  {
    std::cerr << "canopyBenchmarkBoundary: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
