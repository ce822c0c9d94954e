// The adaptive random forest of Hoeffding trees with all trees on a device (Marron et al.): every
// member's tree and background tree in flat arrays (StreamingForestLaunch.h), a batch routed, voted,
// learnt and split-checked by kernels that call the CPU forest's own tree functions
// (HoeffdingTreeFlat.h), so it learns the same trees as StreamingForest for the same seed and batches.
//
// What stays on the host, and why: the split *decisions* are taken on the device for all due leaves
// at once, but applying them (a few node writes and slot initialisations per split) is done from a
// host mirror of the tree structure, as are ADWIN's replacements: a batch of 1000 instances on 100
// trees makes a handful of splits, so the host round trip is a few hundred bytes (the split list, and
// the members' ADWIN events and counters: the ADWIN step itself runs on the device, a warp per member,
// AdwinMemberStep.h), while the per-instance work (routing, votes, statistics) never leaves the device.
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

/** Where a device forest's time went (wall seconds, summed over batches). */
struct DeviceForestTimings
{
  double       upload = 0.0;      // the batch and the per-tree settings to the device
  double       votes = 0.0;       // route and vote on the device, until the votes (and results) are back
  double       drift = 0.0;       // waiting for ADWIN's events (device step) or running it (host threads)
  double       driftDevice = 0.0; // the device ADWIN step's kernel, timed by CUDA events (emulation: host)
  double       device = 0.0;      // the rest of sort, learn and split checks, and the split list back
  double       splits = 0.0;      // applying the splits and ADWIN's changes to the host mirrors
  double       updates = 0.0;     // node writes and slot initialisations queued (asynchronous: no wait)
  std::int64_t batches = 0, splitsApplied = 0;
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

  /** As StreamingForest::TestThenTrain. */
  void TestThenTrain(const InstanceBatch & batch, std::uint64_t firstIndex, std::vector<std::int32_t> & predictions);

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
  /** Where the members' ADWIN step runs: on the device, a warp per member (the default; only events
   * come back), or on host threads over the members' results copied back each batch (the former path,
   * kept for comparison). Both give the same events and detector states; switching carries the
   * detectors over (as a saved and restored model). */
  void SetAdwinOnDevice(bool onDevice);
  bool AdwinOnDevice() const;

  /** As StreamingForest::State (the same state: a model saved from either loads into either). */
  StreamingForestState State() const;
  /** As StreamingForest::Restore. */
  void Restore(const StreamingForestState & state);

private:
  struct Impl;
  std::unique_ptr<Impl> m_Impl;
};

} // namespace canopy::streaming
