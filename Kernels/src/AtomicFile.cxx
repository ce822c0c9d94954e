#include "canopy/AtomicFile.h"

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

StagedOutputs::~StagedOutputs()
{
  std::error_code ignored;
  for (const auto & written : m_Written)
    std::filesystem::remove(written.first, ignored);
}

void
StagedOutputs::Write(const std::string & path, const std::function<void(const std::string & temporary)> & write)
{
  for (const auto & written : m_Written)
  {
    if (std::filesystem::path(written.second).lexically_normal() == std::filesystem::path(path).lexically_normal())
    {
      CANOPY_THROW(path << ": named as two outputs of one command");
    }
  }
  const std::string temporary = TemporaryPathFor(path);
  auto              namingPath = [&](std::string message)
  {
    for (auto at = message.find(temporary); at != std::string::npos; at = message.find(temporary, at + path.size()))
      message.replace(at, temporary.size(), path);
    return message;
  };
  try
  {
    write(temporary);
  }
  catch (const itk::ExceptionObject & e)
  {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    CANOPY_THROW(namingPath(e.GetDescription()));
  }
  catch (const std::exception & e)
  {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    CANOPY_THROW(namingPath(e.what()));
  }
  m_Written.emplace_back(temporary, path);
}

void
StagedOutputs::Commit()
{
  while (!m_Written.empty())
  {
    const auto written = m_Written.front();
    m_Written.erase(m_Written.begin());
    CommitTemporaryFile(written.first, written.second); // on failure the destructor removes the rest
  }
}

} // namespace canopy
