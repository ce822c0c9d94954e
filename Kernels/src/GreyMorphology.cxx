#include "canopy/GreyMorphology.h"

#include "ParallelFor.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace canopy
{
namespace
{

/** The window [lo, hi] of value i, clipped to a line of n values, as the extremum of two prefix
 * extrema (the window is at most one block of 2r + 1 long, so it spans at most two blocks). Over two
 * blocks: backward[lo] (lo to its block's end) and forward[hi] (the next block's start to hi). Within
 * one block: forward[hi] twice when lo starts the block, else backward[lo] twice (then hi is the
 * line's last value). */
struct WindowParts
{
  bool firstForward, secondForward; // forward (else backward) prefix extrema
  int  first, second;               // their indices along the line
};

inline WindowParts
ClippedWindow(int i, int n, int r)
{
  const int block = 2 * r + 1;
  const int lo = std::max(0, i - r), hi = std::min(n - 1, i + r);
  if (lo / block != hi / block)
    return { false, true, lo, hi };
  if (lo % block == 0)
    return { true, true, hi, hi };
  return { false, false, lo, lo };
}

/** The indices of the clipped windows at the ends of a line of n values, [0, r) and [n - r, n), each
 * once; the windows between are whole blocks: backward[i - r] and forward[i + r], wherever they lie. */
template<typename Visit>
void
ForEachClippedWindow(int n, int r, Visit visit)
{
  const int left = std::min(r, n);
  for (int i = 0; i < left; ++i)
    visit(i);
  for (int i = std::max(left, n - r); i < n; ++i)
    visit(i);
}

/** The running extremum of one contiguous line of `n` values over windows [i - r, i + r] clipped to
 * the line: van Herk / Gil-Werman with blocks of 2r + 1, the prefix extremum within each block from
 * the left (`forward`) and from the right (`backward`), three comparisons per value. */
template<typename Better>
void
LineExtremum(float * line, int n, int r, Better better, std::vector<float> & forward, std::vector<float> & backward)
{
  if (r <= 0 || n <= 1)
    return;
  const int block = 2 * r + 1;
  forward.resize(n);
  backward.resize(n);
  for (int start = 0; start < n; start += block)
  {
    const int end = std::min(n, start + block);
    forward[start] = line[start];
    for (int i = start + 1; i < end; ++i)
      forward[i] = better(forward[i - 1], line[i]);
    backward[end - 1] = line[end - 1];
    for (int i = end - 2; i >= start; --i)
      backward[i] = better(backward[i + 1], line[i]);
  }
  for (int i = r; i < n - r; ++i)
    line[i] = better(backward[i - r], forward[i + r]);
  ForEachClippedWindow(n,
                       r,
                       [&](int i)
                       {
                         const auto part = ClippedWindow(i, n, r);
                         line[i] = better((part.firstForward ? forward : backward)[part.first],
                                          (part.secondForward ? forward : backward)[part.second]);
                       });
}

/** LineExtremum for `width` adjacent lines at once: line j holds base[j + i * stride], i in [0, n).
 * A row of `width` values at a time, so the y and z passes read whole cache lines and the inner loops
 * vectorise over j (one line at a time, every value of a z line lies in another cache line and page). */
template<typename Better>
void
BundleExtremum(float *              base,
               std::int64_t         stride,
               int                  n,
               int                  width,
               int                  r,
               Better               better,
               std::vector<float> & forward,
               std::vector<float> & backward)
{
  if (r <= 0 || n <= 1)
    return;
  const int         block = 2 * r + 1;
  const std::size_t w = std::size_t(width);
  forward.resize(std::size_t(n) * w);
  backward.resize(std::size_t(n) * w);
  const auto row = [&](std::vector<float> & rows, int i) { return rows.data() + std::size_t(i) * w; };
  const auto combine = [&](float * out, const float * b, const float * f)
  {
    for (std::size_t j = 0; j < w; ++j)
      out[j] = better(b[j], f[j]);
  };
  for (int start = 0; start < n; start += block)
  {
    const int end = std::min(n, start + block);
    std::copy(base + start * stride, base + start * stride + w, row(forward, start));
    for (int i = start + 1; i < end; ++i)
      combine(row(forward, i), row(forward, i - 1), base + i * stride);
    std::copy(base + (end - 1) * stride, base + (end - 1) * stride + w, row(backward, end - 1));
    for (int i = end - 2; i >= start; --i)
      combine(row(backward, i), row(backward, i + 1), base + i * stride);
  }
  for (int i = r; i < n - r; ++i)
    combine(base + i * stride, row(backward, i - r), row(forward, i + r));
  ForEachClippedWindow(n,
                       r,
                       [&](int i)
                       {
                         const auto part = ClippedWindow(i, n, r);
                         combine(base + i * stride,
                                 row(part.firstForward ? forward : backward, part.first),
                                 row(part.secondForward ? forward : backward, part.second));
                       });
}

/** Lines per bundle in the y and z passes: a worker's scratch is 2 x 1,024 x n floats (1.5 MB for a
 * 181-voxel axis), about one core's L2 cache. */
constexpr int kBundleWidth = 1024;

template<typename Better>
void
Extremum(float * v, const BoxGrid & g, int threads, Better better)
{
  const std::int64_t plane = std::int64_t(g.nx) * g.ny;
  // Every pass splits into independent pieces (rows; x-runs of one z plane; runs of xy columns), so
  // the workers share nothing but the volume, and each piece's result does not depend on the split.
  if (g.radius[0] > 0)
    detail::ParallelForChunks(std::int64_t(g.ny) * g.nz,
                              threads,
                              [&](std::int64_t begin, std::int64_t end)
                              {
                                std::vector<float> forward, backward;
                                for (std::int64_t row = begin; row < end; ++row)
                                  LineExtremum(v + row * g.nx, g.nx, g.radius[0], better, forward, backward);
                              });
  if (g.radius[1] > 0)
  {
    const std::int64_t runs = (g.nx + kBundleWidth - 1) / kBundleWidth;
    detail::ParallelForChunks(runs * g.nz,
                              threads,
                              [&](std::int64_t begin, std::int64_t end)
                              {
                                std::vector<float> forward, backward;
                                for (std::int64_t piece = begin; piece < end; ++piece)
                                {
                                  const std::int64_t z = piece / runs, x = (piece % runs) * kBundleWidth;
                                  const int          width = int(std::min<std::int64_t>(kBundleWidth, g.nx - x));
                                  BundleExtremum(
                                    v + z * plane + x, g.nx, g.ny, width, g.radius[1], better, forward, backward);
                                }
                              });
  }
  if (g.radius[2] > 0)
  {
    const std::int64_t runs = (plane + kBundleWidth - 1) / kBundleWidth;
    detail::ParallelForChunks(runs,
                              threads,
                              [&](std::int64_t begin, std::int64_t end)
                              {
                                std::vector<float> forward, backward;
                                for (std::int64_t piece = begin; piece < end; ++piece)
                                {
                                  const std::int64_t xy = piece * kBundleWidth;
                                  const int          width = int(std::min<std::int64_t>(kBundleWidth, plane - xy));
                                  BundleExtremum(v + xy, plane, g.nz, width, g.radius[2], better, forward, backward);
                                }
                              });
  }
}

} // namespace

void
BoxExtremum(const float * in, float * out, const BoxGrid & grid, bool maximum, int threads)
{
  if (out != in)
    std::copy(in, in + grid.Voxels(), out);
  if (maximum)
    Extremum(out, grid, threads, [](float a, float b) { return std::max(a, b); });
  else
    Extremum(out, grid, threads, [](float a, float b) { return std::min(a, b); });
}

void
GreyClosing(const float * in, float * out, const BoxGrid & grid, int threads)
{
  BoxExtremum(in, out, grid, true, threads);
  BoxExtremum(out, out, grid, false, threads);
}

BoxGrid
BoxGridForRadius(int nx, int ny, int nz, int dimension, const double spacing[3], double radiusMm)
{
  BoxGrid g;
  g.nx = nx;
  g.ny = ny;
  g.nz = nz;
  for (int a = 0; a < dimension && a < 3; ++a)
    g.radius[a] = std::max(1, int(std::lround(radiusMm / spacing[a])));
  return g;
}

} // namespace canopy
