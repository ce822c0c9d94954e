// Pose detection speed per structure (issue 9, "Speed"): a detector trained on small synthesized
// phantoms (Modules/PoseDetection/test/PoseTestPhantoms.h, pyramid 1/2/4 mm) detects its two
// structures in a --size^3 volume of --spacing mm; the position (dense Haar PBT + top-K: on the device
// on CUDA), orientation (K positions x the orientation set) and scale stages are timed separately on
// the CPU with one thread, with all threads, and on the GPU, with hypotheses per second, and the
// GPU's ratios to both CPU runs. Host to host: every stage's time includes its uploads and
// read-backs; SetImage (normalisation, pyramid and gradients: on the host then uploaded for the CPU,
// on the device from one upload on CUDA) is timed on its own, and so is the position stage's
// preparation of the working grid (resampling to 3 mm and normalising, on the host, once per image
// and working spacing; the stage timings reuse it). The floor of the two steerable stages (weak
// learners, bytes and operations per hypothesis, canopyBenchmarkFloor.h) is counted on the CPU.
// Nothing here asserts a speed.
#include "PoseTestPhantoms.h"
#include "canopyBenchmarkFloor.h"
#include "canopyBenchmarkUtil.h"

#include "canopy/Device.h"

#include "canopySteerablePyramid.h"
#include "canopyVolumePreparation.h"

#include <chrono>
#include <iostream>
#include <map>

namespace
{
using namespace canopy;
using namespace canopy::posetest;

struct Config
{
  std::string     name;
  ResolvedBackend backend;
  int             threads;
};
} // namespace

