// `canopy stream --plot` end to end: SEA with abrupt drifts, a PNG of the stated size whose red drift
// markers are drawn (the forest replaced trees), and a bad --plot-size refused before any work, with
// no plot left behind.
#include "canopyTesting.h"

#include "itkImageFileReader.h"
#include "itkPNGImageIO.h"
#include "itkRGBPixel.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace
{
namespace fs = std::filesystem;

canopy::testing::CommandRun
Canopy(const std::string & arguments, const std::string & name)
{
  return canopy::testing::RunCommand(CANOPY_EXECUTABLE, arguments, name);
}
} // namespace

TEST(StreamCommand, PlotsTheLearningCurveWithItsDrifts)
{
  const std::string plot = canopy::testing::OutputPath("stream-plot.png");
  const std::string report = canopy::testing::OutputPath("stream-plot.json");
  fs::remove(plot);
  const auto run = Canopy("stream --generator sea:drift_every=10000,noise=0.05 --instances 40000 --trees 10 "
                          "--device cpu --threads 2 --quiet --plot " +
                            plot + " --plot-size 500x300 --report " + report,
                          "stream-plot");
  ASSERT_EQ(run.status, 0) << run.err;
  std::ifstream in(report);
  const auto    r = nlohmann::json::parse(in);
  EXPECT_EQ(r["plot"], plot);
  using Image = itk::Image<itk::RGBPixel<unsigned char>, 2>;
  auto io = itk::PNGImageIO::New();
  ASSERT_TRUE(io->CanReadFile(plot.c_str()));
  auto reader = itk::ImageFileReader<Image>::New();
  reader->SetImageIO(io);
  reader->SetFileName(plot);
  reader->Update();
  const auto size = reader->GetOutput()->GetLargestPossibleRegion().GetSize();
  EXPECT_EQ(size[0], 500u);
  EXPECT_EQ(size[1], 300u);
  std::size_t  blue = 0, red = 0;
  const auto * p = reader->GetOutput()->GetBufferPointer();
  for (std::size_t k = 0; k < size[0] * size[1]; ++k)
  {
    blue += p[k][0] == 20 && p[k][1] == 70 && p[k][2] == 200 ? 1 : 0;
    red += p[k][0] == 220 && p[k][1] == 30 && p[k][2] == 30 ? 1 : 0;
  }
  EXPECT_GT(blue, 300u) << "the curve";
  if (r["drifts"].get<int>() > 0)
    EXPECT_GT(red, 100u) << "drift markers";
  else
    EXPECT_EQ(red, 0u);
}

TEST(StreamCommand, ABadPlotSizeIsRefusedBeforeTheStream)
{
  const std::string plot = canopy::testing::OutputPath("stream-never.png");
  fs::remove(plot);
  const auto run =
    Canopy("stream --generator sea --instances 1000 --device cpu --quiet --plot " + plot + " --plot-size 100x50",
           "stream-bad-plot");
  EXPECT_NE(run.status, 0);
  EXPECT_LT(run.status, 128);
  EXPECT_NE(run.err.find("--plot-size: 100x50: width and height must each be 200 to 10000 pixels"), std::string::npos)
    << run.err;
  EXPECT_FALSE(fs::exists(plot));
}
