// Out-of-fold assignment of training images, shared by the auto-context cascades of both voxel
// learners (forest: Modules/AutoContext; PBT: Modules/PBTCascade): a stage's training maps of image i
// come from a model trained on the folds i is not in.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace canopy
{

/** Fold of each image: a seeded permutation dealt round-robin, so fold sizes differ by one at most. */
inline std::vector<int>
AssignFolds(std::size_t images, int folds, std::uint64_t seed)
{
  std::vector<std::size_t> order(images);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<int> fold(images);
  for (std::size_t i = 0; i < images; ++i)
    fold[order[i]] = int(i % std::size_t(folds));
  return fold;
}

} // namespace canopy
