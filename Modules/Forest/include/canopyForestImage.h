// A multi-channel 2D or 3D image prepared for forest features: one padded summed-volume table per
// channel (IntegralVolumeView.h layout), packed at a fixed stride, and an optional per-voxel scale.
#pragma once

#include "canopy/ForestFeature.h"

#include <vector>

namespace canopy
{

class ForestImage
{
public:
  ForestImage() = default;

  /** channels[c] points at nx*ny*nz voxels of channel c (x fastest); nz = 1 for 2D. scale (may be
   * null) holds s(q) per voxel. Integration on the CPU with `threads` (<= 0: ITK's default).
   * `reserveChannels`: room for that many more tables in `sums` (untouched memory until used), so that
   * an auto-context cascade appends its maps' tables without moving these (PredictForestCascade). */
  static ForestImage FromChannels(const std::vector<const float *> & channels,
                                  int                                nx,
                                  int                                ny,
                                  int                                nz,
                                  const float *                      scale = nullptr,
                                  int                                threads = 0,
                                  int                                reserveChannels = 0);

  ForestImagesView View() const;

  int  nx = 0, ny = 0, nz = 0, numChannels = 0;
  std::vector<double> sums;  // numChannels tables of PaddedTableSize(nx, ny, nz) doubles
  std::vector<float>  scale; // empty or nx*ny*nz
};

} // namespace canopy
