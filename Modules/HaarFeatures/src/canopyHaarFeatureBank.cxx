#include "canopyHaarFeatureBank.h"
#include "canopyHaarChannels.h"

#include "canopy/Errors.h"
#include "canopy/PortableRandom.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <random>

namespace canopy
{
namespace
{

int
UniformInt(std::mt19937_64 & rng, int n)
{
  return static_cast<int>(UniformIndex(rng, static_cast<std::uint64_t>(n)));
}

HaarCuboid
Cuboid(const std::array<float, 3> & lo, const std::array<float, 3> & hi, float weight)
{
  return HaarCuboid{ { lo[0], lo[1], lo[2] }, { hi[0], hi[1], hi[2] }, weight };
}

} // namespace

std::string
ToString(HaarPattern pattern)
{
  switch (pattern)
  {
    case HaarPattern::Mean:
      return "mean";
    case HaarPattern::Edge:
      return "edge";
    case HaarPattern::Line:
      return "line";
    case HaarPattern::CenterSurround:
      return "center-surround";
    case HaarPattern::Checker:
      return "checker";
    default:
      return "unknown";
  }
}

HaarFeature
MakeHaarFeature(HaarPattern pattern, int axis, const std::array<float, 3> & lo, const std::array<float, 3> & hi)
{
  HaarFeature f;
  auto        add = [&f](const std::array<float, 3> & a, const std::array<float, 3> & b, float w) {
    f.cuboids[f.numCuboids++] = Cuboid(a, b, w);
  };
  switch (pattern)
  {
    case HaarPattern::Mean:
      add(lo, hi, 1.0f);
      break;
    case HaarPattern::Edge:
    {
      const float mid = 0.5f * (lo[axis] + hi[axis]);
      auto        aHi = hi, bLo = lo;
      aHi[axis] = mid;
      bLo[axis] = mid;
      add(lo, aHi, 1.0f);
      add(bLo, hi, -1.0f);
      break;
    }
    case HaarPattern::Line:
    {
      const float third = (hi[axis] - lo[axis]) / 3.0f;
      auto        aHi = hi, bLo = lo, bHi = hi, cLo = lo;
      aHi[axis] = lo[axis] + third;
      bLo[axis] = lo[axis] + third;
      bHi[axis] = lo[axis] + 2 * third;
      cLo[axis] = lo[axis] + 2 * third;
      add(lo, aHi, -0.5f);
      add(bLo, bHi, 1.0f);
      add(cLo, hi, -0.5f);
      break;
    }
    case HaarPattern::CenterSurround:
    {
      std::array<float, 3> inLo, inHi;
      for (int d = 0; d < 3; ++d)
      {
        const float quarter = 0.25f * (hi[d] - lo[d]);
        inLo[d] = lo[d] + quarter;
        inHi[d] = hi[d] - quarter;
      }
      add(inLo, inHi, 1.0f);
      add(lo, hi, -1.0f);
      break;
    }
    case HaarPattern::Checker:
    {
      const int   u = (axis + 1) % 3, v = (axis + 2) % 3;
      const float mu = 0.5f * (lo[u] + hi[u]), mv = 0.5f * (lo[v] + hi[v]);
      for (int q = 0; q < 4; ++q)
      {
        auto a = lo, b = hi;
        (q & 1 ? a[u] : b[u]) = mu;
        (q & 2 ? a[v] : b[v]) = mv;
        add(a, b, (q == 0 || q == 3) ? 1.0f : -1.0f);
      }
      break;
    }
    default:
      CANOPY_THROW("MakeHaarFeature: unknown pattern " << static_cast<int>(pattern));
  }
  return f;
}

std::vector<HaarFeature>
GenerateRandomHaarBank(const RandomHaarBankOptions & options)
{
  if (options.count < 0 || options.patterns.empty() || !(options.minimumSize > 0.0f && options.minimumSize <= 1.0f))
  {
    CANOPY_THROW("GenerateRandomHaarBank: need count >= 0, at least one pattern and 0 < minimumSize <= 1");
  }
  std::mt19937_64          rng(options.seed);
  std::vector<HaarFeature> bank;
  bank.reserve(options.count);
  for (int i = 0; i < options.count; ++i)
  {
    const HaarPattern    pattern = options.patterns[UniformInt(rng, static_cast<int>(options.patterns.size()))];
    const int            axis = UniformInt(rng, 3);
    std::array<float, 3> lo, hi;
    for (int d = 0; d < 3; ++d)
    {
      const double size = options.minimumSize + (1.0 - options.minimumSize) * UniformUnit(rng);
      lo[d] = static_cast<float>(-0.5 + (1.0 - size) * UniformUnit(rng));
      hi[d] = static_cast<float>(lo[d] + size);
    }
    bank.push_back(MakeHaarFeature(pattern, axis, lo, hi));
  }
  return bank;
}

std::vector<HaarFeature>
GenerateExhaustiveHaarBank(const ExhaustiveHaarBankOptions & options)
{
  if (!(options.step > 0.0f) || options.sizes.empty())
  {
    CANOPY_THROW("GenerateExhaustiveHaarBank: need step > 0 and at least one size");
  }
  std::vector<HaarFeature> bank;
  for (HaarPattern pattern : options.patterns)
  {
    const int axes = pattern == HaarPattern::Mean || pattern == HaarPattern::CenterSurround ? 1 : 3;
    for (int axis = 0; axis < axes; ++axis)
      for (float size : options.sizes)
      {
        const int positions = static_cast<int>(std::floor((1.0f - size) / options.step + 1e-4f)) + 1;
        for (int iz = 0; iz < positions; ++iz)
          for (int iy = 0; iy < positions; ++iy)
            for (int ix = 0; ix < positions; ++ix)
            {
              const std::array<float, 3> lo{ -0.5f + ix * options.step, -0.5f + iy * options.step,
                                             -0.5f + iz * options.step };
              bank.push_back(MakeHaarFeature(pattern, axis, lo, { lo[0] + size, lo[1] + size, lo[2] + size }));
            }
      }
  }
  return bank;
}

HaarFeatureVoxels
ResolveHaarFeature(const HaarFeature & feature, const std::array<int, 3> & sampleBox)
{
  HaarFeatureVoxels v{};
  v.numCuboids = feature.numCuboids;
  for (int c = 0; c < feature.numCuboids; ++c)
  {
    double volume = 1.0;
    for (int d = 0; d < 3; ++d)
    {
      const int lo = static_cast<int>(std::lround(feature.cuboids[c].lo[d] * sampleBox[d]));
      int       hi = static_cast<int>(std::lround(feature.cuboids[c].hi[d] * sampleBox[d]));
      hi = std::max(hi, lo + 1);
      v.lo[c][d] = lo;
      v.hi[c][d] = hi;
      volume *= hi - lo;
    }
    v.weightPerVoxel[c] = static_cast<float>(feature.cuboids[c].weight / volume);
  }
  return v;
}

std::vector<HaarFeatureVoxels>
ResolveHaarBank(const std::vector<HaarFeature> & bank, const std::array<int, 3> & sampleBox)
{
  for (int d = 0; d < 3; ++d)
  {
    if (sampleBox[d] < 1)
    {
      CANOPY_THROW("ResolveHaarBank: sample box must be at least 1 voxel on each axis, got " << sampleBox[d]);
    }
  }
  std::vector<HaarFeatureVoxels> out;
  out.reserve(bank.size());
  for (const auto & f : bank)
  {
    out.push_back(ResolveHaarFeature(f, sampleBox));
  }
  return out;
}

void
HaarFeatureToJson(const HaarFeature & feature, nlohmann::json & out)
{
  nlohmann::json cuboids = nlohmann::json::array();
  for (int c = 0; c < feature.numCuboids; ++c)
  {
    const auto & b = feature.cuboids[c];
    cuboids.push_back({ { "lo", { b.lo[0], b.lo[1], b.lo[2] } }, { "hi", { b.hi[0], b.hi[1], b.hi[2] } }, { "w", b.weight } });
  }
  out = { { "cuboids", cuboids } };
  if (feature.channel != 0) // absent: channel 0, as in every file written before channels existed
  {
    out["channel"] = feature.channel;
  }
}

// Generated features lie in the sample box, [-0.5, 0.5]; a stored feature may reach a few boxes out.
// Beyond that a corner is corrupt, and corner x box would overflow int offsets (ResolveHaarFeature).
constexpr float kMaxHaarCornerInBoxes = 8.0f;

HaarFeature
HaarFeatureFromJson(const nlohmann::json & in, const std::string & where)
{
  HaarFeature f;
  try
  {
    const auto & cuboids = in.at("cuboids");
    if (!cuboids.is_array() || cuboids.empty() || cuboids.size() > kMaxHaarCuboids)
    {
      CANOPY_THROW(where << ": a Haar feature needs 1.." << kMaxHaarCuboids << " cuboids");
    }
    for (const auto & b : cuboids)
    {
      HaarCuboid & c = f.cuboids[f.numCuboids++];
      for (int d = 0; d < 3; ++d)
      {
        c.lo[d] = b.at("lo").at(d).get<float>();
        c.hi[d] = b.at("hi").at(d).get<float>();
        if (!(std::abs(c.lo[d]) <= kMaxHaarCornerInBoxes && std::abs(c.hi[d]) <= kMaxHaarCornerInBoxes) ||
            c.hi[d] < c.lo[d])
        {
          CANOPY_THROW(where << ": cuboid corners must lie within [-" << kMaxHaarCornerInBoxes << ", "
                             << kMaxHaarCornerInBoxes << "] sample boxes with lo <= hi, got lo " << c.lo[d] << ", hi "
                             << c.hi[d]);
        }
      }
      c.weight = b.at("w").get<float>();
      if (!std::isfinite(c.weight))
      {
        CANOPY_THROW(where << ": cuboid weight is not finite");
      }
    }
    if (in.contains("channel"))
    {
      const auto & channel = in["channel"];
      if (!channel.is_number_integer() || channel.get<std::int64_t>() < 0 ||
          channel.get<std::int64_t>() >= kMaxHaarChannels)
      {
        CANOPY_THROW(where << ": \"channel\" must be an integer in [0, " << kMaxHaarChannels << ")");
      }
      f.channel = static_cast<int>(channel.get<std::int64_t>());
    }
  }
  catch (const nlohmann::json::exception & e)
  {
    CANOPY_THROW(where << ": malformed Haar feature (" << e.what() << ")");
  }
  return f;
}

} // namespace canopy
