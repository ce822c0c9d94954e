#include "canopy/PBTBoundaryVariants.h"

#include "canopy/Errors.h"

#include <sstream>

namespace canopy
{

std::vector<PBTSteerableLearner>
PackSteerableLearners(const PBTWeakLearnerFlat * learners,
                      int                        numLearners,
                      const SteerableFeature *   features,
                      int                        numFeatures)
{
  std::vector<PBTSteerableLearner> packed(static_cast<std::size_t>(numLearners > 0 ? numLearners : 0));
  for (int i = 0; i < numLearners; ++i)
  {
    const PBTWeakLearnerFlat & l = learners[i];
    if (l.feature < 0 || l.feature >= numFeatures || l.numBins < 1 || l.numBins > 256 || l.tableOffset < 0 ||
        l.tableOffset >= (1 << 24))
      return {};
    const SteerableFeature & f = features[l.feature];
    if (f.type >= 32 || f.level >= 8)
      return {};
    packed[i] = PBTSteerableLearner{ l.lo,
                                     l.invBinWidth,
                                     static_cast<std::uint32_t>(l.tableOffset) |
                                       (static_cast<std::uint32_t>(l.numBins - 1) << 24),
                                     std::uint32_t(f.x) | std::uint32_t(f.y) << 8 | std::uint32_t(f.z) << 16 |
                                       std::uint32_t(f.type) << 24 | std::uint32_t(f.level) << 29 };
  }
  return packed;
}

BoundaryKernelVariant
BoundaryKernelVariant::Parse(const std::string & name)
{
  BoundaryKernelVariant v;
  if (name == "baseline")
    return v;
  v.baseline = false;
  std::istringstream in(name);
  char               t = 0;
  if (!(in >> t >> v.team) || t != 't')
    CANOPY_THROW("boundary kernel variant '" << name << "': expected baseline or t<team>[p][b<blocks>]");
  if (in.peek() == 'p')
  {
    in.get();
    v.packed = true;
  }
  if (in.peek() == 'b')
  {
    in.get();
    in >> v.minBlocks;
  }
  if (!in.eof() && in.peek() != EOF)
    CANOPY_THROW("boundary kernel variant '" << name << "': trailing characters");
  for (const auto & built : BuiltBoundaryKernelVariants())
    if (built.Name() == v.Name())
      return v;
  CANOPY_THROW("boundary kernel variant '" << name << "' is not built (BuiltBoundaryKernelVariants)");
}

std::string
BoundaryKernelVariant::Name() const
{
  if (baseline)
    return "baseline";
  std::string name = "t" + std::to_string(team) + (packed ? "p" : "");
  if (minBlocks > 0)
    name += "b" + std::to_string(minBlocks);
  return name;
}

std::vector<BoundaryKernelVariant>
BuiltBoundaryKernelVariants()
{
  std::vector<BoundaryKernelVariant> all{ BoundaryKernelVariant{} };
  for (bool packed : { false, true })
    for (int team : { 1, 2, 4, 8, 16 })
      all.push_back(BoundaryKernelVariant{ false, team, packed, 0 });
  for (int team : { 4, 8 })
    for (int blocks : { 8, 10 })
      all.push_back(BoundaryKernelVariant{ false, team, true, blocks });
  return all;
}

} // namespace canopy
