#include "canopyForestLabels.h"

#include "canopy/Errors.h"

#include <cmath>

namespace canopy
{

void
LabelsAtForegroundThreshold(const float *  distribution,
                            std::size_t    voxels,
                            int            classes,
                            double         threshold,
                            std::int32_t * labels)
{
  if (classes < 2)
    CANOPY_THROW("foreground threshold: the distribution has " << classes << " class(es); it needs a background and "
                                                                              "at least one other");
  if (!std::isfinite(threshold) || threshold <= 0.0 || threshold >= 1.0)
    CANOPY_THROW("foreground threshold " << threshold << ": must lie strictly between 0 and 1");
  const float atLeast = static_cast<float>(threshold); // in float, as evaluate's ThresholdToMask compares
  for (std::size_t v = 0; v < voxels; ++v)
  {
    const float * p = distribution + v * static_cast<std::size_t>(classes);
    std::int32_t  label = 0;
    if (ForegroundProbability(p) >= atLeast)
    {
      label = 1;
      for (int c = 2; c < classes; ++c)
        if (p[c] > p[label])
          label = c;
    }
    labels[v] = label;
  }
}

} // namespace canopy
