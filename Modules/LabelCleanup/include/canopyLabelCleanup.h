// Post-processing of label maps that users of segmentation tools expect: keep the largest connected
// component of each label, fill holes of each label. ITK's filters do the work; these functions apply
// them per label to a label buffer (x fastest) of any of Canopy's labellers (forest, cascade, PBT).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace canopy
{

struct LabelCleanupOptions
{
  bool largestComponent = false; // per label > 0: voxels outside its largest component become 0
  bool fillHoles = false;        // per label > 0: background (0) enclosed by the label becomes the label
  bool fullyConnected = false;   // 26- (8-) connectivity instead of 6- (4-) for components and holes

  bool Any() const { return largestComponent || fillHoles; }
  /** "none", or a comma list of largest, fill (and full for 26-connectivity); throws canopy::Error
   * naming `parameter` for anything else. */
  static LabelCleanupOptions Parse(const std::string & text, const std::string & parameter);
  std::string                Describe() const;
};

/** Applies `options` in place to labels[nx*ny*nz] (x fastest): the largest component first, then holes.
 * dimension 2 treats the buffer as an nx*ny image (nz must be 1). Labels < 1 are left alone except
 * as background that holes are filled into. */
void
CleanUpLabels(std::int32_t * labels, int nx, int ny, int nz, int dimension, const LabelCleanupOptions & options);

} // namespace canopy
