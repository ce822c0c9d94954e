// The command line's side of distributed runs (mpirun -np N canopy ... --distributed): the processes
// agree on failures so that every one stops with a clear error, and rank 0 collects their reports.
#pragma once

#include "canopy/Collective.h"
#include "canopy/Device.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace canopy::app
{

/** The processes of this run: MpiWorld() with --distributed (throws without MPI), else one. */
Collective &
RunProcesses(bool distributed);

/** Runs `step` on every process; if it throws on any, every process throws: rank 0 with each failing
 * rank's error, the others with a line naming the failing ranks. A collective call. */
void
OnEveryProcess(Collective & processes, const std::string & what, const std::function<void()> & step);

/** Runs `step`, whose failure on one process would leave the others waiting in a collective: a
 * failure stops every process of the run (MPI_Abort) with the error; rank 0 has written nothing. */
void
OrStopAllProcesses(Collective & processes, const std::function<void()> & step);

/** The backend of one process of a distributed run: auto and cuda without an index get GPU
 * `localRank` mod the usable GPUs (auto keeps its fallbacks), so that the N processes that mpirun
 * starts on a machine with N GPUs use one each; cpu, cuda:K and any request on a machine without a
 * usable GPU stay as given. */
BackendRequest
BackendOfProcess(const BackendRequest & request, int localRank);

/** BackendOfProcess for a --device text (a batch's commands take it as text): "auto" and "cuda" become
 * "cuda:K" where a GPU is usable. Throws canopy::Error naming the bad value. */
std::string
DeviceOfProcess(const std::string & device, int localRank);

/** Every rank's `mine`, in rank order, on rank 0 (null elsewhere). A collective call. */
nlohmann::json
GatherReports(Collective & processes, const nlohmann::json & mine);

} // namespace canopy::app
