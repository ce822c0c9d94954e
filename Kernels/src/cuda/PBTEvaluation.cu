// Dense PBT evaluation on the GPU (Birkbeck et al. Fig. 2): one thread per voxel runs Algorithm 2 with
// its bounded stack in local memory. Threads of a block cover a 32 x 4 tile of one z-plane, so a warp
// is 32 consecutive x voxels. Run independently (PbtPosteriorStack), neighbouring threads soon sit at
// different nodes and the warp serialises over them with scattered reads; the warp-synchronous
// traversal instead expands one node at a time for all threads holding it (PbtExpandNode, the same
// step), so integral-volume reads are coalesced and tree reads are broadcasts. Measured on an H200,
// the independent form won on trained and random trees alike (docs/BENCHMARKS.md, "PBT"): where
// paths agree, lockstep threads already read together; where they differ, the union is long.
// Tree and features are read-only for the whole launch: features through __ldg; nodes and weak
// learners either from global memory or (SharedNodes) staged once per block in shared memory, with a
// persistent grid so the copy is paid once per resident block, not once per tile.
// Compiled with --fmad=false (Kernels/CMakeLists.txt) so responses and calibrations round exactly as
// the CPU reference does: a contracted multiply-add can move a probability across a branch threshold.
#include "canopy/CudaCheck.h"
#include "canopy/PBTEvaluation.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>

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

/** HaarResponseAt with features read through __ldg. With precomputed corners (MakeHaarFeatureCorners
 * for this volume's row and plane strides), points whose boxes need no clipping take the corner form
 * (HaarResponsesInside: eight loads per cuboid at fixed offsets, the same arithmetic in the same order
 * as HaarResponse); the others, and all points without corners, take the clipped HaarResponse. */
struct DeviceHaarResponse
{
  IntegralVolumeView                     volume;
  const HaarFeatureVoxels * __restrict__ features;
  const HaarFeatureCorners * __restrict__ corners; // may be null
  int                                    x, y, z;

  __device__ __forceinline__ float operator()(int f) const
  {
    if (corners != nullptr)
    {
      // Read in place (not copied) so only the corners in use occupy registers.
      const HaarFeatureCorners & k = corners[f];
      if (HaarCornersInside(volume, k, x, y, z))
      {
        const double * at[1] = { volume.sums + PaddedIndex(volume, x, y, z) };
        double         response[1];
        HaarResponsesInside<1>(at, k, response);
        return static_cast<float>(response[0]);
      }
    }
    const HaarFeatureVoxels feature = LoadFeature(features + f);
    return static_cast<float>(HaarResponse(volume, feature, x, y, z));
  }
};

struct TileGrid
{
  int          tilesX, tilesY;
  std::int64_t numTiles;
};

/** Per-thread Algorithm 2 with the warp choosing which node is expanded next (see PBTEvaluation.h). */
template <typename TResponseOf>
__device__ __forceinline__ float
PbtPosteriorWarpSynchronous(const PBTView & tree, TResponseOf & responseOf, bool active)
{
  PBTStackEntry stack[kPBTEvaluationStack];
  int           size = active ? 1 : 0;
  stack[0] = PBTStackEntry{ 0, 1.0f };
  float total = 0.0f;
  while (true)
  {
    const int top = size > 0 ? stack[size - 1].node : INT_MAX;
    const int next = __reduce_min_sync(0xffffffffu, top);
    if (next == INT_MAX)
    {
      break;
    }
    if (top == next)
    {
      const PBTStackEntry entry = stack[--size];
      const PBTNodeFlat   node = tree.nodes[entry.node];
      if (IsLeaf(node))
      {
        total += entry.weight * node.empiricalPositive;
      }
      else
      {
        const float p = StrongClassifierProbability(tree, node, responseOf);
        PbtExpandNode(tree, node, entry.weight, p, total, [&](int child, float w) {
          stack[size++] = PBTStackEntry{ child, w };
        });
      }
    }
  }
  return total;
}

