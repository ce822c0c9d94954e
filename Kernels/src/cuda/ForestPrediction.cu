// Dense forest prediction on the GPU (Sharp §3): one thread per voxel walks every tree of the forest
// with ForestPredictVoxel, the CPU reference's function. A block's 128 threads cover a tile of one
// z-plane, a warp either 32 consecutive x voxels (32 x 4 tiles) or an 8 x 4 square (16 x 8 tiles):
// neighbours mostly take the same path, so their box corners are neighbouring table entries and
// their node reads one broadcast. Without a scale channel the scaling arithmetic is compiled out.
// The forest is read-only for the launch: nodes (two 16-byte loads each), roots and distributions
// through the read-only data cache, or the nodes staged once per block in shared memory when the
// whole forest fits; then the grid is persistent so the copy is paid once per resident block.
// Compiled with --fmad=false (Kernels/CMakeLists.txt): box positions and means round as on the CPU.
#include "canopy/CudaCheck.h"
#include "canopy/ForestPrediction.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>

namespace canopy::cuda
{
namespace
{

constexpr int kThreads = 128;

struct TileGrid
{
  int          tileX, tileY; // 32 x 4 or 16 x 8
  bool         squares;      // warps of 8 x 4 voxels
  int          tilesX, tilesY;
  std::int64_t numTiles;
};

__device__ __forceinline__ ForestNode
LoadNodeGlobal(const ForestNode * __restrict__ nodes, int i)
{
  const int4 * p = reinterpret_cast<const int4 *>(nodes + i);
  const int4   a = __ldg(p);
  const int4   b = __ldg(p + 1);
  ForestNode   node;
  static_assert(sizeof(int4) * 2 == sizeof(ForestNode), "two vector loads per node");
  memcpy(reinterpret_cast<char *>(&node), &a, sizeof(int4));
  memcpy(reinterpret_cast<char *>(&node) + sizeof(int4), &b, sizeof(int4));
  return node;
}

template <bool kPlanar, bool kShared, bool kScaled>
__global__ void __launch_bounds__(kThreads)
ForestKernel(ForestView forest, ForestImagesView images, VoxelBlock block, ForestOutput out, TileGrid grid)
{
  const ForestNode * __restrict__ nodes = forest.nodes;
  if constexpr (kShared)
  {
    extern __shared__ int4 sharedNodes[];
    const int4 * __restrict__ source = reinterpret_cast<const int4 *>(forest.nodes);
    for (int i = threadIdx.x; i < 2 * forest.numNodes; i += kThreads)
    {
      sharedNodes[i] = __ldg(source + i);
    }
    __syncthreads();
    nodes = reinterpret_cast<const ForestNode *>(sharedNodes);
  }
  auto loadNode = [&](int i) {
    if constexpr (kShared)
    {
      return nodes[i];
    }
    else
    {
      return LoadNodeGlobal(nodes, i);
    }
  };
  const std::int32_t * __restrict__ roots = forest.treeRoots;
  const float * __restrict__ distributions = forest.distributions;
  auto       loadRoot = [&](int t) { return static_cast<int>(__ldg(roots + t)); };
  auto       loadDistribution = [&](int i) { return __ldg(distributions + i); };
  const int  components = ForestComponents(forest, out.mode);
  const int  warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int  lx = grid.squares ? (warp % 2) * 8 + lane % 8 : lane;
  const int  ly = grid.squares ? (warp / 2) * 4 + lane / 8 : warp;
  for (std::int64_t tile = blockIdx.x; tile < grid.numTiles; tile += gridDim.x)
  {
    const int          tx = static_cast<int>(tile % grid.tilesX);
    const std::int64_t rest = tile / grid.tilesX;
    const int          ty = static_cast<int>(rest % grid.tilesY);
    const int          z = static_cast<int>(rest / grid.tilesY);
    const int          x = tx * grid.tileX + lx;
    const int          y = ty * grid.tileY + ly;
    if (x < block.sx && y < block.sy)
    {
      const std::int64_t at = ((static_cast<std::int64_t>(z) * block.sy + y) * block.sx + x) * components;
      ForestPredictVoxel<kPlanar, kScaled>(forest, images, out.mode, loadNode, loadRoot, loadDistribution, block.x0 + x,
                                  block.y0 + y, block.z0 + z, out.distribution ? out.distribution + at : nullptr,
                                  out.index ? out.index + at : nullptr);
    }
  }
}

std::size_t
SharedBytes(const ForestView & forest)
{
  return static_cast<std::size_t>(forest.numNodes) * sizeof(ForestNode);
}

template <bool kPlanar, bool kShared, bool kScaled>
void
Launch(const ForestView & forest, const ForestImagesView & images, const VoxelBlock & block, const ForestOutput & out,
       StreamHandle stream, const TileGrid & grid)
{
  auto              kernel = ForestKernel<kPlanar, kShared, kScaled>;
  const std::size_t sharedBytes = kShared ? SharedBytes(forest) : 0;
  std::int64_t      blocks = std::min<std::int64_t>(grid.numTiles, std::int64_t{ 1 } << 30);
  if (kShared)
  {
    CANOPY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedBytes)));
    int device = 0, perSM = 0, multiprocessors = 0;
    CANOPY_CUDA_CHECK(cudaGetDevice(&device));
    CANOPY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSM, kernel, kThreads, sharedBytes));
    CANOPY_CUDA_CHECK(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
    blocks = std::min<std::int64_t>(blocks, std::int64_t(std::max(perSM, 1)) * multiprocessors);
  }
  kernel<<<static_cast<unsigned int>(blocks), kThreads, sharedBytes, stream>>>(forest, images, block, out, grid);
  CANOPY_CUDA_CHECK_LAUNCH(ForestKernel);
}

} // namespace

