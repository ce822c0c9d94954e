// Generating Haar feature banks (random or exhaustive over a grid, seeded and reproducible),
// resolving them to voxel offsets for a sample box, and storing them as JSON.
#pragma once

#include "canopy/HaarFeature.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace canopy
{

/** The cuboid patterns: Mean (one cuboid), Edge (two halves, +1/-1), Line (three slabs, -1/2, +1, -1/2),
 * CenterSurround (inner half +1, whole -1), Checker (four quadrants in a plane, alternating signs). */
enum class HaarPattern : int
{
  Mean = 0,
  Edge,
  Line,
  CenterSurround,
  Checker,
  Count
};

std::string
ToString(HaarPattern pattern);

/** A feature of the given pattern on the base cuboid [lo, hi] (sample-box coordinates, [-0.5, 0.5]);
 * `axis` orients Edge/Line (split axis) and Checker (the plane is the other two axes). */
HaarFeature
MakeHaarFeature(HaarPattern pattern, int axis, const std::array<float, 3> & lo, const std::array<float, 3> & hi);

struct RandomHaarBankOptions
{
  int           count = 2000;
  std::uint64_t seed = 1;
  float         minimumSize = 0.1f; // smallest base-cuboid edge, as a fraction of the sample box
  std::vector<HaarPattern> patterns{ HaarPattern::Mean, HaarPattern::Edge, HaarPattern::Line,
                                     HaarPattern::CenterSurround, HaarPattern::Checker };
};

/** Random bank: patterns, axes and base cuboids drawn uniformly. Same options, same bank, everywhere
 * (the generator uses its own integer-to-float mapping, not the library's distributions). */
std::vector<HaarFeature>
GenerateRandomHaarBank(const RandomHaarBankOptions & options);

struct ExhaustiveHaarBankOptions
{
  std::vector<float>       sizes{ 0.25f, 0.5f, 1.0f }; // base-cuboid edges (fractions of the box)
  float                    step = 0.25f;               // grid step of the base cuboid's low corner
  std::vector<HaarPattern> patterns{ HaarPattern::Mean, HaarPattern::Edge, HaarPattern::Line,
                                     HaarPattern::CenterSurround, HaarPattern::Checker };
};

/** Every pattern x axis x cube size x grid position fitting in the sample box. */
std::vector<HaarFeature>
GenerateExhaustiveHaarBank(const ExhaustiveHaarBankOptions & options);

/** Integer voxel offsets for a sample box of `sampleBox` voxels centred on the sample point. Each
 * cuboid is at least one voxel wide; weights are divided by the cuboid's voxel count. */
HaarFeatureVoxels
ResolveHaarFeature(const HaarFeature & feature, const std::array<int, 3> & sampleBox);

std::vector<HaarFeatureVoxels>
ResolveHaarBank(const std::vector<HaarFeature> & bank, const std::array<int, 3> & sampleBox);

/** JSON: [{"cuboids": [{"lo": [..3], "hi": [..3], "w": w}, ...]}, ...]. FromJson throws
 * canopy::Error naming `where` and the problem on malformed input. */
void
HaarFeatureToJson(const HaarFeature & feature, nlohmann::json & out);
HaarFeature
HaarFeatureFromJson(const nlohmann::json & in, const std::string & where);

} // namespace canopy
