// Segmentation from scribbles on a synthetic phantom: strokes on a few slices segment the other slices
// (a Dice floor); more strokes are learnt without retraining (only the new voxels), and a classifier
// saved and loaded continues exactly as the one kept in the filter.
#include "canopy/Errors.h"
#include "canopyTesting.h"
#include "itkScribbleSegmentationImageFilter.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

using Image = itk::Image<float, 3>;
using Labels = itk::Image<unsigned char, 3>;
using Filter = itk::ScribbleSegmentationImageFilter<Image, Labels>;

namespace
{
constexpr int    kSize = 40;
constexpr double kRadius = 11.0;

canopy::testing::BallPhantom
Phantom()
{
  const double c[3] = { 20.0, 19.0, 21.0 };
  return canopy::testing::MakeBallPhantom(kSize, kSize, kSize, c, kRadius, 100.0f, 40.0f, 15.0f, 7);
}

/** Strokes on slice z as a user draws them: a foreground line (label 2) through the object, and a
 * background loop (label 1) around it, one to two voxels outside its edge, plus a line near the border. */
void
AddStrokes(Labels * scribbles, const Labels * truth, int z)
{
  const double c[3] = { 20.0, 19.0, 21.0 };
  const double dz = z - c[2], sliceRadius = std::sqrt(std::max(0.0, kRadius * kRadius - dz * dz));
  for (int y = 0; y < kSize; ++y)
    for (int x = 0; x < kSize; ++x)
    {
      const Labels::IndexType i{ { x, y, z } };
      const double            d = std::hypot(x - c[0], y - c[1]);
      if ((y == 18 || y == 19) && x > 14 && x < 26 && truth->GetPixel(i) != 0)
        scribbles->SetPixel(i, 2);
      else if ((d >= sliceRadius + 1.0 && d < sliceRadius + 2.5) || y == 3)
        scribbles->SetPixel(i, 1);
    }
}

Labels::Pointer
EmptyScribbles(const Image * image)
{
  auto s = Labels::New();
  s->CopyInformation(image);
  s->SetRegions(image->GetLargestPossibleRegion());
  s->Allocate(true);
  return s;
}

/** Dice of label 2 against the truth over the slices without strokes. */
double
DiceOffScribbledSlices(const Labels * labels, const Labels * truth, const std::vector<int> & scribbledSlices)
{
  std::int64_t both = 0, a = 0, b = 0;
  for (int z = 0; z < kSize; ++z)
  {
    if (std::find(scribbledSlices.begin(), scribbledSlices.end(), z) != scribbledSlices.end())
      continue;
    for (int y = 0; y < kSize; ++y)
      for (int x = 0; x < kSize; ++x)
      {
        const Labels::IndexType i{ { x, y, z } };
        const bool              p = labels->GetPixel(i) == 2, t = truth->GetPixel(i) != 0;
        both += p && t;
        a += p;
        b += t;
      }
  }
  return 2.0 * double(both) / double(a + b);
}

std::vector<float>
Buffer(const Image * image)
{
  return { image->GetBufferPointer(),
           image->GetBufferPointer() + image->GetLargestPossibleRegion().GetNumberOfPixels() };
}
} // namespace

TEST(ScribbleSegmentation, StrokesOnThreeSlicesSegmentTheOthers)
{
  const auto phantom = Phantom();
  auto       scribbles = EmptyScribbles(phantom.image);
  for (int z : { 14, 21, 28 })
    AddStrokes(scribbles, phantom.mask, z);
  auto filter = Filter::New();
  filter->SetInput(phantom.image);
  filter->SetScribbles(scribbles);
  filter->Update();
  const double dice = DiceOffScribbledSlices(filter->GetLabelOutput(), phantom.mask, { 14, 21, 28 });
  std::cout << "Dice off the scribbled slices: " << dice << " (" << filter->GetNumberOfVoxelsLearntLastUpdate()
            << " labelled voxels)\n";
  EXPECT_GT(dice, 0.9); // 0.961 when written
  // Geometry kept; probabilities in [0, 1], high inside and low outside.
  EXPECT_EQ(filter->GetOutput()->GetOrigin(), phantom.image->GetOrigin());
  EXPECT_EQ(filter->GetOutput()->GetDirection(), phantom.image->GetDirection());
  EXPECT_EQ(filter->GetLabelOutput()->GetSpacing(), phantom.image->GetSpacing());
  const Image::IndexType centre{ { 20, 19, 8 + 13 } }, corner{ { 1, 1, 1 } };
  EXPECT_GT(filter->GetOutput()->GetPixel(centre), 0.5f);
  EXPECT_LT(filter->GetOutput()->GetPixel(corner), 0.5f);
}

