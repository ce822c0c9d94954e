// The bookkeeping of one member of an adaptive random forest that does not depend on where its trees
// live: its test results since its tree started (the vote weight), the ADWIN warning and drift
// detectors on its errors, and the keys of the trees it starts. The CPU forest and the CUDA forest
// feed it the same batch results in stream order, so they replace the same trees at the same time.
#pragma once

#include "canopy/Errors.h"
#include "canopyAdwin.h"

#include <cstdint>

namespace canopy::streaming
{

struct DriftSettings
{
  bool   driftDetection = true;
  bool   backgroundTrees = true;
  double warningDelta = 0.01;
  double driftDelta = 0.001;
};

/** What a monitor holds besides its settings (for saving a model). */
struct MemberMonitorState
{
  std::uint64_t seen = 0, correct = 0, generation = 0;
  std::int64_t  drifts = 0, warnings = 0;
  bool          background = false;
  AdwinState    warning, drift;
};

/** Aligned to cache lines: the device forest keeps its members' monitors in one array and updates them
 * on many threads at once. */
class alignas(64) ForestMemberMonitor
{
public:
  explicit ForestMemberMonitor(const DriftSettings & settings)
    : m_Settings(settings)
    , m_Warning(Detector(settings.warningDelta))
    , m_Drift(Detector(settings.driftDelta))
  {
  }

  /** The member's accuracy since its tree started (0 before any test): its vote weight. */
  double Accuracy() const { return m_Seen > 0 ? double(m_Correct) / double(m_Seen) : 0.0; }
  bool   HasBackground() const { return m_Background; }

  /** The stream key of the member's next tree (tree index, generation): it keys the subspace draws. */
  std::uint64_t NextTreeKey(int member) { return (std::uint64_t(member) << 32) | m_Generation++; }

  /** Feeds a batch's test results (correct[i] != 0: the member's tree was right) in stream order.
   * startBackground() is called when the warning detector finds the error rose without a background
   * tree, replace(hasBackground) when the drift detector does (the background tree, if any, replaces the
   * tree; else a fresh one). The trees learnt the whole batch before; new trees learn from the next. */
  template<typename StartBackground, typename Replace>
  void ObserveBatch(const std::uint8_t * correct, std::size_t n, StartBackground startBackground, Replace replace)
  {
    // A run at a time: the detectors take the results up to the next check that would cut (Adwin::
    // AppendRun), and only such a check is handled here, as one result at a time would: the warning's
    // event before the drift's at the same result, and after a drift the rest go to the new detectors.
    std::size_t i = 0;
    while (i < n)
    {
      if (!m_Settings.driftDetection)
      {
        Count(correct + i, n - i);
        return;
      }
      if (m_Twins)
      {
        // Both detectors hold the same window: one update, and at a check one scan with the warning's
        // bound, which every cut the drift detector's (larger) bound allows also passes. A cut parts them.
        const Adwin::Run run = m_Drift.AppendRun(correct + i, n - i, m_Settings.warningDelta);
        Count(correct + i, run.appended);
        i += run.appended;
        if (!run.cutDue)
          continue;
        m_Warning = m_Drift.WithDelta(m_Settings.warningDelta);
        m_Twins = false;
        const bool warningRose = m_Warning.Check() && m_Warning.Mean() > run.meanBefore;
        const bool driftRose = m_Drift.Check() && m_Drift.Mean() > run.meanBefore;
        Handle(warningRose, driftRose, startBackground, replace);
        continue;
      }
      // Two windows: the drift detector up to its next cut, the warning detector through the same
      // results, handling each of its cuts (one at the drift's result first, as one at a time would).
      const Adwin::Run  drift = m_Drift.AppendRun(correct + i, n - i, m_Settings.driftDelta);
      const std::size_t end = i + drift.appended;
      for (std::size_t w = i; m_Settings.backgroundTrees && w < end;)
      {
        const Adwin::Run warning = m_Warning.AppendRun(correct + w, end - w, m_Settings.warningDelta);
        w += warning.appended;
        if (!warning.cutDue)
          break;
        Handle(m_Warning.Check() && m_Warning.Mean() > warning.meanBefore, false, startBackground, replace);
      }
      Count(correct + i, drift.appended);
      i = end;
      Handle(false, drift.cutDue && m_Drift.Check() && m_Drift.Mean() > drift.meanBefore, startBackground, replace);
    }
  }

