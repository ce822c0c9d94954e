// Built against an installed Canopy (find_package(Canopy), Canopy::VolumeClassification): trains a
// small PBT on two synthetic ellipsoid volumes, classifies a third with the ellipsoid elsewhere
// through itk::PBTClassificationImageFilter (backend auto), checks the Dice of the probability map
// against the true ellipsoid, and writes the map as NIfTI and reads it back through Canopy's checked
// reader (Canopy::ImageInput).
// Usage: canopyExternalProject OUTPUT_DIR. Exit 0 when every check passes.
#include "canopyCheckedImageReader.h"
#include "canopyConfigure.h"
#include "canopyPBTModelFile.h"
#include "canopyPBTVolumeTraining.h"
#include "itkImageFileWriter.h"
#include "itkNiftiImageIOFactory.h"
#include "itkPBTClassificationImageFilter.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace
{
using canopy::FloatVolume;
using canopy::MaskVolume;

// An ellipsoid (100) in a background (20) with Gaussian noise, on an anisotropic, x-flipped grid.
canopy::LabelledVolume
Ellipsoid(double centreX, std::uint64_t seed)
{
  const FloatVolume::SizeType size{ { 48, 44, 36 } };
  const double                centre[3] = { centreX, 22, 18 }, radius[3] = { 11, 9, 8 };
  auto                        image = FloatVolume::New();
  FloatVolume::RegionType     region;
  region.SetSize(size);
  image->SetRegions(region);
  const double spacing[3] = { 1.0, 1.2, 2.5 };
  image->SetSpacing(spacing);
  FloatVolume::DirectionType direction;
  direction.SetIdentity();
  direction[0][0] = -1.0;
  image->SetDirection(direction);
  image->Allocate();
  auto mask = MaskVolume::New();
  mask->CopyInformation(image);
  mask->SetRegions(region);
  mask->Allocate();

  std::mt19937_64                 rng(seed);
  std::normal_distribution<float> noise(0.0f, 15.0f);
  float *                         pixel = image->GetBufferPointer();
  unsigned char *                 label = mask->GetBufferPointer();
  for (itk::SizeValueType z = 0; z < size[2]; ++z)
    for (itk::SizeValueType y = 0; y < size[1]; ++y)
      for (itk::SizeValueType x = 0; x < size[0]; ++x)
      {
        const double dx = (double(x) - centre[0]) / radius[0], dy = (double(y) - centre[1]) / radius[1],
                     dz = (double(z) - centre[2]) / radius[2];
        const bool inside = dx * dx + dy * dy + dz * dz <= 1.0;
        *pixel++ = (inside ? 100.0f : 20.0f) + noise(rng);
        *label++ = inside;
      }
  return { image, mask, "ellipsoid" + std::to_string(seed) };
}

canopy::PBTVolumeTrainingOptions
SmallModel()
{
  canopy::PBTVolumeTrainingOptions options;
  options.workingSpacing = { 2.0, 2.4, 5.0 };
  options.sampling.positivesPerVolume = 600;
  options.sampling.negativesPerVolume = 600;
  options.featureBankSize = 200;
  options.sampleBoxMm = { 24, 24, 30 };
  options.pbt.maxDepth = 3;
  options.pbt.weakLearnersPerNode = 8;
  options.pbt.featureCandidatesPerRound = 50;
  options.pbt.minSamplesToSplit = 50;
  return options;
}

double
Dice(const FloatVolume * probability, const MaskVolume * truth)
{
  std::int64_t overlap = 0, predicted = 0, actual = 0;
  const auto   n = probability->GetLargestPossibleRegion().GetNumberOfPixels();
  for (itk::SizeValueType i = 0; i < n; ++i)
  {
    const bool p = probability->GetBufferPointer()[i] >= 0.5f, t = truth->GetBufferPointer()[i] != 0;
    overlap += p && t;
    predicted += p;
    actual += t;
  }
  return 2.0 * overlap / static_cast<double>(predicted + actual);
}

int
Fail(const std::string & what)
{
  std::cerr << "canopyExternalProject: " << what << '\n';
  return 1;
}

} // namespace

int
main(int argc, char * argv[])
{
  if (argc != 2)
    return Fail("usage: canopyExternalProject OUTPUT_DIR");
  const std::string outputDir = argv[1];
  std::cout << "Canopy " << CANOPY_VERSION_STRING << ", CUDA compiled in: " << CANOPY_USE_CUDA << '\n';
  try
  {
    canopy::PBTVolumeTrainingReport report;
    canopy::PBTModelFile            trained =
      canopy::TrainPBTFromVolumes({ Ellipsoid(20, 1), Ellipsoid(28, 2) }, SmallModel(), &report);
    const std::string modelPath = outputDir + "/ellipsoid-model.json";
    canopy::SavePBTModelFile(trained, modelPath);
    auto model = std::make_shared<const canopy::PBTModelFile>(canopy::LoadPBTModelFile(modelPath));

    const canopy::LabelledVolume test = Ellipsoid(24, 9);
    auto                         filter = itk::PBTClassificationImageFilter<FloatVolume>::New();
    filter->SetInput(test.image);
    filter->SetModel(model);
    filter->SetBackend("auto");
    filter->Update();
    const double dice = Dice(filter->GetOutput(), test.mask);
    std::cout << "PBT: " << report.featuresUsed << " features, training accuracy " << report.trainingAccuracy
              << "; classified on " << filter->GetBackendUsed() << ", Dice " << dice << '\n';
    if (!(dice > 0.85))
      return Fail("Dice " + std::to_string(dice) + " of the classified ellipsoid is not above 0.85");

    // ITK's IO factories are not registered for this program (no ITK_USE_FILE): register NIfTI.
    itk::NiftiImageIOFactory::RegisterOneFactory();
    const std::string mapPath = outputDir + "/ellipsoid-probability.nii.gz";
    itk::WriteImage(filter->GetOutput(), mapPath);
    const FloatVolume::Pointer reread = canopy::ReadImageChecked<FloatVolume>(mapPath, "--probability");
    const double               rereadDice = Dice(reread, test.mask);
    if (rereadDice != dice)
      return Fail(mapPath + ": Dice " + std::to_string(rereadDice) + " after writing and reading, not " +
                  std::to_string(dice));
  }
  catch (const std::exception & e)
  {
    return Fail(e.what());
  }
  std::cout << "canopyExternalProject: all checks passed\n";
  return 0;
}
