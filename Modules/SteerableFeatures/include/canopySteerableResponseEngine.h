// Steerable-feature responses of many pose hypotheses, on the CPU or a GPU (the project's Backend
// setting), with the pyramid and the feature bank kept resident on the device between calls: the
// orientation and scale stages of a detector score thousands of hypotheses per call, with a PBT
// (EvaluatePBT) or as training responses (Evaluate). Backend, stream, device budget, slicing and the
// device copy of the tree come from canopy::ResponseEngine, shared with HaarResponseEngine.
#pragma once

#include "canopy/IntensityNormalization.h"
#include "canopy/PBTBoundaryVariants.h" // BoundaryKernelVariant
#include "canopy/PBTHypotheses.h"       // BoundaryHypothesis
#include "canopy/ResponseEngine.h"
#include "canopy/SteerableEvaluation.h"
#include "canopySteerablePyramid.h"

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace canopy
{

/** How SteerableResponseEngine::SetImage maps intensities before building the pyramid: the
 * arithmetic of NormalizeIntensities (canopyVolumePreparation.h) through PyramidMath.h. */
struct PyramidIntensityScaling
{
  enum class Method
  {
    None,       // the image as it is
    Percentile, // [lowPercentile, highPercentile] of the finite voxels (strided sample) -> [0, 1]
    Window      // [windowLow, windowHigh] -> [0, 1], clipped
  };
  Method method = Method::None;
  double lowPercentile = 1.0, highPercentile = 99.0;
  double windowLow = 0.0, windowHigh = 1.0;
};

/** The pyramid scaling that reproduces a model's NormalizeIntensities ("window" or "percentile"). */
PyramidIntensityScaling
PyramidScalingOf(const IntensityNormalization & normalization);

class SteerableResponseEngine : public ResponseEngine
{
public:
  /** cpuThreads <= 0: ITK's default. maxDeviceBytes bounds the device scratch for poses and responses
   * (more poses than fit are processed in slices). */
  explicit SteerableResponseEngine(const ResolvedBackend & backend,
                                   int                     cpuThreads = 0,
                                   std::size_t             maxDeviceBytes = std::size_t{ 512 } << 20);
  ~SteerableResponseEngine();
  SteerableResponseEngine(const SteerableResponseEngine &) = delete;
  SteerableResponseEngine & operator=(const SteerableResponseEngine &) = delete;

  /** On the CPU the engine reads the pyramid's host voxels, so the pyramid must outlive its use here;
   * on CUDA its levels are copied to the device. */
  void SetPyramid(const SteerablePyramid & pyramid);

  /** CUDA only (canopy::Error on the CPU: build a SteerablePyramid and SetPyramid): uploads `image`
   * once and builds the pyramid on the device (normalisation, Gaussian, resampling and gradients by
   * the kernels of PyramidMath.h, following SteerablePyramid::Plan), with no host pyramid; the levels
   * match SteerablePyramid::Build of the image normalised on the host (SteerableFeaturesCudaTest).
   * Returns the (low, high) intensities the scaling used (0, 0 for None). */
  std::array<double, 2> SetImage(const SteerablePyramid::ImageType * image,
                                 const SteerablePyramidOptions &     options,
                                 const PyramidIntensityScaling &     scaling);

  /** Device levels as SteerableVoxel, copied back (CUDA only; for tests). */
  std::vector<SteerableVoxel> DownloadLevel(int level) const;

  /** Validated against the grid and the pyramid's levels (set the pyramid first); canopy::Error
   * naming the bad feature otherwise. */
  void SetFeatures(const SteerableGrid & grid, const std::vector<SteerableFeature> & features);

  /** Responses of every feature for every pose, into `out` (host memory, any ResponseLayout). */
  void Evaluate(const SteerablePose * poses, std::int64_t numPoses, ResponseLayout out);

  /** scores[p] = p(+1 | poses[p]) of the tree set by SetTree, whose learners index this engine's
   * features (EvaluatePBTAtHypothesesCPU / cuda::LaunchPBTAtHypotheses with SteerableFeatureFunc). */
  void EvaluatePBT(const SteerablePose * poses, std::int64_t numPoses, float * scores);

  /** One marginal-space stage in one call: the hypotheses parents x variants (PoseProductFeatureFunc;
   * fromVariant: PoseProductFields), scored by the tree set by SetTree, ranked by the joint score
   * parentScores[h / numVariants] * score[h] (* variantWeights[h % numVariants] when given: JointScore,
   * TopScores.h) in TopScores order; the `keep` best (all when keep <= 0)
   * come back as their indices h, joint scores and own scores. On CUDA only the parents, variants and
   * parent scores go up and only the kept come back: hypotheses are made, scored and ranked on the
   * device. The CPU computes the same scores and ranking (EvaluatePBTAtHypothesisRangeCPU,
   * TopScoresCPU). */
  void EvaluatePBTStage(const SteerablePose *       parents,
                        std::int64_t                numParents,
                        const SteerablePose *       variants,
                        std::int64_t                numVariants,
                        int                         fromVariant,
                        const float *               parentScores,
                        std::int64_t                keep,
                        std::vector<std::int64_t> & indices,
                        std::vector<float> &        joint,
                        std::vector<float> &        scores,
                        const float *               variantWeights = nullptr);

  /** Boundary detection: scores[h] = p(+1 | hypotheses[h]) of the tree set by SetTree, each
   * hypothesis a vertex frame (frames[vertex], the normal as first axis) moved along its normal
   * (BoundaryFeatureFunc). On CUDA the frames are uploaded once and all hypotheses run in one launch
   * when they fit the device budget. canopy::Error for a vertex index outside [0, numFrames). */
  void EvaluateBoundaryPBT(const SteerablePose *      frames,
                           std::int64_t               numFrames,
                           const BoundaryHypothesis * hypotheses,
                           std::int64_t               numHypotheses,
                           float *                    scores);

  /** The CUDA kernel of EvaluateBoundaryPBT (PBTBoundaryVariants.h; default kDefaultBoundaryKernel).
   * Every variant gives the same scores bit for bit; a packed variant whose tree does not pack runs
   * unpacked. canopy::Error for a variant that is not built. */
  void SetBoundaryKernel(const BoundaryKernelVariant & kernel);

  int                   GetNumberOfFeatures() const;
  const SteerableGrid & GetGrid() const;

private:
  struct Impl;
  std::unique_ptr<Impl> m_Impl;
};

} // namespace canopy
