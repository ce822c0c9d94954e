// Grid comparison shared by the metrics, augmentation and snapshot code: images that are combined
// voxel by voxel must share size, spacing, origin and direction.
#pragma once

#include "itkImageBase.h"

#include <string>

namespace canopy
{

/** Empty when a and b have the same size, spacing, origin and direction (each within 1e-6);
 * otherwise a sentence naming the first mismatch and both values. */
std::string
DescribeGridMismatch(const itk::ImageBase<3> * a, const itk::ImageBase<3> * b);

/** Throws canopy::Error "<context>: <nameA> and <nameB> differ in ..." when the grids differ (or an image is null). */
void
RequireSameGrid(const itk::ImageBase<3> * a, const itk::ImageBase<3> * b, const std::string & context,
                const std::string & nameA, const std::string & nameB);

} // namespace canopy
