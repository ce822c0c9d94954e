// What every feature family's response engine shares (HaarResponseEngine; SteerableResponseEngine in
// Modules/SteerableFeatures): the backend choice and CPU threads, the device and its stream, a
// device-memory budget, and the evaluation of work too large for that budget in slices whose results
// are copied into the caller's ResponseLayout; plus one PBT kept on the device for scoring hypotheses
// (PBTHypotheses.h). A family keeps its own sources (integral volume, pyramid) and bank, and says
// how one slice is computed on the device.
#pragma once

#include "canopy/Device.h"
#include "canopy/IntegralVolume.h" // StreamHandle
#include "canopy/PBTFlat.h"
#include "canopy/ResponseLayout.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace canopy
{

class ResponseEngine
{
public:
  ResponseEngine(const ResponseEngine &) = delete;
  ResponseEngine & operator=(const ResponseEngine &) = delete;

  const ResolvedBackend & GetBackend() const;
  int                     GetCpuThreads() const;

  /** Copies a PBT (host pointers; validated by the caller, e.g. PBTModel::Validate) into the engine and,
   * on CUDA, onto the device; the derived engine's EvaluatePBT scores hypotheses with it against its
   * current feature bank, whose size must exceed every learner's feature index. */
  void SetTree(const PBTView & tree);
  bool HasTree() const;

protected:
  /** `name` prefixes error messages. cpuThreads <= 0: ITK's default. maxDeviceBytes bounds the device
   * scratch of one slice (inputs and results). Throws canopy::Error for a CUDA backend in a CPU-only
   * build. */
  ResponseEngine(const char * name, const ResolvedBackend & backend, int cpuThreads, std::size_t maxDeviceBytes);
  ~ResponseEngine();

  bool OnCuda() const;
  /** The engine's stream (CUDA only). */
  StreamHandle Stream() const;
  void         Synchronize() const;

  /** The tree set by SetTree: host copy, and device pointers on CUDA. Throws canopy::Error naming the
   * engine when no tree was set or a learner's feature index is >= numFeatures. */
  const PBTView & HostTree(int numFeatures) const;
  const PBTView & DeviceTree(int numFeatures) const;

  /** Work in units (a point, a pose, a z-plane of a block): each unit has pointsPerUnit points with
   * valuesPerPoint results each (features, or 1 for a PBT score), and optionally inputBytesPerUnit
   * bytes of host input (points, poses) uploaded before its slice. */
  struct SlicedWork
  {
    std::int64_t units = 0;
    std::int64_t pointsPerUnit = 1;
    int          valuesPerPoint = 1;
    const void * hostInputs = nullptr;
    std::size_t  inputBytesPerUnit = 0;
  };
  /** Computes units [firstUnit, firstUnit + units) on the engine's stream: deviceInputs holds their
   * inputs (null when none), results go to deviceOut, feature-major over the slice's points. */
  using SliceLaunch = std::function<
    void(std::int64_t firstUnit, std::int64_t units, const void * deviceInputs, ResponseLayout deviceOut)>;

  /** CUDA only: runs `work` in slices that fit maxDeviceBytes and writes value v of global point p to
   * out.values[v * out.featureStride + p * out.pointStride] (host memory; with pointStride 1 each slice
   * is copied straight into place, otherwise through a host staging buffer). Synchronises before
   * returning. */
  void RunInSlices(const SlicedWork & work, ResponseLayout out, const SliceLaunch & launch);

private:
  struct Impl;
  std::unique_ptr<Impl> m_Base;
};

} // namespace canopy
