// Checks for DICOM series before and after ITK reads them: GDCM keeps a file whose pixel data is
// cut short, and ImageSeriesReader only warns when a slice file is missing.
#pragma once

#include "itkMetaDataDictionary.h"

#include <string>
#include <vector>

namespace canopy
{

/** Each file exists, GDCM reads it, and its native pixel data holds the bytes its rows, columns,
 * samples, frames and bits allocated declare. Throws canopy::Error "<where>: <file>: <problem>". */
void
CheckDicomFiles(const std::vector<std::string> & files, const std::string & where);

/** After itk::ImageSeriesReader: throws when the slice positions deviate from the series' slice
 * spacing by more than 1% (ITK records the deviation as "ITK_non_uniform_sampling_deviation"):
 * a slice file is missing or the series mixes positions. */
void
CheckDicomSliceSpacing(const itk::MetaDataDictionary & dictionary, double sliceSpacing, const std::string & where);

} // namespace canopy
