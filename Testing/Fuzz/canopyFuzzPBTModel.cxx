// libFuzzer target: bytes -> JSON -> PBT model file (the path of `canopy classify --model`), and, for
// any model the reader accepts, one evaluation on a tiny volume: a model that passes validation must
// never make the evaluator read outside its arrays. Rejections (canopy::Error) are expected.
#include "canopy/JsonField.h"
#include "canopyPBTEvaluator.h"
#include "canopyPBTModelFile.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t * data, std::size_t size)
{
  nlohmann::json document;
  try
  {
    // As LoadPBTModelFile parses, from memory instead of a file.
    document =
      canopy::ParseJsonWithDepthLimit(std::string_view(reinterpret_cast<const char *>(data), size), "fuzz.json");
  }
  catch (const nlohmann::json::exception &)
  {
    return 0; // LoadPBTModelFile turns this into "truncated or not valid JSON"
  }
  catch (const itk::ExceptionObject &)
  {
    return 0; // nested too deeply
  }
  try
  {
    const canopy::PBTModelFile model = canopy::PBTModelFileFromJson(document, "fuzz.json");
    constexpr int              nx = 6, ny = 5, nz = 4;
    std::vector<float>         voxels(nx * ny * nz);
    for (std::size_t i = 0; i < voxels.size(); ++i)
    {
      voxels[i] = static_cast<float>((i * 37) % 11) - 5.0f;
    }
    std::vector<float>           probability(voxels.size());
    canopy::PBTEvaluationOptions options;
    options.cpuThreads = 1;
    canopy::PBTVolumeEvaluator evaluator(model.tree, canopy::ResolvedBackend{}, options);
    evaluator.Evaluate(voxels.data(), nx, ny, nz, probability.data());
  }
  catch (const itk::ExceptionObject &) // canopy::Error derives from it
  {
  }
  return 0;
}
