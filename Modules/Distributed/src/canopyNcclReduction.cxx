// NCCL implementation of NcclReduction (CANOPY_USE_NCCL=ON).
#include "canopyNcclReduction.h"

#include "canopy/CudaCheck.h"
#include "canopy/Errors.h"

#include <cuda_runtime.h>
#include <nccl.h>

namespace canopy
{
namespace
{
void
CheckNccl(ncclResult_t status, const char * call)
{
  if (status != ncclSuccess)
    CANOPY_THROW("NCCL: " << call << " failed: " << ncclGetErrorString(status));
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
  ncclUniqueId id{};
  if (host.Rank() == 0)
    CANOPY_NCCL(ncclGetUniqueId(&id));
  host.Broadcast(&id, sizeof(id), 0);
  CANOPY_CUDA_CHECK(cudaSetDevice(device));
  CANOPY_NCCL(ncclCommInitRank(&m_Impl->comm, host.Size(), id, host.Rank()));
}

NcclReduction::~NcclReduction()
{
  if (m_Impl && m_Impl->comm)
    ncclCommDestroy(m_Impl->comm);
}

bool
NcclReduction::CompiledIn()
{
  return true;
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
  CANOPY_NCCL(
    ncclAllReduce(deviceData, deviceData, count, ncclUint32, ncclSum, m_Impl->comm, static_cast<cudaStream_t>(stream)));
}

} // namespace canopy
