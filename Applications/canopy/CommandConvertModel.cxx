// canopy convert-model: a forest model or auto-context cascade (train-forest) written again as JSON text or
// as CBOR, by the output's extension. A large forest reads several times faster from CBOR (the 429 MB colin27
// brain model: docs/BENCHMARKS.md, "CBOR model files"); JSON stays the readable, diffable default.
#include "canopy/Elapsed.h"
#include "canopy/JsonDocumentWriter.h"
#include "canopyCommands.h"
#include "canopyForestCascade.h"
#include "canopyOutputPaths.h"

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>

namespace canopy::app
{
namespace
{
struct ConvertModelArguments
{
  std::string model, out;
  bool        quiet = false;
};

double
Megabytes(const std::string & path)
{
  return static_cast<double>(std::filesystem::file_size(path)) / 1e6;
}

void
RunConvertModel(const ConvertModelArguments & a)
{
  CheckOutputPaths({ { "--out", a.out } }, { { "--model", a.model } });
  const auto            start = std::chrono::steady_clock::now();
  const ForestModelFile file = ReadForestModelFile(a.model);
  const double          readSeconds = SecondsSince(start);
  const auto            written = std::chrono::steady_clock::now();
  if (file.isCascade)
    WriteForestCascadeJson(file.cascade, a.out);
  else
    WriteForestModelJson(file.cascade.stages.front(), a.out);
  if (a.quiet)
    return;
  std::size_t trees = 0, nodes = 0;
  for (const ForestModel & stage : file.cascade.stages)
  {
    trees += stage.treeRoots.size();
    nodes += stage.nodes.size();
  }
  const bool cbor = ModelEncodingForFileName(a.out) == ModelEncoding::Cbor;
  std::cout << std::fixed << std::setprecision(1) << a.model << " (" << Megabytes(a.model) << " MB, read in "
            << std::setprecision(2) << readSeconds << " s) -> " << a.out << " (" << (cbor ? "CBOR" : "JSON text")
            << ", " << std::setprecision(1) << Megabytes(a.out) << " MB, written in " << std::setprecision(2)
            << SecondsSince(written) << " s): "
            << (file.isCascade ? "a cascade of " + std::to_string(file.cascade.stages.size()) + " stages"
                               : std::string("a forest"))
            << ", " << trees << " trees, " << nodes << " nodes\n";
}
} // namespace

void
RegisterConvertModelCommand(CLI::App & app)
{
  auto   args = std::make_shared<ConvertModelArguments>();
  auto * c = app.add_subcommand("convert-model",
                                "Write a forest model or cascade (train-forest) again as JSON text or as CBOR, by the "
                                "--out file's extension (.cbor: CBOR, which large models read several times faster)");
  c->add_option("--model", args->model, "Forest model or cascade file (JSON text or CBOR)")->required();
  c->add_option("--out", args->out, "Output file: NAME.cbor for CBOR, any other name for JSON text")->required();
  c->add_flag("--quiet", args->quiet, "Print nothing");
  c->callback([args] { RunConvertModel(*args); });
}

} // namespace canopy::app
