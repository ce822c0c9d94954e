// libFuzzer target: bytes -> JSON -> PBT model file (the path of `canopy classify --model`), and, for
// any model the reader accepts, one evaluation: a Haar PBT on a tiny volume, a steerable PBT at a few
// poses (inside, outside and NaN) on a tiny pyramid with the model's levels. A model that passes
// validation must never make an evaluator read outside its arrays. Rejections (canopy::Error) are
// expected.
#include "canopy/JsonField.h"
#include "canopyPBTEvaluator.h"
#include "canopyPBTModelFile.h"
#include "canopySteerablePBT.h"

#include <nlohmann/json.hpp>

#include <cmath>
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
    if (model.tree.featureFamily == canopy::PBTFeatureFamily::Steerable)
    {
      auto                image = itk::Image<float, 3>::New();
      itk::ImageRegion<3> region;
      region.SetSize({ { nx, ny, nz } });
      image->SetRegions(region);
      image->Allocate();
      std::copy(voxels.begin(), voxels.end(), image->GetBufferPointer());
      canopy::SteerablePyramid pyramid;
      for (int level = 0; level < model.tree.steerable.NumberOfLevels(); ++level)
      {
        pyramid.AddLevel(image, 1);
      }
      canopy::SteerableResponseEngine engine(canopy::ResolvedBackend{}, 1);
      engine.SetPyramid(pyramid);
      canopy::SetSteerablePBT(engine, model.tree);
      canopy::SteerablePose poses[3] = {};
      for (int p = 0; p < 3; ++p)
      {
        for (int a = 0; a < 3; ++a)
        {
          poses[p].center[a] = p == 0 ? 2.0f : (p == 1 ? 1e6f : std::nanf(""));
          poses[p].axes[a][a] = 1.0f;
          poses[p].scale[a] = 1.5f;
        }
      }
      float scores[3];
      engine.EvaluatePBT(poses, 3, scores);
      return 0;
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
