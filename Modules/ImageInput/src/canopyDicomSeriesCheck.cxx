#include "canopyDicomSeriesCheck.h"

#include "canopy/Errors.h"
#include "canopyVoxelDataCheck.h"
#include "itkMetaDataObject.h"

#include <gdcmExplicitDataElement.h>
#include <gdcmImageReader.h>
#include <gdcmImplicitDataElement.h>

#include <algorithm>

#include <filesystem>

namespace canopy
{

void
CheckDicomFiles(const std::vector<std::string> & files, const std::string & where)
{
  for (const auto & file : files)
  {
    std::error_code ec;
    const auto      size = std::filesystem::file_size(file, ec);
    if (ec || size == 0)
    {
      CANOPY_THROW(where << ": the DICOM file " << file << (ec ? " cannot be read" : " is empty"));
    }
    gdcm::ImageReader reader;
    reader.SetFileName(file.c_str());
    if (!reader.Read())
    {
      CANOPY_THROW(where << ": GDCM cannot read the DICOM file " << file << " (truncated or not DICOM)");
    }
    const gdcm::Image & image = reader.GetImage();
    const auto *        pixels = image.GetDataElement().GetByteValue();
    if (image.GetTransferSyntax().IsEncapsulated() || !pixels)
      continue; // compressed fragments: a short stream fails when decoded
    // GDCM keeps a pixel data element cut short by the end of the file, with its declared length:
    // compare the length of the parsed file (preamble, meta header, data set) with its size instead.
    const std::uint64_t declared = image.GetBufferLength();
    const gdcm::File &  parsed = reader.GetFile();
    const auto &        meta = parsed.GetHeader();
    std::uint64_t       length = meta.GetPreamble().IsEmpty() ? 0 : 128 + 4;
    length += meta.GetLength<gdcm::ExplicitDataElement>();
    length += meta.GetDataSetTransferSyntax().GetNegociatedType() == gdcm::TransferSyntax::Implicit
                ? parsed.GetDataSet().GetLength<gdcm::ImplicitDataElement>()
                : parsed.GetDataSet().GetLength<gdcm::ExplicitDataElement>();
    if (pixels->GetLength() < declared || size < length)
    {
      const std::uint64_t missing = std::max<std::uint64_t>(length > size ? length - size : 0, 0);
      CANOPY_THROW(where << ": the DICOM file " << file << " is truncated (" << FormatBytes(size) << " of the "
                         << FormatBytes(length) << " its elements declare; its pixel data holds "
                         << FormatBytes(declared > missing ? declared - missing : 0) << " of " << FormatBytes(declared)
                         << ")");
    }
  }
}

void
CheckDicomSliceSpacing(const itk::MetaDataDictionary & dictionary, double sliceSpacing, const std::string & where)
{
  double deviation = 0.0;
  if (itk::ExposeMetaData<double>(dictionary, "ITK_non_uniform_sampling_deviation", deviation) &&
      deviation > 0.01 * sliceSpacing)
  {
    CANOPY_THROW(where << ": the DICOM slices are not evenly spaced (a gap of up to " << deviation << " mm beyond the "
                       << sliceSpacing << " mm slice spacing; a slice file is missing?)");
  }
}

} // namespace canopy
