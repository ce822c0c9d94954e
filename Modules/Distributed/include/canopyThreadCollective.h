// Processes simulated by threads of one process: the same Collective contract as MPI, for tests of
// distributed algorithms that must run without MPI (and with sanitizers).
#pragma once

#include "canopy/Collective.h"

#include <functional>

namespace canopy
{

/** Runs body(collective) on `size` threads, one per rank, each with its own Collective over the
 * group; waits for all and rethrows the first exception (a rank that throws releases the others
 * from their collectives with an exception too). */
void
RunThreadCollective(int size, const std::function<void(Collective &)> & body);

} // namespace canopy
