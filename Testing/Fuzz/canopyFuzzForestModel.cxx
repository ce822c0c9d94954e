// libFuzzer target: bytes -> forest model (the path of `canopy predict-forest --model`), and, for any
// model the reader accepts, one CPU prediction on a tiny image with the channels the model reads: a
// model that passes validation must never make the predictor read outside its arrays.
#include "canopyForestDensePrediction.h"
#include "canopyForestModel.h"

#include "itkMacro.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t * data, std::size_t size)
{
  try
  {
    const canopy::ForestModel model =
      canopy::ForestModelFromJsonString(std::string(reinterpret_cast<const char *>(data), size), "fuzz.json");
    const int          nx = 5, ny = 4, nz = model.dimension == 2 ? 1 : 3;
    const std::size_t  voxels = std::size_t(nx) * ny * nz;
    std::vector<float> values(voxels * model.numChannels);
    for (std::size_t i = 0; i < values.size(); ++i)
    {
      values[i] = static_cast<float>((i * 29) % 13) - 6.0f;
    }
    std::vector<const float *> channels;
    for (int c = 0; c < model.numChannels; ++c)
    {
      channels.push_back(values.data() + c * voxels);
    }
    const std::vector<float> scale(voxels, 1.5f);
    const auto               image =
      canopy::ForestImage::FromChannels(channels, nx, ny, nz, model.usesScale ? scale.data() : nullptr, 1);
    canopy::ForestDensePredictionOptions options;
    options.backend = "cpu";
    options.threads = 1;
    options.mode = canopy::ForestOutputMode::ArgMax;
    std::vector<std::int32_t> index(voxels);
    canopy::PredictForestDense(model, image, options, nullptr, index.data());
    options.mode = canopy::ForestOutputMode::ForestLeaves;
    std::vector<std::int32_t> leaves(voxels * model.NumberOfTrees());
    canopy::PredictForestDense(model, image, options, nullptr, leaves.data());
    if (model.numClasses <= 64) // Distribution writes numClasses floats per voxel
    {
      options.mode = canopy::ForestOutputMode::Distribution;
      std::vector<float> distribution(voxels * model.numClasses);
      canopy::PredictForestDense(model, image, options, distribution.data(), nullptr);
    }
  }
  catch (const itk::ExceptionObject &) // canopy::Error derives from it
  {
  }
  return 0;
}
