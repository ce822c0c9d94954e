// The decision "does this build have code for that GPU?" and what the backend choice makes of it,
// on made-up devices: runs on the CPU.
#include "canopy/DeviceSupport.h"
#include "canopy/Device.h"
#include "canopy/Errors.h"
#include "canopyConfigure.h"

#include <gtest/gtest.h>

namespace
{
using namespace canopy;

const char * const kDefaultList = "75-real;80-real;86-real;89-real;90-real;100-real;120-real;120-virtual";

TEST(DeviceSupport, ParsesCMakeArchitectureSyntax)
{
  const auto list = ParseCudaArchitectures("75-real;90;120-virtual;90a-real;native");
  ASSERT_EQ(list.entries.size(), 4u);
  EXPECT_EQ(list.entries[0].computeCapability, 75);
  EXPECT_TRUE(list.entries[0].realCode);
  EXPECT_FALSE(list.entries[0].ptx);
  EXPECT_TRUE(list.entries[1].realCode); // a bare number is real code and PTX
  EXPECT_TRUE(list.entries[1].ptx);
  EXPECT_FALSE(list.entries[2].realCode);
  EXPECT_TRUE(list.entries[2].ptx);
  EXPECT_TRUE(list.entries[3].architectureSpecific);
  ASSERT_EQ(list.unreadable.size(), 1u);
  EXPECT_EQ(list.unreadable[0], "native");
  EXPECT_EQ(DescribeCudaArchitectures(list), "sm_75 sm_90 sm_90a + PTX compute_90 compute_120 + native");
  EXPECT_EQ(DescribeCudaArchitectures(ParseCudaArchitectures("")), "none");
  EXPECT_EQ(ParseCudaArchitectures("80 86").entries.size(), 2u); // CUDAARCHS written with spaces
}

struct Case
{
  const char *    list;
  int             major, minor;
  KernelImageKind kind;
  int             chosen;
};

TEST(DeviceSupport, ChoosesTheCodeCudaWouldRun)
{
  const Case cases[] = {
    { kDefaultList, 7, 5, KernelImageKind::Native, 75 },       // T4
    { kDefaultList, 8, 0, KernelImageKind::Native, 80 },       // A100
    { kDefaultList, 8, 6, KernelImageKind::Native, 86 },       // RTX 30xx, A40
    { kDefaultList, 8, 7, KernelImageKind::Native, 86 },       // Orin: the highest 8.x code at or below 8.7
    { kDefaultList, 8, 9, KernelImageKind::Native, 89 },       // L4, RTX 40xx
    { kDefaultList, 9, 0, KernelImageKind::Native, 90 },       // H100
    { kDefaultList, 10, 0, KernelImageKind::Native, 100 },     // B200
    { kDefaultList, 10, 3, KernelImageKind::Native, 100 },     // B300
    { kDefaultList, 12, 0, KernelImageKind::Native, 120 },     // RTX 50xx
    { kDefaultList, 12, 1, KernelImageKind::Native, 120 },     // GB10
    { kDefaultList, 13, 0, KernelImageKind::JitFromPtx, 120 }, // a future GPU: the PTX
    { kDefaultList, 11, 0, KernelImageKind::None, 0 },         // Thor: older than the PTX, other major
    { kDefaultList, 7, 0, KernelImageKind::None, 0 },          // V100: below what CUDA 13 compiles
    { "90-real", 7, 5, KernelImageKind::None, 0 },             // the old default on a T4
    { "90-real", 8, 6, KernelImageKind::None, 0 },             // sm_90 code does not run on 8.x
    { "90-real", 10, 0, KernelImageKind::None, 0 },            // nor on 10.x without PTX
    { "90", 10, 0, KernelImageKind::JitFromPtx, 90 },          // a bare 90 carries PTX
    { "90a-real", 9, 0, KernelImageKind::Native, 90 },
    { "90a-real;90a-virtual", 10, 0, KernelImageKind::None, 0 }, // "a" code and PTX: 9.0 only
    { "native", 9, 0, KernelImageKind::Unknown, 0 },             // only the runtime can tell
  };
  for (const auto & c : cases)
  {
    const auto choice = ChooseKernelImage(c.major, c.minor, ParseCudaArchitectures(c.list));
    EXPECT_EQ(choice.kind, c.kind) << c.list << " on " << c.major << '.' << c.minor;
    EXPECT_EQ(choice.computeCapability, c.chosen) << c.list << " on " << c.major << '.' << c.minor;
  }
}

TEST(DeviceSupport, TheRuntimeProbeDecidesAndTheListExplains)
{
  const auto sm90 = ParseCudaArchitectures("90-real");
  const auto none = DecideKernelSupport(7, 5, sm90, KernelProbe::NoKernelImage);
  EXPECT_FALSE(none.usable);
  EXPECT_NE(none.description.find("compute capability 7.5"), std::string::npos) << none.description;
  EXPECT_NE(none.description.find("sm_90"), std::string::npos) << none.description;
  EXPECT_NE(none.description.find("CUDAARCHS=75"), std::string::npos) << none.description;

  EXPECT_FALSE(DecideKernelSupport(7, 5, sm90, KernelProbe::NotRun).usable);
  EXPECT_NE(DecideKernelSupport(7, 0, sm90, KernelProbe::NotRun).description.find("7.5 and newer"), std::string::npos);
  const auto native = DecideKernelSupport(9, 0, sm90, KernelProbe::Loaded);
  EXPECT_TRUE(native.usable);
  EXPECT_EQ(native.description, "sm_90 code");
  const auto jit = DecideKernelSupport(13, 0, ParseCudaArchitectures(kDefaultList), KernelProbe::Loaded);
  EXPECT_TRUE(jit.usable);
  EXPECT_NE(jit.description.find("PTX compute_120"), std::string::npos) << jit.description;
  // The runtime wins over the list either way.
  EXPECT_FALSE(DecideKernelSupport(9, 0, sm90, KernelProbe::NoKernelImage).usable);
  EXPECT_TRUE(DecideKernelSupport(8, 6, sm90, KernelProbe::Loaded).usable);
  const auto failed = DecideKernelSupport(13,
                                          0,
                                          ParseCudaArchitectures(kDefaultList),
                                          KernelProbe::Failed,
                                          "cudaErrorUnsupportedPtxVersion: the provided PTX was compiled with an "
                                          "unsupported toolchain");
  EXPECT_FALSE(failed.usable);
  EXPECT_NE(failed.description.find("cudaErrorUnsupportedPtxVersion"), std::string::npos) << failed.description;
}

DeviceInfo
MadeUpDevice(int index, const char * name, int major, int minor, const char * compiledList)
{
  DeviceInfo d;
  d.index = index;
  d.name = name;
  d.computeMajor = major;
  d.computeMinor = minor;
  const auto support = DecideKernelSupport(major, minor, ParseCudaArchitectures(compiledList), KernelProbe::NotRun);
  d.kernelsUsable = support.usable;
  d.kernelSupport = support.description;
  return d;
}

TEST(DeviceSupport, AutoFallsBackToTheCpuSayingWhy)
{
  const std::vector<DeviceInfo> t4{ MadeUpDevice(0, "Tesla T4", 7, 5, "90-real") };
  std::string                   warning;
  const auto                    resolved = ResolveBackendAmong(BackendRequest::Parse("auto"), t4, "unused", &warning);
  EXPECT_FALSE(resolved.useCuda);
  EXPECT_NE(warning.find("cuda:0 (Tesla T4)"), std::string::npos) << warning;
  EXPECT_NE(warning.find("compute capability 7.5"), std::string::npos) << warning;
  EXPECT_NE(warning.find("sm_90"), std::string::npos) << warning;
  EXPECT_NE(warning.find("running on the CPU"), std::string::npos) << warning;

  ResolveBackendAmong(BackendRequest::Parse("auto"), {}, "no CUDA device is visible", &warning);
  EXPECT_NE(warning.find("no CUDA device is visible"), std::string::npos) << warning;
}

TEST(DeviceSupport, AnExplicitCudaRequestForAGpuWithoutCodeIsAnError)
{
  const std::vector<DeviceInfo> t4{ MadeUpDevice(0, "Tesla T4", 7, 5, "90-real") };
  for (const char * request : { "cuda", "cuda:0" })
  {
    try
    {
      ResolveBackendAmong(BackendRequest::Parse(request), t4, "unused", nullptr);
      FAIL() << request << ": expected canopy::Error";
    }
    catch (const Error & e)
    {
      const std::string message = e.GetDescription();
      EXPECT_NE(message.find("compute capability 7.5"), std::string::npos) << message;
      EXPECT_NE(message.find("sm_90"), std::string::npos) << message;
      EXPECT_NE(message.find("Tesla T4"), std::string::npos) << message;
    }
  }
  EXPECT_THROW(ResolveBackendAmong(BackendRequest::Parse("cuda:1"), t4, "unused", nullptr), Error);
  EXPECT_THROW(ResolveBackendAmong(BackendRequest::Parse("cuda"), {}, "none visible", nullptr), Error);
}

TEST(DeviceSupport, PicksTheFirstDeviceWithCode)
{
  const std::vector<DeviceInfo> mixed{ MadeUpDevice(0, "Tesla T4", 7, 5, "90-real"),
                                       MadeUpDevice(1, "NVIDIA H100", 9, 0, "90-real") };
  std::string                   warning;
  for (const char * request : { "auto", "cuda", "cuda:1" })
  {
    const auto resolved = ResolveBackendAmong(BackendRequest::Parse(request), mixed, "unused", &warning);
    EXPECT_TRUE(resolved.useCuda) << request;
    EXPECT_EQ(resolved.deviceIndex, 1) << request;
    EXPECT_TRUE(warning.empty()) << warning;
  }
  EXPECT_THROW(ResolveBackendAmong(BackendRequest::Parse("cuda:0"), mixed, "unused", nullptr), Error);
  EXPECT_FALSE(ResolveBackendAmong(BackendRequest::Parse("cpu"), mixed, "unused", nullptr).useCuda);
}

// A process of a distributed run asks for auto on its own GPU (BackendOfProcess): that GPU where it has
// code, else the first that has, with auto's CPU fallback kept.
TEST(DeviceSupport, AutoWithAnIndexPrefersThatDevice)
{
  const std::vector<DeviceInfo> two{ MadeUpDevice(0, "NVIDIA H200", 9, 0, "90-real"),
                                     MadeUpDevice(1, "NVIDIA H200", 9, 0, "90-real"),
                                     MadeUpDevice(2, "Tesla T4", 7, 5, "90-real") };
  BackendRequest                auto1;
  auto1.deviceIndex = 1;
  EXPECT_EQ(ResolveBackendAmong(auto1, two, "unused", nullptr).deviceIndex, 1);
  auto1.deviceIndex = 2; // no code for it: the first that has
  EXPECT_EQ(ResolveBackendAmong(auto1, two, "unused", nullptr).deviceIndex, 0);
  auto1.deviceIndex = 7; // not there
  EXPECT_EQ(ResolveBackendAmong(auto1, two, "unused", nullptr).deviceIndex, 0);
  std::string warning;
  EXPECT_FALSE(ResolveBackendAmong(auto1, {}, "none visible", &warning).useCuda);
  EXPECT_NE(warning.find("none visible"), std::string::npos) << warning;
}

TEST(DeviceSupport, TheBinaryKnowsItsArchitectures)
{
  const auto & compiled = CompiledCudaArchitectures();
  if (CudaCompiledIn())
  {
    EXPECT_EQ(compiled.text, CANOPY_CUDA_ARCHITECTURES);
    EXPECT_FALSE(compiled.entries.empty() && compiled.unreadable.empty()) << compiled.text;
  }
  else
  {
    EXPECT_TRUE(compiled.entries.empty());
  }
}

} // namespace
