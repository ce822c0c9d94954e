// The best k of many scores, best first, with one order on the CPU and the GPU: higher score first,
// ties by lower index, NaN after every number (and -0 ties with +0). The position stage of pose
// detection keeps its K candidates this way (issue 9 part 3): on the device the dense map is ranked
// where it was computed and only the k winners come back.
#pragma once

#include "canopy/HostDevice.h"
#include "canopy/IntegralVolume.h" // StreamHandle

#include <stdint.h>
#include <string.h>
#include <vector>

namespace canopy
{

/** A 64-bit key whose ascending order is the ranking: the score's bits mapped so that larger floats
 * give smaller keys (upper half), the index in the lower half. Indices must be < 2^32. */
CANOPY_HD uint64_t
TopScoreKey(float score, uint32_t index)
{
  if (score != score)
  {
    return (static_cast<uint64_t>(0xFFFFFFFFu) << 32) | index; // NaN: after every number
  }
  if (score == 0.0f)
  {
    score = 0.0f; // -0 == +0: a tie, ordered by index
  }
  uint32_t bits;
  memcpy(&bits, &score, sizeof bits);
  const uint32_t ascending = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u); // grows with the float
  return (static_cast<uint64_t>(~ascending) << 32) | index;
}

/** A marginal-space stage's joint score of hypothesis (parent, variant): the parent's score times the
 * hypothesis' own posterior, times the variant's weight (1 when the stage has none; the hierarchical
 * network's prior factor of the variant, canopyNetworkPrior.h). Multiplying by 1.0f is exact, so a stage
 * without weights ranks as before. One definition for the CPU and the device. */
CANOPY_HD float
JointScore(float parentScore, float score, float variantWeight)
{
  return (parentScore * score) * variantWeight;
}

/** Indices of the k best scores, best first (the order above); k is clamped to [0, count]. */
std::vector<int64_t>
TopScoresCPU(const float * scores, int64_t count, int64_t k);

namespace cuda
{
/** Scratch bytes LaunchTopScores needs for `count` scores (count < 2^32). */
size_t
ScratchBytesForTopScores(int64_t count);

/** Device pointers: indices[0..k) and values[0..k) of the k best of scores[0..count) (k <= count),
 * by a radix sort of TopScoreKey. Enqueued on `stream`, no synchronisation. */
void
LaunchTopScores(const float * scores,
                int64_t       count,
                int64_t       k,
                int64_t *     indices,
                float *       values,
                void *        scratch,
                size_t        scratchBytes,
                StreamHandle  stream);
/** joint[h] = JointScore(parentScores[h / perParent], scores[h], variantWeights[h % perParent]) (as on
 * the host), h < count; variantWeights may be null (every weight 1). */
void
LaunchJointScores(const float * scores,
                  const float * parentScores,
                  const float * variantWeights,
                  int64_t       perParent,
                  int64_t       count,
                  float *       joint,
                  StreamHandle  stream);

/** out[r] = values[indices[r]], r < k. */
void
LaunchGatherScores(const float * values, const int64_t * indices, int64_t k, float * out, StreamHandle stream);
} // namespace cuda

} // namespace canopy
