// Pose detection speed per structure (issue 9, "Speed"): a detector trained on small synthesized
// phantoms (Modules/PoseDetection/test/PoseTestPhantoms.h, pyramid 1/2/4 mm) detects its two
// structures in a --size^3 volume of --spacing mm; the position (dense Haar PBT + top-K on the host),
// orientation (K positions x the orientation set) and scale stages are timed separately on the CPU
// with one thread, with all threads, and on the GPU, with hypotheses per second. Host to host: every
// stage's time includes its uploads and read-backs; SetImage (normalisation, pyramid, its upload) is
// timed on its own. Nothing here asserts a speed.
#include "PoseTestPhantoms.h"
#include "canopyBenchmarkUtil.h"

#include "canopy/Device.h"

#include <iostream>

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

  nlohmann::json runs = nlohmann::json::array();
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
  canopy::bench::WriteJson(json,
                           { { "benchmark", "detector" },
                             { "date", canopy::bench::UtcNow() },
                             { "cpu", canopy::bench::CpuModel() },
                             { "logicalCores", canopy::bench::LogicalCores() },
                             { "size", size },
                             { "spacingMm", spacing },
                             { "candidates", candidates },
                             { "orientations", model.structures[0].orientations.size() },
                             { "runs", runs } });
  return 0;
}
