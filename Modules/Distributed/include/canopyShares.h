// Which items (volumes) each process of a distributed run takes.
#pragma once

#include <cstddef>

namespace canopy
{

struct ShareRange
{
  std::size_t begin = 0, end = 0; // items [begin, end)
};

/** Consecutive, balanced shares in rank order (the first count % size ranks take one more): rank 0
 * the first items. Distributed training needs consecutive shares (the concatenated samples are then
 * the one-process training set, in order). */
inline ShareRange
ContiguousShare(std::size_t count, int rank, int size)
{
  const std::size_t r = static_cast<std::size_t>(rank), s = static_cast<std::size_t>(size);
  const std::size_t base = count / s, extra = count % s;
  const std::size_t begin = r * base + (r < extra ? r : extra);
  return ShareRange{ begin, begin + base + (r < extra ? 1 : 0) };
}

} // namespace canopy
