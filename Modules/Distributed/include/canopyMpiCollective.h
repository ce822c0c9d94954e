// The processes of an MPI run (mpirun, srun, ...) as a canopy::Collective. MPI stays inside this
// module's sources, and inside one library: canopy_distributed_mpi, whose RegisterMpiCollective()
// a program calls to run under MPI (the canopy command line, the MPI tests). Programs that do not
// (3D Slicer modules) do not link MPI; MpiWorld() then throws a clear error, as in builds without
// MPI (CANOPY_USE_MPI=OFF).
#pragma once

#include "canopy/Collective.h"

#include <string>

namespace canopy
{

/** Makes MpiWorld() and the functions below use MPI; defined in canopy_distributed_mpi (nothing to do
 * in builds without MPI). Call it first thing in main(). */
void
RegisterMpiCollective();

/** Whether MPI is available: this build has it and RegisterMpiCollective() was called. */
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
