#include "canopyScribbleClassifier.h"

#include "canopy/Errors.h"
#include "canopyForestFilterBank.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace canopy
{
using namespace canopy::streaming;

ScribbleClassifier::ScribbleClassifier(const std::vector<int> & labelValues, const ScribbleClassifierOptions & options)
  : m_Options(options)
{
  m_ForestOptions.trees = options.trees;
  m_ForestOptions.tree.gracePeriod = options.gracePeriod;
  m_ForestOptions.seed = options.seed;
  Build(options.bank, labelValues);
}

ScribbleClassifier::ScribbleClassifier(const StreamingModel &            model,
                                       const ScribbleClassifierOptions & options,
                                       const std::string &               context)
  : m_Options(options)
{
  std::vector<std::string> bank;
  for (const StreamAttribute & a : model.schema.attributes)
  {
    if (a.nominal)
      CANOPY_THROW(context << ": attribute '" << a.name << "' is nominal: not a scribble classifier's channel");
    bank.push_back(ForestFilterChannel::Parse(a.name, context).Name());
  }
  std::vector<int> labels;
  for (const std::string & c : model.schema.classes)
  {
    std::size_t used = 0;
    int         value = 0;
    try
    {
      value = std::stoi(c, &used);
    }
    catch (const std::exception &)
    {
      used = 0;
    }
    if (used != c.size())
      CANOPY_THROW(context << ": class '" << c << "' is not a label value: not a scribble classifier");
    labels.push_back(value);
  }
  m_ForestOptions = model.options;
  Build(bank, labels);
  m_Forest->Restore(model.state);
  m_Instances = model.instances;
}

ScribbleClassifier::~ScribbleClassifier() = default;

void
ScribbleClassifier::Build(const std::vector<std::string> & bank, const std::vector<int> & labelValues)
{
  if (bank.empty())
    CANOPY_THROW("scribble classifier: the filter bank is empty");
  if (labelValues.size() < 2)
    CANOPY_THROW("scribble classifier: the scribbles hold "
                 << labelValues.size() << " label value(s); at least 2 are needed (0 is unlabelled)");
  for (std::size_t i = 0; i < labelValues.size(); ++i)
    if (labelValues[i] == 0 || std::count(labelValues.begin(), labelValues.end(), labelValues[i]) > 1)
      CANOPY_THROW("scribble classifier: label values must be nonzero and distinct (" << labelValues[i] << ")");
  m_Bank = bank;
  m_LabelValues = labelValues;
  m_Schema = StreamSchema{};
  for (const std::string & name : bank)
    m_Schema.attributes.push_back({ name, false, {} });
  m_Schema.className = "label";
  for (int v : labelValues)
    m_Schema.classes.push_back(std::to_string(v));
  m_ForestOptions.threads = m_Options.threads;
  m_Forest = std::make_unique<StreamingForest>(m_Schema, m_ForestOptions);
}

int
ScribbleClassifier::ClassOf(int labelValue) const
{
  const auto it = std::find(m_LabelValues.begin(), m_LabelValues.end(), labelValue);
  return it == m_LabelValues.end() ? -1 : int(it - m_LabelValues.begin());
}

void
ScribbleClassifier::Learn(const std::vector<const float *> & channels,
                          const std::vector<std::int64_t> &  voxels,
                          const std::vector<std::int32_t> &  classes)
{
  if (channels.size() != m_Bank.size() || voxels.size() != classes.size())
    CANOPY_THROW("scribble classifier: " << channels.size() << " channels for a bank of " << m_Bank.size()
                                         << ", or voxels and classes of different lengths");
  const int           A = int(channels.size());
  std::vector<size_t> order(voxels.size());
  InstanceBatch       batch;
  batch.attributes = A;
  std::vector<std::int32_t> predictions;
  for (int pass = 0; pass < m_Options.passes; ++pass)
  {
    // A fresh order per pass, keyed by the instances learnt so far (a resumed classifier continues it).
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::mt19937_64 random(m_ForestOptions.seed * 0x9E3779B97F4A7C15ull + m_Instances);
    std::shuffle(order.begin(), order.end(), random);
    for (std::size_t first = 0; first < order.size(); first += std::size_t(m_Options.batch))
    {
      const std::size_t last = std::min(order.size(), first + std::size_t(m_Options.batch));
      batch.Clear();
      for (std::size_t k = first; k < last; ++k)
      {
        const std::int64_t v = voxels[order[k]];
        for (int a = 0; a < A; ++a)
          batch.values.push_back(channels[std::size_t(a)][v]);
        batch.labels.push_back(classes[order[k]]);
      }
      m_Forest->TestThenTrain(batch, m_Instances, predictions);
      m_Instances += batch.Size();
    }
  }
}

void
ScribbleClassifier::Predict(const std::vector<const float *> & channels,
                            std::int64_t                       voxelCount,
                            int                                foregroundClass,
                            float *                            probability,
                            std::int32_t *                     predictedClass)
{
  if (channels.size() != m_Bank.size())
    CANOPY_THROW("scribble classifier: " << channels.size() << " channels for a bank of " << m_Bank.size());
  const int     A = int(channels.size()), C = int(m_LabelValues.size());
  InstanceBatch batch;
  batch.attributes = A;
  std::vector<std::int32_t> predictions;
  std::vector<double>       p;
  constexpr std::int64_t    kChunk = 32768;
  for (std::int64_t first = 0; first < voxelCount; first += kChunk)
  {
    const std::int64_t last = std::min(voxelCount, first + kChunk);
    batch.Clear();
    for (std::int64_t v = first; v < last; ++v)
    {
      for (int a = 0; a < A; ++a)
        batch.values.push_back(channels[std::size_t(a)][v]);
      batch.labels.push_back(0);
    }
    m_Forest->PredictProbabilities(batch, predictions, p);
    for (std::int64_t v = first; v < last; ++v)
    {
      if (probability)
        probability[v] = float(p[std::size_t(v - first) * std::size_t(C) + std::size_t(foregroundClass)]);
      if (predictedClass)
        predictedClass[v] = predictions[std::size_t(v - first)];
    }
  }
}

StreamingModel
ScribbleClassifier::Model() const
{
  StreamingModel model{ m_Schema, m_ForestOptions, m_Instances, "scribbles", m_Forest->State() };
  model.options.threads = 0;
  return model;
}

} // namespace canopy
