// Writes the integral volume and a Haar response map of a fixed synthetic phantom, for comparison
// with the baselines in Data/Baseline through ITK's test driver (itkTestDriver --compare).
// Regenerate the baselines (CPU path) with:
//   build/bin/canopyFoundationRegression Data/Baseline/phantom-integral.nrrd Data/Baseline/phantom-haar.nrrd cpu
#include "canopyHaarFeatureBank.h"
#include "canopyTesting.h"
#include "itkHaarFeatureMapImageFilter.h"
#include "itkImageFileWriter.h"
#include "itkIntegralVolumeImageFilter.h"
#include "itkVectorIndexSelectionCastImageFilter.h"

#include <iostream>

int
main(int argc, char ** argv)
{
  if (argc < 3)
  {
    std::cerr << "usage: " << argv[0] << " INTEGRAL_OUT.nrrd HAAR_OUT.nrrd [backend]\n";
    return 2;
  }
  const std::string backend = argc > 3 ? argv[3] : "cpu";
  try
  {
    using ImageType = itk::Image<float, 3>;
    const double c[3] = { 12.3, 10.1, 8.7 }, r[3] = { 7.0, 5.5, 4.0 };
    ImageType::Pointer phantom = canopy::testing::MakeEllipsoidPhantom(24, 20, 18, c, r, 100.0f, -20.0f, 0.0f, 1);

    auto integral = itk::IntegralVolumeImageFilter<ImageType>::New();
    integral->SetInput(phantom);
    integral->SetBackend(backend);
    auto integralWriter = itk::ImageFileWriter<itk::Image<double, 3>>::New();
    integralWriter->SetInput(integral->GetOutput());
    integralWriter->SetFileName(argv[1]);
    integralWriter->Update();

    // A fixed edge feature along x: the response map shows the phantom's left/right borders.
    auto haar = itk::HaarFeatureMapImageFilter<ImageType>::New();
    haar->SetInput(phantom);
    haar->SetFeatureBank({ canopy::MakeHaarFeature(canopy::HaarPattern::Edge, 0, { -0.5f, -0.5f, -0.5f }, { 0.5f, 0.5f, 0.5f }),
                           canopy::MakeHaarFeature(canopy::HaarPattern::CenterSurround, 0, { -0.5f, -0.5f, -0.5f }, { 0.5f, 0.5f, 0.5f }) });
    haar->SetSampleBoxSize({ 6, 6, 4 });
    haar->SetBackend(backend);
    auto select = itk::VectorIndexSelectionCastImageFilter<itk::VectorImage<float, 3>, ImageType>::New();
    select->SetInput(haar->GetOutput());
    select->SetIndex(1);
    auto haarWriter = itk::ImageFileWriter<ImageType>::New();
    haarWriter->SetInput(select->GetOutput());
    haarWriter->SetFileName(argv[2]);
    haarWriter->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    std::cerr << "canopyFoundationRegression: " << e.GetDescription() << '\n';
    return 1;
  }
  return 0;
}
