// Training the three marginal-space stages of each structure (canopyPoseDetector.h): ground-truth
// poses from the label maps, then the position PBT (TrainPBTFromVolumes on spheres around the true
// centres) and the two steerable PBTs (TrainSteerablePBT on sampled pose hypotheses).
#include "canopyPoseDetector.h"

#include "canopy/Errors.h"
#include "canopyPoseGeometry.h"

#include <algorithm>
#include <cmath>

namespace canopy
{
using namespace posedetail;

namespace
{
double
LargestSpacing(const std::array<double, 3> & spacing)
{
  return std::max({ spacing[0], spacing[1], spacing[2] });
}

/** 1 within radiusMm of centre (voxel centres), on the image's grid. */
MaskVolume::Pointer
SphereMask(const FloatVolume * image, const Vec3d & centre, double radiusMm)
{
  auto mask = MaskVolume::New();
  mask->CopyInformation(image);
  mask->SetRegions(image->GetLargestPossibleRegion());
  mask->Allocate(true);
  const auto            size = image->GetLargestPossibleRegion().GetSize();
  itk::Point<double, 3> p;
  for (int k = 0; k < 3; ++k)
    p[k] = centre[k];
  itk::ContinuousIndex<double, 3> c;
  image->TransformPhysicalPointToContinuousIndex(p, c);
  long lo[3], hi[3];
  for (int d = 0; d < 3; ++d)
  {
    const double r = radiusMm / image->GetSpacing()[d] + 1.0;
    lo[d] = std::max(0L, static_cast<long>(std::floor(c[d] - r)));
    hi[d] = std::min(static_cast<long>(size[d]) - 1, static_cast<long>(std::ceil(c[d] + r)));
  }
  for (long z = lo[2]; z <= hi[2]; ++z)
    for (long y = lo[1]; y <= hi[1]; ++y)
      for (long x = lo[0]; x <= hi[0]; ++x)
      {
        const MaskVolume::IndexType index{ { x, y, z } };
        itk::Point<double, 3>       q;
        image->TransformIndexToPhysicalPoint(index, q);
        const Vec3d v{ { q[0], q[1], q[2] } };
        if (Distance(v, centre) <= radiusMm)
          mask->SetPixel(index, 1);
      }
  return mask;
}

StructurePose
WithPose(const Vec3d & centre, const Frame & axes, const Vec3d & size)
{
  StructurePose p;
  p.centerMm = centre;
  p.axes = axes;
  p.sizeMm = size;
  return p;
}

struct PoseSampler
{
  const DetectorTrainingOptions & o;
  double                          centerPositiveMm, centerNegativeMm;
  const std::vector<Frame> &      orientations;
  const std::vector<Vec3d> &      sizes;

