#include "canopyForestImage.h"

#include "canopy/Errors.h"
#include "canopy/IntegralVolume.h"

#include <algorithm>

namespace canopy
{

ForestImage
ForestImage::FromChannels(const std::vector<const float *> & channels,
                          int                                nx,
                          int                                ny,
                          int                                nz,
                          const float *                      scale,
                          int                                threads,
                          int                                reserveChannels)
{
  if (nx < 1 || ny < 1 || nz < 1)
  {
    CANOPY_THROW("ForestImage: size " << nx << "x" << ny << "x" << nz << " must be positive on every axis");
  }
  if (channels.empty() || channels.size() > 256)
  {
    CANOPY_THROW("ForestImage: " << channels.size() << " channels given; 1 to 256 are supported");
  }
  ForestImage image;
  image.nx = nx;
  image.ny = ny;
  image.nz = nz;
  image.numChannels = static_cast<int>(channels.size());
  const std::int64_t stride = PaddedTableSize(nx, ny, nz);
  image.sums.reserve(static_cast<std::size_t>(stride * (image.numChannels + std::max(0, reserveChannels))));
  image.sums.assign(static_cast<std::size_t>(stride * image.numChannels), 0.0);
  for (int c = 0; c < image.numChannels; ++c)
  {
    ComputeIntegralVolumeCPU(channels[c], nx, ny, nz, image.sums.data() + c * stride, threads);
  }
  if (scale)
  {
    image.scale.assign(scale, scale + static_cast<std::size_t>(nx) * ny * nz);
  }
  return image;
}

ForestImagesView
ForestImage::View() const
{
  ForestImagesView v;
  v.sums = sums.data();
  v.channelStride = PaddedTableSize(nx, ny, nz);
  v.nx = nx;
  v.ny = ny;
  v.nz = nz;
  v.numChannels = numChannels;
  v.scale = scale.empty() ? nullptr : scale.data();
  return v;
}

} // namespace canopy
