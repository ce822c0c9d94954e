#include "canopyDistributedRun.h"

#include "canopy/Device.h"
#include "canopy/Errors.h"
#include "canopyMpiCollective.h"

#include <sstream>

namespace canopy::app
{
namespace
{
/** The message of an error without ITK's "file:line:" prefix, which what() carries: users see what went
 * wrong, not where in Canopy's sources it was noticed. */
std::string
MessageOf(const std::exception & e)
{
  if (const auto * itkError = dynamic_cast<const itk::ExceptionObject *>(&e))
    return itkError->GetDescription();
  return e.what();
}
} // namespace

Collective &
RunProcesses(bool distributed)
{
  static SingleProcessCollective alone;
  return distributed ? MpiWorld() : alone;
}

BackendRequest
BackendOfProcess(const BackendRequest & request, int localRank)
{
  if (request.kind == BackendKind::CPU || request.deviceIndex >= 0)
    return request;
  const auto gpus = UsableCudaDevices();
  if (gpus.empty())
    return request; // auto: the CPU with its warning; cuda: the clear error of one process
  BackendRequest mine = request;
  mine.deviceIndex = gpus[std::size_t(localRank) % gpus.size()].index;
  return mine;
}

std::string
DeviceOfProcess(const std::string & device, int localRank)
{
  const BackendRequest mine = BackendOfProcess(BackendRequest::Parse(device), localRank);
  return mine.deviceIndex >= 0 ? "cuda:" + std::to_string(mine.deviceIndex) : device;
}

void
OnEveryProcess(Collective & processes, const std::string & what, const std::function<void()> & step)
{
  if (processes.Size() == 1)
  {
    step(); // one process: its error as it was thrown (type, message and exit code)
    return;
  }
  std::string error;
  try
  {
    step();
  }
  catch (const std::exception & e)
  {
    error = MessageOf(e);
    if (error.empty())
      error = "failed";
  }
  const auto errors = processes.GatherToRoot(error, 0);
  if (processes.AllTrue(error.empty()))
    return;
  std::ostringstream all;
  for (std::size_t r = 0; r < errors.size(); ++r)
    if (!errors[r].empty())
      all << (all.tellp() > 0 ? "; " : "") << "rank " << r << ": " << errors[r];
  if (processes.Rank() == 0)
    CANOPY_THROW(what << " failed (" << processes.Size() << " processes): " << all.str());
  CANOPY_THROW("rank " << processes.Rank() << ": stopping: " << what << " failed"
                       << (error.empty() ? " on another rank (rank 0 reports it)" : ": " + error));
}

void
OrStopAllProcesses(Collective & processes, const std::function<void()> & step)
{
  try
  {
    step();
  }
  catch (const std::exception & e)
  {
    if (processes.Size() > 1)
      AbortAllProcesses(MessageOf(e), 1);
    throw;
  }
}

nlohmann::json
GatherReports(Collective & processes, const nlohmann::json & mine)
{
  const auto texts = processes.GatherToRoot(mine.dump(), 0);
  if (processes.Rank() != 0)
    return nullptr;
  nlohmann::json all = nlohmann::json::array();
  for (const auto & t : texts)
    all.push_back(nlohmann::json::parse(t));
  return all;
}

} // namespace canopy::app
