// The initial pose of shape segmentation (issue 10 part 5): where the mean mesh is placed before
// refinement. Poses are those of the pose-detection module (canopyStructurePose.h, issue 9): a
// detector's poses.json, a detector run on the input, or a label map (PoseFromLabel; experiments, not
// fully automatic). This file only maps the model's mean shape onto such a pose.
#pragma once

#include "canopyShapeModel.h"
#include "canopyStructurePose.h"

#include <string>
#include <vector>

namespace canopy
{
/** The pose of the model's mean shape (finest level, model frame), measured like a label
 * (PoseFromLabel): the mean mesh voxelised on a 0.5 mm grid. */
StructurePose
PoseOfModel(const ShapeModel & model);

/** The similarity taking the model's pose onto `target`: rotation of the model's axes onto the
 * target's (both under CanonicalAxes' sign convention), isotropic scale = geometric mean of the size
 * ratios, centres matched. With useAxes = false the rotation is the identity (the model frame's LPS
 * axes are kept). */
Similarity
SimilarityBetweenPoses(const StructurePose & model, const StructurePose & target, bool useAxes = true);

/** The pose of `structure` among `detected` (a poses.json or a detector's output); `score` receives its
 * detection score. canopy::Error starting with `where` when no entry has that name, or when the
 * detector did not find it ("found": false): no made-up pose. */
StructurePose
FoundPose(const std::vector<DetectedStructure> & detected,
          const std::string &                    structure,
          const std::string &                    where,
          double *                               score = nullptr);

/** canopy::Error naming `what` when the model's mean mesh at `pose` lies entirely outside the
 * physical box of `image`, or the pose is degenerate (non-finite, scale <= 0). */
void
CheckPoseInsideImage(const ShapeModel &        model,
                     const Similarity &        pose,
                     const itk::ImageBase<3> * image,
                     const std::string &       what);
} // namespace canopy
