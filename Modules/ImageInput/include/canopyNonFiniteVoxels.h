// Non-finite voxels (NaN, +-Inf) on input: the one place where they are counted and replaced, so
// resampling, normalisation and features downstream never see them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace canopy
{

/** NaN and infinite values among `count` values. */
std::size_t
CountNonFinite(const float * values, std::size_t count);

/** Replaces non-finite values by 0 and, when there are some, prints one warning to `warnings`:
 * "canopy: warning: <where>: N of M voxels are NaN or infinite; they are read as 0". Throws
 * canopy::Error "<where>: every voxel is NaN or infinite" when all are. `nonFiniteInFile`: those
 * counted in the file before a reader replaced them (CheckedImageFile); N is the larger count.
 * Returns N. */
std::size_t
ZeroNonFiniteVoxels(float *             values,
                    std::size_t         count,
                    const std::string & where,
                    std::ostream &      warnings,
                    std::uint64_t       nonFiniteInFile = 0);

} // namespace canopy
