// The adaptive random forest of Hoeffding trees with all trees on a device (Marron et al.): every
// member's tree and background tree in flat arrays (StreamingForestLaunch.h), a batch routed, voted,
// learnt and split-checked by kernels that call the CPU forest's own tree functions
// (HoeffdingTreeFlat.h), so it learns the same trees as StreamingForest for the same seed and batches.
//
// What stays on the host, and why: nothing per instance or per split. The split decisions are taken
// for all due leaves at once and applied on the device too, tree by tree in node order (the grow step,
// StreamingForestGrow.h), so only each tree's sizes come back; the members' ADWIN step runs on the
// device, a block per member (AdwinMemberStep.h), and only its events come back. The host keeps the
// trees' structure for the accessors and the model (refreshed from the device when read) and applies
// ADWIN's rare replacements (a fresh tree: a node write and a slot initialisation).
// Node and slot arrays have one capacity per tree and double, with a pitched copy, when a tree outgrows
// them.
//
// Executors: Cuda (the GPU) and HostEmulation (the same item functions as host loops, in host memory:
// the CPU tests compare it with StreamingForest, so the whole schedule is checked without a GPU).
#pragma once

#include "canopyHoeffdingTree.h"
#include "canopyStreamSchema.h"
#include "canopyStreamingForest.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace canopy::streaming
{

/** True when this build holds the CUDA streaming forest (CANOPY_USE_CUDA). */
bool
CudaStreamingForestCompiledIn();

/** A batch's device steps, as timed by SetStepTimes. */
enum class DeviceForestStep : int
{
  Upload,      // the staged batch and per-tree settings to the device
  Route,       // every tree's leaf, scores, Poisson weight and vote per instance
  SumVotes,    // the votes summed per instance, the prediction
  ResultsBack, // the predictions (and, for ADWIN on host threads, the members' results) to the host
  Adwin,       // the members' ADWIN step and its summaries and events back (on its own stream)
  Sort,        // the learning keys sorted (CUB's radix sort)
  Learn,       // the leaves' statistics
  SplitChecks, // the due leaves' split decisions
  Grow,        // the splits applied, tree by tree in node order
  SizesBack,   // the trees' sizes (and the split count) to the host
  Updates,     // node writes and slot initialisations (queued after the batch, timed with the next)
  Count
};
constexpr int kDeviceForestSteps = int(DeviceForestStep::Count);

/** The step's name in reports ("upload", "route", ...). */
const char *
DeviceForestStepName(DeviceForestStep step);

/** Where a device forest's time went (seconds, summed over batches). */
struct DeviceForestTimings
{
  // The host's wall time between its waits.
  double       upload = 0.0;      // the batch and the per-tree settings staged, the batch's launch plan built
  double       votes = 0.0;       // the batch queued (a graph launch, or call by call), then waiting for the votes
  double       drift = 0.0;       // waiting for ADWIN's events (device step) or running it (host threads)
  double       driftDevice = 0.0; // the device ADWIN step (stepSeconds' Adwin; only with SetStepTimes)
  double       device = 0.0;      // the rest of sort, learn, split checks and the grow step (its sizes back)
  double       splits = 0.0;      // the trees' sizes read, ADWIN's changes applied to the host mirrors
  double       updates = 0.0;     // node writes and slot initialisations queued (asynchronous: no wait)
  std::int64_t batches = 0, splitsApplied = 0;
  std::int64_t growRetries = 0; // batches whose splits did not fit the arrays: grown, the grow step run again
  // Opt-in (SetStepTimes; nothing is recorded otherwise): each step's time where it runs, summed over
  // batches. CUDA: between events recorded around the step on its stream (a step's time includes any
  // wait on the stream for the host's next launch); the host emulation: host wall time of its loops.
  bool   stepTimes = false;
  double stepSeconds[kDeviceForestSteps] = {};
  double stepSpan = 0.0; // CUDA: the main stream's span per batch, from the upload's start to the splits' arrival
  // The CUDA runtime calls the forest made in its batches (launches, copies, memsets, event records and
  // waits, synchronisations, graph launches; CUB's sort counts as one call, though it launches several
  // kernels; error checks not counted). The host emulation makes none.
  std::int64_t apiCalls = 0;
  // CUDA graphs (SetCudaGraphs): the batches captured (the first, and each whose launches changed: a
  // buffer grew, the trees' capacity doubled, a smaller last batch; the host emulation counts the
  // captures the CUDA executor would make), and the last graph's nodes (the stream operations one
  // launch replaces; 0 in the emulation).
  std::int64_t graphCaptures = 0, graphNodes = 0;
};

class DeviceStreamingForest
{
public:
  enum class Executor
  {
    Cuda,
    HostEmulation
  };

  /** deviceIndex: the CUDA device (-1: the current one). Throws canopy::Error for Cuda in a CPU-only
   * build, or a schema with more than kHoeffdingMaxClasses classes. options.threads: host threads of
   * the host ADWIN step (SetAdwinOnDevice(false); 0: all). */
  DeviceStreamingForest(const StreamSchema &           schema,
                        const StreamingForestOptions & options,
                        Executor                       executor,
                        int                            deviceIndex = -1);
  ~DeviceStreamingForest();
  DeviceStreamingForest(const DeviceStreamingForest &) = delete;
  DeviceStreamingForest & operator=(const DeviceStreamingForest &) = delete;

  /** As StreamingForest::TestThenTrain, except when the learning ends: the call returns as soon as the
   * batch's predictions are back, while the device still learns the batch, checks its leaves' splits
   * and runs the members' ADWIN step; their splits and events are applied at the start of the next
   * call, or by Finish, which every accessor of the trees, the monitors and the timings calls first.
   * So the caller's work between calls (scoring the predictions, reading the next batch) overlaps the
   * device's, and the forest is the same. An error of the learning (a device ADWIN step out of rows) is
   * thrown by the call that completes it. */
  void TestThenTrain(const InstanceBatch & batch, std::uint64_t firstIndex, std::vector<std::int32_t> & predictions);
  /** Completes the last batch's learning (see TestThenTrain); nothing when it is complete. */
  void Finish();

  int          NumberOfTrees() const;
  std::int64_t DriftsDetected() const;
  std::int64_t WarningsDetected() const;
  std::int64_t TotalNodes() const;
  /** Member t's (voting) tree's nodes, from the host mirror. */
  const HoeffdingTreeNodes & TreeNodes(int t) const;
  /** Member t's tree's class counts per leaf slot (slots x classes), copied from the device. */
  std::vector<std::uint32_t> TreeClassCounts(int t) const;
  /** Per tree node and slot capacity now (they grow). */
  int                         NodeCapacity() const;
  int                         SlotCapacity() const;
  const DeviceForestTimings & Timings() const;
  /** Where the members' ADWIN step runs: on the device, a block per member (the default; only events
   * come back), or on host threads over the members' results copied back each batch (the former path,
   * kept for comparison). Both give the same events and detector states; switching carries the
   * detectors over (as a saved and restored model). */
  void SetAdwinOnDevice(bool onDevice);
  bool AdwinOnDevice() const;
  /** The device ADWIN step's block per member: 256 (the default), 512 or 1024 threads (a check's
   * boundaries split over them). The same events and states at every size. */
  void SetAdwinTeamThreads(int threads);
  int  AdwinTeamThreads() const;
  /** Times every device step of each batch (DeviceForestTimings::stepSeconds; off by default: CUDA
   * events around each step cost a runtime call each, and reading them two more per step). */
  void SetStepTimes(bool on);
  bool StepTimes() const;
  /** Whether a batch's fixed part (upload, route, votes, results back, the ADWIN step on its stream,
   * sort, learn, split checks, the grow step, the sizes back) is captured once into a CUDA graph and relaunched
   * with one call while its launches stay the same, or queued call by call (off, the default). The
   * same forest either way. Off by default: on the H100 the graphs cut the runtime calls per batch from
   * ~24 to ~6 but not the time (RandomTree 1M x 100 trees, batch 1000: 0.314 s with, 0.298 s without;
   * the device's own steps, ~260 us per batch, are the limit, docs/BENCHMARKS.md). */
  void SetCudaGraphs(bool on);
  bool CudaGraphs() const;

  /** As StreamingForest::State (the same state: a model saved from either loads into either). */
  StreamingForestState State() const;
  /** As StreamingForest::Restore. */
  void Restore(const StreamingForestState & state);

private:
  struct Impl;
  std::unique_ptr<Impl> m_Impl;
};

} // namespace canopy::streaming
