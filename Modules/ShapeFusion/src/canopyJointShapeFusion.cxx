#include "canopyJointShapeFusion.h"

#include "canopy/Errors.h"
#include "canopyShapeOutputs.h" // VoxelizeMesh

#include <algorithm>
#include <cmath>
#include <set>

namespace canopy
{
namespace
{
void
CheckStructures(int components, const std::vector<int> & labels, std::size_t distances)
{
  if (labels.empty())
    CANOPY_THROW("joint shape fusion: no structure");
  if (distances != labels.size())
    CANOPY_THROW("joint shape fusion: " << distances << " signed distance maps for " << labels.size() << " labels");
  std::set<int> seen;
  for (const int label : labels)
  {
    if (label < 1 || label >= components)
      CANOPY_THROW("joint shape fusion: label " << label << " has no class in the probability image (its " << components
                                                << " components are the classes 0-" << components - 1
                                                << ", 0 the background)");
    if (!seen.insert(label).second)
      CANOPY_THROW("joint shape fusion: label " << label << " is given to two structures");
  }
}
} // namespace

JointShapeFusionStatistics
JointFuseShapePriors(const float *                      probabilities,
                     int                                components,
                     const std::vector<const float *> & signedDistancesMm,
                     const std::vector<int> &           labels,
                     std::size_t                        n,
                     const ShapeFusionParameters &      parameters,
                     int *                              out)
{
  CheckShapeFusionParameters(parameters);
  if (parameters.lambda != 0)
    CANOPY_THROW("joint shape fusion: the graph cut's lambda must be 0, not "
                 << parameters.lambda << " (the joint fusion of several structures has no multi-label graph cut)");
  CheckStructures(components, labels, signedDistancesMm.size());
  const std::size_t          m = labels.size();
  const double               floor = parameters.probabilityFloor, band = parameters.bandMm;
  JointShapeFusionStatistics statistics;
  statistics.structures.resize(m);
  for (std::size_t i = 0; i < n; ++i)
  {
    const float * p = probabilities + i * std::size_t(components);
    double        structureSum = 0;
    int           inside = 0, inBand = 0;
    for (std::size_t j = 0; j < m; ++j)
    {
      const float q = p[labels[j]], d = signedDistancesMm[j][i];
      if (!std::isfinite(q) || !std::isfinite(d))
        CANOPY_THROW("joint shape fusion: voxel " << i << " has a non-finite "
                                                  << (std::isfinite(q) ? "distance" : "probability") << " for label "
                                                  << labels[j] << " (" << (std::isfinite(q) ? d : q) << ")");
      structureSum += q;
      inside += d < 0;
      inBand += std::abs(d) <= band;
    }
    statistics.overlapVoxels += inside >= 2;
    statistics.contestedVoxels += inBand >= 2;

    // Deep inside a mesh (beyond its band) its label stands; in several: the one the voxel lies deepest in.
    std::size_t winner = m;
    for (std::size_t j = 0; j < m; ++j)
    {
      const float d = signedDistancesMm[j][i];
      if (d < -band && (winner == m || d < signedDistancesMm[winner][i]))
        winner = j;
    }
    if (winner == m)
    {
      // Within the bands: the structure of the highest log-odds against the rest, if they are >= 0 (as
      // the one-structure fusion thresholds its fused probability, in float, at 0.5).
      const double rest = std::clamp(1.0 - structureSum, floor, 1.0 - floor);
      double       best = 0;
      for (std::size_t j = 0; j < m; ++j)
      {
        const double d = signedDistancesMm[j][i];
        if (std::abs(d) > band)
          continue;
        const double q = std::clamp(double(p[labels[j]]), floor, 1.0 - floor);
        const double logit =
          parameters.voxelWeight * std::log(q / rest) - (d - parameters.offsetMm) / parameters.widthMm;
        if (float(1.0 / (1.0 + std::exp(-logit))) >= 0.5f && (winner == m || logit > best))
        {
          winner = j;
          best = logit;
        }
      }
    }
    out[i] = winner == m ? 0 : labels[winner];
    for (std::size_t j = 0; j < m; ++j)
    {
      const float             d = signedDistancesMm[j][i];
      const bool              labelled = winner == j;
      ShapeFusionStatistics & s = statistics.structures[j];
      s.bandVoxels += std::abs(d) <= band;
      s.meshVoxels += d < 0;
      s.fusedVoxels += labelled;
      s.addedVoxels += labelled && d >= 0;
      s.removedVoxels += !labelled && d < 0;
    }
  }
  return statistics;
}

LabelImage::Pointer
FuseMeshesWithClassProbabilities(const std::vector<FusionStructure> & structures,
                                 const itk::VectorImage<float, 3> *   probabilities,
                                 const ShapeFusionParameters &        parameters,
                                 JointShapeFusionStatistics *         statistics)
{
  CheckShapeFusionParameters(parameters);
  if (probabilities == nullptr)
    CANOPY_THROW("joint shape fusion: no probability image");
  const auto region = probabilities->GetLargestPossibleRegion();
  if (probabilities->GetBufferedRegion() != region)
    CANOPY_THROW("joint shape fusion: the probability image is not wholly in memory");
  const int        components = int(probabilities->GetNumberOfComponentsPerPixel());
  std::vector<int> labels;
  for (const auto & s : structures)
    labels.push_back(s.label);
  CheckStructures(components, labels, labels.size());

  std::vector<std::vector<float>> distances;
  std::vector<const float *>      distancePointers;
  for (const auto & s : structures)
  {
    LabelImage::Pointer inside;
    try
    {
      inside = VoxelizeMesh(s.points, s.triangles, probabilities, s.label);
    }
    catch (const Error & e)
    {
      CANOPY_THROW("joint shape fusion: the mesh of label " << s.label << ": " << e.what());
    }
    const int * in = inside->GetBufferPointer();
    if (std::none_of(in, in + region.GetNumberOfPixels(), [](int v) { return v != 0; }))
      CANOPY_THROW("joint shape fusion: the mesh of label "
                   << s.label
                   << " holds no voxel centre of the probability image's grid (off its grid: is the image of "
                      "another volume?)");
    distances.push_back(SignedDistanceToMesh(s.points, s.triangles, inside, parameters.bandMm + 1.0, true));
    distancePointers.push_back(distances.back().data());
  }

  auto result = LabelImage::New();
  result->CopyInformation(probabilities);
  result->SetRegions(region);
  result->Allocate();
  const JointShapeFusionStatistics s = JointFuseShapePriors(probabilities->GetBufferPointer(),
                                                            components,
                                                            distancePointers,
                                                            labels,
                                                            region.GetNumberOfPixels(),
                                                            parameters,
                                                            result->GetBufferPointer());
  if (statistics)
    *statistics = s;
  return result;
}
} // namespace canopy