  Vec3d NearCentre(const StructurePose & t, std::mt19937_64 & rng) const
  {
    return ShiftedCentre(t.centerMm, 0.0, centerPositiveMm, rng);
  }
  Vec3d FarCentre(const StructurePose & t, std::mt19937_64 & rng) const
  {
    return ShiftedCentre(t.centerMm, centerNegativeMm, 2.5 * centerNegativeMm, rng);
  }
  Frame NearFrame(const StructurePose & t, std::mt19937_64 & rng) const
  {
    return TurnedFrame(t.axes, 0.0, o.orientationPositiveDegrees, rng);
  }
  /** An orientation at least the negative angle away: in equal shares the truth turned by 1 to 2
   * times that angle (hard negatives: the hypothesis set is dense there), a hypothesis of the set, or
   * any rotation. */
  Frame WrongFrame(const StructurePose & t, std::mt19937_64 & rng) const
  {
    const auto kind = UniformIndex(rng, 3);
    for (int attempt = 0; attempt < 1000; ++attempt)
    {
      const Frame f = kind == 0
                        ? TurnedFrame(t.axes, o.orientationNegativeDegrees, 2.0 * o.orientationNegativeDegrees, rng)
                      : kind == 1 ? orientations[UniformIndex(rng, orientations.size())]
                                  : RandomFrame(rng);
      if (OrientationErrorDegrees(f, t.axes) >= o.orientationNegativeDegrees)
        return f;
    }
    return TurnedFrame(t.axes, 90.0, 90.0, rng);
  }
  Vec3d NearSize(const StructurePose & t, std::mt19937_64 & rng) const
  {
    Vec3d s;
    for (int a = 0; a < 3; ++a)
      s[a] = t.sizeMm[a] * (1.0 + o.sizePositive * (2.0 * UniformUnit(rng) - 1.0));
    return s;
  }
  /** A hypothesis size (or a scaled truth) at least the negative relative error away. */
  Vec3d WrongSize(const StructurePose & t, std::mt19937_64 & rng) const
  {
    for (int attempt = 0; attempt < 200 && UniformUnit(rng) < 0.5; ++attempt)
    {
      const Vec3d s = sizes[UniformIndex(rng, sizes.size())];
      if (RelativeSizeError(s, t.sizeMm) >= o.sizeNegative)
        return s;
    }
    // The truth with one axis, or all three, off by sizeNegative to twice that.
    const bool   all = UniformUnit(rng) < 0.5;
    const int    axis = static_cast<int>(UniformIndex(rng, 3));
    const double off = o.sizeNegative * (1.0 + UniformUnit(rng));
    const double factor = UniformUnit(rng) < 0.5 ? 1.0 - off : 1.0 + off;
    Vec3d        s = NearSize(t, rng);
    for (int a = 0; a < 3; ++a)
      if (all || a == axis)
        s[a] = t.sizeMm[a] * factor;
    return s;
  }
};

SteerableTrainingSet
MakeSet(const SteerablePyramid &                                   pyramid,
        const std::string &                                        name,
        const std::vector<std::pair<StructurePose, std::int8_t>> & samples,
        const SteerableGrid &                                      grid,
        double                                                     gridSpan)
{
  SteerableTrainingSet set;
  set.pyramid = &pyramid;
  set.name = name;
  double positives = 0, negatives = 0;
  for (const auto & [pose, label] : samples)
  {
    set.poses.push_back(ToSteerablePose(pose, grid, gridSpan));
    set.labels.push_back(label);
    (label > 0 ? positives : negatives) += 1.0;
  }
  for (const auto & sample : samples) // both classes weigh the same
    set.weights.push_back(sample.second > 0 ? static_cast<float>(negatives / std::max(1.0, positives)) : 1.0f);
  return set;
}
} // namespace

DetectorModel
TrainDetector(const std::vector<DetectorTrainingSubject> & subjects,
              const std::vector<DetectorStructureSpec> &   structures,
              const DetectorTrainingOptions &              options,
              const TrainingProgress &                     progress)
{
  if (subjects.size() < 2)
    CANOPY_THROW("train-detector: " << subjects.size() << " training subject(s); a detector needs at least 2");
  if (structures.empty())
    CANOPY_THROW("train-detector: no structure to train (give --structure NAME=LABEL)");
  for (const auto & s : subjects)
  {
    if (!s.image || !s.labels)
      CANOPY_THROW("train-detector: " << s.name << ": lacks an image or a label map");
    if (!SameGrid(s.image, s.labels))
      CANOPY_THROW(
        "train-detector: " << s.name
                           << ": the label map's grid (size, spacing, origin, direction) differs from the image's");
  }
  std::vector<std::string> names;
  for (const auto & spec : structures)
    names.push_back(spec.name);
  NetworkOrder(names, options.network, "train-detector: network"); // unknown structures, two parents, cycles
  auto notify = [&](double f, const std::string & stage)
  {
    if (progress)
      progress(f, stage);
  };
  const double spacing = LargestSpacing(options.position.workingSpacing);
  const double positiveRadius = options.positiveRadiusMm > 0.0 ? options.positiveRadiusMm : spacing;
  const double centerPositive = options.centerPositiveMm > 0.0 ? options.centerPositiveMm : 0.75 * spacing;
  const double centerNegative = options.centerNegativeMm > 0.0 ? options.centerNegativeMm : 2.0 * spacing;

  // Every ground-truth pose first: a label missing from a map stops training before any work.
  std::vector<std::vector<StructurePose>> allTruths(structures.size());
  for (std::size_t s = 0; s < structures.size(); ++s)
    for (const auto & subject : subjects)
      allTruths[s].push_back(
        PoseFromLabel(subject.labels, structures[s].label, subject.name + " (structure " + structures[s].name + ")"));

  // One normalised copy and pyramid per subject, shared by every structure.
  std::vector<std::unique_ptr<SteerablePyramid>> pyramids;
  for (std::size_t v = 0; v < subjects.size(); ++v)
  {
    notify(0.05 * v / subjects.size(), "pyramid of " + subjects[v].name);
    pyramids.push_back(std::make_unique<SteerablePyramid>(
      SteerablePyramid::Build(NormalizedCopy(subjects[v].image, options.position.normalization),
                              options.steerable.pyramid,
                              options.steerable.pbt.threads)));
  }

  DetectorModel model;
  // Spatial priors of the network from the same subjects' ground truth (canopyDetectionNetwork.h).
  for (const auto & arc : options.network)
  {
    const auto at = [&](const std::string & name)
    { return std::find(names.begin(), names.end(), name) - names.begin(); };
    SpatialPrior prior = EstimateSpatialPrior(allTruths[at(arc.parent)], allTruths[at(arc.child)]);
    prior.child = arc.child;
    prior.parent = arc.parent;
    prior.sigmas = options.searchSigmas;
    prior.marginMm = options.searchMarginMm;
    ValidateSpatialPrior(prior, "train-detector: prior of " + arc.child + " given " + arc.parent);
    model.network.push_back(prior);
  }
  for (std::size_t s = 0; s < structures.size(); ++s)
  {
    const auto &                       spec = structures[s];
    const double                       base = 0.05 + 0.95 * s / structures.size(), share = 0.95 / structures.size();
    const std::vector<StructurePose> & truths = allTruths[s];

    StructureDetector d;
    d.name = spec.name;
    d.label = spec.label;
    d.threshold = options.threshold;
    d.candidates = options.candidates;
    d.orientationKeep = options.orientationKeep;
    d.aggregateCount = options.aggregateCount;
    d.gridSpan = options.gridSpan;
    d.clusterMm = 2.0 * spacing;
    for (const auto & t : truths)
      for (int a = 0; a < 3; ++a)
        d.meanSizeMm[a] += t.sizeMm[a] / static_cast<double>(truths.size());

    // Hypothesis sets (constrained MSL): training orientations and their perturbations; training sizes
    // times the size factors.
    std::mt19937_64 rng(SplitMix64(options.seed ^ SplitMix64(s + 1)));
    for (const auto & t : truths)
    {
      d.orientations.push_back(t.axes);
      for (int k = 0; k < options.perturbations; ++k)
        d.orientations.push_back(TurnedFrame(t.axes, 0.0, options.perturbationDegrees, rng));
      for (double f : options.sizeFactors)
        d.sizesMm.push_back({ { t.sizeMm[0] * f, t.sizeMm[1] * f, t.sizeMm[2] * f } });
    }

    // Stage 1: position.
    notify(base, spec.name + ": position stage");
    PBTVolumeTrainingOptions position = options.position;
    position.sampling.balanceClasses = true;
    position.sampling.nearBoundaryMm = 4.0 * positiveRadius;
    const double box = std::clamp(1.5 * std::max({ d.meanSizeMm[0], d.meanSizeMm[1], d.meanSizeMm[2] }), 24.0, 160.0);
    position.sampleBoxMm = { { box, box, box } };
    position.backend = options.backend;
    std::vector<LabelledVolume> volumes;
    for (std::size_t v = 0; v < subjects.size(); ++v)
      volumes.push_back({ subjects[v].image,
                          SphereMask(subjects[v].image, truths[v].centerMm, positiveRadius),
                          subjects[v].name + " (structure " + spec.name + ")" });
    PBTVolumeTrainingReport positionReport;
    d.position = TrainPBTFromVolumes(volumes, position, &positionReport);
    // The positives are the few working voxels near each true centre (at most 7 per image on a 3 mm
    // grid), and balanced classes make a node's effective sample count about 4x its positives: with
    // fewer than ~25 positives the root fell under minSamplesToSplit (100) and stayed a leaf, a
    // constant model that ranks every voxel 0.5 (the first voxels of the grid became the candidates;
    // seen on 7 synthesized SynthSeg images, right lateral ventricle). Such a root is retrained with
    // splitting allowed down to 2 effective samples.
    const bool positionRootRetrained = d.position.tree.nodes.empty() || d.position.tree.nodes[0].numLearners == 0;
    if (positionRootRetrained)
    {
      position.pbt.minSamplesToSplit = 2;
      d.position = TrainPBTFromVolumes(volumes, position, &positionReport);
    }

    // Stages 2 and 3: labelled pose hypotheses per subject. A third of the negatives sit where the
    // position stage puts its candidates on the training subject but the structure is not (hard
    // negatives, as the later stages meet them at detection).
    std::vector<std::vector<Vec3d>> hardCentres(subjects.size());
    for (std::size_t v = 0; v < subjects.size(); ++v)
      for (const auto & c :
           BestPositions(d.position,
                         PrepareVolume(subjects[v].image, d.position.workingSpacing, d.position.normalization),
                         options.candidates,
                         d.meanSizeMm,
                         options.backend,
                         options.position.pbt.threads))
        if (Distance(c.pose.centerMm, truths[v].centerMm) >= centerNegative)
          hardCentres[v].push_back(c.pose.centerMm);
    const SteerableGrid               grid = options.steerable.grid;
    PoseSampler                       sampler{ options, centerPositive, centerNegative, d.orientations, d.sizesMm };
    std::vector<SteerableTrainingSet> orientationSets, scaleSets;
    for (std::size_t v = 0; v < subjects.size(); ++v)
    {
      const StructurePose &                              t = truths[v];
      std::vector<std::pair<StructurePose, std::int8_t>> orientation, scale;
      for (int k = 0; k < options.positivesPerVolume; ++k)
      {
        orientation.emplace_back(WithPose(sampler.NearCentre(t, rng), sampler.NearFrame(t, rng), d.meanSizeMm), 1);
        scale.emplace_back(WithPose(sampler.NearCentre(t, rng), sampler.NearFrame(t, rng), sampler.NearSize(t, rng)),
                           1);
      }
      const auto & hard = hardCentres[v];
      for (int k = 0; k < options.negativesPerVolume; ++k)
      {
        const int kind = k % 6;
        if (kind < 2 && !hard.empty())
        {
          // Hard negatives: a position candidate away from the structure, any hypothesis.
          const Vec3d & c = hard[UniformIndex(rng, hard.size())];
          const Frame & f = d.orientations[UniformIndex(rng, d.orientations.size())];
          orientation.emplace_back(WithPose(c, f, d.meanSizeMm), -1);
          scale.emplace_back(WithPose(c, f, d.sizesMm[UniformIndex(rng, d.sizesMm.size())]), -1);
          continue;
        }
        // Orientation: wrong orientations at the centre, or right or wrong ones off-centre.
        const bool  offCentre = kind % 2 == 1;
        const Frame frame = offCentre && kind == 3 ? sampler.NearFrame(t, rng) : sampler.WrongFrame(t, rng);
        orientation.emplace_back(
          WithPose(offCentre ? sampler.FarCentre(t, rng) : sampler.NearCentre(t, rng), frame, d.meanSizeMm), -1);
        // Scale: wrong sizes at the right centre and orientation, or off-centre, or turned.
        const int which = k % 4;
        scale.emplace_back(WithPose(which == 2 ? sampler.FarCentre(t, rng) : sampler.NearCentre(t, rng),
                                    which == 3 ? sampler.WrongFrame(t, rng) : sampler.NearFrame(t, rng),
                                    which < 2 ? sampler.WrongSize(t, rng) : sampler.NearSize(t, rng)),
                           -1);
      }
      const std::string name = subjects[v].name + " (structure " + spec.name + ")";
      orientationSets.push_back(MakeSet(*pyramids[v], name, orientation, grid, d.gridSpan));
      scaleSets.push_back(MakeSet(*pyramids[v], name, scale, grid, d.gridSpan));
    }
    SteerablePBTTrainingOptions steerable = options.steerable;
    steerable.backend = options.backend;
    notify(base + 0.4 * share, spec.name + ": orientation stage");
    SteerablePBTTrainingReport orientationReport, scaleReport;
    d.orientation = TrainSteerablePBT(orientationSets, steerable, &orientationReport);
    notify(base + 0.7 * share, spec.name + ": scale stage");
    steerable.pbt.seed += 1;
    d.scale = TrainSteerablePBT(scaleSets, steerable, &scaleReport);

    d.training = { { "subjects", subjects.size() },
                   { "positionPositiveRadiusMm", positiveRadius },
                   { "centerPositiveMm", centerPositive },
                   { "centerNegativeMm", centerNegative },
                   { "orientationPositiveDegrees", options.orientationPositiveDegrees },
                   { "orientationNegativeDegrees", options.orientationNegativeDegrees },
                   { "sizePositive", options.sizePositive },
                   { "sizeNegative", options.sizeNegative },
                   { "perturbations", options.perturbations },
                   { "perturbationDegrees", options.perturbationDegrees },
                   { "positionSamples", positionReport.samples },
                   { "positionTrainingAccuracy", positionReport.trainingAccuracy },
                   { "positionRootRetrained", positionRootRetrained },
                   { "orientationSamples", orientationReport.samples },
                   { "orientationTrainingAccuracy", orientationReport.trainingAccuracy },
                   { "scaleSamples", scaleReport.samples },
                   { "scaleTrainingAccuracy", scaleReport.trainingAccuracy },
                   { "seed", options.seed } };
    model.structures.push_back(std::move(d));
  }
  notify(1.0, "done");
  return model;
}

} // namespace canopy
