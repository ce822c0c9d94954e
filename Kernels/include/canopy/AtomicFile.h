// Writing output files all-or-nothing: write to a temporary name beside the target, then rename.
// Host only; shared by every module and command that writes results.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

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

/** All the outputs of one command, all or nothing: each is written under its temporary name, and
 * Commit renames them into place only after every one was written. Outputs not committed are removed
 * when the object goes, so a command that fails half-way leaves none of its outputs. (A rename that
 * fails during Commit, rare in one folder, is reported; the outputs renamed before it stay.) */
class StagedOutputs
{
public:
  StagedOutputs() = default;
  StagedOutputs(const StagedOutputs &) = delete;
  StagedOutputs & operator=(const StagedOutputs &) = delete;
  ~StagedOutputs();

  /** Calls write(temporary) for the output `path`. Errors that name the temporary are re-thrown as
   * canopy::Error naming `path`; the same path twice is an error. */
  void Write(const std::string & path, const std::function<void(const std::string & temporary)> & write);

  /** Renames every written output into place. */
  void Commit();

private:
  std::vector<std::pair<std::string, std::string>> m_Written; // temporary, final path
};
} // namespace canopy
