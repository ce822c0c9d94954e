#include "canopyPrequentialEvaluation.h"

namespace canopy::streaming
{

PrequentialEvaluator::PrequentialEvaluator(int classes, std::int64_t window)
  : m_Classes(classes)
  , m_Window(window > 0 ? window : 1000)
  , m_Predicted(classes, 0)
  , m_Actual(classes, 0)
{
}

void
PrequentialEvaluator::Add(int predicted, int actual)
{
  ++m_Instances;
  ++m_WindowSeen;
  const bool correct = predicted == actual;
  m_Correct += correct;
  m_WindowCorrect += correct;
  ++m_Predicted[predicted];
  ++m_Actual[actual];
  if (m_WindowSeen == m_Window)
    Finish();
}

void
PrequentialEvaluator::Finish()
{
  if (m_WindowSeen == 0)
    return;
  m_Curve.push_back({ m_Instances, double(m_WindowCorrect) / double(m_WindowSeen), Accuracy(), Kappa() });
  m_WindowSeen = 0;
  m_WindowCorrect = 0;
}

double
PrequentialEvaluator::Accuracy() const
{
  return m_Instances > 0 ? double(m_Correct) / double(m_Instances) : 0.0;
}

double
PrequentialEvaluator::Kappa() const
{
  if (m_Instances == 0)
    return 0.0;
  const double n = double(m_Instances);
  double       chance = 0.0;
  for (int c = 0; c < m_Classes; ++c)
    chance += (double(m_Predicted[c]) / n) * (double(m_Actual[c]) / n);
  return chance < 1.0 ? (Accuracy() - chance) / (1.0 - chance) : 0.0;
}

} // namespace canopy::streaming
