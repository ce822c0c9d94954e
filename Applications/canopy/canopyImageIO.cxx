#include "canopyImageIO.h"

#include "canopy/Errors.h"
#include "canopy/AtomicFile.h"
#include "canopyCheckedImageReader.h"
#include "canopyDicomSeriesCheck.h"
#include "itkGDCMImageIO.h"
#include "itkGDCMSeriesFileNames.h"
#include "itkImageFileReader.h"
#include "itkImageFileWriter.h"
#include "itkImageIOFactory.h"
#include "itkImageSeriesReader.h"
#include "itkVectorImage.h"

#include <filesystem>

namespace canopy::app
{
namespace
{
void
CheckScalar3D(itk::ImageIOBase * io, const std::string & path, const std::string & parameter)
{
  const unsigned dims = io->GetNumberOfDimensions();
  bool           volume = dims == 3 || (dims == 4 && io->GetDimensions(3) == 1);
  if (!volume)
  {
    CANOPY_THROW(parameter << " " << path << ": expected a 3D volume, the file has " << dims << " dimension(s)");
  }
  if (io->GetNumberOfComponents() != 1)
  {
    CANOPY_THROW(parameter << " " << path << ": expected a scalar image, the file has " << io->GetNumberOfComponents()
                           << " components per voxel");
  }
}

FloatVolume::Pointer
ReadDicomSeries(const std::string & folder, const std::string & parameter)
{
  auto names = itk::GDCMSeriesFileNames::New();
  names->SetUseSeriesDetails(true);
  names->SetDirectory(folder);
  const auto & series = names->GetSeriesUIDs();
  if (series.empty())
  {
    CANOPY_THROW(parameter << " " << folder << ": the folder holds no DICOM series");
  }
  const auto        files = names->GetFileNames(series.front());
  const std::string where = parameter + " " + folder;
  CheckDicomFiles(files, where);
  auto reader = itk::ImageSeriesReader<FloatVolume>::New();
  reader->SetImageIO(itk::GDCMImageIO::New());
  reader->SetFileNames(files);
  reader->SetSpacingWarningRelThreshold(1e30); // unevenly spaced slices are an error below, not ITK's warning
  reader->Update();
  FloatVolume::Pointer volume = reader->GetOutput();
  CheckDicomSliceSpacing(volume->GetMetaDataDictionary(), volume->GetSpacing()[2], where);
  ZeroNonFiniteVoxels(volume->GetBufferPointer(), volume->GetPixelContainer()->Size(), where, std::cerr);
  return volume;
}
} // namespace

FloatVolume::Pointer
ReadVolume(const std::string & path, const std::string & parameter)
{
  if (!std::filesystem::exists(path))
  {
    CANOPY_THROW(parameter << " " << path << ": no such file or folder");
  }
  FloatVolume::Pointer volume;
  try
  {
    if (std::filesystem::is_directory(path))
    {
      volume = ReadDicomSeries(path, parameter);
    }
    else
    {
      const auto file = OpenImageChecked(path, parameter);
      CheckScalar3D(file.io, path, parameter);
      volume = ReadImageChecked<FloatVolume>(file, path, parameter);
    }
  }
  catch (const canopy::Error &)
  {
    throw;
  }
  catch (const itk::ExceptionObject & e)
  {
    CANOPY_THROW(parameter << " " << path << ": cannot read the volume (" << OneLine(e.GetDescription()) << ")");
  }
  const auto size = volume->GetLargestPossibleRegion().GetSize();
  if (size[0] == 0 || size[1] == 0 || size[2] == 0)
  {
    CANOPY_THROW(parameter << " " << path << ": the volume is empty");
  }
  if (size[0] * size[1] * size[2] == 1)
  {
    CANOPY_THROW(parameter << " " << path << ": the volume holds a single voxel");
  }
  return volume;
}

MaskVolume::Pointer
ReadMask(const std::string & path, const std::string & parameter, const std::vector<int> & positiveLabels)
{
  const auto labels = ReadVolume(path, parameter);
  auto       mask = MaskVolume::New();
  mask->CopyInformation(labels);
  mask->SetRegions(labels->GetLargestPossibleRegion());
  mask->Allocate();
  const auto    n = labels->GetLargestPossibleRegion().GetNumberOfPixels();
  const float * in = labels->GetBufferPointer();
  std::int64_t  positives = 0;
  for (itk::SizeValueType i = 0; i < n; ++i)
  {
    const long value = std::lround(in[i]);
    bool       positive = positiveLabels.empty()
                            ? value != 0
                            : std::find(positiveLabels.begin(), positiveLabels.end(), value) != positiveLabels.end();
    mask->GetBufferPointer()[i] = positive ? 1 : 0;
    positives += positive;
  }
  if (positives == 0)
  {
    CANOPY_THROW(parameter << " " << path << ": no voxel carries the positive label(s)");
  }
  return mask;
}

void
RequireVolumeFormat(const std::string & path, const std::string & parameter)
{
  if (path.empty())
  {
    return;
  }
  if (!itk::ImageIOFactory::CreateImageIO(TemporaryPathFor(path).c_str(), itk::IOFileModeEnum::WriteMode))
  {
    CANOPY_THROW(parameter << " " << path
                           << ": ITK writes no image format with this extension (use .nii.gz, .nrrd, .mha, ...)");
  }
}

template<typename TImage>
void
WriteVolume(const TImage * image, const std::string & path, const std::string & parameter)
{
  const std::string temporary = TemporaryPathFor(path);
  try
  {
    auto writer = itk::ImageFileWriter<TImage>::New();
    writer->SetInput(image);
    writer->SetFileName(temporary);
    writer->UseCompressionOn();
    writer->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    CANOPY_THROW(parameter << " " << path << ": cannot write the volume (" << e.GetDescription() << ")");
  }
  CommitTemporaryFile(temporary, path);
}

#define CANOPY_INSTANTIATE_WRITE(TImage)                                                                               \
  template void WriteVolume<TImage>(const TImage *, const std::string &, const std::string &);
CANOPY_INSTANTIATE_WRITE(FloatVolume)
CANOPY_INSTANTIATE_WRITE(MaskVolume)
using LabelMap16 = itk::Image<unsigned short, 3>; // canopy synthesize's label maps (FreeSurfer labels exceed 255)
CANOPY_INSTANTIATE_WRITE(LabelMap16)
// Forest outputs (canopy predict-forest), 2D and 3D.
using LabelImage2 = itk::Image<std::int32_t, 2>;
using LabelImage3 = itk::Image<std::int32_t, 3>;
using FloatVectorImage2 = itk::VectorImage<float, 2>;
using FloatVectorImage3 = itk::VectorImage<float, 3>;
using LeafVectorImage2 = itk::VectorImage<std::int32_t, 2>;
using LeafVectorImage3 = itk::VectorImage<std::int32_t, 3>;
CANOPY_INSTANTIATE_WRITE(LabelImage2)
CANOPY_INSTANTIATE_WRITE(LabelImage3)
CANOPY_INSTANTIATE_WRITE(FloatVectorImage2)
CANOPY_INSTANTIATE_WRITE(FloatVectorImage3)
CANOPY_INSTANTIATE_WRITE(LeafVectorImage2)
CANOPY_INSTANTIATE_WRITE(LeafVectorImage3)

} // namespace canopy::app
