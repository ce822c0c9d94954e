#include "canopy/RecursiveGaussian.h"

#include "ParallelFor.h"

#include <vector>

namespace canopy
{

void
RecursiveGaussianPassCPU(const float *                         in,
                         float *                               out,
                         const VolumeLines &                   lines,
                         const RecursiveGaussianCoefficients & coefficients,
                         int                                   threads)
{
  const int          length = lines.Length();
  const std::int64_t stride = lines.Stride();
  detail::ParallelForChunks(lines.Count(),
                            threads,
                            [&](std::int64_t begin, std::int64_t end)
                            {
                              std::vector<double> causal(length);
                              for (std::int64_t line = begin; line < end; ++line)
                              {
                                const std::int64_t start = lines.Start(line);
                                RecursiveGaussianLine(
                                  in + start, out + start, causal.data(), stride, 1, length, coefficients);
                              }
                            });
}

} // namespace canopy
