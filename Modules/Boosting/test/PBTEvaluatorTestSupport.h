// Helpers shared by the PBT evaluation tests: posteriors by the recursive reference (Algorithm 1,
// PbtPosteriorRecursive from training), integer-valued random volumes and models with deep chains.
#pragma once

#include "canopy/IntegralVolume.h"
#include "canopy/PBTEvaluation.h"
#include "canopyHaarFeatureBank.h"
#include "canopyPBTEvaluator.h"
#include "canopyPBTTraining.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace canopy::pbttest
{

/** Integer-valued voxels: double integral volumes are then exact, so CPU and GPU tables (which sum in
 * different orders) hold identical values and any difference comes from the evaluation itself. */
inline std::vector<float>
RandomVolume(int nx, int ny, int nz, std::uint64_t seed)
{
  std::mt19937                   rng(static_cast<std::uint32_t>(seed));
  std::uniform_int_distribution<> value(0, 100);
  std::vector<float>             v(static_cast<std::size_t>(nx) * ny * nz);
  // Smooth blobs plus noise, so features respond in a structured way rather than as pure noise.
  const double cx = nx * 0.45, cy = ny * 0.55, cz = nz * 0.5;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
      {
        const double r = std::sqrt((x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz));
        v[(std::size_t(z) * ny + y) * nx + x] = float(std::floor(60.0 * std::exp(-r / 8.0))) + float(value(rng) % 40);
      }
  return v;
}

/** Posterior of every voxel by the recursive reference, from a CPU integral volume. */
inline std::vector<float>
ReferencePosteriors(const PBTModel & model, const std::vector<float> & voxels, int nx, int ny, int nz,
                    bool probabilistic = true)
{
  std::vector<double> table(static_cast<std::size_t>(PaddedTableSize(nx, ny, nz)));
  ComputeIntegralVolumeCPU(voxels.data(), nx, ny, nz, table.data(), 1);
  const auto features = ResolveHaarBank(model.features, model.sampleBox);
  PBTView    view = model.View();
  if (!probabilistic)
    view.epsilon1 = 0.5f;
  std::vector<float> out(voxels.size());
  HaarResponseAt     response{ IntegralVolumeView{ table.data(), nx, ny, nz }, features.data(), 0, 0, 0 };
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
      {
        response.x = x;
        response.y = y;
        response.z = z;
        out[(std::size_t(z) * ny + y) * nx + x] = PbtPosteriorRecursive(view, response);
      }
  return out;
}

/** A chain of `depth` inner nodes, each with a leaf as right child; every strong classifier returns
 * exactly 0.5 (zero tables, zero offset), so both children are always descended and the stack grows
 * by one leaf per level: the deepest use of the stack a tree of this depth can make. */
inline PBTModel
ChainModel(int depth)
{
  PBTModel model;
  model.sampleBox = { 5, 5, 5 };
  model.features = { MakeHaarFeature(HaarPattern::Mean, 0, { -0.5f, -0.5f, -0.5f }, { 0.5f, 0.5f, 0.5f }) };
  for (int level = 0; level < depth; ++level)
  {
    const int inner = static_cast<int>(model.nodes.size());
    model.nodes.push_back(PBTNodeFlat{ int(model.learners.size()), 1, 1.0f, 0.0f, 0.5f, -1, -1 });
    model.learners.push_back(PBTWeakLearnerFlat{ 0, 2, 0.0f, 1.0f, int(model.tables.size()) });
    model.tables.push_back(0.0f);
    model.tables.push_back(0.0f);
    model.nodes.push_back(PBTNodeFlat{ 0, 0, 0, 0, float(level % 7) / 7.0f, -1, -1 }); // right leaf
    model.nodes[inner].right = inner + 1;
    model.nodes[inner].left = level + 1 < depth ? inner + 2 : -1;
  }
  // The last inner node's missing left child counts as a leaf with that node's empirical 0.5.
  return model;
}

/** The closed form of ChainModel's posterior: sum over levels of 0.5^(k+1) q_k, plus 0.5^depth * 0.5. */
inline double
ChainPosterior(int depth)
{
  double total = 0.0, weight = 1.0;
  for (int level = 0; level < depth; ++level)
  {
    total += weight * 0.5 * (level % 7) / 7.0;
    weight *= 0.5;
  }
  return total + weight * 0.5;
}

inline void
ExpectAllClose(const std::vector<float> & expected, const std::vector<float> & actual, double tolerance,
               const std::string & what)
{
  ASSERT_EQ(expected.size(), actual.size()) << what;
  std::size_t bad = 0, first = 0;
  double      worst = 0.0;
  for (std::size_t i = 0; i < expected.size(); ++i)
  {
    const double error = std::abs(double(expected[i]) - double(actual[i]));
    if (!(error <= tolerance)) // NaN fails
    {
      if (bad++ == 0)
        first = i;
      worst = std::isnan(error) ? error : std::max(worst, error);
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " voxels differ by more than " << tolerance << " (worst " << worst
                     << "; first at " << first << ": " << expected[first] << " vs " << actual[first] << ")";
}

} // namespace canopy::pbttest
