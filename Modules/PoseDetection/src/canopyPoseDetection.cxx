// Detection with a trained marginal-space detector (canopyPoseDetector.h): dense position scores and
// top-K, then orientation and scale hypotheses scored by steerable PBTs through the one hypothesis
// traversal (SteerableResponseEngine::EvaluatePBT: PBTHypotheses.h on the CPU or the GPU).
#include "canopyPoseDetector.h"

#include "canopy/Elapsed.h"
#include "canopy/Errors.h"
#include "canopy/TopScores.h"
#include "canopyDetectorModelFile.h"
#include "canopyPoseGeometry.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>

namespace canopy
{
using namespace posedetail;

namespace
{
using Clock = std::chrono::steady_clock;

} // namespace

std::vector<std::int64_t>
TopScores(const float * scores, std::int64_t count, std::int64_t k)
{
  return TopScoresCPU(scores, count, k);
}

SteerablePose
ToSteerablePose(const StructurePose & pose, const SteerableGrid & grid, double gridSpan)
{
  SteerablePose out;
  const double  span = std::max(1, grid.size - 1) * static_cast<double>(grid.spacingMm);
  for (int a = 0; a < 3; ++a)
  {
    out.center[a] = static_cast<float>(pose.centerMm[a]);
    out.scale[a] = static_cast<float>(pose.sizeMm[a] * gridSpan / span);
    for (int k = 0; k < 3; ++k)
      out.axes[a][k] = static_cast<float>(pose.axes[a][k]);
  }
  return out;
}

StructurePose
AveragePoses(const std::vector<ScoredPose> & poses)
{
  if (poses.empty())
    CANOPY_THROW("AveragePoses: no pose to average");
  double total = 0.0;
  for (const auto & p : poses)
    total += std::max(0.0f, p.score);
  const bool    uniform = !(total > 0.0);
  StructurePose out;
  out.centerMm = { { 0, 0, 0 } };
  out.sizeMm = { { 0, 0, 0 } };
  Frame sum{};
  for (const auto & p : poses)
  {
    const double w = uniform ? 1.0 / poses.size() : std::max(0.0f, p.score) / total;
    for (int k = 0; k < 3; ++k)
    {
      out.centerMm[k] += w * p.pose.centerMm[k];
      out.sizeMm[k] += w * p.pose.sizeMm[k];
    }
    for (int a = 0; a < 3; ++a)
    {
      const double sign = Dot(p.pose.axes[a], poses.front().pose.axes[a]) < 0.0 ? -1.0 : 1.0;
      for (int k = 0; k < 3; ++k)
        sum[a][k] += w * sign * p.pose.axes[a][k];
    }
  }
  // Gram-Schmidt from the long axis; the third completes a right-handed frame.
  auto normalise = [](Vec3d v)
  {
    const double n = std::sqrt(Dot(v, v));
    for (double & x : v)
      x /= n;
    return v;
  };
  Frame axes;
  axes[0] = normalise(sum[0]);
  Vec3d        second = sum[1];
  const double along = Dot(second, axes[0]);
  for (int k = 0; k < 3; ++k)
    second[k] -= along * axes[0][k];
  axes[1] = normalise(second);
  axes[2] = Cross(axes[0], axes[1]);
  out.axes = CanonicalAxes(axes);
  return out;
}

struct PoseDetector::Impl
{
  DetectorModel                                         model;
  DetectionOptions                                      options;
  FloatVolume::ConstPointer                             image;
  std::map<std::array<double, 3>, FloatVolume::Pointer> prepared; // per working spacing, for `image`
  std::unique_ptr<SteerablePyramid>                     pyramid;
  std::unique_ptr<SteerableResponseEngine>              engine;

  const StructureDetector & At(int s) const
  {
    if (s < 0 || s >= static_cast<int>(model.structures.size()))
      CANOPY_THROW("PoseDetector: structure " << s << " is not in the model (" << model.structures.size() << ")");
    if (!image)
      CANOPY_THROW("PoseDetector: no image (call SetImage first)");
    return model.structures[s];
  }

