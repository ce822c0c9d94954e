// canopy stream --plot's picture: a valid RGB PNG of the stated size, whose blue curve sits lower where
// the accuracy dropped and whose red drift markers stand at the given instants.
#include "canopyCurvePlot.h"

#include "canopy/AtomicFile.h"
#include "canopy/Errors.h"

#include "itkImageFileReader.h"
#include "itkPNGImageIO.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace canopy;

namespace
{
bool
IsCurveBlue(const itk::RGBPixel<unsigned char> & p)
{
  return p[0] == 20 && p[1] == 70 && p[2] == 200;
}

bool
IsMarkerRed(const itk::RGBPixel<unsigned char> & p)
{
  return p[0] == 220 && p[1] == 30 && p[2] == 30;
}

/** Mean row of the curve's pixels in column x (-1: none). */
double
CurveRow(const CurvePlotImage * image, int x)
{
  const auto size = image->GetLargestPossibleRegion().GetSize();
  double     sum = 0.0;
  int        n = 0;
  for (int y = 0; y < int(size[1]); ++y)
    if (IsCurveBlue(image->GetPixel({ { x, y } })))
      sum += y, ++n;
  return n > 0 ? sum / n : -1.0;
}

/** Columns of the image holding red pixels. */
std::vector<int>
MarkerColumns(const CurvePlotImage * image)
{
  const auto       size = image->GetLargestPossibleRegion().GetSize();
  std::vector<int> columns;
  for (int x = 0; x < int(size[0]); ++x)
    for (int y = 0; y < int(size[1]); ++y)
      if (IsMarkerRed(image->GetPixel({ { x, y } })))
      {
        columns.push_back(x);
        break;
      }
  return columns;
}
} // namespace

TEST(CurvePlot, WritesAPngOfTheStatedSizeWhoseCurveFollowsTheAccuracy)
{
  // Accuracy 0.9, dropping to 0.6 between 40k and 60k instances (a drift at 40k), then back.
  std::vector<double> x, steady, dropped;
  for (int k = 1; k <= 100; ++k)
  {
    x.push_back(1000.0 * k);
    steady.push_back(0.9);
    dropped.push_back(k > 40 && k <= 60 ? 0.6 : 0.9);
  }
  CurvePlotOptions o;
  o.width = 640;
  o.height = 360;
  o.markers = { 40000.0 };
  const std::string path = ::testing::TempDir() + "/canopy-curve-plot.png";
  std::filesystem::remove(path);
  WriteCurvePlot(path, x, dropped, o);
  // A PNG by its signature, read back by ITK's PNG IO: RGB, the stated size.
  std::ifstream file(path, std::ios::binary);
  char          signature[8] = {};
  file.read(signature, 8);
  EXPECT_EQ(std::string(signature + 1, 3), "PNG");
  auto io = itk::PNGImageIO::New();
  ASSERT_TRUE(io->CanReadFile(path.c_str()));
  auto reader = itk::ImageFileReader<CurvePlotImage>::New();
  reader->SetImageIO(io);
  reader->SetFileName(path);
  reader->Update();
  const CurvePlotImage * image = reader->GetOutput();
  EXPECT_EQ(io->GetNumberOfComponents(), 3u);
  EXPECT_EQ(image->GetLargestPossibleRegion().GetSize()[0], 640u);
  EXPECT_EQ(image->GetLargestPossibleRegion().GetSize()[1], 360u);
  EXPECT_FALSE(std::filesystem::exists(TemporaryPathFor(path)));

  // The same picture rendered in memory (y fixed to [0, 1], so two curves compare): where the accuracy
  // dropped, the curve is lower (a larger row) than where it did not, and than the steady curve.
  o.yMin = 0.0;
  o.yMax = 1.0;
  const auto withDrop = RenderCurvePlot(x, dropped, o);
  const auto withoutDrop = RenderCurvePlot(x, steady, o);
  // The curve spans columns first (x = 1k) to last (x = 100k); column(v) maps x values between.
  int first = -1, last = -1;
  for (int c = 0; c < 640; ++c)
    if (CurveRow(withDrop, c) >= 0.0)
      last = c, first = first < 0 ? c : first;
  ASSERT_GT(last - first, 400) << "the curve should span the plot";
  auto column = [&](double v) { return first + int((v - 1000.0) / 99000.0 * double(last - first) + 0.5); };
  const std::vector<int> markers = MarkerColumns(withDrop);
  ASSERT_FALSE(markers.empty()) << "no drift marker drawn";
  EXPECT_LE(markers.back() - markers.front(), 3) << "one marker, a few pixels wide";
  EXPECT_NEAR(markers.front(), column(40000.0), 3) << "the marker stands at 40k";
  EXPECT_TRUE(MarkerColumns(withoutDrop).size() == markers.size());
  const double before = CurveRow(withDrop, column(20000.0)), in = CurveRow(withDrop, column(50000.0));
  ASSERT_GE(before, 0.0);
  ASSERT_GE(in, 0.0);
  EXPECT_GT(in, before + 20.0) << "the curve must sit lower where the accuracy dropped";
  EXPECT_GT(in, CurveRow(withoutDrop, column(50000.0)) + 20.0);
  EXPECT_NEAR(before, CurveRow(withoutDrop, column(20000.0)), 0.5);
  EXPECT_NEAR(CurveRow(withDrop, column(80000.0)), before, 0.5) << "back up after the drop";
}

TEST(CurvePlot, BadInputIsAnError)
{
  CurvePlotOptions o;
  EXPECT_THROW(RenderCurvePlot({}, {}, o), canopy::Error);
  EXPECT_THROW(RenderCurvePlot({ 1.0 }, { std::nan("") }, o), canopy::Error);
  o.yMin = o.yMax = 0.5;
  EXPECT_THROW(RenderCurvePlot({ 1.0 }, { 0.5 }, o), canopy::Error);
  o.yMin = 0.0;
  o.width = 50;
  EXPECT_THROW(RenderCurvePlot({ 1.0 }, { 0.5 }, o), canopy::Error);
}
