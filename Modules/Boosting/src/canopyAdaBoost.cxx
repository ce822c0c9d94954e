#include "canopyAdaBoost.h"

#include "ParallelFor.h" // Kernels/src, a private include path of canopy_pbt
#include "canopy/Errors.h"
#include "canopy/ExactSum.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>

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

/** Weighted class histogram of one feature over the node's (local) samples: hist[2 * bin + isPositive],
 * in integers of 2^-62 (FixedWeight), so partial histograms of any split of the samples sum exactly.
 * Two interleaved partial histograms shorten the store-to-load chains. */
void
ClassHistogram(const std::uint8_t *              row,
               const NodeSamples &               samples,
               const std::vector<std::uint8_t> & positive,
               const std::vector<std::int64_t> & weight,
               int                               numBins,
               std::int64_t *                    hist)
{
  std::vector<std::int64_t> second(2 * static_cast<std::size_t>(numBins), 0);
  std::fill(hist, hist + 2 * numBins, std::int64_t{ 0 });
  std::int64_t *       a = hist;
  std::int64_t *       b = second.data();
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

std::vector<double>
ToDouble(const std::int64_t * hist, int numBins)
{
  std::vector<double> out(2 * static_cast<std::size_t>(numBins));
  for (std::size_t k = 0; k < out.size(); ++k)
  {
    out[k] = FromFixedWeight(hist[k]);
  }
  return out;
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

/** The exact sum of `values` over every process (a collective call). */
double
SumEverywhere(Collective & processes, const std::vector<double> & values)
{
  ExactSum sum;
  for (double v : values)
  {
    sum.Add(v);
  }
  ExactSum::SumOverProcesses(processes, &sum, 1);
  return sum.Value();
}

void
Divide(std::vector<double> & weight, double total)
{
  if (total > 0.0 && std::isfinite(total))
  {
    for (double & w : weight)
    {
      w /= total;
    }
  }
}

/** The bin grid of one feature from its (subsampled) finite responses, in a fixed order. */
void
RobustGrid(std::vector<float> & finite, int numBins, float & lo, float & inv)
{
  lo = 0.0f;
  inv = 0.0f; // constant or all non-finite: everything in bin 0
  if (finite.empty())
  {
    return;
  }
  const auto at = [&](double q)
  {
    const std::size_t k = static_cast<std::size_t>(q * static_cast<double>(finite.size() - 1));
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
  lo = static_cast<float>(low);
  if (high > low && std::isfinite(candidate) && candidate < 1e30)
  {
    inv = static_cast<float>(candidate);
  }
}

} // namespace

BinnedResponses
BinResponses(const ResponseMatrix & responses, int numBins, int threads, Collective * processes)
{
  if (numBins < 2 || numBins > 256)
  {
    CANOPY_THROW("BinResponses: histogramBins must be 2..256, got " << numBins);
  }
  SingleProcessCollective alone;
  Collective &            world = processes ? *processes : alone;
  BinnedResponses         out;
  out.numFeatures = responses.numFeatures;
  out.numSamples = responses.numSamples;
  out.numBins = numBins;
  out.lo.assign(responses.numFeatures, 0.0f);
  out.invBinWidth.assign(responses.numFeatures, 0.0f);
  out.bins.resize(responses.values.size());
  const std::int64_t n = responses.numSamples;
  // Quantiles from an evenly strided subsample of the global sample order: cheap and deterministic.
  std::vector<std::int64_t> counts(world.Size(), 0);
  counts[world.Rank()] = n;
  world.SumInPlace(counts.data(), counts.size());
  const std::int64_t total = std::accumulate(counts.begin(), counts.end(), std::int64_t{ 0 });
  const std::int64_t offset = std::accumulate(counts.begin(), counts.begin() + world.Rank(), std::int64_t{ 0 });
  const std::int64_t stride = std::max<std::int64_t>(1, total / 20000);
  const std::int64_t first = (stride - offset % stride) % stride; // first local sample on the global stride
  auto               subsample = [&](std::int64_t f, std::vector<float> & finite)
  {
    const float * row = responses.values.data() + f * n;
    for (std::int64_t s = first; s < n; s += stride)
    {
      if (std::isfinite(row[s]))
      {
        finite.push_back(row[s]);
      }
    }
  };
  if (world.Size() == 1)
  {
    detail::ParallelForChunks(responses.numFeatures,
                              threads,
                              [&](std::int64_t begin, std::int64_t end)
                              {
                                std::vector<float> finite;
                                for (std::int64_t f = begin; f < end; ++f)
                                {
                                  finite.clear();
                                  subsample(f, finite);
                                  RobustGrid(finite, numBins, out.lo[f], out.invBinWidth[f]);
                                }
                              });
  }
  else
  {
    // Rank 0 gathers the subsample (in rank order: the one-process order), a block of features at a
    // time, computes the grids and broadcasts them.
    const std::int64_t perFeature = std::max<std::int64_t>(1, (n - first + stride - 1) / stride);
    const std::int64_t block = std::max<std::int64_t>(1, (std::int64_t(16) << 20) / (4 * perFeature + 8));
    for (std::int64_t f0 = 0; f0 < responses.numFeatures; f0 += block)
    {
      const std::int64_t f1 = std::min<std::int64_t>(responses.numFeatures, f0 + block);
      std::string        mine;
      std::vector<float> finite;
      for (std::int64_t f = f0; f < f1; ++f)
      {
        finite.clear();
        subsample(f, finite);
        const std::uint64_t count = finite.size();
        mine.append(reinterpret_cast<const char *>(&count), sizeof count);
        mine.append(reinterpret_cast<const char *>(finite.data()), finite.size() * sizeof(float));
      }
      const std::vector<std::string> all = world.GatherToRoot(mine, 0);
      if (world.Rank() != 0)
      {
        continue;
      }
      std::vector<std::vector<float>> values(f1 - f0);
      for (const std::string & text : all)
      {
        std::size_t at = 0;
        for (auto & v : values)
        {
          std::uint64_t count = 0;
          std::memcpy(&count, text.data() + at, sizeof count);
          at += sizeof count;
          const std::size_t before = v.size();
          v.resize(before + count);
          std::memcpy(v.data() + before, text.data() + at, count * sizeof(float));
          at += count * sizeof(float);
        }
      }
      detail::ParallelForChunks(f1 - f0,
                                threads,
                                [&](std::int64_t begin, std::int64_t end)
                                {
                                  for (std::int64_t k = begin; k < end; ++k)
                                  {
                                    RobustGrid(values[k], numBins, out.lo[f0 + k], out.invBinWidth[f0 + k]);
                                  }
                                });
    }
    world.Broadcast(out.lo.data(), out.lo.size() * sizeof(float), 0);
    world.Broadcast(out.invBinWidth.data(), out.invBinWidth.size() * sizeof(float), 0);
  }
  detail::ParallelForChunks(responses.numFeatures,
                            threads,
                            [&](std::int64_t begin, std::int64_t end)
                            {
                              for (std::int64_t f = begin; f < end; ++f)
                              {
                                const float *  row = responses.values.data() + f * n;
                                std::uint8_t * bins = out.bins.data() + f * n;
                                for (std::int64_t s = 0; s < n; ++s)
                                {
                                  bins[s] =
                                    static_cast<std::uint8_t>(BinIndex(row[s], out.lo[f], out.invBinWidth[f], numBins));
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
              std::vector<float> &    scores,
              Collective *            processes)
{
  SingleProcessCollective alone;
  Collective &            world = processes ? *processes : alone;
  const std::size_t       n = samples.index.size();
  const int               numFeatures = binned.numFeatures;
  const int               numBins = binned.numBins;
  StrongClassifier        strong;
  scores.assign(n, 0.0f);
  std::int64_t globalCount = static_cast<std::int64_t>(n);
  world.SumInPlace(&globalCount, 1);
  if (globalCount == 0 || numFeatures == 0)
  {
    return strong;
  }
  std::vector<std::uint8_t> positive(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    positive[i] = samples.label[i] > 0 ? 1 : 0;
  }
  const double        initialTotal = SumEverywhere(world, samples.weight);
  std::vector<double> weight = samples.weight;
  Divide(weight, initialTotal);
  std::vector<std::int64_t> fixedWeight(n);
  // Real AdaBoost's smoothing of the bin confidences, as a share of an average bin's weight.
  const double     delta = options.histogramSmoothing / numBins;
  const int        numCandidates = options.candidatesPerRound <= 0 || options.candidatesPerRound >= numFeatures
                                     ? numFeatures
                                     : options.candidatesPerRound;
  std::vector<int> order(numFeatures);
  std::iota(order.begin(), order.end(), 0);
  std::vector<Candidate>    results(numCandidates);
  const std::size_t         histSize = 2 * static_cast<std::size_t>(numBins);
  std::vector<std::int64_t> hists(numCandidates * histSize);

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
    for (std::size_t i = 0; i < n; ++i)
    {
      fixedWeight[i] = FixedWeight(weight[i]);
    }
    detail::ParallelForChunks(
      numCandidates,
      options.threads,
      [&](std::int64_t begin, std::int64_t end)
      {
        for (std::int64_t c = begin; c < end; ++c)
        {
          ClassHistogram(binned.Row(order[c]), samples, positive, fixedWeight, numBins, &hists[c * histSize]);
        }
      });
    world.SumInPlace(hists.data(), hists.size()); // the node's histograms over every process's samples
    detail::ParallelForChunks(numCandidates,
                              options.threads,
                              [&](std::int64_t begin, std::int64_t end)
                              {
                                for (std::int64_t c = begin; c < end; ++c)
                                {
                                  const int f = order[c];
                                  if (options.kind == WeakLearnerKind::Stump && binned.invBinWidth[f] == 0.0f)
                                  {
                                    results[c] = Candidate{}; // a constant feature has no threshold
                                    continue;
                                  }
                                  const auto hist = ToDouble(&hists[c * histSize], numBins);
                                  results[c] = options.kind == WeakLearnerKind::Histogram
                                                 ? ScoreHistogram(hist, numBins)
                                                 : ScoreStump(hist, numBins);
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
      const auto hist = ToDouble(&hists[best * histSize], numBins);
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
    ExactSum      sums[2]; // the strong classifier's weighted error, the new weights' total
    for (std::size_t i = 0; i < n; ++i)
    {
      const float h = WeakLearnerOutput(view, learner, row[samples.index[i]]);
      scores[i] += h;
      weight[i] *= std::exp(-static_cast<double>(samples.label[i]) * h);
      sums[1].Add(weight[i]);
      if (!(samples.label[i] * scores[i] > 0.0f))
      {
        sums[0].Add(samples.weight[i]);
      }
    }
    ExactSum::SumOverProcesses(world, sums, 2);
    Divide(weight, sums[1].Value());
    if (sums[0].Value() <= options.earlyStopError * initialTotal)
    {
      break;
    }
  }
  if (strong.informative)
  {
    FitPlattCalibration(
      scores, samples.label, samples.weight, strong.calibrationScale, strong.calibrationOffset, &world);
  }
  return strong;
}

void
FitPlattCalibration(const std::vector<float> &       scores,
                    const std::vector<std::int8_t> & labels,
                    const std::vector<double> &      weights,
                    float &                          scale,
                    float &                          offset,
                    Collective *                     processes)
{
  SingleProcessCollective alone;
  Collective &            world = processes ? *processes : alone;
  const std::size_t       n = scores.size();
  std::int64_t            counts[2] = { static_cast<std::int64_t>(n), 0 }; // samples, positives
  ExactSum                total;
  for (std::size_t i = 0; i < n; ++i)
  {
    counts[1] += labels[i] > 0 ? 1 : 0;
    total.Add(weights[i]);
  }
  world.SumInPlace(counts, 2);
  ExactSum::SumOverProcesses(world, &total, 1);
  const double positives = static_cast<double>(counts[1]);
  // Platt's targets keep the fit finite on separable data.
  const double targetPositive = (positives + 1.0) / (positives + 2.0);
  const double targetNegative = 1.0 / (static_cast<double>(counts[0]) - positives + 2.0);
  const double norm = total.Value() > 0.0 ? 1.0 / total.Value() : 1.0;
  auto         loss = [&](double a, double b)
  {
    ExactSum sum;
    for (std::size_t i = 0; i < n; ++i)
    {
      const double z = a * scores[i] + b;
      const double t = labels[i] > 0 ? targetPositive : targetNegative;
      const double softplus = z > 0.0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z));
      sum.Add(weights[i] * (softplus - t * z));
    }
    ExactSum::SumOverProcesses(world, &sum, 1);
    return sum.Value() * norm;
  };
  double a = 2.0;
  double b = 0.0;
  double current = loss(a, b);
  for (int iteration = 0; iteration < 50; ++iteration)
  {
    ExactSum terms[5]; // ga, gb, haa, hab, hbb
    for (std::size_t i = 0; i < n; ++i)
    {
      const double f = scores[i];
      const double p = 1.0 / (1.0 + std::exp(-(a * f + b)));
      const double t = labels[i] > 0 ? targetPositive : targetNegative;
      const double w = weights[i] * norm;
      const double d = w * (p - t);
      const double s = w * std::max(p * (1.0 - p), 1e-12);
      terms[0].Add(d * f);
      terms[1].Add(d);
      terms[2].Add(s * f * f);
      terms[3].Add(s * f);
      terms[4].Add(s);
    }
    ExactSum::SumOverProcesses(world, terms, 5);
    const double ga = terms[0].Value(), gb = terms[1].Value(), hab = terms[3].Value();
    double       haa = terms[2].Value(), hbb = terms[4].Value();
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
