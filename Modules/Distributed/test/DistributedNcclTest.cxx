// NCCL all-reduce of a device histogram with the ranks there are (ctest: 1; on a multi-GPU machine
// under mpirun -np N, one GPU per rank): the sum of the ranks' integer histograms, exactly.
#include "canopyMpiCollective.h"
#include "canopyNcclReduction.h"
#include "canopyTesting.h"

#include "canopy/Device.h"

#include <gtest/gtest.h>

#if CANOPY_HAVE_CUDA_RUNTIME
#include <cuda_runtime.h>
#endif

namespace
{
using namespace canopy;

TEST(DistributedNccl, SumsDeviceHistogramsExactly)
{
  if (!NcclReduction::CompiledIn())
    GTEST_SKIP() << "this build has no NCCL";
  CANOPY_REQUIRE_GPU();
#if CANOPY_HAVE_CUDA_RUNTIME
  SingleProcessCollective alone;
  Collective &            host = MpiCompiledIn() && std::getenv("OMPI_COMM_WORLD_SIZE") ? MpiWorld() : alone;
  int                     devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  NcclReduction              nccl(host, host.Rank() % devices);
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

} // namespace
