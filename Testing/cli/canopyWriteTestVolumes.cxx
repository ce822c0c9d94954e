// canopyWriteTestVolumes DIR: writes one small synthetic volume in every input format the canopy
// command line reads (NIfTI, NRRD attached/detached/gzip, MetaImage raw/compressed, a DICOM series)
// plus the odd shapes of the bad-input sweep (2D, 4D, vector, one voxel, NaN, another grid), so CLI
// tests can damage them (truncate, cut) without shipping data. Names are listed in the usage text.
#include "itkGDCMImageIO.h"
#include "itkImageFileWriter.h"
#include "itkImageRegionIteratorWithIndex.h"
#include "itkMetaDataObject.h"
#include "itkVectorImage.h"

#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <string>

namespace
{
using Volume = itk::Image<float, 3>;

/** 24 x 20 x 16 voxels of a smooth ramp plus a bright ball: not constant, and its label is the ball. */
template<typename TImage>
typename TImage::Pointer
Phantom(const typename TImage::SizeType & size, bool label)
{
  auto image = TImage::New();
  image->SetRegions(size);
  typename TImage::SpacingType spacing;
  for (unsigned d = 0; d < TImage::ImageDimension; ++d)
    spacing[d] = 1.0 + 0.25 * d;
  image->SetSpacing(spacing);
  image->Allocate();
  for (itk::ImageRegionIteratorWithIndex<TImage> it(image, image->GetLargestPossibleRegion()); !it.IsAtEnd(); ++it)
  {
    double r2 = 0.0, ramp = 0.0;
    for (unsigned d = 0; d < TImage::ImageDimension; ++d)
    {
      const double centred = it.GetIndex()[d] - 0.5 * (size[d] - 1);
      r2 += centred * centred;
      ramp += it.GetIndex()[d];
    }
    const bool inside = r2 < 25.0;
    it.Set(label ? (inside ? 1 : 0) : static_cast<typename TImage::PixelType>(10.0 * ramp + (inside ? 500.0 : 0.0)));
  }
  return image;
}

template<typename TImage>
void
Write(const TImage * image, const std::string & path, bool compress)
{
  auto writer = itk::ImageFileWriter<TImage>::New();
  writer->SetInput(image);
  writer->SetFileName(path);
  writer->SetUseCompression(compress);
  writer->Update();
}

/** One DICOM file per axial slice (int16 MR), with the position/orientation tags a series reader sorts on. */
void
WriteDicomSeries(const Volume * volume, const std::string & folder)
{
  using Slice = itk::Image<short, 2>;
  std::filesystem::create_directories(folder);
  const auto        size = volume->GetLargestPossibleRegion().GetSize();
  const auto        spacing = volume->GetSpacing();
  const std::string study = "1.2.826.0.1.3680043.2.1125.1.1", series = study + ".2";
  for (unsigned z = 0; z < size[2]; ++z)
  {
    auto slice = Slice::New();
    slice->SetRegions(Slice::SizeType{ { size[0], size[1] } });
    Slice::SpacingType s;
    s[0] = spacing[0];
    s[1] = spacing[1];
    slice->SetSpacing(s);
    slice->Allocate();
    for (unsigned y = 0; y < size[1]; ++y)
      for (unsigned x = 0; x < size[0]; ++x)
        slice->SetPixel({ { x, y } }, static_cast<short>(volume->GetPixel({ { x, y, z } })));
    auto & tags = slice->GetMetaDataDictionary();
    auto   set = [&tags](const std::string & key, const std::string & value)
    { itk::EncapsulateMetaData<std::string>(tags, key, value); };
    set("0008|0016", "1.2.840.10008.5.1.4.1.1.4"); // MR Image Storage
    set("0008|0018", series + "." + std::to_string(z + 1));
    set("0008|0060", "MR");
    set("0020|000d", study);
    set("0020|000e", series);
    set("0020|0013", std::to_string(z + 1));
    set("0020|0032", "0\\0\\" + std::to_string(z * spacing[2]));
    set("0020|0037", "1\\0\\0\\0\\1\\0");
    set("0018|0050", std::to_string(spacing[2]));
    set("0028|0004", "MONOCHROME2");
    set("0028|0030", std::to_string(spacing[1]) + "\\" + std::to_string(spacing[0]));
    auto io = itk::GDCMImageIO::New();
    io->KeepOriginalUIDOn();
    auto writer = itk::ImageFileWriter<Slice>::New();
    writer->SetInput(slice);
    writer->SetImageIO(io);
    writer->SetFileName(folder + "/slice" + std::to_string(100 + z) + ".dcm");
    writer->Update();
  }
}
} // namespace

