// Random multi-channel images for the forest tests.
#pragma once

#include "canopyForestImage.h"

#include <cmath>
#include <random>
#include <vector>

namespace canopy::testing
{

/** Smooth random channels (sums of a few sines plus noise), so forests see spatially coherent
 * responses; scale (when asked) in [0.5, 2] with a few NaN and non-positive voxels. */
struct RandomForestInput
{
  std::vector<std::vector<float>> channels;
  std::vector<float>              scale;
  ForestImage                     image;

  RandomForestInput(int nx, int ny, int nz, int numChannels, bool withScale, std::uint64_t seed)
  {
    std::mt19937_64                       rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<const float *>            pointers;
    const std::size_t                     n = std::size_t(nx) * ny * nz;
    for (int c = 0; c < numChannels; ++c)
    {
      const float fx = 0.05f + 0.3f * u(rng), fy = 0.05f + 0.3f * u(rng), fz = 0.05f + 0.3f * u(rng);
      std::vector<float> v(n);
      std::size_t        i = 0;
      for (int z = 0; z < nz; ++z)
        for (int y = 0; y < ny; ++y)
          for (int x = 0; x < nx; ++x)
            v[i++] = 100.0f * std::sin(fx * x + 2.0f * c) * std::cos(fy * y) + 50.0f * std::sin(fz * z) +
                     20.0f * u(rng);
      channels.push_back(std::move(v));
    }
    for (const auto & c : channels)
      pointers.push_back(c.data());
    if (withScale)
    {
      scale.resize(n);
      for (auto & s : scale)
      {
        const float r = u(rng);
        s = r < 0.02f ? std::nanf("") : (r < 0.03f ? 0.0f : 0.5f + 1.5f * u(rng));
      }
    }
    image = ForestImage::FromChannels(pointers, nx, ny, nz, withScale ? scale.data() : nullptr, 1);
  }
};

} // namespace canopy::testing
