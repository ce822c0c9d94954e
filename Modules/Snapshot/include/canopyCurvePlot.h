// A PNG line plot of a learning curve (accuracy over instances) with marked instants (e.g. the drifts
// a streaming forest detected): what `canopy stream --plot` writes. Drawn into an ITK RGB image and
// written with ITK's PNG IO.
#pragma once

#include "itkImage.h"
#include "itkRGBPixel.h"

#include <cmath>
#include <string>
#include <vector>

namespace canopy
{

struct CurvePlotOptions
{
  int                 width = 800, height = 400; // pixels, each at least 200 and at most 10000
  std::string         xLabel = "instances", yLabel = "accuracy";
  std::vector<double> markers;                // x values drawn as red vertical lines (drifts)
  double              yMin = NAN, yMax = NAN; // a fixed y range when both are set
};

using CurvePlotImage = itk::Image<itk::RGBPixel<unsigned char>, 2>;

/** Renders y over x (points in x order) as a blue line on white, with axes, grid lines, tick labels
 * (x with k/M suffixes; y: the data's range widened by 0.05 and rounded out to tenths, within [0, 1]
 * when the data are, unless yMin and yMax are set) and the markers. Throws canopy::Error for sizes out of range, no
 * points, or non-finite values. */
CurvePlotImage::Pointer
RenderCurvePlot(const std::vector<double> & x, const std::vector<double> & y, const CurvePlotOptions & options);

/** RenderCurvePlot written as an RGB PNG to path (temporary name, then rename: no half-written file);
 * errors name the path. */
void
WriteCurvePlot(const std::string &         path,
               const std::vector<double> & x,
               const std::vector<double> & y,
               const CurvePlotOptions &    options);

} // namespace canopy
