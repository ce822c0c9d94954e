#include "canopyVoxelDataCheck.h"

#include "canopyPngCheck.h"

#include "NrrdIO.h"
#include "canopy/Errors.h"
#include "itkImageIOFactory.h"
#include "itkObjectFactoryBase.h"
#include "metaImage.h"
#include "metaUtils.h"
#include "nifti1_io.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

namespace canopy
{
namespace
{
namespace fs = std::filesystem;

/** A data file named in a header is relative to the header's folder unless absolute. */
std::string
BesideHeader(const std::string & header, const std::string & dataFile)
{
  const fs::path data(dataFile);
  return data.is_absolute() ? dataFile : (fs::path(header).parent_path() / data).string();
}

VoxelDataLayout
DescribeNifti(const std::string & path)
{
  VoxelDataLayout layout;
  nifti_set_debug_level(0);
  std::unique_ptr<nifti_image, void (*)(nifti_image *)> nim(nifti_image_read(path.c_str(), 0), nifti_image_free);
  if (!nim || !nim->iname)
  {
    layout.why = "niftilib cannot read the header";
    return layout;
  }
  layout.dataFile = nim->iname;
  layout.voxelBytes = std::uint64_t(nim->nvox) * std::uint64_t(nim->nbyper);
  layout.floatBytes = nim->datatype == DT_FLOAT32 ? 4 : nim->datatype == DT_FLOAT64 ? 8 : 0;
  layout.swapBytes = nim->byteorder != nifti_short_order();
  if (nifti_is_gzfile(nim->iname))
  {
    layout.encoding = VoxelDataLayout::Encoding::Compressed;
    layout.skippedBytes = std::uint64_t(std::max(nim->iname_offset, 0)); // the header is inside the stream
  }
  else
  {
    layout.encoding = VoxelDataLayout::Encoding::Raw;
    layout.offset = std::uint64_t(std::max(nim->iname_offset, 0));
  }
  return layout;
}

/** ITK 5.2 turns a NIfTI header's orientation into a direction matrix by an SVD (netlib) that aborts the
 * process on a NaN and loops forever on huge finite entries (Testing/Fuzz/findings/itk-nifti-*.nii), so
 * the fields it uses are checked with niftilib before ITK reads the header. 1e6 mm bounds any scanner. */
void
CheckNiftiGeometry(const std::string & path, const std::string & where)
{
  nifti_set_debug_level(0);
  std::unique_ptr<nifti_image, void (*)(nifti_image *)> nim(nifti_image_read(path.c_str(), 0), nifti_image_free);
  if (!nim)
  {
    return; // ITK's own header reading reports what is wrong
  }
  const auto check = [&](const char * field, double value)
  {
    if (!std::isfinite(value) || std::abs(value) > 1e6)
    {
      CANOPY_THROW(where << ": the NIfTI header's " << field << " is " << value
                         << " (the geometry must be finite and within 1e6 mm)");
    }
  };
  for (int d = 1; d <= 3; ++d)
  {
    check("pixdim", nim->pixdim[d]);
  }
  if (nim->qform_code > 0)
  {
    for (const double value : { double(nim->quatern_b),
                                double(nim->quatern_c),
                                double(nim->quatern_d),
                                double(nim->qoffset_x),
                                double(nim->qoffset_y),
                                double(nim->qoffset_z) })
    {
      check("qform (quatern_b..qoffset_z)", value);
    }
  }
  if (nim->sform_code > 0)
  {
    for (int row = 0; row < 3; ++row)
    {
      for (int column = 0; column < 4; ++column)
      {
        check("sform (srow_x..srow_z)", nim->sto_xyz.m[row][column]);
      }
    }
  }
}

VoxelDataLayout
DescribeNrrd(const std::string & path)
{
  VoxelDataLayout layout;
  auto            nrrd = std::unique_ptr<Nrrd, Nrrd * (*)(Nrrd *)>(nrrdNew(), nrrdNuke);
  auto nio = std::unique_ptr<NrrdIoState, NrrdIoState * (*)(NrrdIoState *)>(nrrdIoStateNew(), nrrdIoStateNix);
  nio->skipData = 1;
  nio->keepNrrdDataFileOpen = 1; // left positioned at the first voxel byte (after line and byte skips)
  if (nrrdLoad(nrrd.get(), path.c_str(), nio.get()))
  {
    free(biffGetDone(NRRD));
    layout.why = "NrrdIO cannot read the header";
    return layout;
  }
  struct Closer
  {
    FILE * file;
    ~Closer()
    {
      if (file)
        std::fclose(file);
    }
  } open{ nio->dataFile };
  nio->dataFile = nullptr; // closed here, not by nrrdIoStateNix
  if (nio->dataFNArr->len > 1 || nio->dataFNFormat)
  {
    layout.why = "the voxels are split over several data files";
    return layout;
  }
  if (nio->encoding != nrrdEncodingRaw && nio->encoding != nrrdEncodingGzip)
  {
    layout.why = std::string("the data encoding is ") + nio->encoding->name;
    return layout;
  }
  layout.dataFile = nio->dataFNArr->len == 1 ? BesideHeader(path, nio->dataFN[0]) : path;
  layout.voxelBytes = std::uint64_t(nrrdElementNumber(nrrd.get())) * nrrdElementSize(nrrd.get());
  layout.floatBytes = nrrd->type == nrrdTypeFloat ? 4 : nrrd->type == nrrdTypeDouble ? 8 : 0;
  layout.swapBytes = nio->endian != airEndianUnknown && nio->endian != airMyEndian();
  const long position = open.file ? std::ftell(open.file) : -1;
  if (nio->encoding == nrrdEncodingRaw)
  {
    layout.encoding = VoxelDataLayout::Encoding::Raw;
    layout.atEnd = nio->byteSkip == -1;
    layout.offset = position > 0 ? std::uint64_t(position) : 0;
  }
  else
  {
    layout.encoding = VoxelDataLayout::Encoding::Compressed;
    layout.offset = position > 0 ? std::uint64_t(position) : 0; // byte skips apply inside the stream
    layout.skippedBytes = nio->byteSkip > 0 ? std::uint64_t(nio->byteSkip) : 0;
  }
  if (position < 0)
  {
    layout.encoding = VoxelDataLayout::Encoding::Unchecked;
    layout.why = "NrrdIO did not open the data file";
  }
  return layout;
}

VoxelDataLayout
DescribeMeta(const itk::ImageIOBase & io, const std::string & path)
{
  VoxelDataLayout layout;
  std::ifstream   stream(path, std::ios::binary);
  MetaImage       meta;
  if (!stream || !meta.ReadStream(0, &stream, false))
  {
    layout.why = "MetaIO cannot read the header";
    return layout;
  }
  const std::string data = meta.ElementDataFileName();
  if (data == "LIST" || data.find('%') != std::string::npos)
  {
    layout.why = "the voxels are split over several data files";
    return layout;
  }
  const bool local = data == "LOCAL" || data == "Local" || data == "local";
  layout.dataFile = local ? path : BesideHeader(path, data);
  layout.voxelBytes = io.GetImageSizeInBytes();
  layout.floatBytes = meta.ElementType() == MET_FLOAT ? 4 : meta.ElementType() == MET_DOUBLE ? 8 : 0;
  layout.swapBytes = meta.BinaryDataByteOrderMSB() != MET_SystemByteOrderMSB();
  const auto header = local ? std::uint64_t(stream.tellg()) : 0;
  if (meta.CompressedData())
  {
    layout.encoding = VoxelDataLayout::Encoding::Compressed;
    layout.offset = header;
  }
  else
  {
    layout.encoding = VoxelDataLayout::Encoding::Raw;
    layout.atEnd = meta.HeaderSize() == -1;
    layout.offset = meta.HeaderSize() > 0 ? std::uint64_t(meta.HeaderSize()) : header;
  }
  return layout;
}

/** Counts non-finite IEEE floats in a byte stream fed in arbitrary pieces. */
class NonFiniteCounter
{
public:
  NonFiniteCounter(unsigned floatBytes, bool swapBytes, std::uint64_t skip, std::uint64_t limit)
    : m_Bytes(floatBytes)
    , m_Swap(swapBytes)
    , m_Skip(skip)
    , m_Left(limit)
  {
  }
  void Feed(const unsigned char * data, std::uint64_t size)
  {
    const std::uint64_t skipped = std::min(m_Skip, size);
    m_Skip -= skipped;
    data += skipped;
    size = std::min(size - skipped, m_Left);
    m_Left -= size;
    if (m_Bytes == 0)
      return;
    for (std::uint64_t i = 0; i < size; ++i)
    {
      m_Value[m_Have++] = data[i];
      if (m_Have == m_Bytes)
      {
        if (m_Swap)
          std::reverse(m_Value, m_Value + m_Bytes);
        m_Count += m_Bytes == 4 ? !std::isfinite(Load<float>()) : !std::isfinite(Load<double>());
        m_Have = 0;
      }
    }
  }
  std::uint64_t Count() const { return m_Count; }

private:
  template<typename T>
  T Load() const
  {
    T value;
    std::memcpy(&value, m_Value, sizeof value);
    return value;
  }
  unsigned      m_Bytes;
  bool          m_Swap;
  std::uint64_t m_Skip, m_Left, m_Count = 0;
  unsigned char m_Value[8]{};
  unsigned      m_Have = 0;
};

struct InflateResult
{
  std::uint64_t inflated = 0;
  bool          ended = false; ///< every stream reached its end marker
  std::string   error;         ///< zlib's message for corrupt data
};

/** Inflates the gzip or zlib stream(s) from `offset` to the end of the file, counting bytes. */
InflateResult
InflateAll(const std::string & file, std::uint64_t offset, NonFiniteCounter & counter)
{
  InflateResult result;
  std::ifstream in(file, std::ios::binary);
  in.seekg(std::streamoff(offset));
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) // 15 + 32: gzip or zlib header, detected
  {
    result.error = "zlib cannot start";
    return result;
  }
  std::vector<unsigned char> input(1 << 18), output(1 << 20);
  bool                       streamOpen = true;
  while (in)
  {
    in.read(reinterpret_cast<char *>(input.data()), std::streamsize(input.size()));
    z.next_in = input.data();
    z.avail_in = uInt(in.gcount());
    while (z.avail_in > 0)
    {
      if (!streamOpen)
      {
        if (z.next_in[0] != 0x1f) // not another gzip member: trailing bytes end the data
        {
          inflateEnd(&z);
          return result;
        }
        inflateReset(&z);
        streamOpen = true;
        result.ended = false;
      }
      z.next_out = output.data();
      z.avail_out = uInt(output.size());
      const int status = inflate(&z, Z_NO_FLUSH);
      result.inflated += output.size() - z.avail_out;
      counter.Feed(output.data(), output.size() - z.avail_out);
      if (status == Z_STREAM_END)
      {
        result.ended = true;
        streamOpen = false;
      }
      else if (status != Z_OK && status != Z_BUF_ERROR)
      {
        result.error = z.msg ? z.msg : "inflate error " + std::to_string(status);
        inflateEnd(&z);
        return result;
      }
    }
  }
  inflateEnd(&z);
  return result;
}
/** The reader for `path`, chosen by its file name first: ITK's factory asks every registered reader
 * whether it can read the file, and GDCM's probe (ITK's DICOM reader) aborts the process on some
 * non-DICOM bytes (docs/RELIABILITY.md, finding 11: a `.nrrd` holding "DICM" where DICOM's magic sits).
 * So a file whose extension some readers claim is offered to those readers only (extensionClaimed:
 * true; none of them reading it gives null); any other file goes through ITK's whole probe. */
itk::ImageIOBase::Pointer
ImageIOForFileName(const std::string & path, bool & extensionClaimed)
{
  auto lower = [](std::string text)
  {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return text;
  };
  const std::string name = lower(fs::path(path).filename().string());
  extensionClaimed = false;
  for (const itk::LightObject::Pointer & object : itk::ObjectFactoryBase::CreateAllInstance("itkImageIOBase"))
  {
    auto * io = dynamic_cast<itk::ImageIOBase *>(object.GetPointer());
    if (!io)
      continue;
    for (const std::string & extension : io->GetSupportedReadExtensions())
    {
      const std::string e = lower(extension);
      if (e.size() < 2 || name.size() <= e.size() || name.compare(name.size() - e.size(), e.size(), e) != 0)
        continue;
      extensionClaimed = true;
      if (io->CanReadFile(path.c_str()))
        return io;
      break;
    }
  }
  if (extensionClaimed)
    return nullptr;
  return itk::ImageIOFactory::CreateImageIO(path.c_str(), itk::IOFileModeEnum::ReadMode);
}
} // namespace

