// Where a response engine writes: shared by every feature family (Haar, steerable) and their
// CPU references, CUDA launchers and engines.
#pragma once

#include <cstdint>

namespace canopy
{

/** Where responses go: value of feature f at point p is written to values[f*featureStride + p*pointStride].
 * Feature-major (featureStride = numPoints, pointStride = 1) suits training and coalesced GPU writes;
 * point-major (featureStride = 1, pointStride = numFeatures) matches itk::VectorImage. A "point" is
 * whatever the family evaluates at: a voxel (Haar) or a pose hypothesis (steerable). */
struct ResponseLayout
{
  float *      values = nullptr;
  std::int64_t featureStride = 0;
  std::int64_t pointStride = 0;
};

} // namespace canopy
