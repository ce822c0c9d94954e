// Filter-bank channels for forest features (Sharp §2.2-2.3): each input component is filtered before
// integration into Gaussian-smoothed intensity, gradient magnitude and Laplacian of Gaussian at chosen
// scales, with ITK's recursive Gaussian filters. The bank's names are stored in the model
// (ForestModel::filterBank), so prediction recomputes exactly the channels training used.
#pragma once

#include "canopy/Device.h"
#include "canopy/FilterBank.h"
#include "itkImage.h"

#include <string>
#include <vector>

namespace canopy
{

/** One channel: "intensity" (the component as is), "gaussian:S", "gradient:S" (gradient magnitude
 * of Gaussian) or "log:S" (Laplacian of Gaussian), S the Gaussian sigma in physical units (mm);
 * "closing:R" (grey closing with a box of half-width R mm, canopy/GreyMorphology.h) or "tophat:R"
 * (black top-hat: the closing minus the intensity, large in dark valleys narrower than 2R, such as a
 * sulcus between two banks of cortex, which box means of the intensity blur away); or
 * "position:x|y|z", the voxel's index along that axis over the image's extent, scaled to [0, 1] (0 on
 * an axis of one voxel, and for z in 2D). Position channels make a box mean the box centre's place in
 * the image: they help where images share a field of view and orientation (cropped datasets such as
 * MSD's, or volumes cropped to a reference frame) and mislead where they do not.
 * "pose:0|1|2": the voxel's coordinate along axis 0, 1 or 2 of a reference pose (a structure's centre,
 * principal axes and extents, canopy/ReferenceFrame.h), -1 and +1 at the faces of its oriented box:
 * the place relative to the anatomy, whatever the field of view. 3D only; the pose comes per volume
 * (ComputeForestFilterBank's `reference`).
 * "zero": 0 everywhere. Features are differences of two box means (canopy/ForestFeature.h), so on a
 * coordinate channel alone they see only offsets (u(q + a) - u(q + b) is a constant) and between two
 * coordinate channels only u - v: a box on "zero" makes the other box's mean absolute (u itself, or an
 * intensity level), which a coordinate channel needs to say "inside the box". */
struct ForestFilterChannel : FilterBankChannelSpec // the kind, sigma (mm) and axis the bank computes
{
  /** Throws canopy::Error, prefixed by `context`, for an unknown name or a sigma that is not > 0. */
  static ForestFilterChannel Parse(const std::string & name, const std::string & context);
  std::string                Name() const;
};

/** Parses a comma-separated bank ("intensity,gaussian:1,gradient:1,log:2") into validated, canonical
 * names; an empty text gives an empty bank (raw components). "position" stands for position:x,
 * position:y and position:z, "pose" for pose:0, pose:1 and pose:2. */
std::vector<std::string>
ParseForestFilterBank(const std::string & text, const std::string & context);

/** Whether the bank has a pose channel (and so needs a reference pose per volume). */
bool
ForestBankNeedsReference(const std::vector<std::string> & bank);

/** The bank's channels of one scalar component, each a buffer over the image's buffered region (x
 * fastest), on the CPU (`threads` <= 0: ITK's default) or a GPU (canopy/FilterBank.h: ITK's
 * recursive Gaussian filters, computed by one shared line filter on either). `reference`: the volume's
 * reference pose, needed by pose channels (ignored otherwise). Throws canopy::Error for a bad name, an
 * image too small for the recursive filters, or a pose channel without a reference or in 2D. */
template<unsigned int VDimension>
std::vector<std::vector<float>>
ComputeForestFilterBank(const itk::Image<float, VDimension> * component,
                        const std::vector<std::string> &      bank,
                        const ResolvedBackend &               backend = {},
                        int                                   threads = 0,
                        const ReferenceFrame *                reference = nullptr);

} // namespace canopy