std::string
OneLine(const std::string & message)
{
  std::string line;
  bool        space = false;
  for (char c : message)
  {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ')
    {
      space = !line.empty();
      continue;
    }
    if (space)
      line += ' ';
    space = false;
    line += c;
  }
  return line;
}

std::string
FormatBytes(std::uint64_t bytes)
{
  char text[32];
  if (bytes >= 1000000)
    std::snprintf(text, sizeof text, "%.1f MB", bytes / 1e6);
  else if (bytes >= 1000)
    std::snprintf(text, sizeof text, "%.1f kB", bytes / 1e3);
  else
    std::snprintf(text, sizeof text, "%llu bytes", static_cast<unsigned long long>(bytes));
  return text;
}

VoxelDataLayout
DescribeVoxelData(const itk::ImageIOBase & io, const std::string & path)
{
  const std::string kind = io.GetNameOfClass();
  VoxelDataLayout   layout;
  if (kind == "NiftiImageIO")
    layout = DescribeNifti(path);
  else if (kind == "NrrdImageIO")
    layout = DescribeNrrd(path);
  else if (kind == "MetaImageIO")
    layout = DescribeMeta(io, path);
  else
    layout.why = "the " + kind + " format is not checked";
  layout.headerFile = path;
  return layout;
}

std::uint64_t
CheckVoxelData(const VoxelDataLayout & layout, const std::string & where)
{
  if (layout.encoding == VoxelDataLayout::Encoding::Unchecked)
    return 0;
  std::error_code   ec;
  const auto        size = fs::file_size(layout.dataFile, ec);
  const std::string dataFile = " in the data file " + layout.dataFile;
  const bool detached = fs::path(layout.dataFile).lexically_normal() != fs::path(layout.headerFile).lexically_normal();
  if (ec)
  {
    CANOPY_THROW(where << ": the data file " << layout.dataFile << " cannot be read (" << ec.message() << ")");
  }
  if (layout.encoding == VoxelDataLayout::Encoding::Raw)
  {
    const std::uint64_t available = layout.atEnd ? size : (size > layout.offset ? size - layout.offset : 0);
    if (available < layout.voxelBytes)
    {
      CANOPY_THROW(where << ": the voxel data is short (" << FormatBytes(available) << " of "
                         << FormatBytes(layout.voxelBytes) << " voxel bytes" << (detached ? dataFile : "")
                         << "; the file is truncated)");
    }
    NonFiniteCounter counter(layout.floatBytes, layout.swapBytes, 0, layout.voxelBytes);
    if (layout.floatBytes > 0)
    {
      std::ifstream in(layout.dataFile, std::ios::binary);
      in.seekg(std::streamoff(layout.atEnd ? size - layout.voxelBytes : layout.offset));
      std::vector<unsigned char> buffer(1 << 20);
      while (in)
      {
        in.read(reinterpret_cast<char *>(buffer.data()), std::streamsize(buffer.size()));
        counter.Feed(buffer.data(), std::uint64_t(in.gcount()));
      }
    }
    return counter.Count();
  }
  NonFiniteCounter counter(layout.floatBytes, layout.swapBytes, layout.skippedBytes, layout.voxelBytes);
  const auto       inflated = InflateAll(layout.dataFile, layout.offset, counter);
  const auto       voxels = inflated.inflated > layout.skippedBytes ? inflated.inflated - layout.skippedBytes : 0;
  if (!inflated.error.empty())
  {
    CANOPY_THROW(where << ": the compressed data is corrupt (zlib: " << inflated.error << ", after "
                       << FormatBytes(voxels) << " of " << FormatBytes(layout.voxelBytes) << " voxel bytes"
                       << (detached ? dataFile : "") << ")");
  }
  if (!inflated.ended)
  {
    CANOPY_THROW(where << ": the compressed data ends early (stream truncated; " << FormatBytes(voxels) << " of "
                       << FormatBytes(layout.voxelBytes) << " voxel bytes" << (detached ? dataFile : "") << ")");
  }
  if (voxels < layout.voxelBytes)
  {
    CANOPY_THROW(where << ": the voxel data is short (the compressed data holds " << FormatBytes(voxels) << " of "
                       << FormatBytes(layout.voxelBytes) << " voxel bytes" << (detached ? dataFile : "") << ")");
  }
  return counter.Count();
}

