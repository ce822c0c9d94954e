// The reference pose of forest pose channels ("pose:0..2", issue 13): per volume, the pose of a named
// structure (centre, axes, extents; canopyStructurePose.h) from a ground-truth label map (training
// only), a poses.json written by `canopy detect` (one file, or a folder of NAME.poses.json as `detect
// --output-dir` writes them), or a pose detector run on the volume. Shared by train-forest and
// predict-forest so that both turn poses into the same frame.
#pragma once

#include "canopy/Device.h"
#include "canopy/ReferenceFrame.h"
#include "canopyStructurePose.h"
#include "itkImage.h"

#include <string>

namespace canopy::app
{

struct ReferencePoseOptions
{
  std::string structure;  // --reference-structure: the structure's name in poses files and detectors
  std::string poses;      // --reference-poses: a poses.json, or a folder of <volume stem>.poses.json
  std::string detector;   // --reference-detector: a detector model run on each volume
  int         label = -1; // --reference-label (training volumes): > 0 that label, 0 the union of labels > 0
  bool        Detected() const { return !poses.empty() || !detector.empty(); }
  bool        Any() const { return Detected() || label >= 0; }
};

/** The frame of a pose: its centre and axes, half its size per axis (so +-1 at the box's faces). */
ReferenceFrame
ReferenceFrameOf(const StructurePose & pose);

/** The poses file of `volume` under --reference-poses: the option itself when it is a file, else the
 * folder's <volume name without its image extension>.poses.json. */
std::string
ReferencePosesFile(const std::string & poses, const std::string & volume);

/** The ground-truth pose of a label map (voxel values rounded): of label `label`, or of every voxel > 0
 * when `label` is 0. `where` names the file in errors (an absent label). */
StructurePose
ReferencePoseFromLabels(const itk::Image<float, 3> * labels, int label, const std::string & where);

/** The detected pose of options.structure for the volume `path` (`image`, already read): from
 * --reference-poses or --reference-detector (on `backend`). canopy::Error naming the file when the
 * structure is missing or was not found (no made-up pose). */
StructurePose
DetectedReferencePose(const ReferencePoseOptions & options,
                      const std::string &          path,
                      const itk::Image<float, 3> * image,
                      const ResolvedBackend &      backend);

} // namespace canopy::app
