// Prequential (test-then-train) evaluation: every instance is predicted before it is learnt. Keeps
// the accuracy and Cohen's kappa over the whole stream and a learning curve of the accuracy over
// consecutive windows.
#pragma once

#include <cstdint>
#include <vector>

namespace canopy::streaming
{

struct CurvePoint
{
  std::int64_t instances = 0;  // seen so far, at the end of the window
  double       window = 0.0;   // accuracy within the window
  double       accuracy = 0.0; // accuracy since the start
  double       kappa = 0.0;    // kappa since the start
};

class PrequentialEvaluator
{
public:
  PrequentialEvaluator(int classes, std::int64_t window);

  void Add(int predicted, int actual);

  std::int64_t                    Instances() const { return m_Instances; }
  double                          Accuracy() const;
  double                          Kappa() const;
  const std::vector<CurvePoint> & Curve() const { return m_Curve; }
  /** Closes a partial last window (at the end of the stream). */
  void Finish();

private:
  int                       m_Classes;
  std::int64_t              m_Window, m_Instances = 0, m_Correct = 0, m_WindowSeen = 0, m_WindowCorrect = 0;
  std::vector<std::int64_t> m_Predicted, m_Actual;
  std::vector<CurvePoint>   m_Curve;
};

} // namespace canopy::streaming
