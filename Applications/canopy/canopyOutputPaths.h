// Checks of a command's output paths before any work is done, so that a run that cannot write
// where it was asked to fails at once, leaves no output behind and never overwrites an input.
#pragma once

#include <string>
#include <vector>

namespace canopy::app
{
/** An option and the path given to it (empty when the option was not given). */
struct NamedPath
{
  std::string option;
  std::string path;
};

/** Throws canopy::Error naming the option, the path and the problem when an output is an existing
 * folder, lies in a folder that is missing or cannot be written (probed by creating and removing the
 * output's temporary file), is the same file as one of `inputs`, or is the same path as another
 * output. Empty paths are skipped. */
void
CheckOutputPaths(const std::vector<NamedPath> & outputs, const std::vector<NamedPath> & inputs);

/** For an output that is a folder (msd-experiment --out): it is an existing writable folder, or its
 * parent folder exists and is writable (the command creates the last component). */
void
CheckOutputFolder(const NamedPath & folder);
} // namespace canopy::app
