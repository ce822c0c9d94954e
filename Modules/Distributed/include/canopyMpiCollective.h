// The processes of an MPI run (mpirun, srun, ...) as a canopy::Collective. MPI stays inside this
// module's sources: callers see only the interface, and a build without MPI (CANOPY_USE_MPI=OFF)
// links a stand-in whose MpiWorld() throws a clear error.
#pragma once

#include "canopy/Collective.h"

#include <string>

namespace canopy
{

/** Whether this build has MPI. */
bool
MpiCompiledIn();

/** MPI_COMM_WORLD (duplicated) as a Collective; MPI is initialised on the first call and finalised at
 * exit. Errors of MPI calls are thrown as canopy::Error naming the call. Throws when the build has no
 * MPI. */
Collective &
MpiWorld();

/** This process's rank among the processes of its machine (MPI_COMM_TYPE_SHARED): which GPU it
 * takes. 0 without MPI. A collective call the first time. */
int
MpiLocalRank();

/** Stops every process of the run (MPI_Abort) after printing `message` with this process's rank: for
 * a failure the others, waiting in a collective, cannot see. Without MPI (or before MpiWorld()) it
 * only returns. */
void
AbortAllProcesses(const std::string & message, int code);

} // namespace canopy