CheckedImageFile
OpenImageChecked(const std::string & path, const std::string & parameter)
{
  const std::string where = parameter + " " + path;
  std::error_code   ec;
  if (!fs::exists(path, ec))
  {
    CANOPY_THROW(where << ": no such file or folder");
  }
  if (fs::is_directory(path, ec))
  {
    CANOPY_THROW(where << ": a folder, not an image file");
  }
  if (fs::file_size(path, ec) == 0 && !ec)
  {
    CANOPY_THROW(where << ": the file is empty (0 bytes)");
  }
  bool extensionClaimed = false;
  auto io = ImageIOForFileName(path, extensionClaimed);
  if (!io)
  {
    CANOPY_THROW(where << ": not an image format ITK can read"
                       << (extensionClaimed ? " (no reader of its file name's extension can read it)" : ""));
  }
  if (std::string(io->GetNameOfClass()) == "NiftiImageIO")
  {
    CheckNiftiGeometry(path, where);
  }
  if (std::string(io->GetNameOfClass()) == "PNGImageIO")
  {
    CheckPngFile(path, where);
  }
  try
  {
    io->SetFileName(path);
    io->ReadImageInformation();
  }
  catch (const itk::ExceptionObject & e)
  {
    CANOPY_THROW(where << ": cannot read the image header (" << OneLine(e.GetDescription()) << ")");
  }
  for (unsigned d = 0; d < io->GetNumberOfDimensions(); ++d)
  {
    if (io->GetDimensions(d) == 0)
    {
      CANOPY_THROW(where << ": the image is empty (no voxels along axis " << d << ")");
    }
    const double spacing = io->GetSpacing(d);
    if (!(spacing > 0.0) || !std::isfinite(spacing))
    {
      CANOPY_THROW(where << ": the voxel spacing along axis " << d << " is " << spacing
                         << " (it must be positive and finite)");
    }
  }
  const auto nonFinite = CheckVoxelData(DescribeVoxelData(*io, path), where);
  return { io, nonFinite };
}

} // namespace canopy
