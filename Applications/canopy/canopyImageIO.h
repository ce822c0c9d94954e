// Reading and writing volumes for the command line: any ITK format (NIfTI, NRRD, MHA, ...) or a
// DICOM series folder; clear errors naming the file; outputs written atomically.
#pragma once

#include "canopyVolumePreparation.h"

#include <string>

namespace canopy::app
{
/** Reads a scalar 3D volume as float. `parameter` names the option in errors (e.g. "--input"). */
FloatVolume::Pointer
ReadVolume(const std::string & path, const std::string & parameter);

/** Reads a label map and returns mask = (label is one of `positiveLabels`), or (label != 0) when the
 * list is empty. */
MaskVolume::Pointer
ReadMask(const std::string & path, const std::string & parameter, const std::vector<int> & positiveLabels);

/** Throws canopy::Error naming the option when ITK has no writer for the file's extension (checked
 * before the work, so an unwritable format does not waste a run). Empty paths pass. */
void
RequireVolumeFormat(const std::string & path, const std::string & parameter);

/** Writes through a temporary file and renames (no half-written output). Compressed when the
 * format supports it. Instantiated for the volumes and forest outputs the commands write
 * (canopyImageIO.cxx). */
template <typename TImage>
void
WriteVolume(const TImage * image, const std::string & path, const std::string & parameter);
} // namespace canopy::app
