// The streaming forest's ADWIN step as a host loop over members (StreamingAdwinLaunch.h): the CUDA
// kernel's reference and the device forest's emulation, the same function with a team of one.
#include "canopy/StreamingAdwinLaunch.h"

namespace canopy::host
{

void
StreamAdwinStep(const StreamAdwinArgs & a)
{
  for (int t = 0; t < a.members; ++t)
    StreamAdwinMemberItem(AdwinSerialTeam{}, a, t, a.state[t], a.scratch[t]);
}

} // namespace canopy::host
