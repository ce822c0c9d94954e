// MpiWorld() and friends for every program; MPI itself only where RegisterMpiCollective() was called
// (canopy_distributed_mpi), so programs that never run under mpirun (3D Slicer modules) do not link it.
#include "canopyMpiHooks.h"
#include "canopyMpiCollective.h"

#include "canopy/Errors.h"
#include "canopyConfigure.h"

namespace canopy
{
namespace
{
const detail::MpiHooks * g_Hooks = nullptr;
}

void
detail::SetMpiHooks(const MpiHooks * hooks)
{
  g_Hooks = hooks;
}

bool
MpiCompiledIn()
{
  return g_Hooks != nullptr;
}

Collective &
MpiWorld()
{
  if (!g_Hooks)
  {
    if (CANOPY_USE_MPI)
      CANOPY_THROW("--distributed: this program does not run under MPI (the canopy command line does)");
    CANOPY_THROW("--distributed: this build has no MPI (configure with -DCANOPY_USE_MPI=ON where Open MPI is "
                 "installed: libopenmpi-dev, openmpi-bin)");
  }
  return g_Hooks->world();
}

int
MpiLocalRank()
{
  return g_Hooks ? g_Hooks->localRank() : 0;
}

void
AbortAllProcesses(const std::string & message, int code)
{
  if (g_Hooks)
    g_Hooks->abortAll(message, code);
}

} // namespace canopy
