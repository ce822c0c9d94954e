// The split search of one tree level (canopyForestTraining.h): responses -> histograms -> scores.
// Each candidate is handled by one thread in sample order, so results do not depend on threading.
#include "canopyForestTraining.h"

#include "ParallelFor.h"
#include "canopy/ForestTrainingLaunch.h" // mirrored features, split scores shared with the GPU

#include <algorithm>
#include <cmath>
#include <limits>

namespace canopy
{
namespace
{
/** The sample of a sampleOrder entry; entries past the samples are mirrors (flipped pairs). */
const ForestSample &
SampleOf(const ForestTrainingSet & set, std::int32_t index, bool & mirrored)
{
  const auto n = static_cast<std::int32_t>(set.samples.size());
  mirrored = index >= n;
  return set.samples[mirrored ? index - n : index];
}
} // namespace

void
ComputeForestLevelResponsesCPU(const ForestTrainingSet & set, const ForestLevelCandidates & level,
                               std::vector<float> & responses, int threads)
{
  responses.assign(static_cast<std::size_t>(level.nodeBegin.back()) * level.numFeatures, 0.0f);
  const std::int64_t candidates = static_cast<std::int64_t>(level.numNodes) * level.numFeatures;
  detail::ParallelForChunks(candidates, threads, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t k = begin; k < end; ++k)
    {
      const int            n = static_cast<int>(k / level.numFeatures);
      const int            f = static_cast<int>(k % level.numFeatures);
      const std::int64_t   first = level.nodeBegin[n], count = level.nodeBegin[n + 1] - first;
      float *              out = responses.data() + first * level.numFeatures + f * count;
      const ForestFeature & feature = level.features[k];
      const ForestFeature   mirror = ForestMirrorFeature(feature);
      for (std::int64_t i = 0; i < count; ++i)
      {
        bool                 mirrored = false;
        const ForestSample & s = SampleOf(set, level.sampleOrder[first + i], mirrored);
        out[i] = ForestResponseAt(set.images[s.image], mirrored ? mirror : feature, s.x, s.y, s.z);
      }
    }
  });
}

void
AccumulateForestHistogramsCPU(const ForestTrainingSet & set, const ForestLevelCandidates & level,
                              const std::vector<float> & responses, std::vector<std::uint32_t> & histograms,
                              int threads)
{
  const int          C = set.numClasses, T = level.numThresholds;
  const std::int64_t candidates = static_cast<std::int64_t>(level.numNodes) * level.numFeatures;
  histograms.assign(static_cast<std::size_t>(candidates) * T * 2 * C, 0u);
  detail::ParallelForChunks(candidates, threads, [&](std::int64_t begin, std::int64_t end) {
    // bins[b * C + c]: samples of class c with exactly b thresholds <= response; bin T + 1: NaN.
    std::vector<std::uint32_t> bins(static_cast<std::size_t>(T + 2) * C);
    for (std::int64_t k = begin; k < end; ++k)
    {
      const int          n = static_cast<int>(k / level.numFeatures);
      const int          f = static_cast<int>(k % level.numFeatures);
      const std::int64_t first = level.nodeBegin[n], count = level.nodeBegin[n + 1] - first;
      const float *      r = responses.data() + first * level.numFeatures + f * count;
      const float *      theta = level.thresholds.data() + k * T;
      std::fill(bins.begin(), bins.end(), 0u);
      for (std::int64_t i = 0; i < count; ++i)
      {
        bool      mirrored = false;
        const int label = SampleOf(set, level.sampleOrder[first + i], mirrored).label;
        const int b = std::isnan(r[i]) ? T + 1 : static_cast<int>(std::upper_bound(theta, theta + T, r[i]) - theta);
        ++bins[static_cast<std::size_t>(b) * C + label];
      }
      // r < theta_j (right) exactly for the bins b <= j; everything else, NaN too, goes left.
      std::uint32_t * h = histograms.data() + static_cast<std::size_t>(k) * T * 2 * C;
      std::vector<std::uint32_t> total(C, 0u), right(C, 0u);
      for (int b = 0; b < T + 2; ++b)
        for (int c = 0; c < C; ++c)
          total[c] += bins[static_cast<std::size_t>(b) * C + c];
      for (int j = 0; j < T; ++j)
      {
        for (int c = 0; c < C; ++c)
        {
          right[c] += bins[static_cast<std::size_t>(j) * C + c];
          h[(j * 2 + 1) * C + c] = right[c];
          h[(j * 2 + 0) * C + c] = total[c] - right[c];
        }
      }
    }
  });
}


void
ScoreForestSplitsCPU(const ForestLevelCandidates & level, int numClasses, const std::vector<std::uint32_t> & histograms,
                     const std::vector<double> & classWeights, ForestSplitScore score, std::vector<double> & scores,
                     int threads)
{
  const int          C = numClasses, T = level.numThresholds;
  const std::int64_t splits = static_cast<std::int64_t>(level.numNodes) * level.numFeatures * T;
  scores.assign(static_cast<std::size_t>(splits), 0.0);
  detail::ParallelForChunks(splits, threads, [&](std::int64_t begin, std::int64_t end) {
    std::vector<std::uint32_t> parent(C);
    for (std::int64_t s = begin; s < end; ++s)
    {
      const std::uint32_t * left = histograms.data() + static_cast<std::size_t>(s) * 2 * C;
      scores[s] = ForestSplitScoreOf(left, left + C, parent.data(), classWeights.data(), C,
                                     score == ForestSplitScore::NormalizedInformationGain);
    }
  });
}

} // namespace canopy
