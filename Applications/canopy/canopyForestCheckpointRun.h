// train-forest --checkpoint: rank 0 writes the trees grown so far after each tree (atomically), and a
// rerun with the same arguments and inputs resumes from them. The same code serves one process and
// --distributed runs (trees are seeded per tree, so where a tree was grown does not matter).
#pragma once

#include "canopy/Collective.h"
#include "canopyForestCheckpoint.h"
#include "canopyForestTraining.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace canopy::app
{
/** Exit status of a run stopped by CANOPY_TEST_STOP_AFTER_TREES (tests only). */
constexpr int kTestStopExitCode = 75;

/** Size and modification time of a file (of the files in it, for a DICOM folder), for fingerprints. */
nlohmann::json
FileStamp(const std::string & path);

/** This process's part of the training data's fingerprint: its training files (stamps), and per
 * training item the number of samples drawn and a hash of their positions and labels. */
nlohmann::json
TrainingDataFingerprint(const std::vector<std::string> & images,
                        const std::vector<std::string> & labels,
                        const ForestTrainingSet &        set);

class ForestCheckpointRun
{
public:
  /** path: the checkpoint file. A collective call: rank 0 removes the checkpoint (restart) or reads
   * it (a corrupt one stops every process with an error naming it). */
  ForestCheckpointRun(Collective & processes, std::string path, bool restart, bool quiet);

  /** A collective call after the training set is made: gathers the fingerprint (arguments + every
   * process's TrainingDataFingerprint, in rank order), compares it with the checkpoint's (a
   * difference stops every process with an error naming the file and the first difference), hands
   * the finished trees to every process and sets forest.finishedTrees and forest.afterTree. */
  void Prepare(ForestTrainingOptions & forest, nlohmann::json arguments, const nlohmann::json & myData);

  /** Rank 0, after the model and the report are written: removes the checkpoint. */
  void Finish();

private:
  void AfterTree(const ForestModel & trees);

  Collective &                    m_Processes;
  std::string                     m_Path;
  bool                            m_Quiet;
  std::optional<ForestCheckpoint> m_Saved; // rank 0: the checkpoint found
  nlohmann::json                  m_Fingerprint;
  ForestModel                     m_Finished;
  int                             m_StopAfter = 0; // CANOPY_TEST_STOP_AFTER_TREES
};

} // namespace canopy::app
