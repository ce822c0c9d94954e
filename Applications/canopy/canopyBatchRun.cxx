// Batch inference over a list of volumes, shared by predict-forest and segment (canopyBatchRun.h).
#include "canopyBatchRun.h"

#include "canopy/Errors.h"
#include "canopyDistributedRun.h"
#include "canopyMpiCollective.h"
#include "canopyProgress.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

namespace canopy::app
{
namespace
{
namespace fs = std::filesystem;

bool
EndsWith(const std::string & s, const std::string & end)
{
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

const char * const kVolumeExtensions[] = { ".nii.gz", ".nii", ".nrrd", ".nhdr", ".mha", ".mhd" };

/** The file name without its image extension ("case_001.nii.gz" -> "case_001"). */
std::string
Stem(const std::string & path)
{
  const std::string name = fs::path(path).filename().string();
  for (const char * e : kVolumeExtensions)
    if (EndsWith(name, e))
      return name.substr(0, name.size() - std::string(e).size());
  return fs::path(name).stem().string();
}

} // namespace

std::vector<std::string>
BatchInputs(const std::string & list)
{
  std::vector<std::string> inputs;
  if (fs::is_directory(list))
  {
    for (const auto & entry : fs::directory_iterator(list))
    {
      const std::string name = entry.path().filename().string();
      const bool        volume = std::any_of(
        std::begin(kVolumeExtensions), std::end(kVolumeExtensions), [&](const char * e) { return EndsWith(name, e); });
      if (entry.is_regular_file() && volume && name[0] != '.')
        inputs.push_back(entry.path().string());
    }
    std::sort(inputs.begin(), inputs.end());
    if (inputs.empty())
      CANOPY_THROW("--inputs " << list << ": no volume (.nii.gz, .nii, .nrrd, .nhdr, .mha, .mhd) in the folder");
    return inputs;
  }
  std::ifstream in(list);
  if (!in)
    CANOPY_THROW("--inputs " << list << ": cannot open (give a dataset.json or a folder)");
  nlohmann::json doc;
  try
  {
    in >> doc;
  }
  catch (const nlohmann::json::exception & e)
  {
    CANOPY_THROW("--inputs " << list << ": not valid JSON (" << e.what() << ")");
  }
  const fs::path root = fs::path(list).parent_path();
  auto           add = [&](const nlohmann::json & path)
  {
    if (!path.is_string())
      CANOPY_THROW("--inputs " << list << ": an image entry is not a string");
    inputs.push_back((root / path.get<std::string>()).lexically_normal().string());
  };
  if (doc.is_object() && doc.contains("training") && doc["training"].is_array())
    for (const auto & entry : doc["training"])
    {
      if (!entry.is_object() || !entry.contains("image"))
        CANOPY_THROW("--inputs " << list << ": every \"training\" entry needs an \"image\"");
      add(entry["image"]);
    }
  if (doc.is_object() && doc.contains("test") && doc["test"].is_array())
    for (const auto & entry : doc["test"])
      add(entry.is_object() && entry.contains("image") ? entry["image"] : entry);
  if (inputs.empty())
    CANOPY_THROW("--inputs " << list
                             << ": no \"training\" or \"test\" images (the Medical Segmentation Decathlon layout)");
  return inputs;
}

void
RunBatch(const BatchOptions & o,
         const std::function<
           nlohmann::json(const std::string & input, const std::string & output, const std::string & device)> & one)
{
  RunReport  report(o.command);
  const auto inputs = BatchInputs(o.list);
  if (o.outputDir.empty())
    CANOPY_THROW("--output-dir: give the folder for the outputs of --inputs");
  std::map<std::string, std::string> outputOf; // stem -> first input, to refuse two inputs writing one output
  std::vector<std::string>           outputs;
  for (const auto & input : inputs)
  {
    const std::string stem = Stem(input);
    if (outputOf.count(stem))
      CANOPY_THROW("--inputs " << o.list << ": " << outputOf[stem] << " and " << input << " would both write " << stem
                               << o.suffix);
    outputOf[stem] = input;
    outputs.push_back((fs::path(o.outputDir) / (stem + o.suffix)).string());
  }
  Collective & processes = RunProcesses(o.distributed);
  const int    rank = processes.Rank(), size = processes.Size();
  const std::string device = o.distributed ? DeviceOfProcess(o.device, MpiLocalRank()) : o.device;
  OnEveryProcess(processes,
                 "preparing the output folder",
                 [&]
                 {
                   std::error_code error;
                   fs::create_directories(o.outputDir, error);
                   if (!fs::is_directory(o.outputDir))
                     CANOPY_THROW("--output-dir " << o.outputDir << ": cannot create the folder (" << error.message()
                                                  << ")");
                 });

  // Volumes i with i % size == rank: neighbours (often alike in size) go to different processes.
  nlohmann::json mine = nlohmann::json::array();
  for (std::size_t i = rank; i < inputs.size(); i += size)
  {
    const auto     start = std::chrono::steady_clock::now();
    nlohmann::json item = { { "index", i }, { "input", inputs[i] }, { "output", outputs[i] }, { "rank", rank } };
    try
    {
      const nlohmann::json fields = one(inputs[i], outputs[i], device);
      if (fields.is_object())
        item.update(fields);
      item["status"] = "ok";
    }
    catch (const std::exception & e)
    {
      item["status"] = "failed";
      item["error"] = e.what();
    }
    item["seconds"] = SecondsSince(start);
    if (!o.quiet || item["status"] != "ok") // a failure is always shown
      std::cout << o.command << ": " << (size > 1 ? "rank " + std::to_string(rank) + ": " : "") << "[" << i + 1 << "/"
                << inputs.size() << "] " << inputs[i] << ": "
                << (item["status"] == "ok" ? "-> " + outputs[i] : "FAILED: " + item["error"].get<std::string>()) << '\n'
                << std::flush;
    mine.push_back(item);
  }
  std::int64_t failed = 0;
  for (const auto & item : mine)
    failed += item["status"] == "failed";
  const nlohmann::json ranks = GatherReports(processes, mine);
  processes.SumInPlace(&failed, 1);
  if (rank == 0)
  {
    std::vector<nlohmann::json> volumes;
    for (const auto & r : ranks)
      for (const auto & item : r)
        volumes.push_back(item);
    std::sort(volumes.begin(),
              volumes.end(),
              [](const nlohmann::json & x, const nlohmann::json & y) { return x["index"] < y["index"]; });
    std::vector<std::string> failures;
    for (const auto & v : volumes)
      if (v["status"] == "failed")
        failures.push_back(v["input"].get<std::string>() + ": " + v["error"].get<std::string>());
    if (o.parameters.is_object())
      for (const auto & [key, value] : o.parameters.items())
        report[key] = value;
    report["inputs"] = o.list;
    report["processes"] = size;
    report["volumes"] = volumes;
    report["summary"] = { { "volumes", volumes.size() },
                          { "ok", volumes.size() - failures.size() },
                          { "failed", failures.size() } };
    if (!o.report.empty())
      report.Write(o.report);
    std::cout << o.command << ": " << volumes.size() - failures.size() << " of " << volumes.size() << " volumes "
              << o.doneVerb << " into " << o.outputDir << (size > 1 ? " by " + std::to_string(size) + " processes" : "")
              << (failures.empty() ? "" : ", " + std::to_string(failures.size()) + " failed") << '\n';
    if (!failures.empty())
    {
      CANOPY_THROW(o.command << ": " << failures.size() << " of " << volumes.size() << " volumes failed (skipped; "
                             << (o.report.empty() ? "listed above" : "listed in " + o.report)
                             << "), first: " << failures.front());
    }
  }
  else if (failed > 0)
  {
    CANOPY_THROW("rank " << rank << ": stopping: " << failed << " volume(s) failed (rank 0 reports them)");
  }
}

} // namespace canopy::app
