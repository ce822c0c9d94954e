// Haar responses of a feature bank on one volume, on the CPU or a GPU, with the volume and bank kept
// resident on the device between calls (training asks for many response matrices of one volume), and
// PBT posteriors at voxels (PBTHypotheses.h, HaarFeatureFunc). Backend, stream, device budget and
// slicing come from ResponseEngine, shared with the steerable engine.
#pragma once

#include "canopy/HaarEvaluation.h"
#include "canopy/ResponseEngine.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace canopy
{

class HaarResponseEngine : public ResponseEngine
{
public:
  /** cpuThreads <= 0: ITK's default. maxDeviceBytes bounds the device scratch used for responses. */
  explicit HaarResponseEngine(const ResolvedBackend & backend, int cpuThreads = 0,
                              std::size_t maxDeviceBytes = std::size_t{ 512 } << 20);
  ~HaarResponseEngine();
  HaarResponseEngine(const HaarResponseEngine &) = delete;
  HaarResponseEngine & operator=(const HaarResponseEngine &) = delete;

  /** The padded table (IntegralVolumeView.h layout) on the host; copied to the device when on CUDA.
   * The host memory must stay valid while this engine evaluates on the CPU. */
  void
  SetVolume(const double * hostPaddedSums, int nx, int ny, int nz);

  /** Same, computing the table itself (on the device when on CUDA) from voxels. */
  template <typename TPixel>
  void
  SetVolumeFromVoxels(const TPixel * hostVoxels, int nx, int ny, int nz);

  void
  SetFeatures(const HaarFeatureVoxels * features, int numFeatures);

  /** Feature-major responses: out[f * numPoints + p]. out holds numFeatures * numPoints floats. */
  void
  EvaluateAtPoints(const VoxelIndex3 * points, std::int64_t numPoints, float * out);

  /** Dense block; out uses `layout` (host pointer) exactly as the CPU reference would. */
  void
  EvaluateDense(const VoxelBlock & block, ResponseLayout layout);

  /** scores[p] = p(+1 | points[p]) of the tree set by SetTree, whose learners index this engine's
   * features (EvaluatePBTAtHypothesesCPU / cuda::LaunchPBTAtHypotheses with HaarFeatureFunc). */
  void
  EvaluatePBT(const VoxelIndex3 * points, std::int64_t numPoints, float * scores);

  int
  GetNumberOfFeatures() const;

private:
  struct Impl;
  std::unique_ptr<Impl> m_Impl;
};

} // namespace canopy
