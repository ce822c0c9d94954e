// Checked image input: truncated or short voxel data in each format is refused before ITK reads it
// (ITK 5.2 reads a truncated .nii.gz as whole, zero-filled), complete files pass, and non-finite
// voxels are counted, replaced and reported once.
#include "canopyCheckedImageReader.h"
#include "canopyDicomSeriesCheck.h"
#include "canopyNonFiniteVoxels.h"
#include "canopyTesting.h"
#include "canopyVoxelDataCheck.h"
#include "itkImageFileWriter.h"
#include "itkMetaDataObject.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace
{
using Volume = itk::Image<float, 3>;
namespace fs = std::filesystem;

/** A per-test output path (parameterised test names hold a '/', hence the folder). */
std::string
Output(const std::string & name)
{
  const std::string path = canopy::testing::OutputPath(name);
  fs::create_directories(fs::path(path).parent_path());
  return path;
}

/** Writes a 20 x 18 x 16 ramp (varied bytes, so compression does not shrink it to nothing). */
std::string
WriteVolume(const std::string & name, bool compress)
{
  auto volume = Volume::New();
  volume->SetRegions(Volume::SizeType{ { 20, 18, 16 } });
  volume->Allocate();
  float * p = volume->GetBufferPointer();
  for (std::size_t i = 0; i < volume->GetPixelContainer()->Size(); ++i)
    p[i] = static_cast<float>((i * 2654435761u) % 1000u);
  const std::string path = Output(name);
  auto              writer = itk::ImageFileWriter<Volume>::New();
  writer->SetInput(volume);
  writer->SetFileName(path);
  writer->SetUseCompression(compress);
  writer->Update();
  return path;
}

void
CutTo(const std::string & path, double fraction)
{
  fs::resize_file(path, static_cast<std::uintmax_t>(fs::file_size(path) * fraction));
}

/** The message of the canopy::Error that OpenImageChecked throws, or "" when it passes. */
std::string
OpenError(const std::string & path)
{
  try
  {
    canopy::OpenImageChecked(path, "--input");
  }
  catch (const canopy::Error & e)
  {
    return e.GetDescription();
  }
  return "";
}

struct Format
{
  std::string name;
  bool        compress;
  std::string dataFile; // what to cut: the detached data file, or "" for the file itself
  std::string expected;
};

class TruncatedFormat : public ::testing::TestWithParam<Format>
{
};

TEST_P(TruncatedFormat, CompleteFilePassesAndCutFileIsRefused)
{
  const auto & f = GetParam();
  const auto   path = WriteVolume(f.name, f.compress);
  EXPECT_EQ(OpenError(path), "");
  CutTo(f.dataFile.empty() ? path : Output(f.dataFile), 0.6);
  const auto message = OpenError(path);
  EXPECT_NE(message.find("--input " + path + ": " + f.expected), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
  Formats,
  TruncatedFormat,
  ::testing::Values(Format{ "iit.nii", false, "", "the voxel data is short" },
                    Format{ "iit.nii.gz", true, "", "the compressed data ends early" },
                    Format{ "iit.nrrd", false, "", "the voxel data is short" },
                    Format{ "iit-gz.nrrd", true, "", "the compressed data ends early" },
                    Format{ "iit-detached.nhdr", false, "iit-detached.raw", "the voxel data is short" },
                    Format{ "iit-detached-gz.nhdr", true, "iit-detached-gz.raw.gz", "the compressed data ends early" },
                    Format{ "iit.mha", false, "", "the voxel data is short" },
                    Format{ "iit-z.mha", true, "", "the compressed data ends early" },
                    Format{ "iit.mhd", false, "iit.raw", "the voxel data is short" }),
  [](const auto & info)
  {
    std::string n = info.param.name;
    for (auto & c : n)
      c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return n;
  });

TEST(VoxelDataCheck, NamesTheDetachedDataFileAndTheSizes)
{
  const auto path = WriteVolume("iit-named.nhdr", false);
  CutTo(Output("iit-named.raw"), 0.5);
  const auto message = OpenError(path);
  EXPECT_NE(message.find("11.5 kB of 23.0 kB voxel bytes in the data file"), std::string::npos) << message;
  EXPECT_NE(message.find("iit-named.raw"), std::string::npos) << message;
}

TEST(VoxelDataCheck, CorruptCompressedDataIsRefused)
{
  const auto path = WriteVolume("iit-corrupt.nii.gz", true);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(fs::file_size(path) - 40)); // after the header, before the trailer
    const std::string garbage(24, '\xA5');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  const auto message = OpenError(path);
  EXPECT_NE(message.find("the compressed data is corrupt"), std::string::npos) << message;
}

TEST(VoxelDataCheck, EmptyMissingAndGarbageFiles)
{
  const auto empty = Output("iit-empty.nii.gz");
  std::ofstream(empty).close();
  EXPECT_NE(OpenError(empty).find("the file is empty"), std::string::npos);
  EXPECT_NE(OpenError(Output("iit-missing.nii")).find("no such file"), std::string::npos);
  const auto garbage = Output("iit-garbage.nii.gz");
  std::ofstream(garbage) << "not an image at all\n";
  EXPECT_NE(OpenError(garbage), "");
}

TEST(VoxelDataCheck, CorruptPngIsAnErrorNotAnAbort)
{
  // A valid 2D PNG written by ITK reads; the same file with a mangled chunk type, or cut short, is a
  // canopy::Error: libpng used to abort the whole process from ITK's header read (exit 134).
  using Image2 = itk::Image<unsigned char, 2>;
  auto image = Image2::New();
  image->SetRegions(Image2::SizeType{ { 13, 7 } });
  image->Allocate();
  for (std::size_t i = 0; i < 13 * 7; ++i)
    image->GetBufferPointer()[i] = static_cast<unsigned char>(i * 37);
  const std::string good = Output("iit-good.png");
  auto              writer = itk::ImageFileWriter<Image2>::New();
  writer->SetInput(image);
  writer->SetFileName(good);
  writer->Update();
  EXPECT_EQ(OpenError(good), "");

  std::string bytes;
  {
    std::ifstream in(good, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 40u);
  std::string mangled = bytes;
  mangled[12] = mangled[13] = mangled[14] = mangled[15] = 0; // the IHDR chunk's type
  const std::string bad = Output("iit-bad-chunk.png");
  std::ofstream(bad, std::ios::binary) << mangled;
  EXPECT_NE(OpenError(bad).find("not a valid PNG image (libpng:"), std::string::npos) << OpenError(bad);
  const std::string cut = Output("iit-cut.png");
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() - 20);
  EXPECT_NE(OpenError(cut).find("not a valid PNG image"), std::string::npos) << OpenError(cut);
}

TEST(VoxelDataCheck, OneLine)
{
  EXPECT_EQ(canopy::OneLine("a\n[nrrd] b:\n  c\n"), "a [nrrd] b: c");
}

TEST(VoxelDataCheck, FormatBytes)
{
  EXPECT_EQ(canopy::FormatBytes(812), "812 bytes");
  EXPECT_EQ(canopy::FormatBytes(3200), "3.2 kB");
  EXPECT_EQ(canopy::FormatBytes(14100000), "14.1 MB");
}

TEST(NonFiniteVoxels, SomeAreZeroedWithOneWarning)
{
  std::vector<float> v{ 1.0f,
                        std::numeric_limits<float>::quiet_NaN(),
                        2.0f,
                        std::numeric_limits<float>::infinity(),
                        -std::numeric_limits<float>::infinity() };
  std::ostringstream warnings;
  EXPECT_EQ(canopy::ZeroNonFiniteVoxels(v.data(), v.size(), "--input x.nii", warnings), 3u);
  EXPECT_EQ(v, (std::vector<float>{ 1.0f, 0.0f, 2.0f, 0.0f, 0.0f }));
  EXPECT_EQ(warnings.str(), "canopy: warning: --input x.nii: 3 of 5 voxels are NaN or infinite; they are read as 0\n");
}

TEST(NonFiniteVoxels, NoneIsSilentAndAllIsAnError)
{
  std::vector<float> finite{ 1.0f, 2.0f };
  std::ostringstream warnings;
  EXPECT_EQ(canopy::ZeroNonFiniteVoxels(finite.data(), finite.size(), "w", warnings), 0u);
  EXPECT_EQ(warnings.str(), "");
  std::vector<float> nan(4, std::numeric_limits<float>::quiet_NaN());
  EXPECT_THROW(canopy::ZeroNonFiniteVoxels(nan.data(), nan.size(), "w", warnings), canopy::Error);
}

TEST(NonFiniteVoxels, ReadImageCheckedZeroesThem)
{
  auto volume = Volume::New();
  volume->SetRegions(Volume::SizeType{ { 4, 4, 4 } });
  volume->Allocate();
  volume->FillBuffer(5.0f);
  volume->SetPixel({ { 1, 2, 3 } }, std::numeric_limits<float>::quiet_NaN());
  const auto path = Output("iit-some-nan.nrrd");
  itk::WriteImage(volume, path);
  std::ostringstream warnings;
  const auto         read = canopy::ReadImageChecked<Volume>(path, "--image", warnings);
  EXPECT_EQ(read->GetPixel({ { 1, 2, 3 } }), 0.0f);
  EXPECT_EQ(warnings.str(),
            "canopy: warning: --image " + path + ": 1 of 64 voxels are NaN or infinite; they are read as 0\n");
}

/** niftilib replaces NaN/Inf by 0 while reading, silently: they are counted in the stored bytes. */
class NonFiniteInFormat : public ::testing::TestWithParam<std::string>
{
};

TEST_P(NonFiniteInFormat, CountedInTheFileAndAllNonFiniteIsAnError)
{
  auto volume = Volume::New();
  volume->SetRegions(Volume::SizeType{ { 5, 4, 3 } });
  volume->Allocate();
  volume->FillBuffer(2.0f);
  volume->SetPixel({ { 1, 1, 1 } }, std::numeric_limits<float>::quiet_NaN());
  volume->SetPixel({ { 2, 3, 2 } }, -std::numeric_limits<float>::infinity());
  const auto path = Output("iit-nonfinite" + GetParam());
  itk::WriteImage(volume, path, GetParam().find("gz") != std::string::npos || GetParam() == "-z.mha");
  EXPECT_EQ(canopy::OpenImageChecked(path, "--image").nonFiniteVoxels, 2u);
  std::ostringstream warnings;
  const auto         read = canopy::ReadImageChecked<Volume>(path, "--image", warnings);
  EXPECT_EQ(read->GetPixel({ { 1, 1, 1 } }), 0.0f);
  EXPECT_EQ(warnings.str(),
            "canopy: warning: --image " + path + ": 2 of 60 voxels are NaN or infinite; they are read as 0\n");
  volume->FillBuffer(std::numeric_limits<float>::quiet_NaN());
  itk::WriteImage(volume, path, GetParam().find("gz") != std::string::npos || GetParam() == "-z.mha");
  EXPECT_THROW(canopy::ReadImageChecked<Volume>(path, "--image", warnings), canopy::Error);
}

INSTANTIATE_TEST_SUITE_P(Formats,
                         NonFiniteInFormat,
                         ::testing::Values(".nii", ".nii.gz", ".nrrd", "-gz.nrrd", ".mha", "-z.mha", ".nhdr"),
                         [](const auto & info)
                         {
                           std::string n = info.param;
                           for (auto & c : n)
                             c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

TEST(DicomSeriesCheck, UnevenSlicesAreRefused)
{
  itk::MetaDataDictionary dictionary;
  EXPECT_NO_THROW(canopy::CheckDicomSliceSpacing(dictionary, 2.0, "--input d"));
  itk::EncapsulateMetaData<double>(dictionary, "ITK_non_uniform_sampling_deviation", 2.0);
  EXPECT_THROW(canopy::CheckDicomSliceSpacing(dictionary, 2.0, "--input d"), canopy::Error);
}
} // namespace