  std::int64_t Drifts() const { return m_Drifts; }
  std::int64_t Warnings() const { return m_Warnings; }

  MemberMonitorState State() const
  {
    return { m_Seen,
             m_Correct,
             m_Generation,
             m_Drifts,
             m_Warnings,
             m_Background,
             m_Twins ? m_Drift.State() : m_Warning.State(), // twins: the warning detector's window is the drift's
             m_Drift.State() };
  }
  /** Throws canopy::Error for a state no monitor could hold (Adwin::Restore's checks, correct > seen). */
  void Restore(const MemberMonitorState & s)
  {
    if (s.correct > s.seen || s.drifts < 0 || s.warnings < 0)
      CANOPY_THROW("forest member state: " << s.correct << " correct of " << s.seen << " seen, " << s.drifts
                                           << " drifts, " << s.warnings << " warnings");
    m_Warning.Restore(s.warning);
    m_Drift.Restore(s.drift);
    m_Seen = s.seen;
    m_Correct = s.correct;
    m_Generation = s.generation;
    m_Drifts = s.drifts;
    m_Warnings = s.warnings;
    m_Background = s.background;
    m_Twins = false; // two detectors again (equal windows or not: the same decisions either way)
  }

private:
  /** The detectors see 0/1 errors: Binary (exact variance sums, the same on the GPU's step). */
  static Adwin Detector(double delta) { return Adwin(delta, 5, 32, AdwinValues::Binary); }

  void Count(const std::uint8_t * correct, std::size_t n)
  {
    m_Seen += n;
    for (std::size_t i = 0; i < n; ++i)
      m_Correct += correct[i] != 0 ? 1 : 0;
  }

  /** A change ADWIN detects counts only when the error went up (MOA's ADWINChangeDetector): a tree
   * that got better is not replaced (a fresh tree improves fast, and would be replaced again). The
   * warning's rise starts a background tree (if none), the drift's replaces the tree. */
  template<typename StartBackground, typename Replace>
  void Handle(bool warningRose, bool driftRose, StartBackground & startBackground, Replace & replace)
  {
    if (warningRose && !m_Background)
    {
      ++m_Warnings;
      m_Background = true;
      startBackground();
      m_Warning = Detector(m_Settings.warningDelta);
    }
    if (driftRose)
    {
      ++m_Drifts;
      replace(m_Background);
      m_Background = false;
      m_Warning = Detector(m_Settings.warningDelta);
      m_Drift = Detector(m_Settings.driftDelta);
      m_Twins = TwinsAllowed();
      m_Seen = 0;
      m_Correct = 0;
    }
  }

  /** Whether the detectors may share one window while neither has cut since both started: background
   * trees on (else the warning detector sees nothing), and the warning's delta at least twice the
   * drift's, so the warning's computed bound is the smaller one despite the logarithms' rounding. */
  bool TwinsAllowed() const
  {
    return m_Settings.driftDetection && m_Settings.backgroundTrees &&
           m_Settings.warningDelta >= 2.0 * m_Settings.driftDelta;
  }

  DriftSettings m_Settings;
  // While m_Twins, m_Drift holds both detectors' window (it is the same: windows change alike until a
  // detector cuts) and m_Warning is unused; the first cut found gives m_Warning its own copy.
  Adwin         m_Warning, m_Drift;
  bool          m_Twins = TwinsAllowed();
  std::uint64_t m_Seen = 0, m_Correct = 0, m_Generation = 0;
  std::int64_t  m_Drifts = 0, m_Warnings = 0;
  bool          m_Background = false;
};

} // namespace canopy::streaming