template <bool kSharedTree, bool kWarpSynchronous>
__global__ void __launch_bounds__(kThreads)
PBTDenseKernel(PBTView tree, int numLearners, IntegralVolumeView volume,
               const HaarFeatureVoxels * __restrict__ features, const HaarFeatureCorners * __restrict__ corners,
               VoxelBlock block, float * __restrict__ out, TileGrid grid)
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
  // The loop bounds are uniform over the block, so whole warps iterate together.
  for (std::int64_t tile = blockIdx.x; tile < grid.numTiles; tile += gridDim.x)
  {
    const int          tx = static_cast<int>(tile % grid.tilesX);
    const std::int64_t rest = tile / grid.tilesX;
    const int          ty = static_cast<int>(rest % grid.tilesY);
    const int          z = static_cast<int>(rest / grid.tilesY);
    const int          x = tx * kTileX + threadIdx.x;
    const int          y = ty * kTileY + threadIdx.y;
    const bool         active = x < block.sx && y < block.sy;
    DeviceHaarResponse response{ volume, features, corners, block.x0 + x, block.y0 + y, block.z0 + z };
    float              posterior = 0.0f;
    if constexpr (kWarpSynchronous)
    {
      posterior = PbtPosteriorWarpSynchronous(tree, response, active);
    }
    else if (active)
    {
      posterior = PbtPosteriorStack<kPBTEvaluationStack>(tree, response);
    }
    if (active)
    {
      out[(static_cast<std::int64_t>(z) * block.sy + y) * block.sx + x] = posterior;
    }
  }
}

template <bool kSharedTree, bool kWarpSynchronous>
void
Launch(const PBTView & tree, int numLearners, const IntegralVolumeView & volume, const HaarFeatureVoxels * features,
       const HaarFeatureCorners * corners, const VoxelBlock & block, float * out, StreamHandle stream,
       const TileGrid & grid, std::size_t sharedBytes)
{
  auto       kernel = PBTDenseKernel<kSharedTree, kWarpSynchronous>;
  const dim3 threads(kTileX, kTileY);
  // One tile per block, except with a shared tree: a persistent grid pays its copy once per block.
  std::int64_t blocks = std::min<std::int64_t>(grid.numTiles, std::int64_t{ 1 } << 30);
  if (kSharedTree)
  {
    CANOPY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedBytes)));
    int device = 0, perSM = 0, multiprocessors = 0;
    CANOPY_CUDA_CHECK(cudaGetDevice(&device));
    CANOPY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSM, kernel, kThreads, sharedBytes));
    CANOPY_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
    blocks = std::min<std::int64_t>(blocks, std::int64_t(std::max(perSM, 1)) * multiprocessors);
  }
  kernel<<<static_cast<unsigned int>(blocks), threads, kSharedTree ? sharedBytes : 0, stream>>>(
    tree, numLearners, volume, features, corners, block, out, grid);
  CANOPY_CUDA_CHECK_LAUNCH(PBTDenseKernel);
}

} // namespace

void
LaunchPBTDense(const PBTView & tree, int numLearners, const IntegralVolumeView & volume,
               const HaarFeatureVoxels * features, const HaarFeatureCorners * corners, const VoxelBlock & block,
               float * out, StreamHandle stream, const PBTLaunchOptions & options)
{
  if (block.NumberOfVoxels() <= 0)
  {
    return;
  }
  TileGrid grid;
  grid.tilesX = (block.sx + kTileX - 1) / kTileX;
  grid.tilesY = (block.sy + kTileY - 1) / kTileY;
  grid.numTiles = static_cast<std::int64_t>(grid.tilesX) * grid.tilesY * block.sz;

  const std::size_t sharedBytes = static_cast<std::size_t>(tree.numNodes) * sizeof(PBTNodeFlat) +
                                  static_cast<std::size_t>(numLearners) * sizeof(PBTWeakLearnerFlat);
  int device = 0, sharedLimit = 0;
  CANOPY_CUDA_CHECK(cudaGetDevice(&device));
  CANOPY_CUDA_CHECK(cudaDeviceGetAttribute(&sharedLimit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  // Leave room for two resident blocks per multiprocessor; larger trees stay in global memory.
  const bool shared = options.placement == PBTTreePlacement::SharedNodes &&
                      sharedBytes <= static_cast<std::size_t>(sharedLimit) / 2;
  const bool warp = options.traversal == PBTTraversal::WarpSynchronous;
  auto launch = shared ? (warp ? Launch<true, true> : Launch<true, false>) : (warp ? Launch<false, true> : Launch<false, false>);
  launch(tree, numLearners, volume, features, corners, block, out, stream, grid, sharedBytes);
}

} // namespace canopy::cuda
