// Dense prediction of a whole ForestImage with a backend (auto | cpu | cuda | cuda:N): the non-template
// core of itk::RandomForestClassificationImageFilter. On the GPU the volume goes through in z-slabs of
// the host's integral tables, each with margins covering every plane a feature box can reach, so
// slabbed results equal whole-volume ones bit for bit.
#pragma once

#include "canopy/ForestPrediction.h"
#include "canopyForestImage.h"
#include "canopyForestModel.h"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace canopy
{

struct ForestDensePredictionOptions
{
  ForestOutputMode            mode = ForestOutputMode::ArgMax;
  std::string                 backend = "auto";
  int                         threads = 0;        // CPU threads (<= 0: ITK's default)
  std::size_t                 maxDeviceBytes = 0; // GPU memory budget (0: 80% of the free memory)
  int                         maxSlabPlanes = 0;  // > 0: at most this many output planes per GPU slab (tests)
  std::function<void(double)> progress;           // fraction done, may be empty
};

/** Where a whole-image prediction's time went, in wall seconds, for reports (predict-forest --report):
 * the input's channels (filter bank and integral tables), each forest's pass over the image (one per
 * auto-context stage) and, between stages, the class-map channels the next stage reads. */
struct ForestPredictionTimes
{
  double              channelsSeconds = 0.0;
  std::vector<double> forestSeconds;  // one per stage
  std::vector<double> contextSeconds; // one per stage but the last
};

struct ForestDensePredictionResult
{
  std::string backendUsed; // ResolvedBackend::Describe()
  int         slabs = 0;   // GPU slabs (0 on the CPU)
};

/** Planes below/above an output plane that a feature of the model can read (0 in 2D; the whole depth
 * when the model scales its features). */
int
ForestZReach(const ForestModel & model);

/** Predicts every voxel of `image` into `distribution` (Distribution mode) or `index` (the others),
 * ForestComponents values per voxel, x fastest. Throws canopy::Error when the model does not fit the
 * image (channels, dimension, scale) or the backend request cannot be met. */
ForestDensePredictionResult
PredictForestDense(const ForestModel &                  model,
                   const ForestImage &                  image,
                   const ForestDensePredictionOptions & options,
                   float *                              distribution,
                   std::int32_t *                       index);

} // namespace canopy
