// Detection in the hierarchical network's order (canopyDetectionNetwork.h): a child's position stage
// searches the box its parent's detected pose predicts; the later stages are the independent
// detector's. A parent that was not found leaves its child to the whole volume, never to a made-up pose.
#include "canopyPoseDetector.h"

#include <chrono>
#include <map>

namespace canopy
{

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
      {
        const auto centres = PositionCandidatesInRegion(
          s, PredictCentre(p, parent.pose), p.sigmas, p.marginMm, &entry.timings, &entry.box, &entry.gridVoxels);
        if (centres.empty())
        {
          entry.searched = "whole volume (the region predicted from parent " + p.parent + " misses the image)";
          entry.result = Detect(s, &entry.timings);
        }
        else
        {
          entry.searched = "region predicted from parent " + p.parent;
          entry.result = Detect(s, &entry.timings, &centres);
        }
      }
    }
    entry.result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (progress)
      progress(static_cast<double>(++done) / static_cast<double>(out.size()));
  }
  return out;
}

} // namespace canopy
