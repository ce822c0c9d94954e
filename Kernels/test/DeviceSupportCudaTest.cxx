// On a GPU host: the present GPU has code in this build (else every GPU path would fall back or fail).
#include "canopy/Device.h"
#include "canopy/DeviceSupport.h"

#include <gtest/gtest.h>

namespace
{
using namespace canopy;

TEST(DeviceSupportCuda, ThePresentGpuIsSupportedByThisBuild)
{
  const auto devices = QueryCudaDevices();
  if (devices.empty())
  {
    GTEST_SKIP() << "no CUDA device: " << WhyNoCudaDevice(); // a GPU without code is a failure below, not a skip
  }
  for (const auto & d : devices)
  {
    EXPECT_TRUE(d.kernelsUsable) << "cuda:" << d.index << " (" << d.name << "): " << d.kernelSupport;
    // The list's answer agrees with the runtime's.
    const auto choice = ChooseKernelImage(d.computeMajor, d.computeMinor, CompiledCudaArchitectures());
    EXPECT_NE(choice.kind, KernelImageKind::None)
      << d.name << " compute " << d.computeMajor << '.' << d.computeMinor << ", compiled for "
      << DescribeCudaArchitectures(CompiledCudaArchitectures());
    std::cout << "cuda:" << d.index << " " << d.name << " compute " << d.computeMajor << '.' << d.computeMinor << ": "
              << d.kernelSupport << '\n';
  }
  const auto resolved = ResolveBackend(BackendRequest::Parse("cuda"));
  EXPECT_TRUE(resolved.useCuda);
}

} // namespace
