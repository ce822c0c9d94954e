// Distributed training on GPUs (label gpu; skipped without a GPU). ctest runs one process; on a
// multi-GPU machine run it under mpirun -np N (one GPU per rank) for the same checks over N GPUs:
// - NCCL sums device histograms exactly (skipped where libnccl.so.2 does not load);
// - the GPU split search over shards grows the one-process CPU forest, bit for bit (sums through
//   NCCL where it loads, else host memory): MPI ranks, 2 ranks as threads on one GPU, and one rank
//   per GPU as threads.
#include "DistributedTestSupport.h"
#include "canopyMpiCollective.h"
#include "canopyNcclReduction.h"
#include "canopyTesting.h"
#include "canopyThreadCollective.h"

#include "canopy/Device.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <memory>

#if CANOPY_HAVE_CUDA_RUNTIME
#include <cuda_runtime.h>
#endif

namespace
{
using namespace canopy;
using namespace canopy::testing;

/** MPI_COMM_WORLD under mpirun, else this process alone. */
Collective &
Processes()
{
  static SingleProcessCollective alone;
  RegisterMpiCollective();
  return MpiCompiledIn() && std::getenv("OMPI_COMM_WORLD_SIZE") ? MpiWorld() : alone;
}

int
DeviceOfRank(int rank)
{
  const auto devices = UsableCudaDevices();
  return devices.empty() ? 0 : devices[rank % devices.size()].index;
}

TEST(DistributedNccl, SumsDeviceHistogramsExactly)
{
  CANOPY_REQUIRE_GPU();
  if (!NcclReduction::Available())
    GTEST_SKIP() << NcclReduction::WhyUnavailable();
#if CANOPY_HAVE_CUDA_RUNTIME
  Collective &               host = Processes();
  NcclReduction              nccl(host, DeviceOfRank(host.Rank()));
  const std::size_t          n = 1 << 20;
  std::vector<std::uint32_t> mine(n), sum(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    mine[i] = static_cast<std::uint32_t>((i * 2654435761u) % 1000u + host.Rank());
  for (int r = 0; r < host.Size(); ++r)
    for (std::size_t i = 0; i < n; ++i)
      sum[i] += static_cast<std::uint32_t>((i * 2654435761u) % 1000u + r);
  std::uint32_t * device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, n * sizeof(std::uint32_t)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, mine.data(), n * sizeof(std::uint32_t), cudaMemcpyHostToDevice), cudaSuccess);
  nccl.SumInPlace(device, n, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<std::uint32_t> back(n);
  ASSERT_EQ(cudaMemcpy(back.data(), device, n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(device);
  EXPECT_EQ(back, sum) << host.Size() << " ranks";
  EXPECT_EQ(nccl.BytesReduced(), std::int64_t(n * sizeof(std::uint32_t)));
#endif
}

TEST(DistributedNccl, ReduceScatterAndAllGatherExactly)
{
  CANOPY_REQUIRE_GPU();
  if (!NcclReduction::Available())
    GTEST_SKIP() << NcclReduction::WhyUnavailable();
#if CANOPY_HAVE_CUDA_RUNTIME
  // ranks as threads, one GPU each (one rank on a one-GPU host: its part is everything)
  const auto        devices = UsableCudaDevices();
  const int         ranks = static_cast<int>(std::min<std::size_t>(devices.size(), 4));
  const std::size_t per = (1 << 18) + 3; // not a round size
  auto value = [](std::size_t i, int r) { return static_cast<std::uint32_t>((i * 2654435761u) % 1000u + 7 * r); };
  std::vector<int> ok(ranks, 0);
  RunThreadCollective(
    ranks,
    [&](Collective & c)
    {
      NcclCollective             nccl(c, devices[c.Rank()].index);
      const int                  rank = c.Rank();
      std::vector<std::uint32_t> mine(per * ranks);
      for (std::size_t i = 0; i < mine.size(); ++i)
        mine[i] = value(i, rank);
      std::uint32_t * device = nullptr;
      cudaSetDevice(devices[rank].index);
      if (cudaMalloc(&device, mine.size() * sizeof(std::uint32_t)) != cudaSuccess)
        return;
      cudaMemcpy(device, mine.data(), mine.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice);
      bool good = nccl.ReduceScatterDeviceInPlace(device, per, nullptr);
      cudaDeviceSynchronize();
      std::vector<std::uint32_t> back(per);
      cudaMemcpy(back.data(), device + rank * per, per * sizeof(std::uint32_t), cudaMemcpyDeviceToHost);
      for (std::size_t i = 0; good && i < per; ++i)
      {
        std::uint32_t sum = 0;
        for (int r = 0; r < ranks; ++r)
          sum += value(rank * per + i, r);
        good = back[i] == sum;
      }
      // each rank's part (here: its rank number in every element) to every rank
      std::vector<std::uint32_t> part(per, static_cast<std::uint32_t>(rank + 100));
      cudaMemcpy(device + rank * per, part.data(), per * sizeof(std::uint32_t), cudaMemcpyHostToDevice);
      good = good && nccl.AllGatherDeviceInPlace(device, per * sizeof(std::uint32_t), nullptr);
      cudaDeviceSynchronize();
      std::vector<std::uint32_t> all(per * ranks);
      cudaMemcpy(all.data(), device, all.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost);
      for (std::size_t i = 0; good && i < all.size(); ++i)
        good = all[i] == static_cast<std::uint32_t>(i / per + 100);
      cudaFree(device);
      ok[rank] = good && cudaGetLastError() == cudaSuccess;
    });
  for (int r = 0; r < ranks; ++r)
    EXPECT_TRUE(ok[r]) << "rank " << r << " of " << ranks << " GPUs";
#endif
}

ForestTrainingOptions
GpuOptions(int device)
{
  auto o = DistributedOptions();
  o.backend = BackendRequest::Parse("cuda:" + std::to_string(device));
  o.flipPairs = true;
  o.balanceClasses = true;
  return o;
}

/** NCCL over `host` where libnccl loads, else none (the sums then go through host memory). */
std::unique_ptr<NcclCollective>
NcclIfAvailable(Collective & host, int device)
{
  if (!NcclReduction::Available())
  {
    std::cout << "[ NOTE     ] sums through host memory: " << NcclReduction::WhyUnavailable() << '\n';
    return nullptr;
  }
  return std::make_unique<NcclCollective>(host, device);
}

TEST(DistributedNccl, ShardedGpuSearchGrowsTheCpuForest)
{
  CANOPY_REQUIRE_GPU();
  Collective & host = Processes();
  const auto   phantoms = MakeDistributedPhantoms(5, 1);
  auto         cpuOptions = DistributedOptions();
  cpuOptions.flipPairs = true;
  cpuOptions.balanceClasses = true;
  const ForestModel     cpu = TrainForest(DistributedSetOf(phantoms, { 0, phantoms.size() }), cpuOptions);
  const auto            nccl = NcclIfAvailable(host, DeviceOfRank(host.Rank()));
  ForestTrainingOptions o = GpuOptions(DeviceOfRank(host.Rank()));
  o.shards = nccl ? static_cast<Collective *>(nccl.get()) : &host;
  ForestTrainingStats stats;
  const ForestModel   gpu =
    TrainForest(DistributedSetOf(phantoms, ContiguousShare(phantoms.size(), host.Rank(), host.Size())), o, &stats);
  EXPECT_TRUE(stats.usedGpu);
  EXPECT_TRUE(SameForest(cpu, gpu)) << "rank " << host.Rank() << " of " << host.Size();
  EXPECT_EQ(stats.scatteredBatches > 0, nccl && host.Size() > 1) << "each process scores its part through NCCL";
  EXPECT_GT(o.shards->BytesReduced(), 0);
}

TEST(DistributedNccl, TwoRanksOnOneGpuThroughHostMemory)
{
  CANOPY_REQUIRE_GPU();
  auto cpuOptions = DistributedOptions();
  cpuOptions.flipPairs = true;
  cpuOptions.balanceClasses = true;
  const auto               phantoms = MakeDistributedPhantoms(5, 6);
  const ForestModel        cpu = TrainForest(DistributedSetOf(phantoms, { 0, phantoms.size() }), cpuOptions);
  std::vector<ForestModel> models(2);
  std::vector<int>         usedGpu(2, 0);
  RunThreadCollective(2,
                      [&](Collective & c)
                      {
                        ForestTrainingOptions o = GpuOptions(DeviceOfRank(0));
                        o.shards = &c;
                        o.gpuSliceSamples = 4096; // small slices: picks and histograms over several slices
                        ForestTrainingStats stats;
                        models[c.Rank()] = TrainForest(
                          DistributedSetOf(phantoms, ContiguousShare(phantoms.size(), c.Rank(), 2)), o, &stats);
                        usedGpu[c.Rank()] = stats.usedGpu;
                      });
  for (int r = 0; r < 2; ++r)
  {
    EXPECT_TRUE(usedGpu[r]);
    EXPECT_TRUE(SameForest(cpu, models[r])) << "rank " << r;
  }
}

TEST(DistributedNccl, EveryGpuARankAsThreads)
{
  CANOPY_REQUIRE_GPU();
  // No MPI needed: ranks are threads of this process, one GPU each, NCCL between them where libnccl
  // loads (how the scaling benchmark runs on GPU hosts without an MPI installation).
  auto cpuOptions = DistributedOptions();
  cpuOptions.flipPairs = true;
  cpuOptions.balanceClasses = true;
  const auto               phantoms = MakeDistributedPhantoms(5, 1);
  const ForestModel        cpu = TrainForest(DistributedSetOf(phantoms, { 0, phantoms.size() }), cpuOptions);
  const auto               devices = UsableCudaDevices();
  const int                ranks = static_cast<int>(std::min<std::size_t>(devices.size(), 4));
  // both ways of scoring on several GPUs: each process its part of the nodes (through NCCL), or all
  for (const bool scatter : { true, false })
  {
    std::vector<ForestModel> models(ranks);
    std::vector<int>         scattered(ranks, 0);
    RunThreadCollective(ranks,
                        [&](Collective & c)
                        {
                          const auto            nccl = NcclIfAvailable(c, devices[c.Rank()].index);
                          ForestTrainingOptions o = GpuOptions(devices[c.Rank()].index);
                          o.shards = nccl ? static_cast<Collective *>(nccl.get()) : &c;
                          o.gpuScatterScores = scatter;
                          ForestTrainingStats stats;
                          models[c.Rank()] = TrainForest(
                            DistributedSetOf(phantoms, ContiguousShare(phantoms.size(), c.Rank(), ranks)), o, &stats);
                          scattered[c.Rank()] = stats.scatteredBatches > 0;
                        });
    for (int r = 0; r < ranks; ++r)
    {
      EXPECT_TRUE(SameForest(cpu, models[r])) << "rank " << r << " of " << ranks << " GPUs, scatter " << scatter;
      // the scattered path runs wherever it can: several GPUs with NCCL between them
      EXPECT_EQ(scattered[r] != 0, scatter && ranks > 1 && NcclReduction::Available()) << "rank " << r;
    }
  }
}

} // namespace
