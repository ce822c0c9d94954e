// The streaming forest's ADWIN step on a device (AdwinMemberStep.h): every member's warning and drift
// detectors take the batch's 0/1 test results where the route-and-vote step wrote them, and only the
// events (start a background tree, promote it, start afresh) and a summary per member come back. A
// CUDA block of kStreamAdwinBlockThreads per member (StreamingAdwin.cu); the host loop runs the same
// function with a team of one.
// No ITK or CUDA types here.
#pragma once

#include "canopy/AdwinMemberStep.h"

#include <cstdint>

struct CUstream_st;

namespace canopy
{

/** The kernel's block per member: 8 warps (a check's boundaries split over them; two warps on each of
 * an SM's four schedulers, so one issues while the other waits on latency). */
constexpr int kStreamAdwinBlockThreads = 256;
/** The block sizes the kernel is built for (StreamAdwinArgs::teamThreads). */
constexpr int kStreamAdwinTeamSizes[] = { 256, 512, 1024 };

struct StreamAdwinArgs
{
  AdwinMonitorSettings settings{};
  int                  members = 0, n = 0; // members, results per member (the batch)
  const std::uint8_t * correct = nullptr;  // members x n, member-major (StreamBatchArgs::correct)
  AdwinMemberData *    state = nullptr;    // per member
  AdwinStepScratch *   scratch = nullptr;  // per member (the host loop's; the kernel's is in shared memory)
  std::uint8_t *       events = nullptr;   // members x eventCapacity
  int                  eventCapacity = 0;
  AdwinMemberSummary * summaries = nullptr; // per member
  // Opt-in profile (the kernel only; nullptr: none): 2 x kAdwinPhases counters, the clock cycles thread 0
  // spent in each phase (AdwinStepPhase) summed over members, then how often each phase ended.
  unsigned long long * profile = nullptr;
  int                  teamThreads = kStreamAdwinBlockThreads; // the kernel's block: one of kStreamAdwinTeamSizes
};

/** Events one member can raise in a batch of n results (two per check at most, clock >= 1). */
inline int
StreamAdwinEventCapacity(int n, int clock)
{
  return 2 * (n / (clock > 0 ? clock : 1) + 2);
}

/** Member t's step for a team (the kernel's block, or the host's team of one) on member state m and
 * scratch x (the kernel's copies in shared memory; the host's a.state[t] and a.scratch[t]). */
template<typename Team>
CANOPY_HD void
StreamAdwinMemberItem(const Team & team, const StreamAdwinArgs & a, int t, AdwinMemberData & m, AdwinStepScratch & x)
{
  std::uint8_t * events = a.events + std::int64_t(t) * a.eventCapacity;
  AdwinTeamObserveBatch(team, a.settings, m, a.correct + std::int64_t(t) * a.n, a.n, events, a.eventCapacity, x);
  team.Single(
    [&]
    {
      AdwinMemberSummary & s = a.summaries[t];
      s.seen = m.seen;
      s.correct = m.correct;
      s.drifts = m.drifts;
      s.warnings = m.warnings;
      s.events = x.events;
      s.overflow = (x.events > a.eventCapacity || m.warning.overflow || m.drift.overflow) ? 1 : 0;
    });
}

namespace cuda
{
/** Every member's step, a block each, on `stream`. */
void
LaunchStreamAdwinStep(const StreamAdwinArgs & a, CUstream_st * stream);
} // namespace cuda

namespace host
{
/** The same step as a host loop over members (a team of one each). */
void
StreamAdwinStep(const StreamAdwinArgs & a);
} // namespace host

} // namespace canopy
