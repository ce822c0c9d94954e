// canopy predict-forest --inputs LIST --output-dir DIR: batch inference over a dataset.json or a
// folder of volumes (canopyBatchRun.h), each volume through the same code as one --input.
#include "canopy/Errors.h"
#include "canopyBatchRun.h"
#include "canopyRuns.h"

#include <filesystem>

namespace canopy::app
{

void
RunPredictForestBatch(const PredictForestArguments & a,
                      const std::string &            list,
                      const std::string &            outputDir,
                      const std::string &            suffix,
                      bool                           distributed)
{
  if (!a.referencePoses.empty() && !std::filesystem::is_directory(a.referencePoses))
  {
    CANOPY_THROW("--reference-poses " << a.referencePoses
                                      << ": a batch needs a folder of NAME.poses.json (canopy detect --output-dir)");
  }
  BatchOptions o;
  o.command = "predict-forest";
  o.doneVerb = "predicted";
  o.list = list;
  o.outputDir = outputDir;
  o.suffix = suffix;
  o.report = a.report;
  o.distributed = distributed;
  o.quiet = a.quiet;
  o.device = a.device;
  o.parameters = { { "model", a.model }, { "mode", a.mode } };
  RunBatch(o,
           [&](const std::string & input, const std::string & output, const std::string & device)
           {
             PredictForestArguments one = a;
             one.input = input;
             one.output = output;
             one.device = device;
             one.report.clear();
             one.segmentation.clear();
             one.quiet = true;
             return nlohmann::json{ { "backend", RunPredictForest(one).backend } };
           });
}

} // namespace canopy::app
