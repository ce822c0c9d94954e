// Applying a PBT model file to a volume: prepare (resample, normalise), evaluate every voxel on the
// chosen backend, and bring the probabilities back to the input's grid.
#pragma once

#include "canopy/Device.h"
#include "canopyPBTEvaluator.h"
#include "canopyPBTModelFile.h"

#include <functional>

namespace canopy
{

struct PBTClassificationTimings
{
  double prepareSeconds = 0.0;
  double evaluateSeconds = 0.0;
  double resampleSeconds = 0.0;
  int    slabs = 0;
  int    workingSize[3] = { 0, 0, 0 };
};

/** p(+1|x) at every voxel of `image`, on the image's own grid (linear interpolation from the working
 * grid). progress(fraction in [0, 1]). */
FloatVolume::Pointer
ClassifyVolume(const FloatVolume * image, const PBTModelFile & model, const ResolvedBackend & backend,
               const PBTEvaluationOptions & options, const std::function<void(double)> & progress = {},
               PBTClassificationTimings * timings = nullptr);

} // namespace canopy
