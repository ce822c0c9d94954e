// Regression on SynthSeg's 15 training label maps ($CANOPY_DATA_DIR/synthseg-label-maps, default
// ../shared/data): every map is covered by the T1 priors, and a synthesized image has T1 contrast
// (white matter > cortex > CSF, as the priors' means order them) on the transformed labels.
// Skipped, saying so, without the data.
#include "canopySynthesis.h"

#include "itkImageFileReader.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace
{
using namespace canopy;
using LabelMap = itk::Image<unsigned short, 3>;

std::filesystem::path
DataFolder()
{
  const char * env = std::getenv("CANOPY_DATA_DIR");
  return std::filesystem::path(env ? env : CANOPY_DEFAULT_DATA_DIR) / "synthseg-label-maps";
}

double
MeanOver(const SynthesizedPair & pair, std::initializer_list<int> labels)
{
  const float *          v = pair.image->GetBufferPointer();
  const unsigned short * l = pair.label->GetBufferPointer();
  double                 sum = 0;
  std::size_t            n = 0;
  for (std::size_t i = 0; i < pair.image->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
    for (int w : labels)
      if (l[i] == w)
        sum += v[i], ++n;
  return n ? sum / n : NAN;
}

TEST(SynthesisSynthSeg, EveryMapSynthesizesWithT1Contrast)
{
  const auto folder = DataFolder();
  if (!std::filesystem::exists(folder / "t1_generation_priors.json"))
    GTEST_SKIP() << "no " << folder << " (set CANOPY_DATA_DIR to the folder holding synthseg-label-maps)";
  const auto priors = ReadSynthesisPriors((folder / "t1_generation_priors.json").string());
  int        maps = 0, ordered = 0;
  for (int subject = 1; subject <= 15; ++subject)
  {
    char name[64];
    std::snprintf(name, sizeof(name), "training_seg_%02d.nii.gz", subject);
    if (!std::filesystem::exists(folder / name))
      continue;
    const auto       labels = itk::ReadImage<LabelMap>((folder / name).string());
    SynthesisOptions o;
    o.seed = 1000 + subject;
    const auto pair = SynthesizeImage(labels, priors, o); // throws on a label without a class
    ++maps;
    const double wm = MeanOver(pair, { 2, 41 }), cortex = MeanOver(pair, { 3, 42 }), csf = MeanOver(pair, { 4, 43 });
    std::cout << name << ": mean intensity WM " << wm << ", cortex " << cortex << ", lateral ventricles " << csf
              << "\n";
    // The drawn class means can overlap in principle (prior std ~ 11-22); these seeds are checked draws
    // whose order the blur, bias and noise must not undo.
    const auto & classes = pair.parameters.at("classes");
    const double drawnWm = classes[2].at("mean"), drawnCortex = classes[3].at("mean"), drawnCsf = classes[1].at("mean");
    if (drawnWm > drawnCortex + 20 && drawnCortex > drawnCsf + 20)
    {
      ++ordered;
      EXPECT_GT(wm, cortex) << name;
      EXPECT_GT(cortex, csf) << name;
    }
    EXPECT_EQ(pair.image->GetLargestPossibleRegion(), labels->GetLargestPossibleRegion()) << name;
  }
  EXPECT_EQ(maps, 15) << "the data set has 15 label maps";
  EXPECT_GE(ordered, 10) << "draws whose contrast order was checked";
}

} // namespace
