// Top-k selection on the device (TopScores.h): keys TopScoreKey(score, index), one radix sort, the k
// smallest keys decoded. For the position stage's maps (e.g. 85^3 = 614k scores) one sort of 64-bit
// keys is a fraction of a millisecond and needs no second pass for ties.
#include "canopy/CudaCheck.h"
#include "canopy/Errors.h"
#include "canopy/TopScores.h"

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

namespace canopy::cuda
{
namespace
{

constexpr int kThreads = 256;

__global__ void
KeysKernel(const float * __restrict__ scores, int64_t count, uint64_t * __restrict__ keys)
{
  const int64_t i = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x;
  if (i < count)
  {
    keys[i] = TopScoreKey(scores[i], static_cast<uint32_t>(i));
  }
}

__global__ void
DecodeKernel(const uint64_t * __restrict__ sorted,
             const float * __restrict__ scores,
             int64_t k,
             int64_t * __restrict__ indices,
             float * __restrict__ values)
{
  const int64_t i = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x;
  if (i < k)
  {
    const int64_t index = static_cast<int64_t>(sorted[i] & 0xFFFFFFFFull);
    indices[i] = index;
    values[i] = scores[index];
  }
}

__global__ void
JointKernel(const float * __restrict__ scores,
            const float * __restrict__ parentScores,
            const float * __restrict__ variantWeights,
            int64_t perParent,
            int64_t count,
            float * __restrict__ joint)
{
  const int64_t i = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x;
  if (i < count)
  {
    joint[i] =
      JointScore(parentScores[i / perParent], scores[i], variantWeights ? variantWeights[i % perParent] : 1.0f);
  }
}

__global__ void
GatherKernel(const float * __restrict__ values,
             const int64_t * __restrict__ indices,
             int64_t k,
             float * __restrict__ out)
{
  const int64_t r = blockIdx.x * static_cast<int64_t>(kThreads) + threadIdx.x;
  if (r < k)
  {
    out[r] = values[indices[r]];
  }
}

size_t
Align(size_t bytes)
{
  return (bytes + 255) / 256 * 256;
}

size_t
SortBytes(int64_t count)
{
  size_t bytes = 0;
  CANOPY_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(
    nullptr, bytes, static_cast<const uint64_t *>(nullptr), static_cast<uint64_t *>(nullptr), static_cast<int>(count)));
  return bytes;
}

} // namespace

size_t
ScratchBytesForTopScores(int64_t count)
{
  return 2 * Align(static_cast<size_t>(count) * sizeof(uint64_t)) + Align(SortBytes(count));
}

void
LaunchTopScores(const float * scores,
                int64_t       count,
                int64_t       k,
                int64_t *     indices,
                float *       values,
                void *        scratch,
                size_t        scratchBytes,
                StreamHandle  stream)
{
  if (count <= 0 || k <= 0)
  {
    return;
  }
  if (scratchBytes < ScratchBytesForTopScores(count) || count > 0x7FFFFFFF || k > count)
  {
    CANOPY_THROW("LaunchTopScores: " << count << " scores, k = " << k << ", " << scratchBytes
                                     << " scratch bytes (needs " << ScratchBytesForTopScores(count) << ")");
  }
  auto *       base = static_cast<unsigned char *>(scratch);
  const size_t keyBytes = Align(static_cast<size_t>(count) * sizeof(uint64_t));
  auto *       keys = reinterpret_cast<uint64_t *>(base);
  auto *       sorted = reinterpret_cast<uint64_t *>(base + keyBytes);
  size_t       sortBytes = SortBytes(count);
  const auto   blocks = static_cast<unsigned int>((count + kThreads - 1) / kThreads);
  KeysKernel<<<blocks, kThreads, 0, stream>>>(scores, count, keys);
  CANOPY_CUDA_CHECK_LAUNCH(KeysKernel);
  CANOPY_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(
    base + 2 * keyBytes, sortBytes, keys, sorted, static_cast<int>(count), 0, 64, stream));
  DecodeKernel<<<static_cast<unsigned int>((k + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
    sorted, scores, k, indices, values);
  CANOPY_CUDA_CHECK_LAUNCH(DecodeKernel);
}

void
LaunchJointScores(const float * scores,
                  const float * parentScores,
                  const float * variantWeights,
                  int64_t       perParent,
                  int64_t       count,
                  float *       joint,
                  StreamHandle  stream)
{
  if (count <= 0)
  {
    return;
  }
  JointKernel<<<static_cast<unsigned int>((count + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
    scores, parentScores, variantWeights, perParent, count, joint);
  CANOPY_CUDA_CHECK_LAUNCH(JointKernel);
}

void
LaunchGatherScores(const float * values, const int64_t * indices, int64_t k, float * out, StreamHandle stream)
{
  if (k <= 0)
  {
    return;
  }
  GatherKernel<<<static_cast<unsigned int>((k + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
    values, indices, k, out);
  CANOPY_CUDA_CHECK_LAUNCH(GatherKernel);
}

} // namespace canopy::cuda
