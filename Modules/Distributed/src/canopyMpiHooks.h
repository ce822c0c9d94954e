// How canopy_distributed_mpi (the only library that links MPI) plugs MPI into canopy_distributed.
#pragma once

#include "canopy/Collective.h"

#include <string>

namespace canopy::detail
{

struct MpiHooks
{
  Collective & (*world)();
  int (*localRank)();
  void (*abortAll)(const std::string & message, int code);
};

void
SetMpiHooks(const MpiHooks * hooks);

} // namespace canopy::detail
