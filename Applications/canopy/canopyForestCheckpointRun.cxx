#include "canopyForestCheckpointRun.h"

#include "canopy/Errors.h"
#include "canopyDistributedRun.h"
#include "canopyForestModel.h"

#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <sys/stat.h>

namespace canopy::app
{
namespace fs = std::filesystem;

namespace
{
/** Modification time in nanoseconds since 1970 (POSIX stat: std::filesystem's clock has another epoch
 * in C++17 and no conversion). */
std::int64_t
ModifiedNanoseconds(const std::string & path)
{
  struct stat info;
  if (stat(path.c_str(), &info) != 0)
    CANOPY_THROW(path << ": cannot read its modification time");
  return std::int64_t(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
}
} // namespace

nlohmann::json
FileStamp(const std::string & path)
{
  std::uintmax_t bytes = 0;
  std::int64_t   modified = 0;
  if (fs::is_directory(path))
  {
    for (const auto & entry : fs::directory_iterator(path))
      if (entry.is_regular_file())
      {
        bytes += entry.file_size();
        modified = std::max(modified, ModifiedNanoseconds(entry.path().string()));
      }
  }
  else
  {
    bytes = fs::file_size(path);
    modified = ModifiedNanoseconds(path);
  }
  return { { "bytes", bytes }, { "modified", modified } };
}

nlohmann::json
TrainingDataFingerprint(const std::vector<std::string> & images,
                        const std::vector<std::string> & labels,
                        const ForestTrainingSet &        set)
{
  nlohmann::json files = nlohmann::json::array();
  for (std::size_t i = 0; i < images.size(); ++i)
  {
    nlohmann::json file = { { "image", images[i] }, { "label", labels[i] } };
    file["imageFile"] = FileStamp(images[i]);
    file["labelFile"] = FileStamp(labels[i]);
    files.push_back(file);
  }
  // per item (image, or slice with --slices): its samples, FNV-1a over (x, y, z, label)
  std::vector<std::int64_t>  counts(set.images.size(), 0);
  std::vector<std::uint64_t> hashes(set.images.size(), 14695981039346656037ull);
  for (const ForestSample & s : set.samples)
  {
    ++counts[s.image];
    for (std::int32_t v : { s.x, s.y, s.z, s.label })
      for (int b = 0; b < 4; ++b)
        hashes[s.image] = (hashes[s.image] ^ ((std::uint32_t(v) >> (8 * b)) & 0xffu)) * 1099511628211ull;
  }
  nlohmann::json items = nlohmann::json::array();
  for (std::size_t i = 0; i < counts.size(); ++i)
  {
    std::ostringstream hex;
    hex << std::hex << std::setw(16) << std::setfill('0') << hashes[i];
    items.push_back({ { "samples", counts[i] }, { "hash", hex.str() } });
  }
  return { { "files", files }, { "items", items } };
}

ForestCheckpointRun::ForestCheckpointRun(Collective & processes, std::string path, bool restart, bool quiet)
  : m_Processes(processes)
  , m_Path(std::move(path))
  , m_Quiet(quiet)
{
  if (const char * stop = std::getenv("CANOPY_TEST_STOP_AFTER_TREES"))
    m_StopAfter = std::atoi(stop);
  OnEveryProcess(processes,
                 "reading the checkpoint",
                 [&]
                 {
                   if (processes.Rank() != 0)
                     return;
                   if (restart)
                   {
                     std::error_code ignored;
                     if (fs::remove(m_Path, ignored) && !m_Quiet)
                       std::cout << "--restart: removed the checkpoint " << m_Path << '\n';
                     return;
                   }
                   if (!fs::exists(m_Path))
                     return;
                   try
                   {
                     m_Saved = ReadForestCheckpoint(m_Path);
                   }
                   catch (const itk::ExceptionObject & e) // canopy::Error: its message, without the source line
                   {
                     CANOPY_THROW("--checkpoint " << m_Path << ": cannot resume: " << e.GetDescription()
                                                  << " (delete it, or pass --restart to discard it)");
                   }
                   catch (const std::exception & e)
                   {
                     CANOPY_THROW("--checkpoint " << m_Path << ": cannot resume: " << e.what()
                                                  << " (delete it, or pass --restart to discard it)");
                   }
                 });
}

void
ForestCheckpointRun::Prepare(ForestTrainingOptions & forest, nlohmann::json arguments, const nlohmann::json & myData)
{
  const nlohmann::json parts = GatherReports(m_Processes, myData);
  if (m_Processes.Rank() == 0)
  {
    m_Fingerprint = std::move(arguments);
    nlohmann::json files = nlohmann::json::array(), items = nlohmann::json::array();
    std::int64_t   samples = 0;
    for (const auto & part : parts)
    {
      for (const auto & f : part["files"])
        files.push_back(f);
      for (const auto & i : part["items"])
      {
        items.push_back(i);
        samples += i["samples"].get<std::int64_t>();
      }
    }
    m_Fingerprint["samples"] = samples;
    m_Fingerprint["trainingFiles"] = files;
    m_Fingerprint["trainingItems"] = items;
  }
  OnEveryProcess(m_Processes,
                 "checking the checkpoint",
                 [&]
                 {
                   if (!m_Saved)
                     return;
                   const std::string d = DescribeFingerprintDifference(m_Saved->fingerprint, m_Fingerprint);
                   if (!d.empty())
                     CANOPY_THROW("--checkpoint " << m_Path << " was made by another training: " << d
                                                  << " (rerun with the arguments and inputs it was made with, or "
                                                     "pass --restart to discard it)");
                 });
  // every process grows the remaining trees from rank 0's finished ones
  std::string  text = m_Saved ? ForestModelToJsonString(m_Saved->trees) : std::string();
  std::int64_t length = std::int64_t(text.size());
  m_Processes.Broadcast(&length, sizeof length, 0);
  text.resize(std::size_t(length));
  if (length > 0)
  {
    m_Processes.Broadcast(text.data(), text.size(), 0);
    m_Finished = ForestModelFromJsonString(text, m_Path);
    forest.finishedTrees = &m_Finished;
    if (m_Processes.Rank() == 0) // also with --quiet: what the run starts from
      std::cout << "resuming from " << m_Path << ": " << m_Finished.NumberOfTrees() << " of " << forest.numTrees
                << " trees grown\n";
  }
  m_Saved.reset();
  forest.afterTree = [this](const ForestModel & trees) { AfterTree(trees); };
}

void
ForestCheckpointRun::AfterTree(const ForestModel & trees)
{
  if (m_Processes.Rank() == 0)
    WriteForestCheckpoint({ m_Fingerprint, trees }, m_Path);
  if (m_StopAfter > 0 && trees.NumberOfTrees() == m_StopAfter)
  {
    m_Processes.AllTrue(true); // the others wait for rank 0's checkpoint
    if (m_Processes.Rank() == 0)
      std::cerr << "canopy: stopped after " << m_StopAfter << " trees (CANOPY_TEST_STOP_AFTER_TREES, for tests)\n";
    std::exit(kTestStopExitCode); // MPI_Finalize runs at exit
  }
}

void
ForestCheckpointRun::Finish()
{
  std::error_code ignored;
  if (m_Processes.Rank() == 0)
    fs::remove(m_Path, ignored);
}

} // namespace canopy::app
