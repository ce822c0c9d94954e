// Pose channels ("pose:0..2", issue 13): a voxel's coordinates in a reference pose's frame (-1 and +1 at
// the oriented box's faces) through the image's origin, spacing and direction; names, clear errors
// without a reference or in 2D, the model's "reference" record, the ITK filter refusing a pose-channel
// model without the input's frame, and the filter's output with a frame equal to direct prediction.
#include "ForestFilterSupport.h"
#include "canopy/Errors.h"
#include "canopy/ForestPrediction.h"
#include "canopyForestFilterBank.h"
#include "canopyForestModel.h"
#include "itkRandomForestClassificationImageFilter.h"

#include <gtest/gtest.h>

#include <cmath>

namespace
{
using namespace canopy;
using Volume = itk::Image<float, 3>;

std::string
ErrorOf(const std::function<void()> & f)
{
  try
  {
    f();
  }
  catch (const canopy::Error & e)
  {
    return e.what();
  }
  return "no error";
}

/** A 5 x 6 x 7 volume with spacing, origin and a direction rotated 30 degrees about z. */
Volume::Pointer
TiltedVolume()
{
  auto v = Volume::New();
  v->SetRegions(Volume::SizeType{ { 5, 6, 7 } });
  const double spacing[3] = { 1.0, 2.0, 0.5 }, origin[3] = { 10.0, -5.0, 3.0 };
  v->SetSpacing(spacing);
  v->SetOrigin(origin);
  Volume::DirectionType direction;
  direction.SetIdentity();
  const double c = std::cos(M_PI / 6), s = std::sin(M_PI / 6);
  direction[0][0] = c;
  direction[0][1] = -s;
  direction[1][0] = s;
  direction[1][1] = c;
  v->SetDirection(direction);
  v->Allocate();
  v->FillBuffer(1.0f);
  return v;
}

/** A frame rotated 45 degrees about x, centred inside the volume. */
ReferenceFrame
TiltedFrame()
{
  ReferenceFrame f;
  const double   r = std::sqrt(0.5);
  const double   axes[3][3] = { { 1, 0, 0 }, { 0, r, r }, { 0, -r, r } };
  const double   center[3] = { 11.0, -1.0, 4.5 }, half[3] = { 2.0, 3.0, 4.0 };
  for (int a = 0; a < 3; ++a)
  {
    f.center[a] = center[a];
    f.halfSize[a] = half[a];
    for (int k = 0; k < 3; ++k)
      f.axes[a][k] = axes[a][k];
  }
  return f;
}

TEST(ForestPoseChannels, NamesAndErrors)
{
  EXPECT_EQ(ParseForestFilterBank("intensity,pose", "--channels"),
            (std::vector<std::string>{ "intensity", "pose:0", "pose:1", "pose:2" }));
  EXPECT_EQ(ParseForestFilterBank("pose:2", "--channels"), std::vector<std::string>{ "pose:2" });
  EXPECT_NE(ErrorOf([] { ParseForestFilterBank("pose:3", "--channels"); }).find("pose:0, pose:1 or pose:2"),
            std::string::npos);
  EXPECT_THROW(ParseForestFilterBank("pose:x", "--channels"), canopy::Error);
  EXPECT_EQ(ParseForestFilterBank("pose,zero", "--channels"),
            (std::vector<std::string>{ "pose:0", "pose:1", "pose:2", "zero" }));
  EXPECT_TRUE(ForestBankNeedsReference({ "intensity", "pose:1" }));
  EXPECT_FALSE(ForestBankNeedsReference({ "intensity", "position:x" }));

  const auto volume = TiltedVolume();
  EXPECT_NE(ErrorOf(
              [&] {
                ComputeForestFilterBank<3>(volume, { "intensity", "pose:0" });
              })
              .find("channel 'pose:0' needs the volume's reference pose"),
            std::string::npos);
  auto image = itk::Image<float, 2>::New();
  image->SetRegions(itk::Image<float, 2>::SizeType{ { 4, 4 } });
  image->Allocate();
  const ReferenceFrame frame = TiltedFrame();
  EXPECT_NE(ErrorOf([&] { ComputeForestFilterBank<2>(image, { "pose:1" }, {}, 0, &frame); }).find("3D volumes"),
            std::string::npos);
  ReferenceFrame flat = frame;
  flat.halfSize[2] = 0.0;
  EXPECT_NE(ErrorOf([&] { ComputeForestFilterBank<3>(volume, { "pose:2" }, {}, 0, &flat); }).find("half size"),
            std::string::npos);
}

TEST(ForestPoseChannels, CoordinatesInTheFrameThroughTheImageGeometry)
{
  const auto           volume = TiltedVolume();
  const ReferenceFrame f = TiltedFrame();
  const auto channels = ComputeForestFilterBank<3>(volume, { "pose:0", "pose:1", "pose:2", "intensity" }, {}, 0, &f);
  ASSERT_EQ(channels.size(), 4u);
  std::size_t i = 0;
  for (int z = 0; z < 7; ++z)
    for (int y = 0; y < 6; ++y)
      for (int x = 0; x < 5; ++x, ++i)
      {
        Volume::PointType p;
        volume->TransformIndexToPhysicalPoint(Volume::IndexType{ { x, y, z } }, p); // ITK's geometry
        for (int a = 0; a < 3; ++a)
        {
          double along = 0.0;
          for (int k = 0; k < 3; ++k)
            along += (p[k] - f.center[k]) * f.axes[a][k];
          ASSERT_NEAR(channels[a][i], along / f.halfSize[a], 1e-5)
            << "axis " << a << " voxel " << x << ',' << y << ',' << z;
        }
        ASSERT_EQ(channels[3][i], 1.0f);
      }
  EXPECT_EQ(ComputeForestFilterBank<3>(volume, { "zero" })[0], std::vector<float>(5 * 6 * 7, 0.0f));
  // The frame's centre is 0 and a face +-1: a voxel placed there reads it.
  auto   centred = TiltedVolume();
  double origin[3] = { f.center[0], f.center[1], f.center[2] };
  centred->SetOrigin(origin);
  const auto atCentre = ComputeForestFilterBank<3>(centred, { "pose:0", "pose:1", "pose:2" }, {}, 0, &f);
  for (int a = 0; a < 3; ++a)
    EXPECT_NEAR(atCentre[a][0], 0.0f, 1e-6);
  for (int a = 0; a < 3; ++a)
  {
    double face[3];
    for (int k = 0; k < 3; ++k)
      face[k] = f.center[k] + f.halfSize[a] * f.axes[a][k];
    centred->SetOrigin(face);
    EXPECT_NEAR(ComputeForestFilterBank<3>(centred, { "pose:" + std::to_string(a) }, {}, 0, &f)[0][0], 1.0f, 1e-6);
  }
}

std::shared_ptr<ForestModel>
PoseModel()
{
  canopy::testing::ForestPhantom<3> p(16, 3);
  const ReferenceFrame              f = TiltedFrame();
  const std::vector<std::string>    bank{ "intensity", "pose:0", "pose:1", "pose:2" };
  ForestLabelledImage               image{ MakeForestImage<3>(p.image, bank, 1, {}, &f), p.labels };
  ForestSamplingOptions             sampling;
  sampling.samplesPerImage = 300;
  auto model = std::make_shared<ForestModel>(
    TrainForest(MakeForestTrainingSet({ &image }, 3, sampling), canopy::testing::PhantomTrainingOptions(3)));
  model->filterBank = bank;
  model->reference = { "hippocampus", "label 1" };
  return model;
}

TEST(ForestPoseChannels, ModelRecordsItsReference)
{
  const auto model = PoseModel();
  const auto text = ForestModelToJsonString(*model);
  const auto back = ForestModelFromJsonString(text, "round trip");
  EXPECT_EQ(back.reference.structure, "hippocampus");
  EXPECT_EQ(back.reference.training, "label 1");
  EXPECT_EQ(ForestModelToJsonString(back), text);
  // Pose channels without a reference, or a reference without pose channels: rejected.
  auto noReference = *model;
  noReference.reference = {};
  EXPECT_NE(ErrorOf([&] { ForestModelFromJsonString(ForestModelToJsonString(noReference), "m.json"); })
              .find("m.json: the filter bank has pose channels but no \"reference\""),
            std::string::npos);
  auto noPose = *model;
  noPose.filterBank = { "intensity", "gaussian:1", "gradient:1", "log:1" };
  EXPECT_NE(
    ErrorOf([&] { ForestModelFromJsonString(ForestModelToJsonString(noPose), "m.json"); }).find("no pose channel"),
    std::string::npos);
}

TEST(ForestPoseChannels, FilterNeedsTheInputsFrame)
{
  const auto                        model = PoseModel();
  canopy::testing::ForestPhantom<3> p(16, 4);
  using Labels = itk::Image<std::int32_t, 3>;
  auto filter = itk::RandomForestClassificationImageFilter<Volume, Labels>::New();
  filter->SetInput(p.image);
  filter->SetModel(model);
  filter->SetBackend("cpu");
  EXPECT_NE(ErrorOf([&] { filter->Update(); }).find("need the input's reference pose (structure 'hippocampus')"),
            std::string::npos);
  const ReferenceFrame f = TiltedFrame();
  filter->SetReferenceFrame(f);
  filter->Update();
  const auto direct = PredictForestLabelsCPU(*model, MakeForestImage<3>(p.image, model->filterBank, 1, {}, &f));
  const auto n = p.image->GetBufferedRegion().GetNumberOfPixels();
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(filter->GetOutput()->GetBufferPointer()[i], direct[i]);
}

} // namespace
