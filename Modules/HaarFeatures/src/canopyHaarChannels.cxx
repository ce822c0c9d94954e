#include "canopyHaarChannels.h"

#include "canopy/Errors.h"
#include "canopyHaarFeatureBank.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace canopy
{

int
HaarReachZ(const std::vector<HaarFeatureVoxels> & resolved)
{
  int reach = 0;
  for (const auto & f : resolved)
  {
    for (int c = 0; c < f.numCuboids; ++c)
    {
      reach = std::max({ reach, std::abs(f.lo[c][2]), std::abs(f.hi[c][2]) });
    }
  }
  return reach;
}

int
HaarChannelStride(int planes, int reachZ)
{
  return planes + reachZ;
}

int
HaarStackPlanes(int channels, int planes, int stride)
{
  return (channels - 1) * stride + planes;
}

std::vector<HaarFeatureVoxels>
ResolveHaarBankOnChannels(const std::vector<HaarFeature> & bank,
                          const std::array<int, 3> &       sampleBox,
                          int                              channels,
                          int                              planes,
                          int *                            stride)
{
  if (channels < 1 || channels > kMaxHaarChannels)
  {
    CANOPY_THROW("ResolveHaarBankOnChannels: " << channels << " channels; give 1 to " << kMaxHaarChannels);
  }
  std::vector<HaarFeatureVoxels> resolved = ResolveHaarBank(bank, sampleBox);
  const int                      step = HaarChannelStride(planes, HaarReachZ(resolved));
  const std::int64_t             stackPlanes = std::int64_t(channels - 1) * step + planes;
  if (stackPlanes > (std::int64_t(1) << 30))
  {
    CANOPY_THROW("ResolveHaarBankOnChannels: a stack of " << channels << " channels of " << planes
                                                          << " planes is too deep");
  }
  for (std::size_t i = 0; i < bank.size(); ++i)
  {
    if (bank[i].channel < 0 || bank[i].channel >= channels)
    {
      CANOPY_THROW("ResolveHaarBankOnChannels: feature " << i << " reads channel " << bank[i].channel
                                                         << " of a volume of " << channels << " channel(s)");
    }
    for (int c = 0; c < resolved[i].numCuboids; ++c)
    {
      resolved[i].lo[c][2] += bank[i].channel * step;
      resolved[i].hi[c][2] += bank[i].channel * step;
    }
  }
  if (stride)
  {
    *stride = step;
  }
  return resolved;
}

std::vector<float>
StackHaarChannels(const std::vector<const float *> & channels, int nx, int ny, int nz, int stride)
{
  if (channels.empty() || stride < nz)
  {
    CANOPY_THROW("StackHaarChannels: " << channels.size() << " channels with a stride of " << stride << " planes for "
                                       << nz << " planes");
  }
  const std::size_t  plane = std::size_t(nx) * ny;
  std::vector<float> stack(plane * std::size_t(HaarStackPlanes(int(channels.size()), nz, stride)), 0.0f);
  for (std::size_t c = 0; c < channels.size(); ++c)
  {
    std::copy_n(channels[c], plane * nz, stack.data() + c * stride * plane);
  }
  return stack;
}

} // namespace canopy
