// PNG files checked with libpng (errors caught) before ITK reads them.
#pragma once

#include <string>

namespace canopy
{
/** Reads the whole PNG `path` with libpng; throws canopy::Error "<where>: not a valid PNG image
 * (libpng: ...)" at the first error instead of letting libpng abort the process. */
void
CheckPngFile(const std::string & path, const std::string & where);
} // namespace canopy
