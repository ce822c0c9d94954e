// CPU parallel loops on ITK's threader, so ITK's global thread setting (and benchmarks' 1-thread
// runs) govern every CPU kernel.
#pragma once

#include "itkMultiThreaderBase.h"

#include <algorithm>
#include <cstdint>

namespace canopy::detail
{

/** Calls body(begin, end) on disjoint chunks covering [0, count). threads <= 0: ITK's default. */
template <typename TBody>
void
ParallelForChunks(std::int64_t count, int threads, TBody && body)
{
  if (count <= 0)
  {
    return;
  }
  auto threader = itk::MultiThreaderBase::New();
  const int workers = threads > 0 ? threads : static_cast<int>(threader->GetGlobalDefaultNumberOfThreads());
  if (workers <= 1 || count == 1)
  {
    body(std::int64_t{ 0 }, count);
    return;
  }
  threader->SetMaximumNumberOfThreads(workers);
  threader->SetNumberOfWorkUnits(workers);
  // Several chunks per worker balance uneven work; ParallelizeArray hands out one index per call.
  const std::int64_t chunks = std::min<std::int64_t>(count, static_cast<std::int64_t>(workers) * 8);
  threader->ParallelizeArray(
    0,
    static_cast<itk::SizeValueType>(chunks),
    [&](itk::SizeValueType chunk) {
      const std::int64_t begin = count * static_cast<std::int64_t>(chunk) / chunks;
      const std::int64_t end = count * static_cast<std::int64_t>(chunk + 1) / chunks;
      body(begin, end);
    },
    nullptr);
}

} // namespace canopy::detail
