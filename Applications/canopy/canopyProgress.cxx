#include "canopyProgress.h"

#include "canopy/AtomicFile.h"
#include "canopy/Elapsed.h"
#include "canopyConfigure.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <mutex>

namespace canopy::app
{
namespace
{
std::atomic<ProgressOutput> g_ProgressOutput{ ProgressOutput::TerminalBars };
std::mutex                  g_SlicerProgressMutex;
double                      g_LastSlicerProgress = -1.0;
} // namespace

void
SetProgressOutput(ProgressOutput output)
{
  g_ProgressOutput = output;
  std::lock_guard<std::mutex> lock(g_SlicerProgressMutex);
  g_LastSlicerProgress = -1.0; // a new run's progress starts again from 0
}

ProgressOutput
GetProgressOutput()
{
  return g_ProgressOutput;
}

void
ReportSlicerProgress(double fraction)
{
  if (GetProgressOutput() != ProgressOutput::SlicerFilterProgress)
  {
    return;
  }
  fraction = fraction < 0 ? 0 : (fraction > 1 ? 1 : fraction);
  std::lock_guard<std::mutex> lock(g_SlicerProgressMutex);
  // Slicer's progress bar only moves forward; a small step is not worth a line.
  if (fraction < g_LastSlicerProgress + 0.005 && !(fraction == 1.0 && g_LastSlicerProgress < 1.0))
  {
    return;
  }
  g_LastSlicerProgress = fraction;
  char line[64];
  std::snprintf(line, sizeof(line), "<filter-progress>%.4f</filter-progress>\n", fraction);
  std::cout << line << std::flush;
}

ProgressBar::ProgressBar(std::string label, bool quiet, ProgressShare share)
  : m_Label(std::move(label))
  , m_Quiet(quiet)
  , m_Terminal(::isatty(STDERR_FILENO) != 0)
  , m_Share(share)
  , m_Start(std::chrono::steady_clock::now())
{
}

ProgressBar::~ProgressBar()
{
  Finish();
}

void
ProgressBar::Update(double fraction, const std::string & stage)
{
  if (m_Finished)
  {
    return;
  }
  fraction = fraction < 0 ? 0 : (fraction > 1 ? 1 : fraction);
  if (GetProgressOutput() == ProgressOutput::SlicerFilterProgress) // the protocol, not decoration: never quiet
  {
    ReportSlicerProgress(m_Share.begin + fraction * (m_Share.end - m_Share.begin));
    return;
  }
  if (m_Quiet)
  {
    return;
  }
  const int percent = static_cast<int>(fraction * 100.0);
  // Off a terminal (logs, CI), print every 25% only.
  if (percent == m_LastPercent || (!m_Terminal && percent / 25 == m_LastPercent / 25 && m_LastPercent >= 0))
  {
    return;
  }
  m_LastPercent = percent;
  constexpr int width = 30;
  const int     filled = static_cast<int>(fraction * width);
  char          line[256];
  std::snprintf(line,
                sizeof(line),
                "%-18s [%.*s%*s] %3d%% %6.1fs %s",
                m_Label.c_str(),
                filled,
                "##############################",
                width - filled,
                "",
                percent,
                SecondsSince(m_Start),
                stage.substr(0, 40).c_str());
  if (m_Terminal)
  {
    std::cerr << '\r' << line << "\x1b[K" << std::flush;
  }
  else
  {
    std::cerr << line << '\n';
  }
}

void
ProgressBar::Finish()
{
  if (GetProgressOutput() == ProgressOutput::SlicerFilterProgress && !m_Finished)
  {
    Update(1.0);
    m_Finished = true;
    return;
  }
  if (m_Finished || m_Quiet)
  {
    m_Finished = true;
    return;
  }
  Update(1.0);
  m_Finished = true;
  if (m_Terminal)
  {
    std::cerr << '\n';
  }
}

RunReport::RunReport(const std::string & command)
  : m_Start(std::chrono::steady_clock::now())
{
  const std::time_t now = std::time(nullptr);
  char              date[64];
  std::strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  m_Json["command"] = command;
  m_Json["canopyVersion"] = CANOPY_VERSION_STRING;
  m_Json["started"] = date;
  m_Json["host"] = host;
}

void
RunReport::Write(const std::string & path)
{
  m_Json["wallSeconds"] = SecondsSince(m_Start);
  const std::string text = m_Json.dump(2);
  WriteFileAtomically(path, [&text](std::ostream & out) { out << text << '\n'; });
}

} // namespace canopy::app
