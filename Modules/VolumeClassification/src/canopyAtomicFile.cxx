#include "canopyAtomicFile.h"

#include "canopy/Errors.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace canopy
{

std::string
TemporaryPathFor(const std::string & path)
{
  const std::filesystem::path p(path);
  std::string                 extension = p.extension().string();
  std::string                 stem = p.stem().string();
  if (extension == ".gz") // keep ".nii.gz" whole so ITK chooses NIfTI
  {
    extension = std::filesystem::path(stem).extension().string() + extension;
    stem = std::filesystem::path(stem).stem().string();
  }
  return (p.parent_path() / ("." + stem + ".tmp-" + std::to_string(::getpid()) + extension)).string();
}

void
CommitTemporaryFile(const std::string & temporary, const std::string & path)
{
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error)
  {
    std::filesystem::remove(temporary, error);
    CANOPY_THROW(path << ": cannot move the finished output into place (" << error.message() << ")");
  }
}

void
WriteFileAtomically(const std::string & path, const std::function<void(std::ostream &)> & write)
{
  const std::string temporary = TemporaryPathFor(path);
  try
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out)
    {
      CANOPY_THROW(path << ": cannot write (is the folder missing or read-only?)");
    }
    write(out);
    out.flush();
    if (!out)
    {
      CANOPY_THROW(path << ": writing failed (disk full?)");
    }
  }
  catch (...)
  {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
  CommitTemporaryFile(temporary, path);
}

} // namespace canopy
