// Medical Segmentation Decathlon datasets (dataset.json) and reproducible train/test splits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace canopy::app
{
/** Appends the "training" entries of an MSD dataset.json (paths resolved against its folder); at
 * most maxVolumes entries when maxVolumes > 0. Errors name the file and what is wrong. */
void
ReadDataset(const std::string & path, int maxVolumes, std::vector<std::string> & images,
            std::vector<std::string> & labels);

/** A permutation of 0..n-1 from a seed (portable: the same on every platform). */
std::vector<std::size_t>
SeededPermutation(std::size_t n, std::uint64_t seed);
} // namespace canopy::app
