// libFuzzer target: bytes -> forest model or auto-context cascade (the two paths of `canopy predict-forest
// --model`), and, for any model the reader accepts, CPU predictions on a tiny image with the channels the
// model reads: a model that passes validation must never make the predictor read outside its arrays. Both
// readers parse with the streaming forest parser (ParseForestJsonDocument); a cascade also exercises its
// "stages" nesting and the between-stage channels.
#include "canopyForestCascade.h"
#include "canopyForestDensePrediction.h"
#include "canopyForestModel.h"

#include "itkMacro.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace
{
/** A 5x4x3 image (5x4 in 2D) of `numChannels` fixed patterns, integrated. */
canopy::ForestImage
TinyImage(int dimension, int numChannels, bool usesScale)
{
  const int          nx = 5, ny = 4, nz = dimension == 2 ? 1 : 3;
  const std::size_t  voxels = std::size_t(nx) * ny * nz;
  std::vector<float> values(voxels * numChannels);
  for (std::size_t i = 0; i < values.size(); ++i)
  {
    values[i] = static_cast<float>((i * 29) % 13) - 6.0f;
  }
  std::vector<const float *> channels;
  for (int c = 0; c < numChannels; ++c)
  {
    channels.push_back(values.data() + c * voxels);
  }
  const std::vector<float> scale(voxels, 1.5f);
  return canopy::ForestImage::FromChannels(channels, nx, ny, nz, usesScale ? scale.data() : nullptr, 1);
}
} // namespace

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t * data, std::size_t size)
{
  try
  {
    const std::string text(reinterpret_cast<const char *>(data), size);
    canopy::ForestDensePredictionOptions options;
    options.backend = "cpu";
    options.threads = 1;
    if (text.find("canopy-forest-cascade") != std::string::npos)
    {
      const canopy::ForestCascade cascade = canopy::ForestCascadeFromJsonString(text, "fuzz.json");
      const canopy::ForestModel & first = cascade.stages.front();
      if (first.numClasses <= 64) // the stages' maps: numClasses floats per voxel
        canopy::PredictForestCascade(
          cascade, TinyImage(first.dimension, first.numChannels, first.usesScale), options, nullptr, nullptr);
      return 0;
    }
    const canopy::ForestModel model = canopy::ForestModelFromJsonString(text, "fuzz.json");
    const auto                image = TinyImage(model.dimension, model.numChannels, model.usesScale);
    const std::size_t         voxels = std::size_t(image.nx) * image.ny * image.nz;
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
