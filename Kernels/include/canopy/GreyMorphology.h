// Grey-level morphology with a box (the product of one window per axis), separable and linear in the
// volume whatever the box (van Herk / Gil-Werman running extrema), on the host. Used by the filter
// bank's closing and black top-hat channels (a dark valley narrower than the box, such as a sulcus
// between two bright banks of cortex, is filled by the closing and stands out in the top-hat) and by
// the forest's boundary-band sampling (a voxel whose box holds two labels lies near a boundary).
#pragma once

#include <cstdint>

namespace canopy
{

/** A volume's grid for the box filters: x fastest; `radius[a]` voxels each side along axis a (0: the
 * axis is not filtered, e.g. z in 2D). */
struct BoxGrid
{
  int nx = 1, ny = 1, nz = 1;
  int radius[3] = { 0, 0, 0 };

  std::int64_t Voxels() const { return std::int64_t(nx) * ny * nz; }

  /** `radius` voxels each side along every axis, except z of a planar grid (nz == 1). */
  static BoxGrid Cube(int nx, int ny, int nz, int radius)
  {
    BoxGrid box;
    box.nx = nx;
    box.ny = ny;
    box.nz = nz;
    box.radius[0] = box.radius[1] = radius;
    box.radius[2] = nz == 1 ? 0 : radius;
    return box;
  }
};

/** out[v] = the maximum (`maximum`) or minimum of `in` over the box around v, clipped to the grid.
 * `out` may be `in`. `threads` CPU threads (<= 0: ITK's global default); the result does not depend
 * on them. */
void
BoxExtremum(const float * in, float * out, const BoxGrid & grid, bool maximum, int threads = 0);

/** Grey closing (the box maximum, then the box minimum): fills dark structures narrower than the box
 * and keeps brighter ones. out >= in everywhere; `out` may be `in`. */
void
GreyClosing(const float * in, float * out, const BoxGrid & grid, int threads = 0);

/** The box's half-widths in voxels for a radius in mm: round(radiusMm / spacing), at least 1, on the
 * first `dimension` axes (0 beyond). */
BoxGrid
BoxGridForRadius(int nx, int ny, int nz, int dimension, const double spacing[3], double radiusMm);

} // namespace canopy
