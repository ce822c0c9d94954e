// The AdaBoost strong classifier of one PBT node: responses pre-binned once per feature, then per
// boosting round a weighted scatter-add per candidate feature (parallel over candidates), and Platt
// calibration of the output.
//
// Every sum over samples is exact and order-independent (canopy/ExactSum.h: the histograms add the
// weights as integers of 2^-62, the other sums cut each term to a fixed grid), so the result depends
// neither on the thread count nor on how the samples are split over processes: with a Collective
// whose processes each hold a shard of the samples (`processes`, null for one process), the sums are
// integer reductions and every process trains the classifier one process would, bit for bit.
#pragma once

#include "canopy/Collective.h"
#include "canopyPBTTraining.h"

#include <cstdint>
#include <random>
#include <vector>

namespace canopy
{

/** Responses binned per feature on a uniform grid over robust quantiles of that feature, with the
 * exact bin formula of WeakLearnerOutput (NaN and values below lo in bin 0, above in the last bin). */
struct BinnedResponses
{
  int                       numFeatures = 0;
  std::int64_t              numSamples = 0;
  int                       numBins = 0;
  std::vector<float>        lo;          // per feature
  std::vector<float>        invBinWidth; // per feature; 0 for a constant feature (everything in bin 0)
  std::vector<std::uint8_t> bins;        // feature-major, like ResponseMatrix

  const std::uint8_t * Row(int f) const
  {
    return bins.data() + static_cast<std::size_t>(f) * static_cast<std::size_t>(numSamples);
  }
};

/** numBins in 2..256. The grid spans the 0.5% .. 99.5% quantiles of each feature's finite responses
 * (of an evenly strided subsample of the samples; over processes, of the global sample order: rank 0
 * gathers the subsample and broadcasts the grids). */
BinnedResponses
BinResponses(const ResponseMatrix & responses, int numBins, int threads, Collective * processes = nullptr);

struct AdaBoostOptions
{
  int             numLearners = 40;
  int             candidatesPerRound = 200; // 0 or >= numFeatures: all
  WeakLearnerKind kind = WeakLearnerKind::Histogram;
  double          earlyStopError = 0.0;
  double          histogramSmoothing = 0.1; // delta = histogramSmoothing / numBins (weights sum to 1)
  int             threads = 0;
};

/** A strong classifier: learners whose tableOffset indexes `tables`, and its calibration. */
struct StrongClassifier
{
  std::vector<PBTWeakLearnerFlat> learners;
  std::vector<float>              tables;
  float                           calibrationScale = 2.0f;
  float                           calibrationOffset = 0.0f;
  bool                            informative = false; // false: no learner beat chance (the node should be a leaf)
};

/** The samples of one node: indices into the matrix, their labels (+1/-1) and weights (sum 1). */
struct NodeSamples
{
  std::vector<std::int64_t> index;
  std::vector<std::int8_t>  label;
  std::vector<double>       weight;
};

/** Trains the node's classifier (with `processes`: on each process's share of the node's samples, a
 * collective call). `scores` receives F(x) of every node sample, summed in float in
 * learner order exactly as StrongClassifierProbability sums it. */
StrongClassifier
TrainAdaBoost(const ResponseMatrix &  responses,
              const BinnedResponses & binned,
              const NodeSamples &     samples,
              const AdaBoostOptions & options,
              std::mt19937_64 &       rng,
              std::vector<float> &    scores,
              Collective *            processes = nullptr);

/** Platt scaling: (scale, offset) minimising the weighted log loss of sigmoid(scale * F + offset)
 * against Platt's smoothed targets, by damped Newton steps from (2, 0). Always finite. */
void
FitPlattCalibration(const std::vector<float> &       scores,
                    const std::vector<std::int8_t> & labels,
                    const std::vector<double> &      weights,
                    float &                          scale,
                    float &                          offset,
                    Collective *                     processes = nullptr);

} // namespace canopy
