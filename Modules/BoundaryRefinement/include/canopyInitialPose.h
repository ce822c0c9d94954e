// The initial pose of shape segmentation (issue 10 part 5): where the mean mesh is placed before
// refinement, from a detected pose (poses.json of `canopy detect`, issue 9) or from a label map
// (experiments until the detector lands: such runs are not fully automatic).
//
// This file holds its own small poses.json reader and label-pose computation, isolated so that both
// can be swapped for the pose-detection module's (canopyStructurePose.h on the detector branch) when
// it is merged. The conventions are the detector's: centre = centroid of the voxel centres (LPS mm);
// axes = eigenvectors of their covariance, largest variance first, axes 0 and 1 pointing to the
// positive side of the LPS axis they are closest to, axis 2 = axis 0 x axis 1; size_a = q99.9 - q0.1 of
// the projections on axis a plus one voxel's extent along a.
#pragma once

#include "canopyShapeModel.h"
#include "canopySurfaceMetrics.h" // LabelImage

#include <string>

namespace canopy
{
/** An oriented box: centre (LPS mm), unit axes as rows (right-handed), full size along each axis (mm). */
struct OrientedBox
{
  Eigen::Vector3d centerMm = Eigen::Vector3d::Zero();
  Eigen::Matrix3d axes = Eigen::Matrix3d::Identity();
  Eigen::Vector3d sizeMm = Eigen::Vector3d::Ones();
};

/** The box of the voxels equal to `label` (conventions above). canopy::Error "<where>: label L is
 * absent" when no voxel has it. */
OrientedBox
BoxOfLabel(const LabelImage * labels, int label, const std::string & where);

/** The box of the model's mean shape (finest level, model frame), measured like a label: the mean mesh
 * voxelised on a 0.5 mm grid. */
OrientedBox
BoxOfModel(const ShapeModel & model);

/** The similarity taking the model's box onto `target`: rotation of the model's axes onto the
 * target's, isotropic scale = geometric mean of the size ratios, centres matched. With
 * useAxes = false the rotation is the identity (the model frame's LPS axes are kept). */
Similarity
PoseFromBoxes(const OrientedBox & model, const OrientedBox & target, bool useAxes = true);

/** The entry of `structure` in a poses.json ({"structures": [{"name", "found", "center_mm", "axes",
 * "size_mm", "score", "seconds"}]}). canopy::Error naming the file and the field for a malformed file,
 * a structure that is absent, or one with "found": false. */
OrientedBox
ReadDetectedBox(const std::string & path, const std::string & structure, double * score = nullptr);

/** canopy::Error naming `what` when the model's mean mesh at `pose` lies entirely outside the
 * physical box of `image`, or the pose is degenerate (non-finite, scale <= 0). */
void
CheckPoseInsideImage(const ShapeModel &        model,
                     const Similarity &        pose,
                     const itk::ImageBase<3> * image,
                     const std::string &       what);
} // namespace canopy
