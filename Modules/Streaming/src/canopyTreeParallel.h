// Parallel loops over a forest's trees (or members) on a persistent TBB arena. A batch of 1000
// instances is a few microseconds to tens of microseconds of work per tree (ADWIN: ~10 µs per member),
// so the loop's dispatch must cost microseconds: ITK's pool threader, made per call as ParallelFor.h
// does, costs ~70 µs a call on 2 cores and more on 16, a TBB arena ~3 µs (measured on the dev machine).
// Results never depend on the split: every body writes only its own tree's or member's state.
#pragma once

#include "itkMultiThreaderBase.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <memory>

namespace canopy::streaming::detail
{

class TreeParallel
{
public:
  /** threads <= 0: ITK's global default, so ITK's thread setting governs as for the other CPU loops. */
  explicit TreeParallel(int threads)
    : m_Workers(threads > 0 ? threads : int(itk::MultiThreaderBase::GetGlobalDefaultNumberOfThreads()))
  {
    if (m_Workers > 1)
      m_Arena = std::make_unique<tbb::task_arena>(m_Workers);
  }

  int Workers() const { return m_Workers; }

  /** Calls body(i) for every i in [0, count), in parallel over the arena's workers, one task per i: the
   * bodies are few (trees) and long, so chunks of several would leave workers idle at a batch's end. */
  template<typename Body>
  void For(int count, Body && body)
  {
    if (!m_Arena || count <= 1)
    {
      for (int i = 0; i < count; ++i)
        body(i);
      return;
    }
    m_Arena->execute(
      [&] { tbb::parallel_for(0, count, 1, [&](int i) { body(i); }, tbb::simple_partitioner()); });
  }

  /** For, with each i on the worker that ran it in the last call where the scheduler allows (TBB's
   * affinity partitioner): a tree's nodes, statistics and monitor stay in that core's cache from one
   * batch to the next instead of moving between cores. */
  template<typename Body>
  void ForSameWorkers(int count, Body && body)
  {
    if (!m_Arena || count <= 1)
    {
      For(count, body);
      return;
    }
    m_Arena->execute(
      [&]
      {
        tbb::parallel_for(
          tbb::blocked_range<int>(0, count, 1),
          [&](const tbb::blocked_range<int> & r)
          {
            for (int i = r.begin(); i < r.end(); ++i)
              body(i);
          },
          m_Affinity);
      });
  }

  /** Runs first() and second() (from inside a For body), second offered to idle workers while this
   * thread runs first (whose data it has in cache); both are done on return. One thread: in order. */
  template<typename First, typename Second>
  void Both(First && first, Second && second)
  {
    if (!m_Arena)
    {
      first();
      second();
      return;
    }
    tbb::task_group group;
    group.run([&] { second(); });
    first();
    group.wait();
  }

private:
  int                              m_Workers;
  std::unique_ptr<tbb::task_arena> m_Arena;
  tbb::affinity_partitioner        m_Affinity; // ForSameWorkers' record of which worker ran what
};

} // namespace canopy::streaming::detail