int
main(int argc, char ** argv)
{
  CLI::App    app{ "Pose detection benchmark (marginal-space learning, per stage)" };
  int         size = 256, subjects = 8, candidates = 100, perturbations = 124, keep = 50, repeats = 3;
  double      spacing = 1.0;
  std::string device = "auto", json;
  bool        noCpu1 = false;
  app.add_option("--size", size, "test volume edge (voxels)")->capture_default_str();
  app.add_option("--spacing", spacing, "test volume spacing (mm)")->capture_default_str();
  app.add_option("--subjects", subjects, "training phantoms")->capture_default_str();
  app.add_option("--candidates", candidates, "position candidates K")->capture_default_str();
  app.add_option("--perturbations", perturbations, "perturbed copies per training orientation")->capture_default_str();
  app.add_option("--keep", keep, "orientation hypotheses kept for the scale stage")->capture_default_str();
  app.add_option("--repeats", repeats, "timed detections per configuration (median)")->capture_default_str();
  app.add_option("--device", device, "GPU device (cuda, cuda:N) or none")->capture_default_str();
  app.add_flag("--no-cpu1", noCpu1, "skip the one-thread CPU run");
  canopy::bench::AddJsonOption(app, json);
  CLI11_PARSE(app, argc, argv);

  std::vector<DetectorTrainingSubject> training;
  for (int s = 1; s <= subjects; ++s)
    training.push_back(MakeSubject(static_cast<std::uint64_t>(s)));
  auto options = SmallTrainingOptions();
  options.steerable.pyramid = SteerablePyramidOptions{ { 1.0, 2.0, 4.0 }, {} };
  options.candidates = candidates;
  options.perturbations = perturbations;
  options.orientationKeep = keep;
  options.backend = ResolveBackend(BackendRequest::Parse("cpu"));
  const auto model = TrainDetector(training, { { "large", kLarge }, { "small", kSmall } }, options);

  SynthesisOptions synthesis;
  synthesis.seed = 101;
  const auto test = SynthesizeImage(PaintEllipsoids(size, spacing, SubjectEllipsoids(101)), PhantomPriors(), synthesis);

  std::vector<Config> configs;
  if (!noCpu1)
    configs.push_back({ "cpu-1", ResolveBackend(BackendRequest::Parse("cpu")), 1 });
  configs.push_back({ "cpu-all", ResolveBackend(BackendRequest::Parse("cpu")), 0 });
  const std::string gpu = canopy::bench::GpuDeviceText(device);
  if (!gpu.empty() && !QueryCudaDevices().empty())
    configs.push_back({ "gpu", ResolveBackend(BackendRequest::Parse(gpu)), 0 });

  // The position stage's working grid, made once per image (PrepareVolume, host): timed apart.
  const auto prepareStart = std::chrono::steady_clock::now();
  const auto prepared =
    PrepareVolume(test.image, model.structures[0].position.workingSpacing, model.structures[0].position.normalization);
  const double prepareMs = 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - prepareStart).count();

  // The floor of the steerable stages on this workload, counted on the CPU.
  nlohmann::json                     floors = nlohmann::json::array();
  std::vector<bench::HypothesisWork> orientationWork, scaleWork;
  {
    DetectionOptions o;
    o.backend = ResolveBackend(BackendRequest::Parse("cpu"));
    PoseDetector cpuDetector(model, o);
    cpuDetector.SetImage(test.image, "benchmark volume");
    auto normalised = FloatVolume::New();
    normalised->CopyInformation(test.image);
    normalised->SetRegions(test.image->GetLargestPossibleRegion());
    normalised->Allocate();
    std::copy_n(test.image->GetBufferPointer(),
                test.image->GetLargestPossibleRegion().GetNumberOfPixels(),
                normalised->GetBufferPointer());
    NormalizeIntensities(normalised, model.structures[0].position.normalization);
    const auto pyramid = SteerablePyramid::Build(normalised, model.structures[0].orientation.steerable.pyramid);
    for (int s = 0; s < 2; ++s)
    {
      const auto &               d = model.structures[s];
      const auto                 centres = cpuDetector.PositionCandidates(s);
      const auto                 oriented = cpuDetector.OrientationCandidates(s, centres, keep);
      std::vector<SteerablePose> orientationPoses, scalePoses;
      for (const auto & c : centres)
        for (const auto & frame : d.orientations)
        {
          StructurePose h = c.pose;
          h.axes = frame;
          h.sizeMm = d.meanSizeMm;
          orientationPoses.push_back(ToSteerablePose(h, d.orientation.steerable.grid, d.gridSpan));
        }
      for (const auto & c : oriented)
        for (const auto & size : d.sizesMm)
        {
          StructurePose h = c.pose;
          h.sizeMm = size;
          scalePoses.push_back(ToSteerablePose(h, d.scale.steerable.grid, d.gridSpan));
        }
      auto count = [&](const PBTModel & stage, const std::vector<SteerablePose> & poses)
      {
        return bench::CountHypothesisWork(
          stage.View(),
          SteerableFeatureFunc{ pyramid.GetView(), stage.steerable.grid, stage.steerable.features.data() },
          poses.data(),
          std::int64_t(poses.size()));
      };
      orientationWork.push_back(count(d.orientation, orientationPoses));
      scaleWork.push_back(count(d.scale, scalePoses));
    }
  }

  nlohmann::json runs = nlohmann::json::array();
  // config -> structure -> (position, orientation, scale, total) medians, for the ratios.
  std::map<std::string, std::vector<std::array<double, 4>>> medians;
  std::cout << "volume " << size << "^3 at " << spacing << " mm; " << model.structures[0].orientations.size()
            << " orientations x " << candidates << " positions, " << model.structures[0].sizesMm.size() << " sizes x "
            << keep << " kept\n";
  std::cout << "config   structure  setImage_ms  position_ms  orientation_ms  scale_ms  total_ms  orientation_hyp/s  "
               "scale_hyp/s\n";
  for (const auto & c : configs)
  {
    DetectionOptions o;
    o.backend = c.backend;
    o.cpuThreads = c.threads;
    PoseDetector detector(model, o);
    const double setImageMs =
      canopy::bench::MedianHostMs([&] { detector.SetImage(test.image, "benchmark volume"); }, 1, repeats, 60.0, false);
    for (int s = 0; s < 2; ++s)
    {
      std::vector<double> position, orientation, scale, total;
      StageTimings        last;
      detector.Detect(s); // warm-up
      for (int r = 0; r < repeats; ++r)
      {
        StageTimings t;
        const auto   found = detector.Detect(s, &t);
        position.push_back(1e3 * t.positionSeconds);
        orientation.push_back(1e3 * t.orientationSeconds);
        scale.push_back(1e3 * t.scaleSeconds);
        total.push_back(1e3 * found.seconds);
        last = t;
      }
      const double om = canopy::bench::Median(orientation), sm = canopy::bench::Median(scale);
      medians[c.name].push_back({ { canopy::bench::Median(position), om, sm, canopy::bench::Median(total) } });
      const double orientationRate = last.orientationHypotheses / (1e-3 * om);
      const double scaleRate = last.scaleHypotheses / (1e-3 * sm);
      std::cout << c.name << "  " << model.structures[s].name << "  " << canopy::bench::Fixed(setImageMs, 1) << "  "
                << canopy::bench::Fixed(canopy::bench::Median(position), 1) << "  " << canopy::bench::Fixed(om, 1)
                << "  " << canopy::bench::Fixed(sm, 1) << "  " << canopy::bench::Fixed(canopy::bench::Median(total), 1)
                << "  " << canopy::bench::Fixed(orientationRate, 0) << "  " << canopy::bench::Fixed(scaleRate, 0)
                << '\n';
      runs.push_back({ { "config", c.name },
                       { "backend", c.backend.Describe() },
                       { "structure", model.structures[s].name },
                       { "setImageMs", setImageMs },
                       { "positionMs", canopy::bench::Median(position) },
                       { "orientationMs", om },
                       { "scaleMs", sm },
                       { "totalMs", canopy::bench::Median(total) },
                       { "positionVoxels", last.positionVoxels },
                       { "orientationHypotheses", last.orientationHypotheses },
                       { "scaleHypotheses", last.scaleHypotheses },
                       { "orientationHypothesesPerSecond", orientationRate },
                       { "scaleHypothesesPerSecond", scaleRate } });
    }
  }
  std::cout << "position preparation (resample to the working grid, normalise; host, once per image): "
            << canopy::bench::Fixed(prepareMs, 1) << " ms\n";
  for (int s = 0; s < 2; ++s)
  {
    for (int stage = 0; stage < 2; ++stage)
    {
      const auto & w = stage == 0 ? orientationWork[s] : scaleWork[s];
      std::cout << "floor " << model.structures[s].name << (stage == 0 ? " orientation" : " scale") << ": "
                << canopy::bench::Fixed(w.learnersPerHypothesis, 1) << " weak learners, "
                << canopy::bench::Fixed(w.nodesPerHypothesis, 2) << " nodes, "
                << canopy::bench::Fixed(w.bytesPerHypothesis / 1024.0, 2) << " KiB loaded and about "
                << canopy::bench::Fixed(w.opsPerHypothesis, 0) << " operations per hypothesis\n";
      floors.push_back({ { "structure", model.structures[s].name },
                         { "stage", stage == 0 ? "orientation" : "scale" },
                         { "learnersPerHypothesis", w.learnersPerHypothesis },
                         { "nodesPerHypothesis", w.nodesPerHypothesis },
                         { "bytesPerHypothesis", w.bytesPerHypothesis },
                         { "opsPerHypothesis", w.opsPerHypothesis } });
    }
    if (medians.count("gpu"))
    {
      const auto & g = medians["gpu"][s];
      const char * names[4] = { "position", "orientation", "scale", "total" };
      for (const char * cpuName : { "cpu-1", "cpu-all" })
        if (medians.count(cpuName))
        {
          const auto & c = medians[cpuName][s];
          std::cout << "ratio " << cpuName << " / gpu, " << model.structures[s].name << ":";
          for (int k = 0; k < 4; ++k)
            std::cout << "  " << names[k] << " " << canopy::bench::Fixed(g[k] > 0 ? c[k] / g[k] : 0.0, 1) << "x";
          std::cout << '\n';
        }
    }
  }
  canopy::bench::WriteJson(json,
                           { { "benchmark", "detector" },
                             { "date", canopy::bench::UtcNow() },
                             { "cpu", canopy::bench::CpuModel() },
                             { "logicalCores", canopy::bench::LogicalCores() },
                             { "size", size },
                             { "spacingMm", spacing },
                             { "candidates", candidates },
                             { "orientations", model.structures[0].orientations.size() },
                             { "prepareMs", prepareMs },
                             { "floor", floors },
                             { "runs", runs } });
  return 0;
}
