// Multi-class phantoms for the forest filter tests: two blobs (classes 1 and 2) of different mean
// intensity on a background (class 0), with Gaussian noise, in 2D or 3D.
#pragma once

#include "canopyForestTraining.h"
#include "canopyForestVolumeTraining.h"
#include "itkImage.h"

#include <random>

namespace canopy::testing
{

template<unsigned int D>
struct ForestPhantom
{
  typename itk::Image<float, D>::Pointer image = itk::Image<float, D>::New();
  std::vector<std::int32_t>              labels;

  ForestPhantom(int size, std::uint64_t seed, float noise = 12.0f)
  {
    typename itk::Image<float, D>::SizeType sz;
    sz.Fill(size);
    typename itk::Image<float, D>::PointType   origin;
    typename itk::Image<float, D>::SpacingType spacing;
    for (unsigned d = 0; d < D; ++d)
    {
      origin[d] = -5.0 + 3.0 * d;
      spacing[d] = 1.0 + 0.25 * d;
    }
    image->SetRegions(sz);
    image->SetOrigin(origin);
    image->SetSpacing(spacing);
    image->Allocate();
    std::mt19937_64                        rng(seed);
    std::normal_distribution<float>        gauss(0.0f, noise);
    std::uniform_real_distribution<double> shift(-2.0, 2.0);
    double                                 c1[3], c2[3];
    for (int d = 0; d < 3; ++d)
    {
      c1[d] = 0.3 * size + shift(rng);
      c2[d] = 0.7 * size + shift(rng);
    }
    const double r1 = 0.22 * size, r2 = 0.18 * size;
    const auto   n = image->GetBufferedRegion().GetNumberOfPixels();
    labels.resize(n);
    for (std::size_t i = 0; i < n; ++i)
    {
      const int p[3] = { int(i % size), int(i / size % size), D == 3 ? int(i / (size * size)) : 0 };
      double    d1 = 0.0, d2 = 0.0;
      for (unsigned d = 0; d < D; ++d)
      {
        d1 += (p[d] - c1[d]) * (p[d] - c1[d]);
        d2 += (p[d] - c2[d]) * (p[d] - c2[d]);
      }
      labels[i] = d1 < r1 * r1 ? 1 : (d2 < r2 * r2 ? 2 : 0);
      image->GetBufferPointer()[i] = (labels[i] == 1 ? 100.0f : labels[i] == 2 ? 55.0f : 10.0f) + gauss(rng);
    }
  }
};

/** Small, fast training options for the phantoms. */
inline ForestTrainingOptions
PhantomTrainingOptions(int dimension)
{
  ForestTrainingOptions o;
  o.numTrees = 3;
  o.maxDepth = 8;
  o.featureCandidates = 40;
  o.thresholdCandidates = 8;
  o.maxOffset = dimension == 3 ? 4 : 6;
  o.maxBoxSize = 5;
  o.seed = 3;
  return o;
}

} // namespace canopy::testing
