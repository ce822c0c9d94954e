// Stand-in for builds without MPI (CANOPY_USE_MPI=OFF).
#include "canopyMpiCollective.h"

#include "canopy/Errors.h"

namespace canopy
{

bool
MpiCompiledIn()
{
  return false;
}

Collective &
MpiWorld()
{
  CANOPY_THROW("--distributed: this build has no MPI (configure with -DCANOPY_USE_MPI=ON where Open MPI is "
               "installed: libopenmpi-dev, openmpi-bin)");
}

int
MpiLocalRank()
{
  return 0;
}

void
AbortAllProcesses(const std::string &, int)
{
}

} // namespace canopy
