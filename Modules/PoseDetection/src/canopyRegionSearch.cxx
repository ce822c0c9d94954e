// The position stage on a region of the working grid (the hierarchical network's child search,
// canopyDetectionNetwork.h): the dense Haar PBT runs on a crop of the prepared volume, the box plus the
// features' reach on every side (clipped to the volume), so that no feature box inside the search box
// is clipped differently from the whole volume and the scores there are the whole volume's.
#include "canopyPoseDetector.h"

#include "canopy/Errors.h"
#include "canopyHaarFeatureBank.h"

#include <algorithm>
#include <cmath>

namespace canopy
{

std::int64_t
GridBox::Voxels() const
{
  std::int64_t n = 1;
  for (int d = 0; d < 3; ++d)
    n *= std::max<std::int64_t>(0, hi[d] - lo[d] + 1);
  return n;
}

GridBox
SearchBoxOnGrid(const PredictedCentre & centre, double sigmas, double marginMm, const FloatVolume * grid)
{
  // Index coordinates: i = S^-1 D^T (x - origin), so the covariance there is M C M^T with M = S^-1 D^T.
  const auto            spacing = grid->GetSpacing();
  const auto            direction = grid->GetDirection();
  const auto            size = grid->GetLargestPossibleRegion().GetSize();
  itk::Point<double, 3> p;
  for (int k = 0; k < 3; ++k)
    p[k] = centre.centerMm[k];
  itk::ContinuousIndex<double, 3> c;
  grid->TransformPhysicalPointToContinuousIndex(p, c);
  GridBox box;
  for (int j = 0; j < 3; ++j)
  {
    double variance = 0.0;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        variance += direction[a][j] * centre.covariance[a][b] * direction[b][j];
    const double half = (sigmas * std::sqrt(std::max(0.0, variance)) + marginMm) / spacing[j];
    box.lo[j] = std::max<long>(0, static_cast<long>(std::floor(c[j] - half)));
    box.hi[j] = std::min<long>(static_cast<long>(size[j]) - 1, static_cast<long>(std::ceil(c[j] + half)));
  }
  return box;
}

std::array<int, 3>
HaarReach(const PBTModel & tree)
{
  std::array<int, 3> reach{ { 0, 0, 0 } };
  const auto         features = ResolveHaarBank(tree.features, tree.sampleBox);
  for (const auto & learner : tree.learners)
  {
    const HaarFeatureVoxels & f = features[learner.feature];
    for (int c = 0; c < f.numCuboids; ++c)
      for (int d = 0; d < 3; ++d)
        reach[d] = std::max({ reach[d], std::abs(f.lo[c][d]), std::abs(f.hi[c][d]) });
  }
  for (int & r : reach) // the integral volume reads the corner one voxel below a box
    r += 1;
  return reach;
}

std::vector<float>
PositionScoresInBox(const PBTModelFile &    model,
                    const FloatVolume *     prepared,
                    const GridBox &         box,
                    const ResolvedBackend & backend,
                    int                     cpuThreads,
                    std::int64_t *          voxels)
{
  if (box.Voxels() == 0)
    return {};
  const auto          size = prepared->GetLargestPossibleRegion().GetSize();
  const auto          reach = HaarReach(model.tree);
  std::array<long, 3> lo, n;
  for (int d = 0; d < 3; ++d)
  {
    if (box.lo[d] < 0 || box.hi[d] >= static_cast<long>(size[d]))
      CANOPY_THROW("PositionScoresInBox: the box leaves the working grid along axis " << d);
    lo[d] = std::max<long>(0, box.lo[d] - reach[d]);
    n[d] = std::min<long>(static_cast<long>(size[d]) - 1, box.hi[d] + reach[d]) - lo[d] + 1;
  }
  std::vector<float> crop(static_cast<std::size_t>(n[0] * n[1] * n[2]));
  const float *      source = prepared->GetBufferPointer();
  for (long z = 0; z < n[2]; ++z)
    for (long y = 0; y < n[1]; ++y)
      std::copy_n(source + ((lo[2] + z) * long(size[1]) + lo[1] + y) * long(size[0]) + lo[0],
                  n[0],
                  crop.data() + (z * n[1] + y) * n[0]);
  std::vector<float>   probability(crop.size());
  PBTEvaluationOptions evaluation;
  evaluation.cpuThreads = cpuThreads;
  PBTVolumeEvaluator evaluator(model.tree, backend, evaluation);
  evaluator.Evaluate(crop.data(), int(n[0]), int(n[1]), int(n[2]), probability.data());
  if (voxels)
    *voxels += static_cast<std::int64_t>(crop.size());
  std::vector<float> out;
  out.reserve(static_cast<std::size_t>(box.Voxels()));
  for (long z = box.lo[2]; z <= box.hi[2]; ++z)
    for (long y = box.lo[1]; y <= box.hi[1]; ++y)
      for (long x = box.lo[0]; x <= box.hi[0]; ++x)
        out.push_back(probability[((z - lo[2]) * n[1] + (y - lo[1])) * n[0] + (x - lo[0])]);
  return out;
}

std::vector<ScoredPose>
BestPositionsInBox(const PBTModelFile &    model,
                   const FloatVolume *     prepared,
                   const GridBox &         box,
                   int                     k,
                   const Vec3d &           size,
                   const ResolvedBackend & backend,
                   int                     cpuThreads,
                   std::int64_t *          voxels,
                   const CentreFactor &    factor)
{
  const auto scores = PositionScoresInBox(model, prepared, box, backend, cpuThreads, voxels);
  const long nx = box.hi[0] - box.lo[0] + 1, ny = box.hi[1] - box.lo[1] + 1;
  auto       centre = [&](std::int64_t i)
  {
    const FloatVolume::IndexType index{ { box.lo[0] + static_cast<long>(i % nx),
                                          box.lo[1] + static_cast<long>((i / nx) % ny),
                                          box.lo[2] + static_cast<long>(i / (nx * ny)) } };
    itk::Point<double, 3>        p;
    prepared->TransformIndexToPhysicalPoint(index, p);
    return Vec3d{ { p[0], p[1], p[2] } };
  };
  std::vector<float> ranked = scores;
  if (factor)
    for (std::size_t i = 0; i < ranked.size(); ++i)
      ranked[i] = scores[i] * factor(centre(static_cast<std::int64_t>(i)));
  // Box voxels in x-fastest order keep the whole grid's index order, so ties break as in BestPositions.
  std::vector<ScoredPose> out;
  for (std::int64_t i : TopScores(ranked.data(), static_cast<std::int64_t>(ranked.size()), k))
  {
    ScoredPose candidate;
    candidate.pose.centerMm = centre(i);
    candidate.pose.sizeMm = size;
    candidate.evidence = candidate.stageScores[0] = scores[static_cast<std::size_t>(i)];
    candidate.score = ranked[static_cast<std::size_t>(i)];
    out.push_back(candidate);
  }
  return out;
}

} // namespace canopy
