// An adaptive random forest of Hoeffding trees for evolving streams (Marron, Bifet & De Francisci
// Morales; Gomes et al.'s ARF): M trees, each leaf observing a random subset of attributes; online
// bagging (each tree learns an instance with a Poisson(lambda) weight, from a counter-based draw of
// (seed, tree, instance index)); per tree an ADWIN on its 0/1 errors with a warning level that starts
// a background tree and a drift level that replaces the tree with it (or a fresh tree).
//
// Instances come in batches: the whole batch is tested on the current model, then learnt: each tree
// routes and scores the batch on itself as it was at the batch's start, learns every instance at the
// leaf found (in instance order), then checks every leaf due for a split, in node order; last, ADWIN
// sees the batch's test results in order and may start background trees or replace trees, which learn
// from the next batch. Batch size 1 is instance-by-instance test-then-train. This is the CUDA forest's
// schedule too (canopyStreamingForestCuda.h), which learns the same trees. Trees are independent, so
// they are learnt in parallel and the result does not depend on the number of threads; votes are
// added in tree order.
#pragma once

#include "canopyForestMember.h"
#include "canopyHoeffdingTree.h"
#include "canopyStreamSchema.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace canopy::streaming
{

struct StreamingForestOptions
{
  int                  trees = 100;
  double               lambda = 6.0;      // Poisson rate of online bagging (ARF's 6; Oza's bagging: 1)
  int                  subspaceSize = -1; // attributes per leaf; -1: round(sqrt(d)), 0: all
  HoeffdingTreeOptions tree = DefaultTreeOptions();
  bool                 driftDetection = true;
  bool                 backgroundTrees = true;
  double               warningDelta = 0.01; // ADWIN delta for the warning (starts a background tree)
  double               driftDelta = 0.001;  // ADWIN delta for the drift (replaces the tree)
  bool                 weightedVote = true; // votes scaled by each tree's accuracy since it started
  std::uint64_t        seed = 1;
  int                  threads = 0; // 0: all (ITK's default)

  DriftSettings Drift() const { return { driftDetection, backgroundTrees, warningDelta, driftDelta }; }
  /** The trees' options as the forest uses them (subspace size resolved for d attributes, seed). */
  HoeffdingTreeOptions ResolvedTreeOptions(int attributes) const;

  /** ARF's defaults for its trees (MOA, river): grace period 50, delta 0.01, tau 0.05, NBAdaptive;
   * Gaussians without spread leave naive Bayes alone, as river (docs/ACCURACY.md, streaming: chosen
   * on one set of seeds, checked on another). */
  static HoeffdingTreeOptions DefaultTreeOptions()
  {
    HoeffdingTreeOptions o;
    o.gracePeriod = 50;
    o.splitConfidence = 0.01;
    o.tieThreshold = 0.05;
    o.skipFlatGaussians = true;
    return o;
  }
};

/** A member's trees and monitor (for saving a model). */
struct ForestMemberState
{
  MemberMonitorState monitor;
  HoeffdingTreeState tree;
  bool               hasBackground = false;
  HoeffdingTreeState background; // when hasBackground
};

/** Everything a forest has learnt: the CPU and the device forest export and take the same state. */
struct StreamingForestState
{
  std::vector<ForestMemberState> members;
};

namespace detail
{
class TreeParallel;
}
class PoissonBuckets;

class StreamingForest
{
public:
  StreamingForest(const StreamSchema & schema, const StreamingForestOptions & options);
  ~StreamingForest();

  /** Predicts every instance of the batch with the current forest (into predictions), then learns the
   * batch. firstIndex: the stream position of the batch's first instance (keys the Poisson draws). */
  void TestThenTrain(const InstanceBatch & batch, std::uint64_t firstIndex, std::vector<std::int32_t> & predictions);
  /** TestThenTrain of `count` consecutive batches in one call (batch k's first instance at firstIndex
   * plus the sizes of the batches before it; predictions[k]: batch k's), with the same predictions and
   * forest as `count` calls in order: a member's work on a batch needs only its own state after the
   * batch before, so each member runs through all the batches on one worker and the members do not wait
   * for each other between batches (one parallel call instead of `count`); the votes are kept per batch
   * and summed after. The votes' memory grows with the instances of all the batches (8 C bytes per tree
   * and instance). driftsAfter (optional, count entries): DriftsDetected() as it was after each batch. */
  void TestThenTrainBatches(const InstanceBatch *       batches,
                            std::size_t                 count,
                            std::uint64_t               firstIndex,
                            std::vector<std::int32_t> * predictions,
                            std::int64_t *              driftsAfter = nullptr);
  /** Predictions only. */
  void Predict(const InstanceBatch & batch, std::vector<std::int32_t> & predictions);
  /** Predictions and the class probabilities behind them (instance, class: the trees' summed votes
   * normalised to 1; uniform where no tree has learnt anything). */
  void PredictProbabilities(const InstanceBatch &       batch,
                            std::vector<std::int32_t> & predictions,
                            std::vector<double> &       probabilities);
  int  NumberOfClasses() const { return m_Classes; }
  /** Whether test-then-train keeps each tree on the worker that had it in the last batch where the
   * scheduler allows (its data stays in that core's cache; TBB may group trees then; the default), or
   * hands the trees out one by one to whichever worker is free. The same forest either way. On the H100
   * host (16 cores, 2 MB L2 each; 2026-11-24) the same workers ran RandomTree 1M x 100 trees in 1.65 s on
   * 16 threads against 1.77 s, and 4.84 s against 5.65 s on 4. */
  void SetSameWorkers(bool on) { m_SameWorkers = on; }
  /** Whether a member's monitor reads a batch's results as a second task an idle worker may take while
   * its trees learn the batch (the default: at one batch per call it spared the 16-thread schedule the
   * wait for whole trees at a batch's end), or on the member's own worker after its trees. The same
   * forest either way. With several batches per call (TestThenTrainBatches) the members no longer wait
   * for each other per batch, and the second task costs a spawn per member and batch and moves the
   * monitor between cores: to be measured on many cores. */
  void SetAdwinBeside(bool on) { m_AdwinBeside = on; }

  int                   NumberOfTrees() const { return int(m_Members.size()); }
  std::int64_t          DriftsDetected() const;
  std::int64_t          WarningsDetected() const;
  std::int64_t          TotalNodes() const;
  const HoeffdingTree & Tree(int t) const;

  /** What the forest has learnt; Restore(State()) on a forest of the same schema and options continues
   * exactly as this one would (the stream positions are the caller's). */
  StreamingForestState State() const;
  /** Replaces everything learnt; throws canopy::Error for a state of another number of trees or one
   * that fails the trees' or monitors' checks (nothing is changed then). */
  void Restore(const StreamingForestState & state);

private:
  struct Member;
  void Vote(const InstanceBatch &       batch,
            std::vector<std::int32_t> & predictions,
            bool                        keepCorrectness,
            std::vector<double> *       probabilities = nullptr);
  /** Sizes the votes for `instances` (all the batches of a call) and each tree's leaves, scores and
   * results for its largest batch. */
  void PrepareVotes(std::size_t instances, std::size_t largestBatch, bool keepCorrectness);
  /** Tree t's votes (into treeVotes: instance, class) and its leaves, scores, 0/1 results for the batch;
   * masks: the instances' binary attributes as bits (a stream of binary attributes), or nullptr. */
  void VoteTree(int                   t,
                const InstanceBatch & batch,
                bool                  keepCorrectness,
                double *              treeVotes,
                const std::uint64_t * masks);
  /** Each batch's votes summed in tree order into predictions[k] (and, for one batch, probabilities). */
  void SumVotes(const InstanceBatch *       batches,
                std::size_t                 count,
                std::vector<std::int32_t> * predictions,
                std::vector<double> *       probabilities);
  /** Member t learns the batch it voted on: LearnTrees and ObserveResults (concurrently when a worker is
   * free), then the monitor's decisions. */
  void LearnBatch(Member & member, int t, const InstanceBatch & batch, std::uint64_t firstIndex);
  /** The member's tree (and background tree) learn the batch and check their due leaves. */
  void LearnTrees(Member & member, int t, const InstanceBatch & batch, std::uint64_t firstIndex);
  /** The member's monitor reads the batch's test results; its decisions go to the member's events. */
  void ObserveResults(Member & member, int t, std::size_t n);
  std::unique_ptr<HoeffdingTree> NewTree(int t);

  StreamSchema                          m_Schema;
  StreamingForestOptions                m_Options;
  HoeffdingTreeOptions                  m_TreeOptions;
  int                                   m_Classes;
  bool                                  m_AllNominal; // every leaf votes by NominalVoteAndScore
  static constexpr int                  kMaxMaskAttributes = 62;
  bool                                  m_AllBinary;   // at most 62 attributes, all binary: walks over bit masks
  std::vector<std::uint64_t>            m_Masks;       // the call's instances' binary attributes (m_AllBinary)
  std::vector<std::int64_t>             m_DriftsAfter; // member, batch of the call: its drifts after the batch
  bool                                  m_SameWorkers = true;
  bool                                  m_AdwinBeside = true;
  std::vector<std::unique_ptr<Member>>  m_Members;
  std::unique_ptr<PoissonBuckets>       m_Poisson;  // Poisson(lambda) draws (the device inverts the CDF in a loop)
  std::unique_ptr<detail::TreeParallel> m_Parallel; // the per-tree loops
  std::vector<double>                   m_Votes;    // batch of the call, tree, instance, class
  std::size_t                           m_TreeStride = 0; // entries per tree in the three arrays below
  std::vector<double>                   m_Sums;     // instance, class: the votes summed over the trees
  std::vector<std::uint8_t>             m_Correct;  // tree, instance
  std::vector<std::int32_t>             m_Leaf;     // tree, instance: the leaf node found when voting
  std::vector<std::uint8_t>             m_Score;    // tree, instance: HoeffdingScoreLeaf's bits
};

} // namespace canopy::streaming
