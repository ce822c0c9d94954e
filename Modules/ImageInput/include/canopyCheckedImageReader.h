// Reading an image file with every check in one call: the header and voxel data are checked before
// ITK reads (OpenImageChecked), ITK's errors name the file, and non-finite float voxels are counted
// and read as 0 with one warning (ZeroNonFiniteVoxels).
#pragma once

#include "canopy/Errors.h"
#include "canopyNonFiniteVoxels.h"
#include "canopyVoxelDataCheck.h"
#include "itkImageFileReader.h"

#include <iostream>
#include <string>
#include <type_traits>

namespace canopy
{

/** Reads `path` through `file.io` (from OpenImageChecked) as TImage. Errors: canopy::Error
 * "<parameter> <path>: ...". */
template<typename TImage>
typename TImage::Pointer
ReadImageChecked(const CheckedImageFile & file,
                 const std::string &      path,
                 const std::string &      parameter,
                 std::ostream &           warnings = std::cerr)
{
  auto reader = itk::ImageFileReader<TImage>::New();
  reader->SetFileName(path);
  reader->SetImageIO(file.io);
  try
  {
    reader->Update();
  }
  catch (const itk::ExceptionObject & e)
  {
    CANOPY_THROW(parameter << " " << path << ": cannot read the image (" << OneLine(e.GetDescription()) << ")");
  }
  typename TImage::Pointer image = reader->GetOutput();
  image->DisconnectPipeline();
  if constexpr (std::is_same_v<typename TImage::InternalPixelType, float>)
  {
    ZeroNonFiniteVoxels(image->GetBufferPointer(),
                        image->GetPixelContainer()->Size(),
                        parameter + " " + path,
                        warnings,
                        file.nonFiniteVoxels);
  }
  return image;
}

/** OpenImageChecked, then ReadImageChecked. */
template<typename TImage>
typename TImage::Pointer
ReadImageChecked(const std::string & path, const std::string & parameter, std::ostream & warnings = std::cerr)
{
  return ReadImageChecked<TImage>(OpenImageChecked(path, parameter), path, parameter, warnings);
}

} // namespace canopy
