// Terminal progress bars for long steps (redrawn in place on a terminal, a few lines otherwise),
// or, in the Slicer CLI modules, one rising 0..1 stream of <filter-progress> lines on stdout; and the
// run report every command can write with --report.
#pragma once

#include "canopy/Elapsed.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

namespace canopy::app
{

/** Where progress goes: bars on stderr (the canopy command line) or Slicer Execution Model
 * `<filter-progress>F</filter-progress>` lines on stdout (the CLI modules), chosen once per process. */
enum class ProgressOutput
{
  TerminalBars,
  SlicerFilterProgress
};
/** Also starts a new Slicer progress stream (the next value printed may be 0 again). */
void
SetProgressOutput(ProgressOutput output);
ProgressOutput
GetProgressOutput();

/** The share [begin, end] of the whole run that one step covers; with Slicer output a step's 0..1
 * is mapped into it, so the run's progress rises from 0 to 1 over all its steps. */
struct ProgressShare
{
  double begin = 0.0;
  double end = 1.0;
};

/** With Slicer output, prints `<filter-progress>F</filter-progress>` (flushed) when F exceeds the last value printed by
 * this process by at least 0.005, or is 1; values never decrease. Nothing with terminal bars. */
void
ReportSlicerProgress(double fraction);

class ProgressBar
{
public:
  explicit ProgressBar(std::string label, bool quiet = false, ProgressShare share = {});
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
  ProgressShare                         m_Share;
  std::chrono::steady_clock::time_point m_Start;
};

/** Collects what a run did; written atomically as JSON when --report is given. */
class RunReport
{
public:
  RunReport(const std::string & command);
  nlohmann::json & operator[](const std::string & key) { return m_Json[key]; }
  void             Write(const std::string & path);

private:
  nlohmann::json                        m_Json;
  std::chrono::steady_clock::time_point m_Start;
};

using canopy::SecondsSince; // canopy/Elapsed.h

} // namespace canopy::app
