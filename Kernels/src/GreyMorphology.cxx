#include "canopy/GreyMorphology.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace canopy
{
namespace
{

/** The running extremum of one line of `n` values (stride `stride`) over windows [i - r, i + r]
 * clipped to the line: van Herk / Gil-Werman with blocks of 2r + 1, the prefix extremum within each
 * block from the left (`forward`) and from the right (`backward`), three comparisons per value. */
template<typename Better>
void
LineExtremum(float *              line,
             std::int64_t         stride,
             int                  n,
             int                  r,
             Better               better,
             std::vector<float> & forward,
             std::vector<float> & backward)
{
  if (r <= 0 || n <= 1)
    return;
  const int block = 2 * r + 1;
  forward.resize(n);
  backward.resize(n);
  for (int i = 0; i < n; ++i)
  {
    const float v = line[i * stride];
    forward[i] = (i % block == 0) ? v : better(forward[i - 1], v);
  }
  for (int i = n - 1; i >= 0; --i)
  {
    const float v = line[i * stride];
    backward[i] = (i == n - 1 || (i + 1) % block == 0) ? v : better(backward[i + 1], v);
  }
  for (int i = 0; i < n; ++i)
  {
    // The window [lo, hi] is at most one block long, so it spans at most two blocks: then
    // backward[lo] covers lo to its block's end and forward[hi] the next block's start to hi. Within
    // one block (a whole block, or a window clipped at an end of the line) forward[hi] covers it when
    // lo starts the block, and backward[lo] otherwise (then hi is the line's last value).
    const int lo = std::max(0, i - r), hi = std::min(n - 1, i + r);
    if (lo / block != hi / block)
      line[i * stride] = better(backward[lo], forward[hi]);
    else
      line[i * stride] = lo % block == 0 ? forward[hi] : backward[lo];
  }
}

template<typename Better>
void
Extremum(float * v, const BoxGrid & g, Better better)
{
  std::vector<float> forward, backward;
  const std::int64_t plane = std::int64_t(g.nx) * g.ny;
  if (g.radius[0] > 0)
    for (std::int64_t row = 0; row < std::int64_t(g.ny) * g.nz; ++row)
      LineExtremum(v + row * g.nx, 1, g.nx, g.radius[0], better, forward, backward);
  if (g.radius[1] > 0)
    for (int z = 0; z < g.nz; ++z)
      for (int x = 0; x < g.nx; ++x)
        LineExtremum(v + z * plane + x, g.nx, g.ny, g.radius[1], better, forward, backward);
  if (g.radius[2] > 0)
    for (std::int64_t xy = 0; xy < plane; ++xy)
      LineExtremum(v + xy, plane, g.nz, g.radius[2], better, forward, backward);
}

} // namespace

void
BoxExtremum(const float * in, float * out, const BoxGrid & grid, bool maximum)
{
  if (out != in)
    std::copy(in, in + grid.Voxels(), out);
  if (maximum)
    Extremum(out, grid, [](float a, float b) { return std::max(a, b); });
  else
    Extremum(out, grid, [](float a, float b) { return std::min(a, b); });
}

void
GreyClosing(const float * in, float * out, const BoxGrid & grid)
{
  BoxExtremum(in, out, grid, true);
  BoxExtremum(out, out, grid, false);
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
