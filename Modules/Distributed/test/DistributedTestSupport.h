// Phantoms and sharded training sets for the distributed forest tests (threads and MPI).
#pragma once

#include "canopyForestImage.h"
#include "canopyForestModel.h"
#include "canopyForestTraining.h"
#include "canopyShares.h"

#include <cstring>
#include <memory>
#include <random>
#include <vector>

namespace canopy::testing
{

/** Three classes (background, a bright ball, a dark box) in noise over two channels; nz == 1: 2D. */
struct DistributedPhantom
{
  int                nx, ny, nz;
  std::vector<float> first, second;
  std::vector<int>   labels;
  ForestImage        image;

  DistributedPhantom(int nx_, int ny_, int nz_, std::uint64_t seed)
    : nx(nx_)
    , ny(ny_)
    , nz(nz_)
  {
    std::mt19937_64                       rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::normal_distribution<float>       noise(0.0f, 25.0f);
    const float cx = nx * (0.3f + 0.2f * u(rng)), cy = ny * (0.3f + 0.3f * u(rng)), cz = nz * 0.5f;
    const float r = std::min(nx, ny) * 0.2f;
    const int   bx = nx / 2 + 1, by = ny / 5;
    for (int z = 0; z < nz; ++z)
      for (int y = 0; y < ny; ++y)
        for (int x = 0; x < nx; ++x)
        {
          const float d2 = (x - cx) * (x - cx) + (y - cy) * (y - cy) + (nz > 1 ? (z - cz) * (z - cz) : 0.0f);
          const int   label = d2 < r * r ? 1 : (x >= bx && x < bx + nx / 4 && y >= by && y < by + ny / 3) ? 2 : 0;
          labels.push_back(label);
          first.push_back((label == 1 ? 90.0f : label == 2 ? 45.0f : 0.0f) + noise(rng));
          second.push_back((label == 2 ? 70.0f : 30.0f) + noise(rng));
        }
    image = ForestImage::FromChannels({ first.data(), second.data() }, nx, ny, nz, nullptr, 1);
  }
};

inline std::vector<std::unique_ptr<DistributedPhantom>>
MakeDistributedPhantoms(int count, int nz)
{
  std::vector<std::unique_ptr<DistributedPhantom>> out;
  for (int i = 0; i < count; ++i)
    out.push_back(std::make_unique<DistributedPhantom>(20 + 2 * i, 18, nz, 100 + i));
  return out;
}

/** The samples of phantoms [begin, end) (every `stride`-th voxel), image indices from 0. Shards of
 * consecutive phantoms concatenate, in rank order, to the set of all phantoms. */
inline ForestTrainingSet
DistributedSetOf(const std::vector<std::unique_ptr<DistributedPhantom>> & phantoms, ShareRange share, int stride = 2)
{
  ForestTrainingSet set;
  set.numClasses = 3;
  for (std::size_t i = share.begin; i < share.end; ++i)
  {
    const DistributedPhantom & p = *phantoms[i];
    const int                  local = static_cast<int>(set.images.size());
    set.images.push_back(p.image.View());
    for (int z = 0; z < p.nz; z += stride)
      for (int y = 0; y < p.ny; y += stride)
        for (int x = 0; x < p.nx; x += stride)
          set.samples.push_back(ForestSample{ local, x, y, z, p.labels[(std::size_t(z) * p.ny + y) * p.nx + x] });
  }
  return set;
}

inline ForestTrainingOptions
DistributedOptions()
{
  ForestTrainingOptions o;
  o.numTrees = 3;
  o.maxDepth = 8;
  o.featureCandidates = 24;
  o.thresholdCandidates = 6;
  o.maxOffset = 6;
  o.maxBoxSize = 4;
  o.threads = 1;
  o.backend = BackendRequest::Parse("cpu");
  return o;
}

/** Bit for bit: the JSON (floats written to round trip, -0 apart from 0) and the raw distributions. */
inline bool
SameForest(const ForestModel & a, const ForestModel & b)
{
  return ForestModelToJsonString(a) == ForestModelToJsonString(b) && a.distributions.size() == b.distributions.size() &&
         std::memcmp(a.distributions.data(), b.distributions.data(), a.distributions.size() * sizeof(float)) == 0;
}

} // namespace canopy::testing
