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
  double sx = 0, sy = 0, n = 0;
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

  const auto plain = canopy::testing::OutputPath("plain.png");
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

} // namespace
