#include "canopy/DeviceSupport.h"
#include "canopyConfigure.h"

#include <cctype>
#include <sstream>

namespace canopy
{
namespace
{

bool
EndsWith(const std::string & text, const std::string & suffix)
{
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/** "90", "90-real", "120-virtual", "90a-real" -> entry; false for anything else. */
bool
ParseEntry(std::string token, CudaArchitecture & entry)
{
  entry = CudaArchitecture{};
  entry.realCode = entry.ptx = true; // CMake: a bare number means both
  if (EndsWith(token, "-real"))
  {
    entry.ptx = false;
    token.resize(token.size() - 5);
  }
  else if (EndsWith(token, "-virtual"))
  {
    entry.realCode = false;
    token.resize(token.size() - 8);
  }
  if (!token.empty() && (token.back() == 'a' || token.back() == 'f'))
  {
    // "a": this capability only; "f" (family): the same major from this minor on, as plain code.
    entry.architectureSpecific = token.back() == 'a';
    token.pop_back();
  }
  if (token.empty() || token.size() > 4)
  {
    return false;
  }
  for (const char c : token)
  {
    if (!std::isdigit(static_cast<unsigned char>(c)))
    {
      return false;
    }
  }
  entry.computeCapability = std::stoi(token);
  return entry.computeCapability >= 10;
}

std::string
Capability(int major, int minor)
{
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string
NoCodeMessage(int major, int minor, const CudaArchitectureList & compiled)
{
  std::ostringstream text;
  text << "compute capability " << Capability(major, minor) << " has no code in this build of Canopy (compiled for "
       << DescribeCudaArchitectures(compiled) << "; CMake list '" << compiled.text << "')";
  if (10 * major + minor < 75)
  {
    text << "; CUDA 13 compiles for compute capability 7.5 and newer only";
  }
  else
  {
    text << "; rebuild with CUDAARCHS=" << major << minor << " or the default architecture list";
  }
  return text.str();
}

} // namespace

CudaArchitectureList
ParseCudaArchitectures(const std::string & cmakeList)
{
  CudaArchitectureList list;
  list.text = cmakeList;
  std::string token;
  auto        flush = [&]
  {
    if (token.empty())
    {
      return;
    }
    CudaArchitecture entry;
    if (ParseEntry(token, entry))
    {
      list.entries.push_back(entry);
    }
    else
    {
      list.unreadable.push_back(token);
    }
    token.clear();
  };
  for (const char c : cmakeList)
  {
    if (c == ';' || c == ',' || std::isspace(static_cast<unsigned char>(c)))
    {
      flush();
    }
    else
    {
      token += c;
    }
  }
  flush();
  return list;
}

const CudaArchitectureList &
CompiledCudaArchitectures()
{
  static const CudaArchitectureList compiled = ParseCudaArchitectures(CANOPY_USE_CUDA ? CANOPY_CUDA_ARCHITECTURES : "");
  return compiled;
}

std::string
DescribeCudaArchitectures(const CudaArchitectureList & list)
{
  std::ostringstream real, ptx;
  for (const auto & e : list.entries)
  {
    const std::string suffix = e.architectureSpecific ? "a" : "";
    if (e.realCode)
    {
      real << (real.tellp() > 0 ? " " : "") << "sm_" << e.computeCapability << suffix;
    }
    if (e.ptx)
    {
      ptx << (ptx.tellp() > 0 ? " " : "") << "compute_" << e.computeCapability << suffix;
    }
  }
  std::string text = real.str();
  if (ptx.tellp() > 0)
  {
    text += (text.empty() ? "PTX " : " + PTX ") + ptx.str();
  }
  for (const auto & u : list.unreadable)
  {
    text += (text.empty() ? "" : " + ") + u;
  }
  return text.empty() ? "none" : text;
}

KernelImageChoice
ChooseKernelImage(int major, int minor, const CudaArchitectureList & compiled)
{
  const int         capability = 10 * major + minor;
  KernelImageChoice native{ KernelImageKind::None, 0 }, jit{ KernelImageKind::None, 0 };
  for (const auto & e : compiled.entries)
  {
    const bool sameMajorAtOrBelow = e.computeCapability / 10 == major && e.computeCapability % 10 <= minor;
    const bool runsNative = e.architectureSpecific ? e.computeCapability == capability : sameMajorAtOrBelow;
    const bool runsJit = e.architectureSpecific ? e.computeCapability == capability : e.computeCapability <= capability;
    if (e.realCode && runsNative && e.computeCapability > native.computeCapability)
    {
      native = { KernelImageKind::Native, e.computeCapability };
    }
    if (e.ptx && runsJit && e.computeCapability > jit.computeCapability)
    {
      jit = { KernelImageKind::JitFromPtx, e.computeCapability };
    }
  }
  if (native.kind == KernelImageKind::Native)
  {
    return native;
  }
  if (jit.kind == KernelImageKind::JitFromPtx)
  {
    return jit;
  }
  return { compiled.unreadable.empty() ? KernelImageKind::None : KernelImageKind::Unknown, 0 };
}

KernelSupport
DecideKernelSupport(int                          major,
                    int                          minor,
                    const CudaArchitectureList & compiled,
                    KernelProbe                  probe,
                    const std::string &          probeError)
{
  const KernelImageChoice choice = ChooseKernelImage(major, minor, compiled);
  std::string             runs;
  switch (choice.kind)
  {
    case KernelImageKind::Native:
      runs = "sm_" + std::to_string(choice.computeCapability) + " code";
      break;
    case KernelImageKind::JitFromPtx:
      runs = "PTX compute_" + std::to_string(choice.computeCapability) +
             ", compiled by the driver at first use (rebuild with CUDAARCHS=" + std::to_string(major) +
             std::to_string(minor) + " for native code)";
      break;
    case KernelImageKind::Unknown:
      runs = "code from '" + compiled.text + "'";
      break;
    case KernelImageKind::None:
      break;
  }
  switch (probe)
  {
    case KernelProbe::Loaded:
      // The runtime is the authority; the list only names what it found.
      return { true,
               runs.empty() ? "code the runtime found (compiled for " + DescribeCudaArchitectures(compiled) + ")"
                            : runs };
    case KernelProbe::NoKernelImage:
      return { false, NoCodeMessage(major, minor, compiled) };
    case KernelProbe::Failed:
      return { false,
               "loading Canopy's kernels for compute capability " + Capability(major, minor) + " failed (" +
                 probeError + "); compiled for " + DescribeCudaArchitectures(compiled) };
    case KernelProbe::NotRun:
      break;
  }
  if (choice.kind == KernelImageKind::None)
  {
    return { false, NoCodeMessage(major, minor, compiled) };
  }
  return { true, runs };
}

} // namespace canopy