bool
ForestFitsShared(const ForestView & forest, const ForestLaunchOptions & options)
{
  if (options.placement == ForestPlacement::Global)
  {
    return false;
  }
  int device = 0, sharedLimit = 0;
  CANOPY_CUDA_CHECK(cudaGetDevice(&device));
  CANOPY_CUDA_CHECK(cudaDeviceGetAttribute(&sharedLimit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  // Half the opt-in leaves room for two resident blocks per multiprocessor.
  return SharedBytes(forest) <= static_cast<std::size_t>(sharedLimit) / 2;
}

void
LaunchForestPrediction(const ForestView & forest, const ForestImagesView & images, const VoxelBlock & block,
                       const ForestOutput & out, StreamHandle stream, const ForestLaunchOptions & options)
{
  if (block.NumberOfVoxels() <= 0)
  {
    return;
  }
  TileGrid grid;
  grid.squares = options.warpShape == ForestWarpShape::Square8x4;
  grid.tileX = grid.squares ? 16 : 32;
  grid.tileY = grid.squares ? 8 : 4;
  grid.tilesX = (block.sx + grid.tileX - 1) / grid.tileX;
  grid.tilesY = (block.sy + grid.tileY - 1) / grid.tileY;
  grid.numTiles = static_cast<std::int64_t>(grid.tilesX) * grid.tilesY * block.sz;
  const bool shared = ForestFitsShared(forest, options);
  const bool planar = images.Planar();
  const bool scaled = images.scale != nullptr;
  using LaunchFunction = void (*)(const ForestView &, const ForestImagesView &, const VoxelBlock &,
                                  const ForestOutput &, StreamHandle, const TileGrid &);
  // [planar][shared][scaled]
  const LaunchFunction launches[2][2][2] = {
    { { Launch<false, false, false>, Launch<false, false, true> }, { Launch<false, true, false>, Launch<false, true, true> } },
    { { Launch<true, false, false>, Launch<true, false, true> }, { Launch<true, true, false>, Launch<true, true, true> } }
  };
  launches[planar][shared][scaled](forest, images, block, out, stream, grid);
}

} // namespace canopy::cuda
