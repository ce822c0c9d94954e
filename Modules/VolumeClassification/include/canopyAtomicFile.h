// Writing output files all-or-nothing: write to a temporary name beside the target, then rename.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace canopy
{
/** Calls write(stream) on "<path>.tmp-<pid>" and renames it to path; on any failure removes the
 * temporary and throws canopy::Error naming the path. */
void
WriteFileAtomically(const std::string & path, const std::function<void(std::ostream &)> & write);

/** The temporary name used for `path` (keeps its extension, so ITK writers pick the right IO). */
std::string
TemporaryPathFor(const std::string & path);

/** Renames temporary to path (same directory), throwing canopy::Error naming both on failure. */
void
CommitTemporaryFile(const std::string & temporary, const std::string & path);
} // namespace canopy
