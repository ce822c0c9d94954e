#include "canopyAdaBoost.h"

#include "ParallelFor.h" // Kernels/src, a private include path of canopy_pbt
#include "canopy/Errors.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace canopy
{
namespace
{

/** WeakLearnerOutput's bin, with the position clamped before the cast (same result where that is defined). */
inline int
BinIndex(float response, float lo, float invBinWidth, int numBins)
{
  const float position = (response - lo) * invBinWidth;
  if (!(position >= 0.0f))
  {
    return 0; // negative or NaN
  }
  return position < static_cast<float>(numBins) ? std::min(static_cast<int>(position), numBins - 1) : numBins - 1;
}

/** Weighted class histogram of one feature over the node's samples: hist[2 * bin + isPositive]. Two
 * interleaved partial histograms shorten the store-to-load chains; their merge order is fixed. */
void
ClassHistogram(const std::uint8_t *              row,
               const NodeSamples &               samples,
               const std::vector<std::uint8_t> & positive,
               const std::vector<double> &       weight,
               int                               numBins,
               std::vector<double> &             hist)
{
  hist.assign(4 * static_cast<std::size_t>(numBins), 0.0);
  double *             a = hist.data();
  double *             b = hist.data() + 2 * numBins;
  const std::size_t    n = samples.index.size();
  const std::int64_t * index = samples.index.data();
  std::size_t          i = 0;
  for (; i + 1 < n; i += 2)
  {
    a[2 * row[index[i]] + positive[i]] += weight[i];
    b[2 * row[index[i + 1]] + positive[i + 1]] += weight[i + 1];
  }
  if (i < n)
  {
    a[2 * row[index[i]] + positive[i]] += weight[i];
  }
  for (int k = 0; k < 2 * numBins; ++k)
  {
    a[k] += b[k];
  }
}

struct Candidate
{
  double score = std::numeric_limits<double>::infinity(); // Z (histogram) or weighted error (stump)
  int    threshold = 0;                                   // stump: first bin on the "above" side
  bool   aboveIsPositive = true;
};

Candidate
ScoreHistogram(const std::vector<double> & hist, int numBins)
{
  Candidate c;
  double    z = 0.0;
  for (int k = 0; k < numBins; ++k)
  {
    z += std::sqrt(hist[2 * k] * hist[2 * k + 1]);
  }
  c.score = 2.0 * z;
  return c;
}

Candidate
ScoreStump(const std::vector<double> & hist, int numBins)
{
  double positiveTotal = 0.0;
  double negativeTotal = 0.0;
  for (int k = 0; k < numBins; ++k)
  {
    negativeTotal += hist[2 * k];
    positiveTotal += hist[2 * k + 1];
  }
  Candidate c;
  double    positiveBelow = 0.0;
  double    negativeBelow = 0.0;
  for (int t = 1; t < numBins; ++t)
  {
    negativeBelow += hist[2 * (t - 1)];
    positiveBelow += hist[2 * (t - 1) + 1];
    // below -> -1, above -> +1, or the reverse
    const double errorUp = positiveBelow + (negativeTotal - negativeBelow);
    const double errorDown = (positiveTotal + negativeTotal) - errorUp;
    if (errorUp < c.score)
    {
      c = Candidate{ errorUp, t, true };
    }
    if (errorDown < c.score)
    {
      c = Candidate{ errorDown, t, false };
    }
  }
  return c;
}

void
Normalize(std::vector<double> & weight)
{
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  if (total > 0.0 && std::isfinite(total))
  {
    for (double & w : weight)
    {
      w /= total;
    }
  }
}

} // namespace

BinnedResponses
BinResponses(const ResponseMatrix & responses, int numBins, int threads)
{
  if (numBins < 2 || numBins > 256)
  {
    CANOPY_THROW("BinResponses: histogramBins must be 2..256, got " << numBins);
  }
  BinnedResponses out;
  out.numFeatures = responses.numFeatures;
  out.numSamples = responses.numSamples;
  out.numBins = numBins;
  out.lo.assign(responses.numFeatures, 0.0f);
  out.invBinWidth.assign(responses.numFeatures, 0.0f);
  out.bins.resize(responses.values.size());
  const std::int64_t n = responses.numSamples;
  // Quantiles from an evenly strided subsample: cheap and deterministic.
  const std::int64_t stride = std::max<std::int64_t>(1, n / 20000);
  detail::ParallelForChunks(responses.numFeatures,
                            threads,
                            [&](std::int64_t begin, std::int64_t end)
                            {
                              std::vector<float> finite;
                              for (std::int64_t f = begin; f < end; ++f)
                              {
                                const float * row = responses.values.data() + f * n;
                                finite.clear();
                                for (std::int64_t s = 0; s < n; s += stride)
                                {
                                  if (std::isfinite(row[s]))
                                  {
                                    finite.push_back(row[s]);
                                  }
                                }
                                float lo = 0.0f;
                                float inv = 0.0f; // constant or all non-finite: everything in bin 0
                                if (!finite.empty())
                                {
                                  const auto at = [&](double q)
                                  {
                                    const std::size_t k =
                                      static_cast<std::size_t>(q * static_cast<double>(finite.size() - 1));
                                    std::nth_element(finite.begin(), finite.begin() + k, finite.end());
                                    return static_cast<double>(finite[k]);
                                  };
                                  double low = at(0.005);
                                  double high = at(0.995);
                                  if (!(high > low))
                                  {
                                    low = *std::min_element(finite.begin(), finite.end());
                                    high = *std::max_element(finite.begin(), finite.end());
                                  }
                                  const double candidate = numBins / (high - low);
                                  if (high > low && std::isfinite(candidate) && candidate < 1e30)
                                  {
                                    lo = static_cast<float>(low);
                                    inv = static_cast<float>(candidate);
                                  }
                                  else
                                  {
                                    lo = static_cast<float>(low);
                                  }
                                }
                                out.lo[f] = lo;
                                out.invBinWidth[f] = inv;
                                std::uint8_t * bins = out.bins.data() + f * n;
                                for (std::int64_t s = 0; s < n; ++s)
                                {
                                  bins[s] = static_cast<std::uint8_t>(BinIndex(row[s], lo, inv, numBins));
                                }
                              }
                            });
  return out;
}

StrongClassifier
TrainAdaBoost(const ResponseMatrix &  responses,
              const BinnedResponses & binned,
              const NodeSamples &     samples,
              const AdaBoostOptions & options,
              std::mt19937_64 &       rng,
              std::vector<float> &    scores)
{
  const std::size_t n = samples.index.size();
  const int         numFeatures = binned.numFeatures;
  const int         numBins = binned.numBins;
  StrongClassifier  strong;
  scores.assign(n, 0.0f);
  if (n == 0 || numFeatures == 0)
  {
    return strong;
  }
  std::vector<std::uint8_t> positive(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    positive[i] = samples.label[i] > 0 ? 1 : 0;
  }
  std::vector<double> weight = samples.weight;
  Normalize(weight);
  const double initialTotal = std::accumulate(samples.weight.begin(), samples.weight.end(), 0.0);
  // Real AdaBoost's smoothing of the bin confidences, as a share of an average bin's weight.
  const double     delta = options.histogramSmoothing / numBins;
  const int        numCandidates = options.candidatesPerRound <= 0 || options.candidatesPerRound >= numFeatures
                                     ? numFeatures
                                     : options.candidatesPerRound;
  std::vector<int> order(numFeatures);
  std::iota(order.begin(), order.end(), 0);
  std::vector<Candidate> results(numCandidates);
  std::vector<double>    hist;

  for (int round = 0; round < options.numLearners; ++round)
  {
    if (numCandidates < numFeatures)
    {
      // Partial Fisher-Yates with a plain modulo: the same draw on every platform.
      for (int i = 0; i < numCandidates; ++i)
      {
        const int j = i + static_cast<int>(rng() % static_cast<std::uint64_t>(numFeatures - i));
        std::swap(order[i], order[j]);
      }
    }
    detail::ParallelForChunks(numCandidates,
                              options.threads,
                              [&](std::int64_t begin, std::int64_t end)
                              {
                                std::vector<double> local;
                                for (std::int64_t c = begin; c < end; ++c)
                                {
                                  const int f = order[c];
                                  if (options.kind == WeakLearnerKind::Stump && binned.invBinWidth[f] == 0.0f)
                                  {
                                    results[c] = Candidate{}; // a constant feature has no threshold
                                    continue;
                                  }
                                  ClassHistogram(binned.Row(f), samples, positive, weight, numBins, local);
                                  results[c] = options.kind == WeakLearnerKind::Histogram
                                                 ? ScoreHistogram(local, numBins)
                                                 : ScoreStump(local, numBins);
                                }
                              });
    int best = 0;
    for (int c = 1; c < numCandidates; ++c)
    {
      if (results[c].score < results[best].score)
      {
        best = c;
      }
    }
    const Candidate choice = results[best];
    const int       feature = order[best];
    // Chance level: Z = 1 (histogram), error = 1/2 (stump). Nothing better: stop here.
    const bool useless = !(choice.score < (options.kind == WeakLearnerKind::Histogram ? 1.0 - 1e-9 : 0.5 - 1e-9));
    if (useless)
    {
      break;
    }
    PBTWeakLearnerFlat learner{};
    learner.feature = feature;
    learner.tableOffset = static_cast<int>(strong.tables.size());
    if (options.kind == WeakLearnerKind::Histogram)
    {
      ClassHistogram(binned.Row(feature), samples, positive, weight, numBins, hist);
      learner.numBins = numBins;
      learner.lo = binned.lo[feature];
      learner.invBinWidth = binned.invBinWidth[feature];
      for (int k = 0; k < numBins; ++k)
      {
        strong.tables.push_back(static_cast<float>(0.5 * std::log((hist[2 * k + 1] + delta) / (hist[2 * k] + delta))));
      }
    }
    else
    {
      const double error = std::clamp(choice.score, 1e-10, 1.0 - 1e-10);
      const float  alpha = static_cast<float>(0.5 * std::log((1.0 - error) / error));
      const double width = 1.0 / binned.invBinWidth[feature];
      const double threshold = binned.lo[feature] + choice.threshold * width;
      // Two bins of the feature's bin width, split at the threshold (PBTFlat.h's stump form).
      learner.numBins = 2;
      learner.lo = static_cast<float>(threshold - width);
      learner.invBinWidth = binned.invBinWidth[feature];
      strong.tables.push_back(choice.aboveIsPositive ? -alpha : alpha);
      strong.tables.push_back(choice.aboveIsPositive ? alpha : -alpha);
    }
    strong.learners.push_back(learner);
    strong.informative = true;

    // Update with the learner's real outputs (the evaluator's own function), so scores match evaluation.
    PBTView view;
    view.tables = strong.tables.data();
    const float * row = responses.values.data() + static_cast<std::size_t>(feature) * responses.numSamples;
    double        strongError = 0.0;
    for (std::size_t i = 0; i < n; ++i)
    {
      const float h = WeakLearnerOutput(view, learner, row[samples.index[i]]);
      scores[i] += h;
      weight[i] *= std::exp(-static_cast<double>(samples.label[i]) * h);
      if (!(samples.label[i] * scores[i] > 0.0f))
      {
        strongError += samples.weight[i];
      }
    }
    Normalize(weight);
    if (strongError <= options.earlyStopError * initialTotal)
    {
      break;
    }
  }
  if (strong.informative)
  {
    FitPlattCalibration(scores, samples.label, samples.weight, strong.calibrationScale, strong.calibrationOffset);
  }
  return strong;
}

void
FitPlattCalibration(const std::vector<float> &       scores,
                    const std::vector<std::int8_t> & labels,
                    const std::vector<double> &      weights,
                    float &                          scale,
                    float &                          offset)
{
  const std::size_t n = scores.size();
  double            positives = 0.0;
  double            total = 0.0;
  for (std::size_t i = 0; i < n; ++i)
  {
    positives += labels[i] > 0 ? 1.0 : 0.0;
    total += weights[i];
  }
  // Platt's targets keep the fit finite on separable data.
  const double targetPositive = (positives + 1.0) / (positives + 2.0);
  const double targetNegative = 1.0 / (static_cast<double>(n) - positives + 2.0);
  const double norm = total > 0.0 ? 1.0 / total : 1.0;
  auto         loss = [&](double a, double b)
  {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i)
    {
      const double z = a * scores[i] + b;
      const double t = labels[i] > 0 ? targetPositive : targetNegative;
      const double softplus = z > 0.0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z));
      sum += weights[i] * (softplus - t * z);
    }
    return sum * norm;
  };
  double a = 2.0;
  double b = 0.0;
  double current = loss(a, b);
  for (int iteration = 0; iteration < 50; ++iteration)
  {
    double ga = 0.0, gb = 0.0, haa = 0.0, hab = 0.0, hbb = 0.0;
    for (std::size_t i = 0; i < n; ++i)
    {
      const double f = scores[i];
      const double p = 1.0 / (1.0 + std::exp(-(a * f + b)));
      const double t = labels[i] > 0 ? targetPositive : targetNegative;
      const double w = weights[i] * norm;
      const double d = w * (p - t);
      const double s = w * std::max(p * (1.0 - p), 1e-12);
      ga += d * f;
      gb += d;
      haa += s * f * f;
      hab += s * f;
      hbb += s;
    }
    const double ridge = 1e-9 * (haa + hbb) + 1e-15;
    haa += ridge;
    hbb += ridge;
    const double det = haa * hbb - hab * hab;
    if (!(det > 0.0) || !std::isfinite(det))
    {
      break;
    }
    const double da = -(hbb * ga - hab * gb) / det;
    const double db = -(haa * gb - hab * ga) / det;
    const double slope = ga * da + gb * db;
    double       step = 1.0;
    bool         improved = false;
    for (int halving = 0; halving < 40; ++halving, step *= 0.5)
    {
      const double candidate = loss(a + step * da, b + step * db);
      if (candidate <= current + 1e-4 * step * slope)
      {
        a += step * da;
        b += step * db;
        improved = current - candidate > 1e-12 * std::max(1.0, std::abs(current));
        current = candidate;
        break;
      }
    }
    if (!improved)
    {
      break;
    }
  }
  if (std::isfinite(a) && std::isfinite(b) && std::abs(a) < 1e6 && std::abs(b) < 1e6)
  {
    scale = static_cast<float>(a);
    offset = static_cast<float>(b);
  }
  else
  {
    scale = 2.0f;
    offset = 0.0f;
  }
}

} // namespace canopy
