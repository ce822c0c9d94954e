// NCCL implementation of NcclReduction (CANOPY_USE_NCCL=ON: nccl.h was found with CUDA). libnccl is
// loaded at run time (dlopen), not linked: it is 200+ MB with device code for every architecture,
// the executables run without it (NcclReduction::Available() is then false and distributed GPU
// training sums through host memory), and GPU-host bundles stay small.
#include "canopyNcclReduction.h"

#include "canopy/CudaCheck.h"
#include "canopy/Errors.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <mutex>

namespace canopy
{
namespace
{

/** The NCCL entry points Canopy uses, from libnccl.so.2 ($CANOPY_NCCL_LIBRARY overrides the name). */
struct NcclLibrary
{
  void *      handle = nullptr;
  std::string why;
  ncclResult_t (*getUniqueId)(ncclUniqueId *) = nullptr;
  ncclResult_t (*commInitRank)(ncclComm_t *, int, ncclUniqueId, int) = nullptr;
  ncclResult_t (*allReduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t) =
    nullptr;
  ncclResult_t (*reduceScatter)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t) =
    nullptr;
  ncclResult_t (*allGather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*commDestroy)(ncclComm_t) = nullptr;
  const char * (*getErrorString)(ncclResult_t) = nullptr;
  ncclResult_t (*getVersion)(int *) = nullptr; // optional: for canopy devices
  std::string name;

  NcclLibrary()
  {
    const char * name = std::getenv("CANOPY_NCCL_LIBRARY");
    this->name = name && *name ? name : "libnccl.so.2";
    handle = dlopen(this->name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
    {
      const char * error = dlerror();
      why = std::string("cannot load NCCL (") + (error ? error : "libnccl.so.2") +
            "; put libnccl.so.2 on LD_LIBRARY_PATH or name it in CANOPY_NCCL_LIBRARY)";
      return;
    }
    bool ok = Bind(getUniqueId, "ncclGetUniqueId") && Bind(commInitRank, "ncclCommInitRank") &&
              Bind(allReduce, "ncclAllReduce") && Bind(reduceScatter, "ncclReduceScatter") &&
              Bind(allGather, "ncclAllGather") && Bind(commDestroy, "ncclCommDestroy") &&
              Bind(getErrorString, "ncclGetErrorString");
    if (!ok)
    {
      dlclose(handle);
      handle = nullptr;
      return;
    }
    getVersion = reinterpret_cast<decltype(getVersion)>(dlsym(handle, "ncclGetVersion"));
  }
  template<typename F>
  bool Bind(F & f, const char * symbol)
  {
    f = reinterpret_cast<F>(dlsym(handle, symbol));
    if (!f)
      why = std::string("NCCL library without ") + symbol;
    return f != nullptr;
  }
};

const NcclLibrary &
Nccl()
{
  static const NcclLibrary library;
  return library;
}

void
CheckNccl(ncclResult_t status, const char * call)
{
  if (status != ncclSuccess)
    CANOPY_THROW("NCCL: " << call << " failed: " << Nccl().getErrorString(status));
}
#define CANOPY_NCCL(call) CheckNccl(call, #call)

} // namespace

struct NcclReduction::Impl
{
  ncclComm_t comm = nullptr;
  int        device = 0, rank = 0, size = 1;
};

NcclReduction::NcclReduction(Collective & host, int device)
  : m_Impl(std::make_unique<Impl>())
{
  m_Impl->device = device;
  m_Impl->rank = host.Rank();
  m_Impl->size = host.Size();
  // every rank agrees before any waits in NCCL: one rank without the library stops them all
  if (!host.AllTrue(Available()))
    CANOPY_THROW("NCCL: " << (Available() ? "another rank cannot load NCCL" : WhyUnavailable()));
  const NcclLibrary & nccl = Nccl();
  ncclUniqueId        id{};
  if (host.Rank() == 0)
    CANOPY_NCCL(nccl.getUniqueId(&id));
  host.Broadcast(&id, sizeof(id), 0);
  CANOPY_CUDA_CHECK(cudaSetDevice(device));
  CANOPY_NCCL(nccl.commInitRank(&m_Impl->comm, host.Size(), id, host.Rank()));
}

NcclReduction::~NcclReduction()
{
  if (m_Impl && m_Impl->comm)
    Nccl().commDestroy(m_Impl->comm);
}

bool
NcclReduction::CompiledIn()
{
  return true;
}

bool
NcclReduction::Available()
{
  return Nccl().handle != nullptr;
}

std::string
NcclReduction::WhyUnavailable()
{
  return Nccl().why;
}

std::string
NcclReduction::Describe()
{
  const NcclLibrary & nccl = Nccl();
  if (!nccl.handle)
    return nccl.why;
  int version = 0;
  if (!nccl.getVersion || nccl.getVersion(&version) != ncclSuccess || version <= 0)
    return "NCCL (" + nccl.name + ", version unknown)";
  // NCCL 2.9 on: major * 10000 + minor * 100 + patch (before: major * 1000 + minor * 100 + patch)
  const int major = version >= 10000 ? version / 10000 : version / 1000;
  const int minor = version >= 10000 ? version % 10000 / 100 : version % 1000 / 100;
  return "NCCL " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(version % 100) + " (" +
         nccl.name + ")";
}

int
NcclReduction::Rank() const
{
  return m_Impl->rank;
}

int
NcclReduction::Size() const
{
  return m_Impl->size;
}

void
NcclReduction::SumInPlace(std::uint32_t * deviceData, std::size_t count, void * stream)
{
  m_BytesReduced += static_cast<std::int64_t>(count * sizeof(std::uint32_t));
  CANOPY_NCCL(Nccl().allReduce(
    deviceData, deviceData, count, ncclUint32, ncclSum, m_Impl->comm, static_cast<cudaStream_t>(stream)));
}

void
NcclReduction::ReduceScatterInPlace(std::uint32_t * deviceData, std::size_t countPerRank, void * stream)
{
  m_BytesReduced += static_cast<std::int64_t>(countPerRank * m_Impl->size * sizeof(std::uint32_t));
  // in place: NCCL writes rank r's sums at offset r * countPerRank of the input
  CANOPY_NCCL(Nccl().reduceScatter(deviceData,
                                   deviceData + std::size_t(m_Impl->rank) * countPerRank,
                                   countPerRank,
                                   ncclUint32,
                                   ncclSum,
                                   m_Impl->comm,
                                   static_cast<cudaStream_t>(stream)));
}

void
NcclReduction::AllGatherInPlace(void * deviceData, std::size_t bytesPerRank, void * stream)
{
  auto * bytes = static_cast<std::uint8_t *>(deviceData);
  CANOPY_NCCL(Nccl().allGather(bytes + std::size_t(m_Impl->rank) * bytesPerRank,
                               bytes,
                               bytesPerRank,
                               ncclUint8,
                               m_Impl->comm,
                               static_cast<cudaStream_t>(stream)));
}

} // namespace canopy
