#include "canopyNonFiniteVoxels.h"

#include "canopy/Errors.h"

#include <algorithm>
#include <cmath>
#include <ostream>

namespace canopy
{

std::size_t
CountNonFinite(const float * values, std::size_t count)
{
  std::size_t nonFinite = 0;
  for (std::size_t i = 0; i < count; ++i)
    nonFinite += std::isfinite(values[i]) ? 0 : 1;
  return nonFinite;
}

std::size_t
ZeroNonFiniteVoxels(float *             values,
                    std::size_t         count,
                    const std::string & where,
                    std::ostream &      warnings,
                    std::uint64_t       nonFiniteInFile)
{
  const std::size_t nonFinite = std::max<std::size_t>(CountNonFinite(values, count), nonFiniteInFile);
  if (nonFinite == 0)
    return 0;
  if (nonFinite == count)
  {
    CANOPY_THROW(where << ": every voxel is NaN or infinite (" << count << " voxels)");
  }
  for (std::size_t i = 0; i < count; ++i)
  {
    if (!std::isfinite(values[i]))
      values[i] = 0.0f;
  }
  warnings << "canopy: warning: " << where << ": " << nonFinite << " of " << count
           << " voxels are NaN or infinite; they are read as 0\n";
  return nonFinite;
}

} // namespace canopy
