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
// persistent grid so the copy is paid once per resident block, not once per tile. The grouped kernel
// gives each thread 1, 2 or 4 z-consecutive voxels of one (x, y), expanded together wherever their
// paths agree: one read of each learner, feature and table row serves them all, their integral-volume
// loads are in flight together (the kernel is latency-bound), and 32-bit box indices cut the
// integer work of the clipped sums.
// Compiled with --fmad=false (Kernels/CMakeLists.txt) so responses and calibrations round exactly as
// the CPU reference does: a contracted multiply-add can move a probability across a branch threshold.
#include "PBTWarpTraversal.cuh"
#include "canopy/CudaCheck.h"
#include "canopy/Errors.h"
#include "canopy/PBTEvaluation.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>

namespace canopy
{

std::vector<PBTPackedLearner>
PackPBTLearners(const PBTWeakLearnerFlat * learners,
                int                        numLearners,
                const HaarFeatureVoxels *  features,
                int                        numFeatures)
{
  std::vector<PBTPackedLearner> packed(static_cast<std::size_t>(std::max(numLearners, 0)));
  for (int i = 0; i < numLearners; ++i)
  {
    const PBTWeakLearnerFlat & l = learners[i];
    if (l.feature < 0 || l.feature >= numFeatures)
    {
      CANOPY_THROW("PackPBTLearners: learner " << i << " uses feature " << l.feature << " of " << numFeatures);
    }
    packed[i] =
      PBTPackedLearner{ l.feature, l.numBins, l.lo, l.invBinWidth, l.tableOffset, features[l.feature].numCuboids,
                        { 0, 0 } };
  }
  return packed;
}

std::vector<PBTPackedCuboid>
PackHaarCuboids(const HaarFeatureVoxels * features, int numFeatures)
{
  std::vector<PBTPackedCuboid> packed(static_cast<std::size_t>(std::max(numFeatures, 0)) * kMaxHaarCuboids,
                                      PBTPackedCuboid{});
  for (int f = 0; f < numFeatures; ++f)
  {
    for (int c = 0; c < features[f].numCuboids && c < kMaxHaarCuboids; ++c)
    {
      PBTPackedCuboid & k = packed[std::size_t(f) * kMaxHaarCuboids + c];
      for (int a = 0; a < 3; ++a)
      {
        const int lo = features[f].lo[c][a], hi = features[f].hi[c][a];
        if (lo < INT16_MIN || lo > INT16_MAX || hi < INT16_MIN || hi > INT16_MAX)
        {
          CANOPY_THROW("PackHaarCuboids: feature " << f << ", cuboid " << c << " has offsets [" << lo << ", " << hi
                                                   << ") beyond int16 on axis " << a);
        }
        k.lo[a] = static_cast<std::int16_t>(lo);
        k.hi[a] = static_cast<std::int16_t>(hi);
      }
      k.weightPerVoxel = features[f].weightPerVoxel[c];
    }
  }
  return packed;
}

namespace cuda
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
  IntegralVolumeView volume;
  const HaarFeatureVoxels * __restrict__ features;
  const HaarFeatureCorners * __restrict__ corners; // may be null
  int x, y, z;

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

template<bool kSharedTree, bool kWarpSynchronous>
__global__ void
__launch_bounds__(kThreads) PBTDenseKernel(PBTView            tree,
                                           int                numLearners,
                                           IntegralVolumeView volume,
                                           const HaarFeatureVoxels * __restrict__ features,
                                           const HaarFeatureCorners * __restrict__ corners,
                                           VoxelBlock block,
                                           float * __restrict__ out,
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
      posterior = PbtPosteriorWarpSynchronous<kPBTEvaluationStack>(tree, response, active);
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

template<bool kSharedTree, bool kWarpSynchronous>
void
Launch(const PBTView &            tree,
       int                        numLearners,
       const IntegralVolumeView & volume,
       const HaarFeatureVoxels *  features,
       const HaarFeatureCorners * corners,
       const VoxelBlock &         block,
       float *                    out,
       StreamHandle               stream,
       const TileGrid &           grid,
       std::size_t                sharedBytes)
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

// ---- Grouped kernel: several z-consecutive voxels per thread, sharing tree and feature reads. ----

/** The table with 32-bit strides (the launcher checks that every index fits an int). */
struct CompactVolume
{
  const double * __restrict__ sums;
  int nx, ny, nz, row, plane;
};

/** CornerSum through the read-only cache: the same expression, so the same rounding. */
__device__ __forceinline__ double
CornerSumLdg(const double * __restrict__ s, int i111, int i011, int i101, int i110, int i001, int i010, int i100)
{
  return __ldg(s + i111) - __ldg(s + i011) - __ldg(s + i101) - __ldg(s + i110) + __ldg(s + i001) + __ldg(s + i010) +
         __ldg(s + i100) - __ldg(s);
}

/** A cuboid of the current feature with voxel offsets from the point. */
struct Cuboid
{
  int   lo[3], hi[3];
  float weightPerVoxel;
};

/** Where the grouped kernel reads learners and features: the model's records (scalar loads of the
 * fields in use) or, when packed (PackPBTLearners, PackHaarCuboids), two 16-byte loads per learner
 * and one per cuboid: fewer load instructions, and far fewer L1 wavefronts when the lanes of a warp
 * sit at different learners. */
struct LearnerSource
{
  const PBTWeakLearnerFlat * __restrict__ learners;
  const HaarFeatureVoxels * __restrict__ features;
  const PBTPackedLearner * __restrict__ packedLearners;
  const PBTPackedCuboid * __restrict__ packedCuboids;
};

template<bool kPacked>
__device__ __forceinline__ void
LoadLearner(const LearnerSource & source, int index, PBTWeakLearnerFlat & learner, int & numCuboids)
{
  if constexpr (kPacked)
  {
    const int4 * p = reinterpret_cast<const int4 *>(source.packedLearners + index);
    const int4   a = __ldg(p);
    const int2   b = __ldg(reinterpret_cast<const int2 *>(p + 1));
    learner = PBTWeakLearnerFlat{ a.x, a.y, __int_as_float(a.z), __int_as_float(a.w), b.x };
    numCuboids = b.y;
  }
  else
  {
    const PBTWeakLearnerFlat * lp = source.learners + index;
    learner = PBTWeakLearnerFlat{
      __ldg(&lp->feature), __ldg(&lp->numBins), __ldg(&lp->lo), __ldg(&lp->invBinWidth), __ldg(&lp->tableOffset)
    };
    numCuboids = __ldg(&source.features[learner.feature].numCuboids);
  }
}

template<bool kPacked>
__device__ __forceinline__ Cuboid
LoadCuboid(const LearnerSource & source, int feature, int c)
{
  Cuboid k;
  if constexpr (kPacked)
  {
    const int4 q = __ldg(reinterpret_cast<const int4 *>(source.packedCuboids + feature * kMaxHaarCuboids + c));
    // int16 pairs, low half first (little-endian), sign-extended.
    k.lo[0] = (q.x << 16) >> 16;
    k.lo[1] = q.x >> 16;
    k.lo[2] = (q.y << 16) >> 16;
    k.hi[0] = q.y >> 16;
    k.hi[1] = (q.z << 16) >> 16;
    k.hi[2] = q.z >> 16;
    k.weightPerVoxel = __int_as_float(q.w);
  }
  else
  {
    const HaarFeatureVoxels * f = source.features + feature;
#pragma unroll
    for (int a = 0; a < 3; ++a)
    {
      k.lo[a] = __ldg(&f->lo[c][a]);
      k.hi[a] = __ldg(&f->hi[c][a]);
    }
    k.weightPerVoxel = __ldg(&f->weightPerVoxel[c]);
  }
  return k;
}

/** HaarResponse at (x, y, z[n]) for the voxels with take[n]: ClippedBoxSum's clamps (x and y shared by
 * the group) and HaarResponse's accumulation order, with 32-bit index arithmetic. */
template<int N, bool kPacked>
__device__ __forceinline__ void
GroupResponses(const CompactVolume & v,
               const LearnerSource & source,
               int                   feature,
               int                   numCuboids,
               int                   x,
               int                   y,
               const int (&z)[N],
               const bool (&take)[N],
               double (&response)[N])
{
#pragma unroll
  for (int n = 0; n < N; ++n)
  {
    response[n] = 0.0;
  }
#pragma unroll
  for (int c = 0; c < kMaxHaarCuboids; ++c)
  {
    if (c < numCuboids)
    {
      const Cuboid f = LoadCuboid<kPacked>(source, feature, c);
      const int    x0 = ClampInt(x + f.lo[0], 0, v.nx);
      const int    x1 = ClampInt(x + f.hi[0], x0, v.nx);
      const int    y0 = ClampInt(y + f.lo[1], 0, v.ny);
      const int    y1 = ClampInt(y + f.hi[1], y0, v.ny);
      const int    dx = x1 - x0, dy = (y1 - y0) * v.row, xy = y0 * v.row + x0;
      const double w = static_cast<double>(f.weightPerVoxel);
#pragma unroll
      for (int n = 0; n < N; ++n)
      {
        if (take[n])
        {
          const int    z0 = ClampInt(z[n] + f.lo[2], 0, v.nz);
          const int    z1 = ClampInt(z[n] + f.hi[2], z0, v.nz);
          const int    dz = (z1 - z0) * v.plane;
          const double sum =
            CornerSumLdg(v.sums + (z0 * v.plane + xy), dx + dy + dz, dy + dz, dx + dz, dx + dy, dz, dy, dx);
          response[n] += w * sum;
        }
      }
    }
  }
}

__device__ __forceinline__ PBTNodeFlat
LoadNode(const PBTNodeFlat * p)
{
  return PBTNodeFlat{ __ldg(&p->firstLearner),
                      __ldg(&p->numLearners),
                      __ldg(&p->calibrationScale),
                      __ldg(&p->calibrationOffset),
                      __ldg(&p->empiricalPositive),
                      __ldg(&p->left),
                      __ldg(&p->right) };
}

/** StrongClassifierProbability for the voxels with take[n]; one learner and feature read serves all. */
template<int N, bool kPacked>
__device__ __forceinline__ void
GroupProbabilities(const PBTView &       tree,
                   const CompactVolume & v,
                   const LearnerSource & source,
                   const PBTNodeFlat &   node,
                   int                   x,
                   int                   y,
                   const int (&z)[N],
                   const bool (&take)[N],
                   float (&p)[N])
{
  float sum[N];
#pragma unroll
  for (int n = 0; n < N; ++n)
  {
    sum[n] = 0.0f;
  }
  for (int i = 0; i < node.numLearners; ++i)
  {
    PBTWeakLearnerFlat learner;
    int                numCuboids;
    LoadLearner<kPacked>(source, node.firstLearner + i, learner, numCuboids);
    double response[N];
    GroupResponses<N, kPacked>(v, source, learner.feature, numCuboids, x, y, z, take, response);
#pragma unroll
    for (int n = 0; n < N; ++n)
    {
      if (take[n])
      {
        const int bin = WeakLearnerBin(learner, static_cast<float>(response[n]));
        sum[n] += __ldg(tree.tables + learner.tableOffset + bin);
      }
    }
  }
#pragma unroll
  for (int n = 0; n < N; ++n)
  {
    const float zc = node.calibrationScale * sum[n] + node.calibrationOffset;
    p[n] = 1.0f / (1.0f + expf(-zc));
  }
}

/** PbtPosteriorStack for N voxels at once: each step expands the lowest-numbered node on top of any
 * of their stacks, for every voxel holding it. Each voxel still pops its own stack in its own order. */
template<int N, bool kPacked>
__device__ __forceinline__ void
GroupPosteriors(const PBTView &       tree,
                const CompactVolume & v,
                const LearnerSource & source,
                int                   x,
                int                   y,
                const int (&z)[N],
                const bool (&active)[N],
                float (&total)[N])
{
  PBTStackEntry stack[N][kPBTEvaluationStack];
  int           size[N];
#pragma unroll
  for (int n = 0; n < N; ++n)
  {
    size[n] = active[n] ? 1 : 0;
    stack[n][0] = PBTStackEntry{ 0, 1.0f };
    total[n] = 0.0f;
  }
  while (true)
  {
    int top[N];
    int next = INT_MAX;
#pragma unroll
    for (int n = 0; n < N; ++n)
    {
      top[n] = size[n] > 0 ? stack[n][size[n] - 1].node : INT_MAX;
      next = min(next, top[n]);
    }
    if (next == INT_MAX)
    {
      break;
    }
    bool  take[N];
    float weight[N];
#pragma unroll
    for (int n = 0; n < N; ++n)
    {
      take[n] = top[n] == next;
      weight[n] = take[n] ? stack[n][--size[n]].weight : 0.0f;
    }
    const PBTNodeFlat node = LoadNode(tree.nodes + next);
    if (IsLeaf(node))
    {
#pragma unroll
      for (int n = 0; n < N; ++n)
      {
        if (take[n])
        {
          total[n] += weight[n] * node.empiricalPositive;
        }
      }
      continue;
    }
    float p[N];
    GroupProbabilities<N, kPacked>(tree, v, source, node, x, y, z, take, p);
#pragma unroll
    for (int n = 0; n < N; ++n)
    {
      if (take[n])
      {
        PbtExpandNode(tree,
                      node,
                      weight[n],
                      p[n],
                      total[n],
                      [&](int child, float w) {
                        stack[n][size[n]++] = PBTStackEntry{ child, w };
                      });
      }
    }
  }
}

template<int N, int kMinBlocks, bool kPacked>
__global__ void
__launch_bounds__(kThreads, kMinBlocks) PBTDenseGroupedKernel(PBTView       tree,
                                                              CompactVolume volume,
                                                              LearnerSource source,
                                                              VoxelBlock    block,
                                                              float * __restrict__ out,
                                                              TileGrid grid)
{
  for (std::int64_t tile = blockIdx.x; tile < grid.numTiles; tile += gridDim.x)
  {
    const int          tx = static_cast<int>(tile % grid.tilesX);
    const std::int64_t rest = tile / grid.tilesX;
    const int          ty = static_cast<int>(rest % grid.tilesY);
    const int          tz = static_cast<int>(rest / grid.tilesY);
    const int          x = tx * kTileX + threadIdx.x;
    const int          y = ty * kTileY + threadIdx.y;
    int                z[N];
    bool               active[N];
#pragma unroll
    for (int n = 0; n < N; ++n)
    {
      const int local = tz * N + n;
      active[n] = x < block.sx && y < block.sy && local < block.sz;
      z[n] = block.z0 + (local < block.sz ? local : block.sz - 1); // a valid plane for inactive voxels
    }
    float posterior[N];
    GroupPosteriors<N, kPacked>(tree, volume, source, block.x0 + x, block.y0 + y, z, active, posterior);
#pragma unroll
    for (int n = 0; n < N; ++n)
    {
      if (active[n])
      {
        out[(static_cast<std::int64_t>(z[n] - block.z0) * block.sy + y) * block.sx + x] = posterior[n];
      }
    }
  }
}

template<int N, int kMinBlocks, bool kPacked>
void
LaunchGrouped(const PBTView &       tree,
              const CompactVolume & volume,
              const LearnerSource & source,
              const VoxelBlock &    block,
              float *               out,
              StreamHandle          stream)
{
  TileGrid grid;
  grid.tilesX = (block.sx + kTileX - 1) / kTileX;
  grid.tilesY = (block.sy + kTileY - 1) / kTileY;
  grid.numTiles = static_cast<std::int64_t>(grid.tilesX) * grid.tilesY * ((block.sz + N - 1) / N);
  const auto blocks = static_cast<unsigned int>(std::min<std::int64_t>(grid.numTiles, std::int64_t{ 1 } << 30));
  PBTDenseGroupedKernel<N, kMinBlocks, kPacked>
    <<<blocks, dim3(kTileX, kTileY), 0, stream>>>(tree, volume, source, block, out, grid);
  CANOPY_CUDA_CHECK_LAUNCH(PBTDenseGroupedKernel);
}

} // namespace

void
LaunchPBTDense(const PBTView &            tree,
               int                        numLearners,
               const IntegralVolumeView & volume,
               const HaarFeatureVoxels *  features,
               const HaarFeatureCorners * corners,
               const VoxelBlock &         block,
               float *                    out,
               StreamHandle               stream,
               const PBTLaunchOptions &   options)
{
  if (block.NumberOfVoxels() <= 0)
  {
    return;
  }
  const int perThread = options.voxelsPerThread;
  if (perThread != 1 && perThread != 2 && perThread != 4)
  {
    CANOPY_THROW("LaunchPBTDense: voxelsPerThread = " << perThread << " (1, 2 or 4 are built)");
  }
  const int minBlocks = options.minBlocksPerMultiprocessor;
  if (minBlocks != 0 && minBlocks != 6 && minBlocks != 8)
  {
    CANOPY_THROW("LaunchPBTDense: minBlocksPerMultiprocessor = " << minBlocks << " (0, 6 or 8 are built)");
  }
  const std::int64_t row = std::int64_t{ volume.nx } + 1, plane = row * (std::int64_t{ volume.ny } + 1);
  const bool         grouped = options.traversal == PBTTraversal::Independent &&
                       options.placement == PBTTreePlacement::Global && corners == nullptr &&
                       (perThread > 1 || options.compactIndexing || options.packedLearners != nullptr) &&
                       plane * (std::int64_t{ volume.nz } + 1) <= INT_MAX;
  if (grouped)
  {
    const CompactVolume v{
      volume.sums, volume.nx, volume.ny, volume.nz, static_cast<int>(row), static_cast<int>(plane)
    };
    using Launcher = void (*)(
      const PBTView &, const CompactVolume &, const LearnerSource &, const VoxelBlock &, float *, StreamHandle);
    // [packed][voxels per thread: 1, 2, 4][register cap: none, 6 blocks (<= 80 registers), 8 (<= 64)]
    constexpr Launcher launchers[2][3][3] = {
      { { LaunchGrouped<1, 1, false>, LaunchGrouped<1, 6, false>, LaunchGrouped<1, 8, false> },
        { LaunchGrouped<2, 1, false>, LaunchGrouped<2, 6, false>, LaunchGrouped<2, 8, false> },
        { LaunchGrouped<4, 1, false>, LaunchGrouped<4, 6, false>, LaunchGrouped<4, 8, false> } },
      { { LaunchGrouped<1, 1, true>, LaunchGrouped<1, 6, true>, LaunchGrouped<1, 8, true> },
        { LaunchGrouped<2, 1, true>, LaunchGrouped<2, 6, true>, LaunchGrouped<2, 8, true> },
        { LaunchGrouped<4, 1, true>, LaunchGrouped<4, 6, true>, LaunchGrouped<4, 8, true> } }
    };
    const bool          packed = options.packedLearners != nullptr && options.packedCuboids != nullptr;
    const LearnerSource source{ tree.learners, features, options.packedLearners, options.packedCuboids };
    launchers[packed ? 1 : 0][perThread / 2][minBlocks == 0 ? 0 : (minBlocks == 6 ? 1 : 2)](
      tree, v, source, block, out, stream);
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
  const bool shared =
    options.placement == PBTTreePlacement::SharedNodes && sharedBytes <= static_cast<std::size_t>(sharedLimit) / 2;
  const bool warp = options.traversal == PBTTraversal::WarpSynchronous;
  auto       launch =
    shared ? (warp ? Launch<true, true> : Launch<true, false>) : (warp ? Launch<false, true> : Launch<false, false>);
  launch(tree, numLearners, volume, features, corners, block, out, stream, grid, sharedBytes);
}

} // namespace cuda
} // namespace canopy
