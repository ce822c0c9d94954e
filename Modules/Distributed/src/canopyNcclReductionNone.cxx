// Stand-in for builds without NCCL (no CUDA, or no libnccl).
#include "canopyNcclReduction.h"

#include "canopy/Errors.h"

namespace canopy
{

struct NcclReduction::Impl
{
};

NcclReduction::NcclReduction(Collective &, int)
{
  CANOPY_THROW("NCCL: this build has no NCCL (it needs CUDA and libnccl, which ships with the CUDA toolkit)");
}

NcclReduction::~NcclReduction() = default;

bool
NcclReduction::CompiledIn()
{
  return false;
}

bool
NcclReduction::Available()
{
  return false;
}

std::string
NcclReduction::WhyUnavailable()
{
  return "this build has no NCCL (it needs CUDA and nccl.h, which ship with the CUDA toolkit)";
}

std::string
NcclReduction::Describe()
{
  return WhyUnavailable();
}

int
NcclReduction::Rank() const
{
  return 0;
}

int
NcclReduction::Size() const
{
  return 1;
}

void
NcclReduction::SumInPlace(std::uint32_t *, std::size_t, void *)
{
}

void
NcclReduction::ReduceScatterInPlace(std::uint32_t *, std::size_t, void *)
{
}

void
NcclReduction::AllGatherInPlace(void *, std::size_t, void *)
{
}

} // namespace canopy
