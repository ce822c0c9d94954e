// canopy_distributed_mpi in builds without MPI (CANOPY_USE_MPI=OFF): nothing to register.
#include "canopyMpiCollective.h"

namespace canopy
{

void
RegisterMpiCollective()
{
}

} // namespace canopy
