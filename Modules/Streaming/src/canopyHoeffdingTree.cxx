#include "canopyHoeffdingTree.h"

#include "canopy/CounterRandom.h"
#include "canopy/Errors.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace canopy::streaming
{
namespace
{
int
ArgMax(const double * v, int n)
{
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (v[i] > v[best])
      best = i;
  return best;
}
} // namespace

HoeffdingTree::HoeffdingTree(const StreamSchema & schema, const HoeffdingTreeOptions & options, std::uint64_t streamKey)
  : m_Options(options)
  , m_StreamKey(streamKey)
  , m_Classes(schema.NumberOfClasses())
  , m_Attributes(schema.NumberOfAttributes())
{
  if (m_Classes < 2)
    CANOPY_THROW("Hoeffding tree: the stream has " << m_Classes << " classes; at least 2 are needed");
  if (m_Options.gracePeriod < 1 || !(m_Options.splitConfidence > 0.0 && m_Options.splitConfidence < 1.0) ||
      m_Options.numericSplitPoints < 1)
    CANOPY_THROW("Hoeffding tree: grace period and split points must be >= 1 and delta in (0, 1)");
  m_SubspaceSize = m_Options.subspaceSize > 0 ? std::min(m_Options.subspaceSize, m_Attributes) : m_Attributes;
  for (const auto & a : schema.attributes)
  {
    m_Values.push_back(a.nominal ? int(a.values.size()) : 0);
    if (a.nominal)
    {
      m_Offset.push_back(m_NominalStride);
      m_NominalStride += int(a.values.size()) * m_Classes;
    }
    else
    {
      m_Offset.push_back(m_NumericStride);
      m_NumericStride += m_Classes;
    }
  }
  NewLeafSlot(-1, nullptr, 0);
  m_Nodes.attribute.push_back(-1);
  m_Nodes.threshold.push_back(0.0f);
  m_Nodes.child.push_back(0);
  m_Nodes.missingBranch.push_back(0);
  m_Nodes.depth.push_back(0);
  m_Leaves = 1;
}

int
HoeffdingTree::NewLeafSlot(int reuseSlot, const std::uint32_t * initialCounts, int depth)
{
  int slot = reuseSlot;
  if (slot < 0)
  {
    slot = int(m_Weight.size());
    m_ClassCounts.resize(m_ClassCounts.size() + m_Classes);
    m_NominalCounts.resize(m_NominalCounts.size() + m_NominalStride);
    m_Gaussians.resize(m_Gaussians.size() + m_NumericStride);
    m_Subspace.resize(m_Subspace.size() + m_SubspaceSize);
    m_Weight.push_back(0);
    m_WeightAtLastCheck.push_back(0);
    m_MajorityCorrect.push_back(0);
    m_BayesCorrect.push_back(0);
    m_SlotDepth.push_back(0);
  }
  else
  {
    std::fill_n(m_NominalCounts.begin() + std::size_t(slot) * m_NominalStride, m_NominalStride, 0u);
    std::fill_n(m_Gaussians.begin() + std::size_t(slot) * m_NumericStride, m_NumericStride, GaussianEstimator{});
  }
  std::uint32_t total = 0;
  for (int c = 0; c < m_Classes; ++c)
  {
    const std::uint32_t n = initialCounts ? initialCounts[c] : 0u;
    m_ClassCounts[std::size_t(slot) * m_Classes + c] = n;
    total += n;
  }
  m_Weight[slot] = total;
  m_WeightAtLastCheck[slot] = total;
  m_MajorityCorrect[slot] = 0;
  m_BayesCorrect[slot] = 0;
  m_SlotDepth[slot] = depth;
  // The leaf's attributes: a partial Fisher-Yates shuffle from counter-based draws.
  std::vector<std::int32_t> order(m_Attributes);
  std::iota(order.begin(), order.end(), 0);
  const std::uint64_t leafKey = m_LeavesCreated++;
  if (m_SubspaceSize < m_Attributes)
  {
    for (int j = 0; j < m_SubspaceSize; ++j)
    {
      const double u = CounterUniform(m_Options.seed, m_StreamKey, leafKey * 4096u + std::uint64_t(j));
      const int    k = j + int(u * double(m_Attributes - j));
      std::swap(order[j], order[std::min(k, m_Attributes - 1)]);
    }
  }
  std::copy_n(order.begin(), m_SubspaceSize, m_Subspace.begin() + std::size_t(slot) * m_SubspaceSize);
  return slot;
}

int
HoeffdingTree::FindLeafNode(const float * x) const
{
  int node = 0;
  for (int a = m_Nodes.attribute[0]; a >= 0; a = m_Nodes.attribute[node])
  {
    const float v = x[a];
    int         branch;
    if (IsMissing(v))
      branch = m_Nodes.missingBranch[node];
    else if (m_Values[a] > 0)
      branch = int(v);
    else
      branch = v <= m_Nodes.threshold[node] ? 0 : 1;
    node = m_Nodes.child[node] + branch;
  }
  return node;
}

void
HoeffdingTree::NaiveBayesVotes(int slot, const float * x, double * votes) const
{
  // votes[c] proportional to n_c * prod_a P(x_a | c); numerators and denominators are kept apart (one
  // division per class) and rescaled before they could overflow.
  const std::uint32_t * counts = m_ClassCounts.data() + std::size_t(slot) * m_Classes;
  const std::int32_t *  subspace = m_Subspace.data() + std::size_t(slot) * m_SubspaceSize;
  double                largest = 0.0;
  for (int c = 0; c < m_Classes; ++c)
  {
    double numerator = double(counts[c]), denominator = 1.0;
    for (int j = 0; j < m_SubspaceSize && numerator > 0.0; ++j)
    {
      const int   a = subspace[j];
      const float v = x[a];
      if (IsMissing(v))
        continue;
      if (m_Values[a] > 0)
      {
        // Laplace-corrected frequency of the value within the class, as MOA's nominal observer.
        const std::uint32_t * n = m_NominalCounts.data() + std::size_t(slot) * m_NominalStride + m_Offset[a] + c;
        std::uint64_t         classTotal = 0;
        for (int value = 0; value < m_Values[a]; ++value)
          classTotal += n[value * m_Classes];
        numerator *= double(n[int(v) * m_Classes]) + 1.0;
        denominator *= double(classTotal) + double(m_Values[a]);
      }
      else
      {
        numerator *= GaussianDensity(m_Gaussians[std::size_t(slot) * m_NumericStride + m_Offset[a] + c], double(v));
      }
      if (denominator > 1e200)
      {
        numerator *= 1e-200;
        denominator *= 1e-200;
      }
    }
    votes[c] = numerator / denominator;
    largest = std::max(largest, votes[c]);
  }
  if (!(largest > 0.0))
  {
    // Every class has density 0 (a value far from all Gaussians): fall back to the class counts.
    for (int c = 0; c < m_Classes; ++c)
      votes[c] = double(counts[c]);
  }
}

void
HoeffdingTree::LeafVotes(int slot, const float * x, double * votes) const
{
  const std::uint32_t * counts = m_ClassCounts.data() + std::size_t(slot) * m_Classes;
  const bool            bayes =
    m_Options.leafPrediction == LeafPrediction::NaiveBayes ||
    (m_Options.leafPrediction == LeafPrediction::NaiveBayesAdaptive && m_BayesCorrect[slot] > m_MajorityCorrect[slot]);
  if (bayes)
    NaiveBayesVotes(slot, x, votes);
  else
    for (int c = 0; c < m_Classes; ++c)
      votes[c] = double(counts[c]);
}

void
HoeffdingTree::Predict(const float * x, double * votes) const
{
  LeafVotes(m_Nodes.child[FindLeafNode(x)], x, votes);
  double sum = 0.0;
  for (int c = 0; c < m_Classes; ++c)
    sum += votes[c];
  for (int c = 0; c < m_Classes; ++c)
    votes[c] = sum > 0.0 ? votes[c] / sum : 0.0;
}

int
HoeffdingTree::PredictClass(const float * x) const
{
  std::vector<double> votes(m_Classes);
  Predict(x, votes.data());
  return ArgMax(votes.data(), m_Classes);
}

void
HoeffdingTree::Learn(const float * x, int label, std::uint32_t weight)
{
  if (weight == 0)
    return;
  const int node = FindLeafNode(x);
  const int slot = m_Nodes.child[node];
  if (m_Options.leafPrediction == LeafPrediction::NaiveBayesAdaptive)
  {
    // Score both leaf predictors on the instance before learning it (MOA's NBAdaptive).
    double              votes[64];
    std::vector<double> many;
    double *            v = votes;
    if (m_Classes > 64)
    {
      many.resize(m_Classes);
      v = many.data();
    }
    const std::uint32_t * counts = m_ClassCounts.data() + std::size_t(slot) * m_Classes;
    int                   majority = 0;
    for (int c = 1; c < m_Classes; ++c)
      if (counts[c] > counts[majority])
        majority = c;
    if (majority == label)
      m_MajorityCorrect[slot] += weight;
    NaiveBayesVotes(slot, x, v);
    if (ArgMax(v, m_Classes) == label)
      m_BayesCorrect[slot] += weight;
  }
  m_ClassCounts[std::size_t(slot) * m_Classes + label] += weight;
  m_Weight[slot] += weight;
  const std::int32_t * subspace = m_Subspace.data() + std::size_t(slot) * m_SubspaceSize;
  for (int j = 0; j < m_SubspaceSize; ++j)
  {
    const int   a = subspace[j];
    const float v = x[a];
    if (IsMissing(v))
      continue; // missing values teach nothing about the attribute (MOA)
    if (m_Values[a] > 0)
      m_NominalCounts[std::size_t(slot) * m_NominalStride + m_Offset[a] + int(v) * m_Classes + label] += weight;
    else
      AddToGaussian(m_Gaussians[std::size_t(slot) * m_NumericStride + m_Offset[a] + label], v, weight);
  }
  if (m_Weight[slot] - m_WeightAtLastCheck[slot] >= std::uint32_t(m_Options.gracePeriod))
  {
    m_WeightAtLastCheck[slot] = m_Weight[slot];
    AttemptSplit(node);
  }
}

HoeffdingTree::Candidate
HoeffdingTree::BestSplitOf(int slot, int a) const
{
  Candidate             best{ -INFINITY, a, 0.0f };
  const std::uint32_t * parent = m_ClassCounts.data() + std::size_t(slot) * m_Classes;
  if (m_Values[a] > 0)
  {
    const std::uint32_t * branches = m_NominalCounts.data() + std::size_t(slot) * m_NominalStride + m_Offset[a];
    best.merit = SplitMeritOfCounts(m_Options.criterion, parent, branches, m_Values[a], m_Classes);
    return best;
  }
  const GaussianEstimator * g = m_Gaussians.data() + std::size_t(slot) * m_NumericStride + m_Offset[a];
  float                     low = INFINITY, high = -INFINITY;
  for (int c = 0; c < m_Classes; ++c)
  {
    if (g[c].weight == 0)
      continue;
    low = std::min(low, g[c].minValue);
    high = std::max(high, g[c].maxValue);
  }
  if (!(low < high))
    return best;
  std::vector<double> parentWeights(m_Classes), branchWeights(2 * std::size_t(m_Classes));
  for (int c = 0; c < m_Classes; ++c)
    parentWeights[c] = double(parent[c]);
  const int points = m_Options.numericSplitPoints;
  for (int i = 1; i <= points; ++i)
  {
    const float threshold = float(double(low) + (double(high) - double(low)) * double(i) / double(points + 1));
    for (int c = 0; c < m_Classes; ++c)
    {
      const double below = GaussianWeightAtOrBelow(g[c], double(threshold));
      branchWeights[c] = below;
      branchWeights[m_Classes + c] = double(g[c].weight) - below;
    }
    const double merit =
      SplitMeritOfWeights(m_Options.criterion, parentWeights.data(), branchWeights.data(), 2, m_Classes);
    if (merit > best.merit)
    {
      best.merit = merit;
      best.threshold = threshold;
    }
  }
  return best;
}

void
HoeffdingTree::AttemptSplit(int node)
{
  const int             slot = m_Nodes.child[node];
  const std::uint32_t * counts = m_ClassCounts.data() + std::size_t(slot) * m_Classes;
  int                   classesSeen = 0;
  for (int c = 0; c < m_Classes; ++c)
    classesSeen += counts[c] > 0 ? 1 : 0;
  if (classesSeen < 2 || (m_Options.maxDepth > 0 && m_SlotDepth[slot] >= m_Options.maxDepth))
    return;
  // The best two candidates; "no split" has merit 0 and competes too (MOA's null split).
  Candidate                  first{ 0.0, -1, 0.0f }, second{ 0.0, -1, 0.0f };
  const std::int32_t * const subspace = m_Subspace.data() + std::size_t(slot) * m_SubspaceSize;
  for (int j = 0; j < m_SubspaceSize; ++j)
  {
    const Candidate c = BestSplitOf(slot, subspace[j]);
    if (c.merit > first.merit)
    {
      second = first;
      first = c;
    }
    else if (c.merit > second.merit)
      second = c;
  }
  const double epsilon =
    HoeffdingBound(MeritRange(m_Options.criterion, m_Classes), m_Options.splitConfidence, double(m_Weight[slot]));
  if (first.attribute < 0 || !(first.merit - second.merit > epsilon || epsilon < m_Options.tieThreshold))
    return;

  // The children's class counts: the value rows of a nominal attribute, or the Gaussians' estimate of
  // each side of a numeric threshold, rounded to whole counts.
  const int                  a = first.attribute;
  const int                  branches = m_Values[a] > 0 ? m_Values[a] : 2;
  std::vector<std::uint32_t> childCounts(std::size_t(branches) * m_Classes);
  if (m_Values[a] > 0)
  {
    const std::uint32_t * rows = m_NominalCounts.data() + std::size_t(slot) * m_NominalStride + m_Offset[a];
    std::copy_n(rows, childCounts.size(), childCounts.begin());
  }
  else
  {
    const GaussianEstimator * g = m_Gaussians.data() + std::size_t(slot) * m_NumericStride + m_Offset[a];
    for (int c = 0; c < m_Classes; ++c)
    {
      const auto below = std::uint32_t(std::llround(GaussianWeightAtOrBelow(g[c], double(first.threshold))));
      childCounts[c] = std::min(below, g[c].weight);
      childCounts[m_Classes + c] = g[c].weight - childCounts[c];
    }
  }
  int    heaviest = 0;
  double heaviestWeight = -1.0;
  for (int b = 0; b < branches; ++b)
  {
    double w = 0.0;
    for (int c = 0; c < m_Classes; ++c)
      w += double(childCounts[std::size_t(b) * m_Classes + c]);
    if (w > heaviestWeight)
    {
      heaviest = b;
      heaviestWeight = w;
    }
  }
  const int depth = m_SlotDepth[slot] + 1;
  const int firstChild = NumberOfNodes();
  m_Nodes.attribute[node] = a;
  m_Nodes.threshold[node] = first.threshold;
  m_Nodes.child[node] = firstChild;
  m_Nodes.missingBranch[node] = heaviest;
  for (int b = 0; b < branches; ++b)
  {
    const int childSlot = NewLeafSlot(b == 0 ? slot : -1, childCounts.data() + std::size_t(b) * m_Classes, depth);
    m_Nodes.attribute.push_back(-1);
    m_Nodes.threshold.push_back(0.0f);
    m_Nodes.child.push_back(childSlot);
    m_Nodes.missingBranch.push_back(0);
    m_Nodes.depth.push_back(depth);
  }
  m_Leaves += branches - 1;
}

int
HoeffdingTree::Depth() const
{
  int depth = 0;
  for (int d : m_Nodes.depth)
    depth = std::max(depth, d);
  return depth;
}

} // namespace canopy::streaming
