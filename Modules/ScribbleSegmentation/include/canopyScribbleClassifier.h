// An online voxel classifier learnt from sparse labels (scribbles): an adaptive random forest of
// Hoeffding trees (Modules/Streaming) over per-voxel filter-bank channels (Modules/Forest's bank:
// Gaussian-smoothed intensity, gradient magnitude, Laplacian of Gaussian at several scales). Each call
// to Learn streams the voxels it is given (in a seeded random order, so a scribble's spatial order does
// not bias the trees) through test-then-train; the forest keeps growing with every call, so more
// scribbles refine it without retraining from scratch. The state is a streaming model file whose
// attributes are the bank's channel names and whose classes are the label values, so a saved
// classifier resumes (canopy scribble-segment --model-in/--model-out).
#pragma once

#include "canopyStreamingForest.h"
#include "canopyStreamingModelFile.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace canopy
{

struct ScribbleClassifierOptions
{
  std::vector<std::string> bank = DefaultBank();
  int                      trees = 20;
  int                      gracePeriod = 20; // scribbles are few: leaves try to split sooner than ARF's 50
  int                      passes = 3;       // times each new labelled voxel is streamed (in a new order each time)
  int                      batch = 256;
  std::uint64_t            seed = 1;
  int                      threads = 0;

  static std::vector<std::string> DefaultBank()
  {
    return { "intensity", "gaussian:1", "gaussian:2", "gradient:1", "log:1" };
  }
};

class ScribbleClassifier
{
public:
  /** labelValues: the scribbles' label values (nonzero, distinct, at least 2), class i = labelValues[i]. */
  ScribbleClassifier(const std::vector<int> & labelValues, const ScribbleClassifierOptions & options);
  /** A saved classifier (its bank and label values from the model's schema); options' passes, batch
   * and threads are this run's. Throws canopy::Error naming `context` for a model that is not one. */
  ScribbleClassifier(const streaming::StreamingModel & model,
                     const ScribbleClassifierOptions & options,
                     const std::string &               context);
  ~ScribbleClassifier();

  const std::vector<std::string> & Bank() const { return m_Bank; }
  const std::vector<int> &         LabelValues() const { return m_LabelValues; }
  int                              ClassOf(int labelValue) const; // -1 for a value that is no class
  std::uint64_t                    InstancesLearnt() const { return m_Instances; }

  /** Learns voxels[k] (indices into the channel buffers) with class classes[k] (ClassOf). */
  void Learn(const std::vector<const float *> & channels,
             const std::vector<std::int64_t> &  voxels,
             const std::vector<std::int32_t> &  classes);
  /** Every voxel of the buffers: probability of class `foregroundClass` and the most probable class. */
  void Predict(const std::vector<const float *> & channels,
               std::int64_t                       voxelCount,
               int                                foregroundClass,
               float *                            probability,
               std::int32_t *                     predictedClass);

  streaming::StreamingModel Model() const;

private:
  void Build(const std::vector<std::string> & bank, const std::vector<int> & labelValues);

  ScribbleClassifierOptions                   m_Options;
  std::vector<std::string>                    m_Bank;
  std::vector<int>                            m_LabelValues;
  streaming::StreamSchema                     m_Schema;
  streaming::StreamingForestOptions           m_ForestOptions;
  std::unique_ptr<streaming::StreamingForest> m_Forest;
  std::uint64_t                               m_Instances = 0;
};

} // namespace canopy
