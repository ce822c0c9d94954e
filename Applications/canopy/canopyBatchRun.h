// Batch inference over a list of volumes (--inputs dataset.json|FOLDER --output-dir DIR), shared by the
// commands that label one volume at a time (predict-forest, segment): the list, the output names, the
// spread over the processes of an MPI run (--distributed; else one after the other), a progress line
// per volume, a failed volume reported and skipped (never lost), and the summary report.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace canopy::app
{

struct BatchOptions
{
  std::string    command;            // "predict-forest", for messages and the report
  std::string    doneVerb;           // "predicted": "3 of 4 volumes predicted into DIR"
  std::string    list, outputDir;    // --inputs, --output-dir
  std::string    suffix = ".nii.gz"; // --output-suffix
  std::string    report;             // --report (rank 0 writes it)
  bool           distributed = false, quiet = false;
  std::string    device = "auto"; // --device; each process of a distributed batch gets its own GPU
  nlohmann::json parameters;      // copied into the report (model, mode, ...)
};

/** A folder's volumes (sorted by name; hidden files and detached .raw data skipped), or a dataset.json's
 * "training" images then its "test" entries, resolved against its folder. Throws naming --inputs. */
std::vector<std::string>
BatchInputs(const std::string & list);

/** Runs `one(input, output, device)` for every volume of options.list (volume i on rank i mod N with
 * --distributed); `one` writes the output (atomically) and returns fields for the report's entry (or
 * null). `device` is options.device, or this process's GPU in a distributed batch (DeviceOfProcess). A volume whose
 * `one` throws is reported and skipped; the run then throws naming the first failure (exit 1) after every volume ran
 * and rank 0 wrote the report. A collective call. */
void
RunBatch(const BatchOptions & options,
         const std::function<
           nlohmann::json(const std::string & input, const std::string & output, const std::string & device)> & one);

} // namespace canopy::app
