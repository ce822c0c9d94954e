// Checks that a file holds the voxel data its header declares, before ITK reads it: ITK 5.2's
// readers fill a truncated .nii.gz with zeros without a word. The layout comes from each format's own
// library (niftilib, NrrdIO, MetaIO); raw data is checked against the file size, compressed data is
// inflated with zlib to its end marker and counted.
#pragma once

#include "itkImageIOBase.h"

#include <cstdint>
#include <string>

namespace canopy
{

/** Where a file's voxel bytes are stored and how. */
struct VoxelDataLayout
{
  enum class Encoding
  {
    Raw,        ///< voxelBytes bytes at `offset` (or the last voxelBytes bytes when `atEnd`)
    Compressed, ///< a gzip or zlib stream from `offset`, inflating to skippedBytes + voxelBytes
    Unchecked   ///< a format or encoding not checked here; `why` says which
  };
  Encoding      encoding = Encoding::Unchecked;
  std::string   headerFile;    ///< the file named on the command line
  std::string   dataFile;      ///< the file holding the voxels (the header file itself when attached)
  std::uint64_t offset = 0;    ///< where the raw voxels or the compressed stream begin in dataFile
  bool          atEnd = false; ///< raw voxels are the last bytes of dataFile (NRRD byte skip -1, MetaIO HeaderSize -1)
  std::uint64_t skippedBytes = 0;  ///< inflated bytes before the voxels (the header inside a .nii.gz)
  std::uint64_t voxelBytes = 0;    ///< voxel bytes the header declares
  unsigned      floatBytes = 0;    ///< 4 or 8 when the stored voxels are IEEE floats (non-finite ones are counted)
  bool          swapBytes = false; ///< the stored floats are in the other byte order
  std::string   why;               ///< for Unchecked: the reason
};

/** An image file whose header and voxel data passed the checks. */
struct CheckedImageFile
{
  itk::ImageIOBase::Pointer io;
  /** NaN / infinite values among the stored floats, counted before ITK reads: niftilib replaces them
   * by 0 while reading, silently, so the read buffer alone does not show them. */
  std::uint64_t nonFiniteVoxels = 0;
};

/** The voxel layout of `path`, whose header `io` has read (ReadImageInformation): NIfTI through
 * niftilib, NRRD through NrrdIO, MetaImage through MetaIO; other formats are Unchecked. */
VoxelDataLayout
DescribeVoxelData(const itk::ImageIOBase & io, const std::string & path);

/** Throws canopy::Error "<where>: <what is wrong>" when the data file is missing or short, or the
 * compressed stream is corrupt, ends before its end marker or inflates to fewer bytes than declared.
 * Returns the number of non-finite stored floats (0 for other voxel types and Unchecked layouts). */
std::uint64_t
CheckVoxelData(const VoxelDataLayout & layout, const std::string & where);

/** Bytes as people read them: "812 bytes", "3.2 kB", "14.1 MB" (powers of 1000). */
std::string
FormatBytes(std::uint64_t bytes);

/** An ITK or library message on one line: line breaks and the "ITK ERROR: Class(0x...):" prefixes
 * become plain separators, so command-line errors stay one line. */
std::string
OneLine(const std::string & message);

/** Opens `path` for reading: the file exists, ITK has an ImageIO for it, its header reads, every
 * axis has voxels and a positive finite spacing, and the voxel data is all there (CheckVoxelData).
 * Errors are canopy::Error "<parameter> <path>: <what is wrong>". */
CheckedImageFile
OpenImageChecked(const std::string & path, const std::string & parameter);

} // namespace canopy
