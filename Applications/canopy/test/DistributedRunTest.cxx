// DeviceOfProcess: the processes of a distributed batch or training each take their own GPU (their
// rank on the machine modulo the usable GPUs); explicit requests and machines without a GPU are left
// alone. Runs on CPU-only machines (the no-GPU rows) and on GPU hosts (the spread).
#include "canopyDistributedRun.h"

#include "canopy/Device.h"
#include "canopy/Errors.h"

#include <gtest/gtest.h>

using canopy::app::DeviceOfProcess;

TEST(DeviceOfProcess, ExplicitRequestsStayAsGiven)
{
  for (int rank : { 0, 1, 5 })
  {
    EXPECT_EQ(DeviceOfProcess("cpu", rank), "cpu");
    EXPECT_EQ(DeviceOfProcess("cuda:1", rank), "cuda:1");
  }
}

TEST(DeviceOfProcess, EachLocalRankTakesItsOwnGpu)
{
  const auto gpus = canopy::UsableCudaDevices();
  for (const char * request : { "auto", "cuda", "gpu" })
    for (int rank = 0; rank < 5; ++rank)
    {
      if (gpus.empty()) // auto falls back to the CPU later; cuda fails later with its clear error
        EXPECT_EQ(DeviceOfProcess(request, rank), request);
      else
        EXPECT_EQ(DeviceOfProcess(request, rank), "cuda:" + std::to_string(gpus[rank % gpus.size()].index))
          << request << ", local rank " << rank;
    }
}

TEST(DeviceOfProcess, AutoKeepsItsKindWithTheProcessGpu)
{
  const auto gpus = canopy::UsableCudaDevices();
  for (int rank = 0; rank < 3; ++rank)
  {
    const auto mine = canopy::app::BackendOfProcess(canopy::BackendRequest::Parse("auto"), rank);
    EXPECT_EQ(mine.kind, canopy::BackendKind::Auto) << "auto keeps its fallbacks";
    EXPECT_EQ(mine.deviceIndex, gpus.empty() ? -1 : gpus[rank % gpus.size()].index) << "local rank " << rank;
    if (!gpus.empty()) // and resolves to that GPU
      EXPECT_EQ(canopy::ResolveBackend(mine).deviceIndex, gpus[rank % gpus.size()].index);
  }
  const auto cpu = canopy::app::BackendOfProcess(canopy::BackendRequest::Parse("cpu"), 1);
  EXPECT_EQ(cpu.kind, canopy::BackendKind::CPU);
  EXPECT_EQ(cpu.deviceIndex, -1);
}

TEST(DeviceOfProcess, BadValueNamesTheOption)
{
  try
  {
    (void)DeviceOfProcess("cuda:x", 0);
    FAIL() << "no error for cuda:x";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.what()).find("cuda:x"), std::string::npos) << e.what();
  }
}