  /** One MSL stage: every parent x every variant (PoseProductFeatureFunc: the hypothesis takes the
   * fields `fromVariant` from its variant), scored by `stage` and ranked by the product of the
   * posteriors along its chain (MSL's joint probability), not by this stage's alone, so a later stage
   * never resurrects a centre or an orientation an earlier one found unlikely. On CUDA the hypotheses
   * are made, scored and ranked on the device and only the `keep` best come back. Returns the kept
   * hypotheses' indices (parent = index / variants), joint and own scores. */
  void Stage(const PBTModel &                   stage,
             const std::vector<ScoredPose> &    parents,
             const std::vector<SteerablePose> & parentPoses,
             const std::vector<SteerablePose> & variantPoses,
             int                                fromVariant,
             int                                keep,
             std::vector<std::int64_t> &        indices,
             std::vector<float> &               joint,
             std::vector<float> &               scores,
             const std::vector<float> *         weights)
  {
    if (weights && weights->size() != variantPoses.size())
      CANOPY_THROW("PoseDetector: " << weights->size() << " variant weights for " << variantPoses.size()
                                    << " variants");
    SetSteerablePBT(*engine, stage);
    std::vector<float> parentScores;
    for (const auto & p : parents)
      parentScores.push_back(p.score);
    engine->EvaluatePBTStage(parentPoses.data(),
                             static_cast<std::int64_t>(parentPoses.size()),
                             variantPoses.data(),
                             static_cast<std::int64_t>(variantPoses.size()),
                             fromVariant,
                             parentScores.data(),
                             keep,
                             indices,
                             joint,
                             scores,
                             weights ? weights->data() : nullptr);
  }
};

void
ValidateDetectionOptions(const DetectionOptions & o, const std::string & where)
{
  ValidatePriorScoring(o.prior, where);
  if (!(std::isfinite(o.refineStepMm) && o.refineStepMm >= 0.0 && o.refineStepMm <= 20.0))
    CANOPY_THROW(where << ": the centre refinement step must be in [0, 20] mm (0: off; got " << o.refineStepMm << ")");
  if (o.refineReach < 1 || o.refineReach > 5)
    CANOPY_THROW(where << ": the centre refinement reach must be 1..5 steps per side (got " << o.refineReach << ")");
}

PoseDetector::PoseDetector(const DetectorModel & model, const DetectionOptions & options)
  : m_Impl(std::make_unique<Impl>())
{
  ValidateDetectorModel(model, "detector");
  ValidateDetectionOptions(options, "detector options");
  m_Impl->model = model;
  m_Impl->options = options;
  m_Impl->engine = std::make_unique<SteerableResponseEngine>(options.backend, options.cpuThreads);
}

PoseDetector::~PoseDetector() = default;

const DetectorModel &
PoseDetector::GetModel() const
{
  return m_Impl->model;
}

const DetectionOptions &
PoseDetector::GetOptions() const
{
  return m_Impl->options;
}

const ResolvedBackend &
PoseDetector::GetBackend() const
{
  return m_Impl->options.backend;
}

void
PoseDetector::SetImage(const FloatVolume * image, const std::string & where)
{
  if (!image)
    CANOPY_THROW(where << ": no image");
  const auto    n = image->GetLargestPossibleRegion().GetNumberOfPixels();
  const float * v = image->GetBufferPointer();
  float         low = INFINITY, high = -INFINITY;
  for (std::size_t i = 0; i < n; ++i)
    if (std::isfinite(v[i]))
    {
      low = std::min(low, v[i]);
      high = std::max(high, v[i]);
    }
  if (!(high > low))
    CANOPY_THROW(where << ": the volume is constant or has no finite voxel; there is nothing to detect");
  m_Impl->image = image;
  m_Impl->prepared.clear();
  const StructureDetector & first = m_Impl->model.structures.front();
  if (m_Impl->options.backend.useCuda)
  {
    // One upload of the image; normalisation, pyramid and gradients on the device (PyramidMath.h),
    // matching the host path below (SteerableFeaturesCudaTest, PoseDetectorCudaTest).
    m_Impl->pyramid.reset();
    m_Impl->engine->SetImage(
      image, first.orientation.steerable.pyramid, PyramidScalingOf(first.position.normalization));
    return;
  }
  m_Impl->pyramid =
    std::make_unique<SteerablePyramid>(SteerablePyramid::Build(NormalizedCopy(image, first.position.normalization),
                                                               first.orientation.steerable.pyramid,
                                                               m_Impl->options.cpuThreads));
  m_Impl->engine->SetPyramid(*m_Impl->pyramid);
}

std::vector<ScoredPose>
BestPositions(const PBTModelFile &    model,
              const FloatVolume *     prepared,
              int                     k,
              const Vec3d &           size,
              const ResolvedBackend & backend,
              int                     cpuThreads,
              std::int64_t *          voxels)
{
  const auto           n = prepared->GetLargestPossibleRegion().GetSize();
  PBTEvaluationOptions evaluation;
  evaluation.cpuThreads = cpuThreads;
  PBTVolumeEvaluator evaluator(model.tree, backend, evaluation);
  // On CUDA the dense map is ranked on the device and only the k winners come back (TopScores order).
  std::vector<std::int64_t> best;
  std::vector<float>        posterior;
  evaluator.EvaluateBest(prepared->GetBufferPointer(), int(n[0]), int(n[1]), int(n[2]), k, best, posterior);
  std::vector<ScoredPose> out;
  for (std::size_t r = 0; r < best.size(); ++r)
  {
    const std::int64_t           i = best[r];
    const FloatVolume::IndexType index{
      { static_cast<long>(i % n[0]), static_cast<long>((i / n[0]) % n[1]), static_cast<long>(i / (n[0] * n[1])) }
    };
    itk::Point<double, 3> p;
    prepared->TransformIndexToPhysicalPoint(index, p);
    ScoredPose candidate;
    candidate.pose.centerMm = { { p[0], p[1], p[2] } };
    candidate.pose.sizeMm = size;
    candidate.score = candidate.evidence = candidate.stageScores[0] = posterior[r];
    out.push_back(candidate);
  }
  if (voxels)
    *voxels += static_cast<std::int64_t>(prepared->GetLargestPossibleRegion().GetNumberOfPixels());
  return out;
}

std::vector<ScoredPose>
PoseDetector::PositionCandidates(int structure, StageTimings * timings)
{
  const StructureDetector & d = m_Impl->At(structure);
  const auto                start = Clock::now();
  std::int64_t              voxels = 0;
  // Structures on one working grid share its preparation (the normalisation is the detector's).
  auto & prepared = m_Impl->prepared[d.position.workingSpacing];
  if (!prepared)
    prepared = PrepareVolume(m_Impl->image, d.position.workingSpacing, d.position.normalization);
  auto out = BestPositions(
    d.position, prepared, d.candidates, d.meanSizeMm, m_Impl->options.backend, m_Impl->options.cpuThreads, &voxels);
  if (timings)
  {
    timings->positionSeconds += SecondsSince(start);
    timings->positionVoxels += voxels;
  }
  return out;
}

std::vector<ScoredPose>
PoseDetector::PositionCandidatesInRegion(int                     structure,
                                         const PredictedCentre & centre,
                                         double                  sigmas,
                                         double                  marginMm,
                                         StageTimings *          timings,
                                         GridBox *               box,
                                         std::int64_t *          gridVoxels,
                                         const CentreFactor &    factor)
{
  const StructureDetector & d = m_Impl->At(structure);
  const auto                start = Clock::now();
  std::int64_t              voxels = 0;
  auto &                    prepared = m_Impl->prepared[d.position.workingSpacing];
  if (!prepared)
    prepared = PrepareVolume(m_Impl->image, d.position.workingSpacing, d.position.normalization);
  const GridBox searched = SearchBoxOnGrid(centre, sigmas, marginMm, prepared);
  auto          out = BestPositionsInBox(d.position,
                                prepared,
                                searched,
                                d.candidates,
                                d.meanSizeMm,
                                m_Impl->options.backend,
                                m_Impl->options.cpuThreads,
                                &voxels,
                                factor);
  if (box)
    *box = searched;
  if (gridVoxels)
    *gridVoxels = static_cast<std::int64_t>(prepared->GetLargestPossibleRegion().GetNumberOfPixels());
  if (timings)
  {
    timings->positionSeconds += SecondsSince(start);
    timings->positionVoxels += voxels;
  }
  return out;
}

std::vector<ScoredPose>
PoseDetector::OrientationCandidates(int                             structure,
                                    const std::vector<ScoredPose> & centres,
                                    int                             keep,
                                    StageTimings *                  timings)
{
  return OrientationStage(structure, centres, m_Impl->At(structure).orientations, nullptr, keep, timings);
}

std::vector<ScoredPose>
PoseDetector::OrientationStage(int                             structure,
                               const std::vector<ScoredPose> & centres,
                               const std::vector<Frame> &      frames,
                               const std::vector<float> *      weights,
                               int                             keep,
                               StageTimings *                  timings)
{
  const StructureDetector &  d = m_Impl->At(structure);
  const auto                 start = Clock::now();
  const SteerableGrid &      grid = d.orientation.steerable.grid;
  std::vector<SteerablePose> parents, variants;
  for (const auto & c : centres)
  {
    StructurePose h;
    h.centerMm = c.pose.centerMm;
    h.sizeMm = d.meanSizeMm;
    parents.push_back(ToSteerablePose(h, grid, d.gridSpan)); // its centre
  }
  for (const Frame & frame : frames)
  {
    StructurePose h;
    h.axes = frame;
    h.sizeMm = d.meanSizeMm;
    variants.push_back(ToSteerablePose(h, grid, d.gridSpan)); // its axes and scale
  }
  std::vector<std::int64_t> kept;
  std::vector<float>        joint, scores;
  m_Impl->Stage(d.orientation,
                centres,
                parents,
                variants,
                kPoseFromVariantAxes | kPoseFromVariantScale,
                keep,
                kept,
                joint,
                scores,
                weights);
  std::vector<ScoredPose> out;
  const auto              perParent = static_cast<std::int64_t>(frames.size());
  for (std::size_t r = 0; r < kept.size(); ++r)
  {
    const ScoredPose & from = centres[static_cast<std::size_t>(kept[r] / perParent)];
    ScoredPose         p = from;
    p.pose = StructurePose{};
    p.pose.centerMm = from.pose.centerMm;
    p.pose.axes = frames[static_cast<std::size_t>(kept[r] % perParent)];
    p.pose.sizeMm = d.meanSizeMm;
    p.stageScores[1] = scores[r];
    p.evidence = from.evidence * scores[r];
    p.score = joint[r];
    out.push_back(p);
  }
  if (timings)
  {
    timings->orientationSeconds += SecondsSince(start);
    timings->orientationHypotheses += static_cast<std::int64_t>(centres.size() * frames.size());
  }
  return out;
}

std::vector<ScoredPose>
PoseDetector::ScaleCandidates(int structure, const std::vector<ScoredPose> & oriented, int keep, StageTimings * timings)
{
  return ScaleStage(structure, oriented, m_Impl->At(structure).sizesMm, nullptr, keep, timings);
}

std::vector<ScoredPose>
PoseDetector::ScaleStage(int                             structure,
                         const std::vector<ScoredPose> & oriented,
                         const std::vector<Vec3d> &      sizes,
                         const std::vector<float> *      weights,
                         int                             keep,
                         StageTimings *                  timings)
{
  const StructureDetector &  d = m_Impl->At(structure);
  const auto                 start = Clock::now();
  const SteerableGrid &      grid = d.scale.steerable.grid;
  std::vector<SteerablePose> parents, variants;
  for (const auto & c : oriented)
    parents.push_back(ToSteerablePose(c.pose, grid, d.gridSpan)); // its centre and axes
  for (const Vec3d & size : sizes)
  {
    StructurePose h;
    h.sizeMm = size;
    variants.push_back(ToSteerablePose(h, grid, d.gridSpan)); // its scale
  }
  std::vector<std::int64_t> kept;
  std::vector<float>        joint, scores;
  m_Impl->Stage(d.scale, oriented, parents, variants, kPoseFromVariantScale, keep, kept, joint, scores, weights);
  std::vector<ScoredPose> out;
  const auto              perParent = static_cast<std::int64_t>(sizes.size());
  for (std::size_t r = 0; r < kept.size(); ++r)
  {
    ScoredPose p = oriented[static_cast<std::size_t>(kept[r] / perParent)];
    p.pose.sizeMm = sizes[static_cast<std::size_t>(kept[r] % perParent)];
    p.stageScores[2] = scores[r];
    p.evidence *= scores[r];
    p.score = joint[r];
    out.push_back(p);
  }
  if (timings)
  {
    timings->scaleSeconds += SecondsSince(start);
    timings->scaleHypotheses += static_cast<std::int64_t>(oriented.size() * sizes.size());
  }
  return out;
}

DetectedStructure
PoseDetector::Detect(int structure, StageTimings * timings, const std::vector<ScoredPose> * given)
{
  const StructureDetector & d = m_Impl->At(structure);
  const auto                start = Clock::now();
  StageTimings              local;
  StageTimings &            t = timings ? *timings : local;
  const auto                centres = given ? *given : PositionCandidates(structure, &t);
  const auto                oriented = OrientationCandidates(structure, centres, d.orientationKeep, &t);
  const auto                scaled =
    RefineCentres(structure, ScaleCandidates(structure, oriented, d.aggregateCount, &t), -1.0, {}, &t);
  DetectedStructure result = Aggregate(structure, scaled, t);
  result.seconds = SecondsSince(start);
  return result;
}

double
PoseDetector::ThresholdOf(int structure) const
{
  const StructureDetector & d = m_Impl->At(structure);
  return m_Impl->options.thresholdOverride >= 0.0 ? m_Impl->options.thresholdOverride : d.threshold;
}

std::vector<ScoredPose>
PoseDetector::RefineCentres(int                             structure,
                            const std::vector<ScoredPose> & ranked,
                            double                          evidenceFloor,
                            const CentreFactor &            factor,
                            StageTimings *                  timings)
{
  const DetectionOptions &  o = m_Impl->options;
  const StructureDetector & d = m_Impl->At(structure);
  if (!(o.refineStepMm > 0.0) || ranked.empty())
    return ranked;
  const auto start = Clock::now();
  // The unshifted offset first, so that a tie keeps the pose the stages chose.
  std::vector<Vec3d> offsets{ { { 0, 0, 0 } } };
  for (int z = -o.refineReach; z <= o.refineReach; ++z)
    for (int y = -o.refineReach; y <= o.refineReach; ++y)
      for (int x = -o.refineReach; x <= o.refineReach; ++x)
        if (x || y || z)
          offsets.push_back({ { x * o.refineStepMm, y * o.refineStepMm, z * o.refineStepMm } });
  std::vector<ScoredPose>    shifted;
  std::vector<SteerablePose> poses;
  const SteerableGrid &      grid = d.scale.steerable.grid;
  for (const auto & h : ranked)
  {
    if (shifted.size() >= static_cast<std::size_t>(d.aggregateCount) * offsets.size())
      break;
    if (evidenceFloor >= 0.0 && h.evidence < evidenceFloor)
      continue;
    // The ranking score without the scale posterior (its other factors: earlier posteriors, priors).
    const float  rest = h.stageScores[2] > 0.0f ? h.score / h.stageScores[2] : 0.0f;
    const double oldFactor = factor ? static_cast<double>(factor(h.pose.centerMm)) : 1.0;
    for (const Vec3d & offset : offsets)
    {
      ScoredPose p = h;
      for (int k = 0; k < 3; ++k)
        p.pose.centerMm[k] += offset[k];
      // A child's centre factor moves with its centre (the old one divided out when it did not underflow).
      p.score = rest;
      if (factor && oldFactor > 0.0)
        p.score = static_cast<float>(rest / oldFactor * factor(p.pose.centerMm));
      shifted.push_back(p);
      poses.push_back(ToSteerablePose(p.pose, grid, d.gridSpan));
    }
  }
  if (shifted.empty())
    return ranked;
  const std::vector<SteerablePose> same(1, poses.front()); // one variant; every field from the parent
  std::vector<std::int64_t>        kept;
  std::vector<float>               joint, scores;
  m_Impl->Stage(d.scale, shifted, poses, same, 0, 0, kept, joint, scores, nullptr);
  std::vector<ScoredPose> out;
  for (std::size_t r = 0; r < kept.size(); ++r)
  {
    ScoredPose p = shifted[static_cast<std::size_t>(kept[r])];
    p.stageScores[2] = scores[r];
    p.evidence = p.stageScores[0] * p.stageScores[1] * scores[r]; // as the stages multiplied them
    p.score = joint[r];
    out.push_back(p);
  }
  if (timings)
  {
    timings->refineSeconds += SecondsSince(start);
    timings->refineHypotheses += static_cast<std::int64_t>(shifted.size());
  }
  return out;
}

TruthScores
PoseDetector::ScoreTruth(int structure, const StructurePose & truth, const GridBox & box)
{
  const StructureDetector & d = m_Impl->At(structure);
  TruthScores               out;
  auto &                    prepared = m_Impl->prepared[d.position.workingSpacing];
  if (!prepared)
    prepared = PrepareVolume(m_Impl->image, d.position.workingSpacing, d.position.normalization);
  GridBox searched = box;
  if (searched.Voxels() == 0)
  {
    const auto n = prepared->GetLargestPossibleRegion().GetSize();
    for (int a = 0; a < 3; ++a)
      searched.hi[a] = static_cast<long>(n[a]) - 1;
  }
  // Position: the truth's nearest working voxel, scored with the rest of the region (one evaluation).
  itk::Point<double, 3> p;
  for (int k = 0; k < 3; ++k)
    p[k] = truth.centerMm[k];
  FloatVolume::IndexType nearest;
  const bool             onGrid = prepared->TransformPhysicalPointToIndex(p, nearest);
  GridBox                scored = searched;
  bool                   inside = onGrid;
  for (int a = 0; a < 3 && onGrid; ++a)
  {
    inside = inside && nearest[a] >= searched.lo[a] && nearest[a] <= searched.hi[a];
    scored.lo[a] = std::min(scored.lo[a], static_cast<long>(nearest[a]));
    scored.hi[a] = std::max(scored.hi[a], static_cast<long>(nearest[a]));
  }
  out.searchedVoxels = searched.Voxels();
  if (onGrid)
  {
    const auto scores =
      PositionScoresInBox(d.position, prepared, scored, m_Impl->options.backend, m_Impl->options.cpuThreads);
    const long wx = scored.hi[0] - scored.lo[0] + 1, wy = scored.hi[1] - scored.lo[1] + 1;
    auto       at = [&](long x, long y, long z)
    {
      return scores[static_cast<std::size_t>((z - scored.lo[2]) * wx * wy + (y - scored.lo[1]) * wx +
                                             (x - scored.lo[0]))];
    };
    out.position = at(nearest[0], nearest[1], nearest[2]);
    if (inside)
    {
      out.positionRank = 0;
      for (long z = searched.lo[2]; z <= searched.hi[2]; ++z)
        for (long y = searched.lo[1]; y <= searched.hi[1]; ++y)
          for (long x = searched.lo[0]; x <= searched.hi[0]; ++x)
            out.positionRank += at(x, y, z) > out.position ? 1 : 0;
    }
  }
  // Orientation at the true centre and axes with the mean size (as the stage scores its hypotheses),
  // scale at the true pose: one parent, one variant, every field from the parent.
  std::vector<ScoredPose> parent(1);
  parent[0].score = 1.0f;
  std::vector<std::int64_t> kept;
  std::vector<float>        joint, scores;
  StructurePose             oriented = truth;
  oriented.sizeMm = d.meanSizeMm;
  const std::vector<SteerablePose> orientationPose{ ToSteerablePose(
    oriented, d.orientation.steerable.grid, d.gridSpan) };
  m_Impl->Stage(d.orientation, parent, orientationPose, orientationPose, 0, 0, kept, joint, scores, nullptr);
  out.orientation = scores.empty() ? 0.0f : scores[0];
  const std::vector<SteerablePose> scalePose{ ToSteerablePose(truth, d.scale.steerable.grid, d.gridSpan) };
  m_Impl->Stage(d.scale, parent, scalePose, scalePose, 0, 0, kept, joint, scores, nullptr);
  out.scale = scores.empty() ? 0.0f : scores[0];
  return out;
}

DetectedStructure
PoseDetector::Aggregate(int                             structure,
                        const std::vector<ScoredPose> & ranked,
                        StageTimings &                  t,
                        bool                            onlyWithEvidence,
                        double                          foundThreshold)
{
  const StructureDetector & d = m_Impl->At(structure);
  const auto                aggregateStart = Clock::now();
  DetectedStructure         result;
  result.name = d.name;
  const double own = ThresholdOf(structure);
  const double threshold = foundThreshold >= 0.0 ? foundThreshold : own;
  // Whether a pose is found is decided on its image evidence (the posteriors' product), never on its
  // prior (the evidence equals the ranking score when there is none).
  std::vector<ScoredPose> scaled;
  for (const auto & h : ranked)
    if (!onlyWithEvidence || h.evidence >= threshold)
      scaled.push_back(h);
  if (onlyWithEvidence && scaled.size() > static_cast<std::size_t>(d.aggregateCount))
    scaled.resize(static_cast<std::size_t>(d.aggregateCount));
  if (!scaled.empty())
  {
    result.score = scaled.front().evidence;
    result.found = scaled.front().evidence >= threshold;
  }
  else
    for (const auto & h : ranked)
      result.score = std::max(result.score, static_cast<double>(h.evidence));
  result.lowConfidence = result.found && result.score < own;
  if (result.found)
  {
    std::vector<ScoredPose> cluster;
    for (const auto & c : scaled)
      if (Distance(c.pose.centerMm, scaled.front().pose.centerMm) <= d.clusterMm)
        cluster.push_back(c);
    result.pose = AveragePoses(cluster);
  }
  t.aggregateSeconds += SecondsSince(aggregateStart);
  result.seconds = SecondsSince(aggregateStart);
  return result;
}

} // namespace canopy