int
main(int argc, char ** argv)
{
  if (argc != 2)
  {
    std::cerr << "usage: canopyWriteTestVolumes DIR\n"
                 "writes volume.{nii,nii.gz,nrrd,mha} volume-gzip.nrrd volume-detached.nhdr(+.raw)\n"
                 "volume-detached-gzip.nhdr(+.raw.gz) volume-compressed.mha volume-mhd.mhd(+.raw) dicom/\n"
                 "label.nii.gz label-other-grid.nii.gz scribbles.nii.gz all-nan.nii.gz some-nan.nii.gz slice2d.nii.gz\n"
                 "volume4d.nii.gz vector.nrrd one-voxel.nii.gz\n";
    return 2;
  }
  const std::string dir = argv[1];
  try
  {
    std::filesystem::create_directories(dir);
    const auto volume = Phantom<Volume>({ { 24, 20, 16 } }, false);
    Write(volume.GetPointer(), dir + "/volume.nii", false);
    Write(volume.GetPointer(), dir + "/volume.nii.gz", true);
    Write(volume.GetPointer(), dir + "/volume.nrrd", false);
    Write(volume.GetPointer(), dir + "/volume-gzip.nrrd", true);
    Write(volume.GetPointer(), dir + "/volume-detached.nhdr", false);
    Write(volume.GetPointer(), dir + "/volume-detached-gzip.nhdr", true);
    Write(volume.GetPointer(), dir + "/volume.mha", false);
    Write(volume.GetPointer(), dir + "/volume-compressed.mha", true);
    Write(volume.GetPointer(), dir + "/volume-mhd.mhd", false);
    WriteDicomSeries(volume, dir + "/dicom");
    Write(Phantom<Volume>({ { 24, 20, 16 } }, true).GetPointer(), dir + "/label.nii.gz", true);
    Write(Phantom<Volume>({ { 20, 20, 16 } }, true).GetPointer(), dir + "/label-other-grid.nii.gz", true);
    // Scribbles on two middle slices: a stroke through the ball (2) and strokes near the borders (1).
    auto scribbles = Phantom<Volume>({ { 24, 20, 16 } }, true);
    scribbles->FillBuffer(0.0f);
    for (int z : { 7, 8 })
      for (int x = 0; x < 24; ++x)
        for (int y = 0; y < 20; ++y)
        {
          const float value =
            (y == 9 || y == 10) && x >= 9 && x <= 14 ? 2.0f : (y == 1 || y == 18 || x == 1 || x == 22 ? 1.0f : 0.0f);
          scribbles->SetPixel({ { x, y, z } }, value);
        }
    Write(scribbles.GetPointer(), dir + "/scribbles.nii.gz", true);

    auto nan = Phantom<Volume>({ { 24, 20, 16 } }, false);
    nan->FillBuffer(std::numeric_limits<float>::quiet_NaN());
    Write(nan.GetPointer(), dir + "/all-nan.nii.gz", true);
    auto some = Phantom<Volume>({ { 24, 20, 16 } }, false);
    some->SetPixel({ { 1, 2, 3 } }, std::numeric_limits<float>::quiet_NaN());
    some->SetPixel({ { 4, 5, 6 } }, std::numeric_limits<float>::quiet_NaN());
    some->SetPixel({ { 7, 8, 9 } }, std::numeric_limits<float>::infinity());
    Write(some.GetPointer(), dir + "/some-nan.nii.gz", true);

    Write(Phantom<itk::Image<float, 2>>({ { 24, 20 } }, false).GetPointer(), dir + "/slice2d.nii.gz", true);
    Write(Phantom<itk::Image<float, 4>>({ { 12, 10, 8, 3 } }, false).GetPointer(), dir + "/volume4d.nii.gz", true);
    Write(Phantom<Volume>({ { 1, 1, 1 } }, false).GetPointer(), dir + "/one-voxel.nii.gz", true);
    auto vector = itk::VectorImage<float, 3>::New();
    vector->SetRegions(Volume::SizeType{ { 8, 8, 8 } });
    vector->SetNumberOfComponentsPerPixel(3);
    vector->Allocate();
    itk::VariableLengthVector<float> value(3);
    value.Fill(1.0f);
    vector->FillBuffer(value);
    Write(vector.GetPointer(), dir + "/vector.nrrd", false);
  }
  catch (const itk::ExceptionObject & e)
  {
    std::cerr << "canopyWriteTestVolumes: " << e.GetDescription() << '\n';
    return 1;
  }
  return 0;
}
