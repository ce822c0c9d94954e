// Orthogonal-slice PNG snapshots: size, orientation, overlay colours, errors without leftovers.
#include "canopySnapshot.h"
#include "canopyTesting.h"

#include "canopy/Errors.h"

#include "itkImageFileReader.h"
#include "itkImageRegionConstIterator.h"
#include "itkRGBPixel.h"

#include <filesystem>

namespace
{

using ImageType = itk::Image<float, 3>;
using PngType = itk::Image<itk::RGBPixel<unsigned char>, 2>;
namespace fs = std::filesystem;

// canopy::testing::MakeVolume's grid: 40x30x20 voxels of 1 x 1.2 x 2.5 mm, origin (-10, 4.5, 100),
// x flipped (index x runs to the patient's right). Physical extents: x 40, y 36, z 50 mm.
ImageType::Pointer
MakeHead()
{
  const double c[3] = { 20, 15, 10 }, r[3] = { 16, 12, 8 };
  return canopy::testing::MakeEllipsoidPhantom(40, 30, 20, c, r, 200.0f, 20.0f, 5.0f, 1);
}

// A ball around voxel (8, 7, 14): physical (-18, 12.9, 135), i.e. to the patient's left, anterior
// and superior of the volume's centre (-29.5, 21.9, 123.75).
ImageType::Pointer
MakeLesion()
{
  const double c[3] = { 8, 7, 14 }, r[3] = { 4, 3.4, 1.7 };
  return canopy::testing::MakeEllipsoidPhantom(40, 30, 20, c, r, 1.0f, 0.0f, 0.0f, 1);
}

bool
IsRed(const PngType::PixelType & p)
{
  return p[0] > p[1] + 40 && p[0] > p[2] + 40;
}

// Mean position of the red pixels in columns [x0, x1).
std::array<double, 3>
RedCentroid(const PngType * png, int x0, int x1)
{
  double    sx = 0, sy = 0, n = 0;
  const int height = static_cast<int>(png->GetLargestPossibleRegion().GetSize()[1]);
  for (int y = 0; y < height; ++y)
    for (int x = x0; x < x1; ++x)
      if (IsRed(png->GetPixel({ { x, y } })))
      {
        sx += x - x0;
        sy += y;
        ++n;
      }
  return { n ? sx / n : -1, n ? sy / n : -1, n };
}

TEST(Snapshot, SizeOrientationAndOverlay)
{
  const auto path = canopy::testing::OutputPath("lesion.png");
  fs::remove(path);
  canopy::WriteOrthogonalSnapshot(MakeHead(), MakeLesion(), path);
  ASSERT_TRUE(fs::exists(path));
  const auto png = itk::ReadImage<PngType>(path);
  // Panels: axial 40x36, coronal 40x50, sagittal 36x50 at 1 mm pixels.
  ASSERT_EQ(png->GetLargestPossibleRegion().GetSize()[0], 116u);
  ASSERT_EQ(png->GetLargestPossibleRegion().GetSize()[1], 50u);

  // Expected pixel of the lesion centre: columns from the left edge of the box (-49.5 mm) in x, or
  // from its anterior edge (3.9 mm) in y; rows from the anterior edge (axial) or the top (148.75 mm).
  const auto axial = RedCentroid(png, 0, 40), coronal = RedCentroid(png, 40, 80), sagittal = RedCentroid(png, 80, 116);
  ASSERT_GT(axial[2], 10) << "red pixels in the axial panel";
  ASSERT_GT(coronal[2], 10) << "red pixels in the coronal panel";
  ASSERT_GT(sagittal[2], 10) << "red pixels in the sagittal panel";
  EXPECT_NEAR(axial[0], 31.0, 1.5) << "patient left on the right";
  EXPECT_NEAR(axial[1], 8.5, 1.5) << "anterior at the top";
  EXPECT_NEAR(coronal[0], 31.0, 1.5) << "patient left on the right";
  EXPECT_NEAR(coronal[1], 13.25, 1.5) << "superior at the top";
  EXPECT_NEAR(sagittal[0], 8.5, 1.5) << "anterior on the left";
  EXPECT_NEAR(sagittal[1], 13.25, 1.5) << "superior at the top";

  // Away from the lesion the image is grey, and the axial panel's padding below it is black.
  const auto far = png->GetPixel({ { 5, 30 } });
  EXPECT_EQ(far[0], far[1]);
  EXPECT_EQ(far[1], far[2]);
  const auto pad = png->GetPixel({ { 10, 45 } });
  EXPECT_EQ(pad[0] + pad[1] + pad[2], 0);
}

TEST(Snapshot, ReferenceOutlinedInGreenAndNoOverlayIsGrey)
{
  const auto head = MakeHead(), lesion = MakeLesion();
  const auto path = canopy::testing::OutputPath("reference.png");
  canopy::WriteOrthogonalSnapshot(head, lesion, path, {}, lesion);
  const auto png = itk::ReadImage<PngType>(path);
  int        green = 0;
  for (itk::ImageRegionConstIterator<PngType> it(png, png->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
    green += it.Get()[1] == 255 && it.Get()[0] == 0 && it.Get()[2] == 0;
  EXPECT_GT(green, 20);

  const auto              plain = canopy::testing::OutputPath("plain.png");
  canopy::SnapshotOptions options;
  options.windowLowPercentile = 5;
  options.windowHighPercentile = 95;
  canopy::WriteOrthogonalSnapshot(head, nullptr, plain, options);
  const auto grey = itk::ReadImage<PngType>(plain);
  int        bright = 0;
  for (itk::ImageRegionConstIterator<PngType> it(grey, grey->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
  {
    ASSERT_TRUE(it.Get()[0] == it.Get()[1] && it.Get()[1] == it.Get()[2]);
    bright += it.Get()[0] == 255;
  }
  EXPECT_GT(bright, 100) << "the phantom's inside is above the 95th percentile window";

  // An empty overlay: slices through the image centre, nothing tinted.
  const auto empty = canopy::testing::OutputPath("empty.png");
  canopy::WriteOrthogonalSnapshot(head, canopy::testing::MakeVolume<float>(40, 30, 20), empty);
  EXPECT_EQ(RedCentroid(itk::ReadImage<PngType>(empty), 0, 116)[2], 0);
}

// Files in the folder of `path` whose names start with the file name of `path`.
int
FilesLike(const std::string & path)
{
  int n = 0;
  for (const auto & entry : fs::directory_iterator(fs::path(path).parent_path()))
    n += entry.path().filename().string().rfind(fs::path(path).filename().string(), 0) == 0;
  return n;
}

TEST(Snapshot, ErrorsLeaveNoFileBehind)
{
  const auto head = MakeHead();
  const auto path = canopy::testing::OutputPath("mismatch.png");
  fs::remove(path);

  auto other = MakeLesion();
  auto spacing = other->GetSpacing();
  spacing[2] = 2.0;
  other->SetSpacing(spacing);
  try
  {
    canopy::WriteOrthogonalSnapshot(head, other, path);
    ADD_FAILURE() << "no error for an overlay on another grid";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("spacing"), std::string::npos) << e.GetDescription();
  }
  EXPECT_THROW(canopy::WriteOrthogonalSnapshot(head, MakeLesion(), path, {}, other), canopy::Error);
  EXPECT_EQ(FilesLike(path), 0);

  canopy::SnapshotOptions bad;
  bad.overlayOpacity = 1.5;
  EXPECT_THROW(canopy::WriteOrthogonalSnapshot(head, MakeLesion(), path, bad), canopy::Error);
  bad = {};
  bad.windowLowPercentile = 99;
  bad.windowHighPercentile = 1;
  EXPECT_THROW(canopy::WriteOrthogonalSnapshot(head, MakeLesion(), path, bad), canopy::Error);
  EXPECT_THROW(canopy::WriteOrthogonalSnapshot(nullptr, MakeLesion(), path), canopy::Error);
  EXPECT_THROW(canopy::WriteOrthogonalSnapshot(head, MakeLesion(), path + ".jpg"), canopy::Error);
  EXPECT_EQ(FilesLike(path), 0);

  // An unwritable destination: a folder that does not exist.
  const auto missing = canopy::testing::OutputPath("no-such-folder") + "/x.png";
  try
  {
    canopy::WriteOrthogonalSnapshot(head, MakeLesion(), missing);
    ADD_FAILURE() << "no error for a missing folder";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find(missing), std::string::npos) << e.GetDescription();
  }
  EXPECT_FALSE(fs::exists(fs::path(missing).parent_path()));

  // Success leaves exactly the PNG, no temporary file.
  canopy::WriteOrthogonalSnapshot(head, MakeLesion(), path);
  canopy::WriteOrthogonalSnapshot(head, MakeLesion(), path); // replacing an existing file works too
  EXPECT_EQ(FilesLike(path), 1);
}

// Oriented boxes (detect --snapshot): the outline of the box's intersection with each slice and a cross at
// its centre, in the box's colour, on slices through sliceCentreMm; a box that no slice meets is not drawn.
TEST(Snapshot, BoxOutlinesAndCentreCross)
{
  const auto path = canopy::testing::OutputPath("boxes.png");
  fs::remove(path);
  canopy::SnapshotOptions     options;
  const std::array<double, 3> centre{ { -29.3, 22.1, 124.0 } }; // near the volume's centre, off pixel edges
  options.sliceCentreMm = centre;
  canopy::SnapshotBox box;
  box.centerMm = centre;
  box.axes = { { { { 1, 0, 0 } }, { { 0, 1, 0 } }, { { 0, 0, 1 } } } };
  box.sizeMm = { { 10, 12, 20 } };
  canopy::SnapshotBox away = box; // far outside the volume: no slice meets it
  away.centerMm = { { 1000, 1000, 1000 } };
  away.colour = { { 0, 255, 255 } };
  options.boxes = { box, away };
  canopy::WriteOrthogonalSnapshot(MakeHead(), nullptr, path, options);
  const auto png = itk::ReadImage<PngType>(path);
  const auto colour = [&](int x, int y, int r, int g, int b)
  {
    const auto p = png->GetPixel({ { x, y } });
    return p[0] == r && p[1] == g && p[2] == b;
  };
  const auto yellow = [&](int x, int y) { return colour(x, y, 255, 255, 0); };
  // Axial panel (columns 0-39: x from -49.5 mm, rows: y from 3.9 mm, 1 mm pixels): the box covers
  // columns 15-24 and rows 12-23, its outline is their border; the centre (19.7, 17.7) rounds to (20, 18).
  int count = 0, cyan = 0;
  for (int y = 0; y < 36; ++y)
    for (int x = 0; x < 40; ++x)
      count += yellow(x, y);
  const int width = static_cast<int>(png->GetLargestPossibleRegion().GetSize()[0]);
  for (int y = 0; y < 50; ++y)
    for (int x = 0; x < width; ++x)
      cyan += colour(x, y, 0, 255, 255);
  EXPECT_EQ(count, 2 * 10 + 2 * 12 - 4 + 13) << "the rectangle's border and a 7 + 7 - 1 pixel cross";
  for (int y = 12; y <= 23; ++y)
  {
    EXPECT_TRUE(yellow(15, y) && yellow(24, y)) << "row " << y;
    EXPECT_FALSE(yellow(14, y) || yellow(25, y)) << "row " << y;
    if (y > 12 && y < 23)
      EXPECT_FALSE(yellow(16, y)) << "inside the outline, row " << y;
  }
  for (int x = 15; x <= 24; ++x)
    EXPECT_TRUE(yellow(x, 12) && yellow(x, 23)) << "column " << x;
  EXPECT_TRUE(yellow(20, 18) && yellow(17, 18) && yellow(23, 18) && yellow(20, 15) && yellow(20, 21));
  EXPECT_FALSE(yellow(20, 22)) << "the cross' arms are 3 pixels";
  // Coronal (columns 40-79, rows: z from 148.75 mm down): the box covers 10 x 20 pixels there (rows 15-34).
  int coronal = 0;
  for (int y = 0; y < 50; ++y)
    for (int x = 40; x < 80; ++x)
      coronal += yellow(x, y);
  EXPECT_EQ(coronal, 2 * 10 + 2 * 20 - 4 + 13);
  EXPECT_EQ(cyan, 0) << "a box no slice meets is not drawn";

  auto bad = options;
  bad.boxes[0].sizeMm[1] = 0.0;
  try
  {
    canopy::WriteOrthogonalSnapshot(MakeHead(), nullptr, path + "-bad.png", bad);
    ADD_FAILURE() << "no error for a box of size 0";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("box 0 needs"), std::string::npos) << e.GetDescription();
  }
  bad = options;
  bad.boxes[1].axes[2] = { { 0, 0, 2 } };
  EXPECT_THROW(canopy::WriteOrthogonalSnapshot(MakeHead(), nullptr, path + "-bad.png", bad), canopy::Error);
  EXPECT_FALSE(fs::exists(path + "-bad.png"));
}

} // namespace