TEST(ScribbleSegmentation, MoreStrokesAreLearntWithoutRetrainingAndASavedClassifierContinuesExactly)
{
  const auto phantom = Phantom();
  auto       first = EmptyScribbles(phantom.image);
  AddStrokes(first, phantom.mask, 20);
  auto more = EmptyScribbles(phantom.image);
  for (int z : { 20, 12, 29 })
    AddStrokes(more, phantom.mask, z);
  auto added = EmptyScribbles(phantom.image); // the strokes `more` adds to `first`
  for (int z : { 12, 29 })
    AddStrokes(added, phantom.mask, z);

  auto kept = Filter::New();
  kept->SetInput(phantom.image);
  kept->SetScribbles(first);
  kept->Update();
  const std::int64_t firstCount = kept->GetNumberOfVoxelsLearntLastUpdate();
  const double       diceFirst = DiceOffScribbledSlices(kept->GetLabelOutput(), phantom.mask, { 20 });
  // The classifier after the first strokes, saved and loaded as a model file's JSON.
  const nlohmann::json saved = canopy::streaming::StreamingModelToJson(kept->GetClassifier()->Model());
  const auto           model = canopy::streaming::StreamingModelFromJson(saved, "saved.json");

  kept->SetScribbles(more);
  kept->Update();
  const std::int64_t addedCount = kept->GetNumberOfVoxelsLearntLastUpdate();
  const double       diceMore = DiceOffScribbledSlices(kept->GetLabelOutput(), phantom.mask, { 20, 12, 29 });
  std::cout << "Dice with 1 slice of strokes: " << diceFirst << ", with 3: " << diceMore << "\n";
  EXPECT_GT(firstCount, 0);
  std::int64_t addedVoxels = 0;
  for (std::size_t k = 0; k < added->GetLargestPossibleRegion().GetNumberOfPixels(); ++k)
    addedVoxels += added->GetBufferPointer()[k] != 0 ? 1 : 0;
  EXPECT_EQ(addedCount, addedVoxels) << "only the new strokes' voxels are learnt";
  EXPECT_GT(diceMore, 0.9); // 0.955 when written

  auto resumed = Filter::New();
  resumed->SetInput(phantom.image);
  resumed->SetScribbles(added);
  resumed->SetClassifier(
    std::make_shared<canopy::ScribbleClassifier>(model, canopy::ScribbleClassifierOptions{}, "saved.json"));
  resumed->Update();
  EXPECT_EQ(resumed->GetNumberOfVoxelsLearntLastUpdate(), addedCount);
  EXPECT_EQ(Buffer(resumed->GetOutput()), Buffer(kept->GetOutput())) << "the resumed classifier's probabilities";
}

TEST(ScribbleSegmentation, ScribblesNeedTwoLabelsAndNoNewOnesLater)
{
  const auto phantom = Phantom();
  auto       scribbles = EmptyScribbles(phantom.image);
  scribbles->SetPixel({ { 1, 1, 1 } }, 1);
  auto filter = Filter::New();
  filter->SetInput(phantom.image);
  filter->SetScribbles(scribbles);
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
  AddStrokes(scribbles, phantom.mask, 20);
  filter = Filter::New();
  filter->SetInput(phantom.image);
  filter->SetScribbles(scribbles);
  filter->Update();
  scribbles->SetPixel({ { 2, 2, 2 } }, 3);
  scribbles->Modified();
  EXPECT_THROW(filter->Update(), itk::ExceptionObject);
}
