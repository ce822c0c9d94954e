#include "canopyStreamingForest.h"

#include "ParallelFor.h" // Kernels/src, a private include path of canopy_streaming
#include "canopy/CounterRandom.h"
#include "canopy/Errors.h"

#include <cmath>

namespace canopy::streaming
{

struct StreamingForest::Member
{
  std::unique_ptr<HoeffdingTree> tree, background;
  Adwin                          warning, drift;
  std::uint64_t                  seen = 0, correct = 0; // the tree's test results since it started
  std::uint64_t                  generation = 0;        // trees this member has started (keys subspace draws)
  std::int64_t                   drifts = 0, warnings = 0;

  Member(double warningDelta, double driftDelta)
    : warning(warningDelta)
    , drift(driftDelta)
  {
  }
};

StreamingForest::StreamingForest(const StreamSchema & schema, const StreamingForestOptions & options)
  : m_Schema(schema)
  , m_Options(options)
  , m_TreeOptions(options.tree)
  , m_Classes(schema.NumberOfClasses())
{
  if (m_Options.trees < 1)
    CANOPY_THROW("streaming forest: --trees " << m_Options.trees << ": give at least 1 tree");
  if (!(m_Options.lambda > 0.0 && m_Options.lambda <= 30.0))
    CANOPY_THROW("streaming forest: lambda " << m_Options.lambda << " is not in (0, 30]");
  const int d = schema.NumberOfAttributes();
  m_TreeOptions.subspaceSize =
    m_Options.subspaceSize < 0 ? std::max(1, int(std::lround(std::sqrt(double(d))))) : m_Options.subspaceSize;
  m_TreeOptions.seed = m_Options.seed;
  for (int t = 0; t < m_Options.trees; ++t)
  {
    m_Members.push_back(std::make_unique<Member>(m_Options.warningDelta, m_Options.driftDelta));
    m_Members.back()->tree = NewTree(t, false);
  }
}

StreamingForest::~StreamingForest() = default;

std::unique_ptr<HoeffdingTree>
StreamingForest::NewTree(int t, bool /*background*/)
{
  Member &            m = *m_Members[t];
  const std::uint64_t key = (std::uint64_t(t) << 32) | m.generation++;
  return std::make_unique<HoeffdingTree>(m_Schema, m_TreeOptions, key);
}

void
StreamingForest::Vote(const InstanceBatch & batch, std::vector<std::int32_t> & predictions, bool keepCorrectness)
{
  const std::size_t n = batch.Size();
  const int         trees = NumberOfTrees();
  m_Votes.assign(std::size_t(trees) * n * m_Classes, 0.0);
  m_Correct.assign(std::size_t(trees) * n, 0);
  detail::ParallelForChunks(trees,
                            m_Options.threads,
                            [&](std::int64_t begin, std::int64_t end)
                            {
                              for (std::int64_t t = begin; t < end; ++t)
                              {
                                const Member & m = *m_Members[t];
                                const double   accuracy = m.seen > 0 ? double(m.correct) / double(m.seen) : 0.0;
                                for (std::size_t i = 0; i < n; ++i)
                                {
                                  double * v = m_Votes.data() + (std::size_t(t) * n + i) * m_Classes;
                                  m.tree->Predict(batch.Row(i), v);
                                  int best = 0;
                                  for (int c = 1; c < m_Classes; ++c)
                                    best = v[c] > v[best] ? c : best;
                                  m_Correct[std::size_t(t) * n + i] =
                                    keepCorrectness && best == batch.labels[i] ? 1 : 0;
                                  if (m_Options.weightedVote && accuracy > 0.0)
                                    for (int c = 0; c < m_Classes; ++c)
                                      v[c] *= accuracy;
                                }
                              }
                            });
  predictions.resize(n);
  std::vector<double> sum(m_Classes);
  for (std::size_t i = 0; i < n; ++i)
  {
    std::fill(sum.begin(), sum.end(), 0.0);
    for (int t = 0; t < trees; ++t)
      for (int c = 0; c < m_Classes; ++c)
        sum[c] += m_Votes[(std::size_t(t) * n + i) * m_Classes + c];
    int best = 0;
    for (int c = 1; c < m_Classes; ++c)
      best = sum[c] > sum[best] ? c : best;
    predictions[i] = best;
  }
}

void
StreamingForest::Learn(Member & m, int t, const InstanceBatch & batch, std::uint64_t firstIndex)
{
  const std::size_t n = batch.Size();
  const double      expNegLambda = std::exp(-m_Options.lambda);
  for (std::size_t i = 0; i < n; ++i)
  {
    const float *       x = batch.Row(i);
    const int           label = batch.labels[i];
    const std::uint64_t index = firstIndex + i;
    const bool          correct = m_Correct[std::size_t(t) * n + i] != 0;
    ++m.seen;
    m.correct += correct ? 1 : 0;
    m.tree->Learn(
      x,
      label,
      PoissonFromUniform(CounterUniform(m_Options.seed, 2 * std::uint64_t(t), index), m_Options.lambda, expNegLambda));
    if (m.background)
      m.background->Learn(x,
                          label,
                          PoissonFromUniform(CounterUniform(m_Options.seed, 2 * std::uint64_t(t) + 1, index),
                                             m_Options.lambda,
                                             expNegLambda));
    if (!m_Options.driftDetection)
      continue;
    const double error = correct ? 0.0 : 1.0;
    if (m_Options.backgroundTrees && m.warning.Update(error) && !m.background)
    {
      ++m.warnings;
      m.background = NewTree(t, true);
      m.warning = Adwin(m_Options.warningDelta);
    }
    if (m.drift.Update(error))
    {
      ++m.drifts;
      m.tree = m.background ? std::move(m.background) : NewTree(t, false);
      m.background.reset();
      m.warning = Adwin(m_Options.warningDelta);
      m.drift = Adwin(m_Options.driftDelta);
      m.seen = 0;
      m.correct = 0;
    }
  }
}

void
StreamingForest::TestThenTrain(const InstanceBatch &       batch,
                               std::uint64_t               firstIndex,
                               std::vector<std::int32_t> & predictions)
{
  Vote(batch, predictions, true);
  detail::ParallelForChunks(NumberOfTrees(),
                            m_Options.threads,
                            [&](std::int64_t begin, std::int64_t end)
                            {
                              for (std::int64_t t = begin; t < end; ++t)
                                Learn(*m_Members[t], int(t), batch, firstIndex);
                            });
}

void
StreamingForest::Predict(const InstanceBatch & batch, std::vector<std::int32_t> & predictions)
{
  Vote(batch, predictions, false);
}

std::int64_t
StreamingForest::DriftsDetected() const
{
  std::int64_t n = 0;
  for (const auto & m : m_Members)
    n += m->drifts;
  return n;
}

std::int64_t
StreamingForest::WarningsDetected() const
{
  std::int64_t n = 0;
  for (const auto & m : m_Members)
    n += m->warnings;
  return n;
}

std::int64_t
StreamingForest::TotalNodes() const
{
  std::int64_t n = 0;
  for (const auto & m : m_Members)
    n += m->tree->NumberOfNodes();
  return n;
}

const HoeffdingTree &
StreamingForest::Tree(int t) const
{
  return *m_Members.at(t)->tree;
}

} // namespace canopy::streaming
