// Detection in the hierarchical network's order (canopyDetectionNetwork.h): a child's position stage
// searches the box its parent's detected pose predicts, and its stages are scored and seeded by its
// prior (canopyNetworkPrior.h). A parent that was not found leaves its child to the whole volume and
// the independent detector, never to a made-up pose.
#include "canopyPoseDetector.h"

#include "canopy/PortableRandom.h"

#include <chrono>
#include <map>

namespace canopy
{

void
PoseDetector::DetectChild(int s, const SpatialPrior & prior, const StructurePose & parent, NetworkDetection & entry)
{
  const PriorScoringOptions & o = GetOptions().prior;
  const StructureDetector &   d = GetModel().structures.at(static_cast<std::size_t>(s));
  const ChildPrior            bound = BindChildPrior(prior, parent, o);
  const double                w = o.weight;
  CentreFactor                factor;
  if (w > 0.0)
    factor = [&](const Vec3d & c) { return PriorFactor(w, CentreLogPrior(bound, c)); };
  const auto centres = PositionCandidatesInRegion(s,
                                                  PredictCentre(prior, parent),
                                                  prior.sigmas,
                                                  prior.marginMm,
                                                  &entry.timings,
                                                  &entry.box,
                                                  &entry.gridVoxels,
                                                  factor);
  if (centres.empty())
  {
    entry.searched = "whole volume (the region predicted from parent " + prior.parent + " misses the image)";
    entry.result = Detect(s, &entry.timings);
    return;
  }
  entry.searched = "region predicted from parent " + prior.parent;
  entry.priorUsed = true;
  // Hypotheses: the model's lists, the prior's draws, or both (one seed per structure: reproducible).
  std::vector<Frame> frames;
  std::vector<Vec3d> sizes;
  if (o.hypotheses != "prior")
  {
    frames = d.orientations;
    sizes = d.sizesMm;
  }
  if (o.hypotheses != "model")
  {
    const std::uint64_t seed = SplitMix64(o.seed ^ SplitMix64(static_cast<std::uint64_t>(s)));
    const auto          priorFrames = PriorOrientationHypotheses(bound, o.orientationSamples, seed);
    const auto          priorSizes = PriorSizeHypotheses(bound, o.sizeSamples, SplitMix64(seed));
    frames.insert(frames.end(), priorFrames.begin(), priorFrames.end());
    sizes.insert(sizes.end(), priorSizes.begin(), priorSizes.end());
    entry.priorOrientations = static_cast<int>(priorFrames.size());
    entry.priorSizes = static_cast<int>(priorSizes.size());
  }
  std::vector<float> frameWeights, sizeWeights;
  if (w > 0.0)
  {
    for (const Frame & f : frames)
      frameWeights.push_back(PriorFactor(w, OrientationLogPrior(bound, f)));
    for (const Vec3d & z : sizes)
      sizeWeights.push_back(PriorFactor(w, SizeLogPrior(bound, z)));
  }
  const auto oriented =
    OrientationStage(s, centres, frames, w > 0.0 ? &frameWeights : nullptr, d.orientationKeep, &entry.timings);
  // Under the prior every scale hypothesis comes back, so that the best ranked one with evidence is
  // found even when better ranked ones (close to the prediction) have none.
  // A child of a found parent exists: --child-threshold may lower the bar of its evidence (lowConfidence
  // below the structure's own threshold).
  const double threshold = o.childThreshold >= 0.0 ? o.childThreshold : ThresholdOf(s);
  const auto   scaled = RefineCentres(
    s,
    ScaleStage(s, oriented, sizes, w > 0.0 ? &sizeWeights : nullptr, w > 0.0 ? 0 : d.aggregateCount, &entry.timings),
    w > 0.0 ? threshold : -1.0,
    factor,
    &entry.timings);
  entry.result = Aggregate(s, scaled, entry.timings, w > 0.0, threshold);
  if (entry.result.found)
  {
    entry.centreLogPrior = CentreLogPrior(bound, entry.result.pose.centerMm);
    entry.orientationLogPrior = OrientationLogPrior(bound, entry.result.pose.axes);
    entry.sizeLogPrior = SizeLogPrior(bound, entry.result.pose.sizeMm);
  }
}

std::vector<NetworkDetection>
PoseDetector::DetectAll(const std::function<void(double)> & progress)
{
  const DetectorModel &               model = GetModel();
  const bool                          network = GetOptions().useNetwork;
  std::vector<std::string>            names;
  std::map<std::string, int>          index;
  std::map<int, const SpatialPrior *> priorOf;
  for (const auto & d : model.structures)
  {
    index[d.name] = static_cast<int>(names.size());
    names.push_back(d.name);
  }
  std::vector<NetworkArc> arcs;
  if (network)
    for (const auto & prior : model.network)
    {
      arcs.push_back({ prior.child, prior.parent });
      priorOf[index.at(prior.child)] = &prior;
    }
  std::vector<NetworkDetection> out(model.structures.size());
  std::size_t                   done = 0;
  for (int s : NetworkOrder(names, arcs, "detector network"))
  {
    NetworkDetection & entry = out[s];
    const auto         start = std::chrono::steady_clock::now();
    const auto         prior = priorOf.find(s);
    if (prior == priorOf.end())
    {
      entry.searched = "whole volume";
      entry.result = Detect(s, &entry.timings);
    }
    else
    {
      const SpatialPrior &      p = *prior->second;
      const DetectedStructure & parent = out[index.at(p.parent)].result;
      entry.parent = p.parent;
      if (!parent.found)
      {
        entry.searched = "whole volume (parent " + p.parent + " not found)";
        entry.result = Detect(s, &entry.timings);
      }
      else
        DetectChild(s, p, parent.pose, entry);
    }
    entry.result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (progress)
      progress(static_cast<double>(++done) / static_cast<double>(out.size()));
  }
  return out;
}

} // namespace canopy
