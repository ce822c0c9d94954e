// Dense PBT evaluation on the GPU (Birkbeck et al. Fig. 2): one thread per voxel runs Algorithm 2
// (PbtPosteriorStack, PBTFlat.h) with its bounded stack in local memory. Threads of a block cover a
// 32 x 4 tile of one z-plane, so a warp is 32 consecutive x voxels: while it walks the same node its
// integral-volume reads are coalesced and its tree reads are broadcasts.
// Tree and features are read-only for the whole launch: features through __ldg; nodes and weak
// learners either from global memory or (SharedNodes) staged once per block in shared memory, with a
// persistent grid so the copy is paid once per resident block, not once per tile.
// Compiled with --fmad=false (Kernels/CMakeLists.txt) so responses and calibrations round exactly as
// the CPU reference does: a contracted multiply-add can move a probability across a branch threshold.
#include "canopy/CudaCheck.h"
#include "canopy/PBTEvaluation.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace canopy::cuda
{
namespace
{

constexpr int kTileX = 32;
constexpr int kTileY = 4;
constexpr int kThreads = kTileX * kTileY;

/** Loads only the cuboids the feature uses, through the read-only data cache. */
__device__ __forceinline__ HaarFeatureVoxels
LoadFeature(const HaarFeatureVoxels * __restrict__ p)
{
  HaarFeatureVoxels f;
  f.numCuboids = __ldg(&p->numCuboids);
#pragma unroll
  for (int c = 0; c < kMaxHaarCuboids; ++c)
  {
    if (c < f.numCuboids)
    {
#pragma unroll
      for (int a = 0; a < 3; ++a)
      {
        f.lo[c][a] = __ldg(&p->lo[c][a]);
        f.hi[c][a] = __ldg(&p->hi[c][a]);
      }
      f.weightPerVoxel[c] = __ldg(&p->weightPerVoxel[c]);
    }
  }
  return f;
}

/** HaarResponseAt with the feature loaded through __ldg; the response itself is the shared HaarResponse. */
struct DeviceHaarResponse
{
  IntegralVolumeView                    volume;
  const HaarFeatureVoxels * __restrict__ features;
  int                                   x, y, z;

  __device__ __forceinline__ float operator()(int f) const
  {
    const HaarFeatureVoxels feature = LoadFeature(features + f);
    return static_cast<float>(HaarResponse(volume, feature, x, y, z));
  }
};

struct TileGrid
{
  int          tilesX, tilesY;
  std::int64_t numTiles;
};

template <bool kSharedTree>
__global__ void __launch_bounds__(kThreads)
PBTDenseKernel(PBTView tree, int numLearners, IntegralVolumeView volume,
               const HaarFeatureVoxels * __restrict__ features, VoxelBlock block, float * __restrict__ out,
               TileGrid grid)
{
  if constexpr (kSharedTree)
  {
    // Nodes first (28-byte records), then learners (20-byte records): both 4-byte aligned.
    extern __shared__ int sharedWords[];
    const int             nodeWords = tree.numNodes * static_cast<int>(sizeof(PBTNodeFlat) / 4);
    const int             learnerWords = numLearners * static_cast<int>(sizeof(PBTWeakLearnerFlat) / 4);
    const int * __restrict__ nodeSource = reinterpret_cast<const int *>(tree.nodes);
    const int * __restrict__ learnerSource = reinterpret_cast<const int *>(tree.learners);
    const int thread = threadIdx.y * kTileX + threadIdx.x;
    for (int i = thread; i < nodeWords; i += kThreads)
    {
      sharedWords[i] = __ldg(nodeSource + i);
    }
    for (int i = thread; i < learnerWords; i += kThreads)
    {
      sharedWords[nodeWords + i] = __ldg(learnerSource + i);
    }
    __syncthreads();
    tree.nodes = reinterpret_cast<const PBTNodeFlat *>(sharedWords);
    tree.learners = reinterpret_cast<const PBTWeakLearnerFlat *>(sharedWords + nodeWords);
  }
  for (std::int64_t tile = blockIdx.x; tile < grid.numTiles; tile += gridDim.x)
  {
    const int          tx = static_cast<int>(tile % grid.tilesX);
    const std::int64_t rest = tile / grid.tilesX;
    const int          ty = static_cast<int>(rest % grid.tilesY);
    const int          z = static_cast<int>(rest / grid.tilesY);
    const int          x = tx * kTileX + threadIdx.x;
    const int          y = ty * kTileY + threadIdx.y;
    if (x < block.sx && y < block.sy)
    {
      DeviceHaarResponse response{ volume, features, block.x0 + x, block.y0 + y, block.z0 + z };
      const float        posterior = PbtPosteriorStack<kPBTEvaluationStack>(tree, response);
      out[(static_cast<std::int64_t>(z) * block.sy + y) * block.sx + x] = posterior;
    }
  }
}

} // namespace

void
LaunchPBTDense(const PBTView & tree, int numLearners, const IntegralVolumeView & volume,
               const HaarFeatureVoxels * features, const VoxelBlock & block, float * out, StreamHandle stream,
               PBTTreePlacement placement)
{
  if (block.NumberOfVoxels() <= 0)
  {
    return;
  }
  TileGrid grid;
  grid.tilesX = (block.sx + kTileX - 1) / kTileX;
  grid.tilesY = (block.sy + kTileY - 1) / kTileY;
  grid.numTiles = static_cast<std::int64_t>(grid.tilesX) * grid.tilesY * block.sz;
  const dim3 threads(kTileX, kTileY);

  const std::size_t sharedBytes =
    static_cast<std::size_t>(tree.numNodes) * sizeof(PBTNodeFlat) + std::size_t(numLearners) * sizeof(PBTWeakLearnerFlat);
  int device = 0;
  CANOPY_CUDA_CHECK(cudaGetDevice(&device));
  int sharedLimit = 0;
  CANOPY_CUDA_CHECK(cudaDeviceGetAttribute(&sharedLimit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  // Leave room for two resident blocks per multiprocessor; larger trees stay in global memory.
  if (placement == PBTTreePlacement::SharedNodes && sharedBytes <= static_cast<std::size_t>(sharedLimit) / 2)
  {
    auto kernel = PBTDenseKernel<true>;
    CANOPY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedBytes)));
    int perSM = 0;
    CANOPY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSM, kernel, kThreads, sharedBytes));
    int multiprocessors = 0;
    CANOPY_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
    const std::int64_t blocks = std::min<std::int64_t>(grid.numTiles, std::int64_t(std::max(perSM, 1)) * multiprocessors);
    kernel<<<static_cast<unsigned int>(blocks), threads, sharedBytes, stream>>>(
      tree, numLearners, volume, features, block, out, grid);
    CANOPY_CUDA_CHECK_LAUNCH(PBTDenseKernel);
    return;
  }
  // One tile per block: the grid-stride loop runs once.
  const std::int64_t blocks = std::min<std::int64_t>(grid.numTiles, std::int64_t{ 1 } << 30);
  PBTDenseKernel<false><<<static_cast<unsigned int>(blocks), threads, 0, stream>>>(
    tree, numLearners, volume, features, block, out, grid);
  CANOPY_CUDA_CHECK_LAUNCH(PBTDenseKernel);
}

} // namespace canopy::cuda
