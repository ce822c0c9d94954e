#include "canopyOutputPaths.h"

#include "canopy/Errors.h"
#include "canopy/AtomicFile.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace canopy::app
{
namespace
{
namespace fs = std::filesystem;

fs::path
FolderOf(const std::string & path)
{
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

/** The folder exists, is a folder, and a new file can be created in it (root ignores permission
 * bits, so only creating a file tells). */
void
RequireWritableFolder(const NamedPath & output, const fs::path & folder, const std::string & probe)
{
  std::error_code error;
  if (!fs::exists(folder, error))
  {
    CANOPY_THROW(output.option << " " << output.path << ": the folder " << folder.string() << " does not exist");
  }
  if (!fs::is_directory(folder, error))
  {
    CANOPY_THROW(output.option << " " << output.path << ": " << folder.string() << " is not a folder");
  }
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
  {
    const int why = errno;
    if (why != EEXIST)
    {
      CANOPY_THROW(output.option << " " << output.path << ": cannot write in the folder " << folder.string() << " ("
                                 << std::strerror(why) << ")");
    }
    return; // a temporary of that name exists already: the folder is writable enough to have it
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

/** Same file (both exist) or, when the output does not exist yet, the same path. */
bool
SamePath(const std::string & a, const std::string & b)
{
  std::error_code error;
  if (fs::exists(a, error) && fs::exists(b, error))
  {
    return fs::equivalent(a, b, error);
  }
  return fs::weakly_canonical(a, error) == fs::weakly_canonical(b, error);
}
} // namespace

void
CheckOutputPaths(const std::vector<NamedPath> & outputs, const std::vector<NamedPath> & inputs)
{
  for (std::size_t i = 0; i < outputs.size(); ++i)
  {
    const NamedPath & output = outputs[i];
    if (output.path.empty())
    {
      continue;
    }
    for (const NamedPath & input : inputs)
    {
      if (!input.path.empty() && SamePath(output.path, input.path))
      {
        CANOPY_THROW(output.option << " " << output.path << ": is also " << input.option
                                   << "; writing it would destroy that input (give another output name)");
      }
    }
    for (std::size_t j = 0; j < i; ++j)
    {
      if (!outputs[j].path.empty() && SamePath(output.path, outputs[j].path))
      {
        CANOPY_THROW(output.option << " " << output.path << ": is also " << outputs[j].option
                                   << " (give each output its own name)");
      }
    }
    std::error_code error;
    if (fs::is_directory(output.path, error))
    {
      CANOPY_THROW(output.option << " " << output.path << ": is a folder (give a file name)");
    }
    RequireWritableFolder(output, FolderOf(output.path), TemporaryPathFor(output.path));
  }
}

void
CheckOutputFolder(const NamedPath & folder)
{
  std::error_code error;
  if (fs::exists(folder.path, error))
  {
    if (!fs::is_directory(folder.path, error))
    {
      CANOPY_THROW(folder.option << " " << folder.path << ": is a file, not a folder");
    }
    RequireWritableFolder(folder, folder.path, (fs::path(folder.path) / ".canopy-write-probe").string());
    return;
  }
  const fs::path trimmed = fs::path(folder.path).lexically_normal();
  const fs::path parent = trimmed.has_filename() ? trimmed.parent_path() : trimmed.parent_path().parent_path();
  RequireWritableFolder(folder,
                        parent.empty() ? fs::path(".") : parent,
                        ((parent.empty() ? fs::path(".") : parent) / ".canopy-write-probe").string());
}
} // namespace canopy::app
