// Filter-bank channels for forest features (Sharp §2.2-2.3): each input component is filtered before
// integration into Gaussian-smoothed intensity, gradient magnitude and Laplacian of Gaussian at chosen
// scales, with ITK's recursive Gaussian filters. The bank's names are stored in the model
// (ForestModel::filterBank), so prediction recomputes exactly the channels training used.
#pragma once

#include "itkImage.h"

#include <string>
#include <vector>

namespace canopy
{

/** One channel: "intensity" (the component as is), "gaussian:S", "gradient:S" (gradient magnitude
 * of Gaussian) or "log:S" (Laplacian of Gaussian), S the Gaussian sigma in physical units (mm). */
struct ForestFilterChannel
{
  enum class Kind
  {
    Intensity,
    Gaussian,
    GradientMagnitude,
    LaplacianOfGaussian
  };
  Kind   kind = Kind::Intensity;
  double sigma = 0.0;

  /** Throws canopy::Error, prefixed by `context`, for an unknown name or a sigma that is not > 0. */
  static ForestFilterChannel Parse(const std::string & name, const std::string & context);
  std::string                Name() const;
};

/** Parses a comma-separated bank ("intensity,gaussian:1,gradient:1,log:2") into validated, canonical
 * names; an empty text gives an empty bank (raw components). */
std::vector<std::string>
ParseForestFilterBank(const std::string & text, const std::string & context);

/** The bank's channels of one scalar component, each a buffer over the image's buffered region (x
 * fastest). Throws canopy::Error for a bad name or an image too small for the recursive filters. */
template<unsigned int VDimension>
std::vector<std::vector<float>>
ComputeForestFilterBank(const itk::Image<float, VDimension> * component, const std::vector<std::string> & bank);

} // namespace canopy
