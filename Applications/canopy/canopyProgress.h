// Terminal progress bars for long steps (redrawn in place on a terminal, a few lines otherwise),
// and the run report every command can write with --report.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

namespace canopy::app
{

class ProgressBar
{
public:
  explicit ProgressBar(std::string label, bool quiet = false);
  ~ProgressBar();
  /** fraction in [0, 1]; stage optionally names the sub-step. Thread-safe enough for one caller. */
  void Update(double fraction, const std::string & stage = {});
  void Finish();

private:
  std::string                           m_Label;
  bool                                  m_Quiet;
  bool                                  m_Terminal;
  bool                                  m_Finished = false;
  int                                   m_LastPercent = -1;
  std::chrono::steady_clock::time_point m_Start;
};

/** Collects what a run did; written atomically as JSON when --report is given. */
class RunReport
{
public:
  RunReport(const std::string & command);
  nlohmann::json & operator[](const std::string & key) { return m_Json[key]; }
  void Write(const std::string & path);

private:
  nlohmann::json                        m_Json;
  std::chrono::steady_clock::time_point m_Start;
};

/** Seconds since `start`. */
double
SecondsSince(std::chrono::steady_clock::time_point start);

} // namespace canopy::app
