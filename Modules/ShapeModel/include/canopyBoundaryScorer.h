// The seam between the boundary classifier (issue 10 part 2: a PBT on steerable features sampled in
// each vertex's frame) and the refinement loop (part 3), which does not depend on how scores are made.
#pragma once

#include "itk_eigen.h" // ITK's own Eigen: one Eigen in every unit that also includes ITK IO
#include ITK_EIGEN(Core)

#include <cstddef>
#include <vector>

namespace canopy
{
/** Scores candidate boundary positions along the normals of a mesh. */
class BoundaryScorer
{
public:
  virtual ~BoundaryScorer() = default;
  /** scores(j, i): how likely vertex i moved by offsetsMm[j] along its unit normal lies on the
   * boundary (higher is more likely; a PBT posterior in [0, 1]). points and normals are LPS mm,
   * 3 x n; `level` is the mesh level (a scorer may hold one classifier per level). scores is resized
   * to offsets x n. */
  virtual void Score(std::size_t                 level,
                     const Eigen::Matrix3Xd &    points,
                     const Eigen::Matrix3Xd &    normals,
                     const std::vector<double> & offsetsMm,
                     Eigen::MatrixXf &           scores) = 0;
};
} // namespace canopy
