// libFuzzer target: bytes -> JSON -> streaming forest model (the path of `canopy stream --model-in`),
// and, for any model the reader accepts, a CPU forest restored from it that tests and learns a small
// batch of instances of the model's schema (values in range, a missing one, labels of every class): a
// model that passes validation must never make routing, learning or splitting leave its arrays.
// Rejections (canopy::Error) are expected.
#include "canopy/JsonField.h"
#include "canopyStreamingModelFile.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t * data, std::size_t size)
{
  using namespace canopy::streaming;
  nlohmann::json document;
  try
  {
    document =
      canopy::ParseJsonWithDepthLimit(std::string_view(reinterpret_cast<const char *>(data), size), "fuzz.json");
  }
  catch (const nlohmann::json::exception &)
  {
    return 0; // LoadStreamingModel turns this into "truncated or not valid JSON"
  }
  catch (const itk::ExceptionObject &)
  {
    return 0; // nested too deeply
  }
  try
  {
    StreamingModel model = StreamingModelFromJson(document, "fuzz.json");
    if (model.options.trees > 64)
      return 0; // time, not safety: every member was validated
    model.options.threads = 1;
    StreamingForest forest(model.schema, model.options);
    forest.Restore(model.state);
    const int     attributes = model.schema.NumberOfAttributes(), classes = model.schema.NumberOfClasses();
    InstanceBatch batch;
    batch.attributes = attributes;
    for (int i = 0; i < 64; ++i)
    {
      for (int a = 0; a < attributes; ++a)
      {
        const StreamAttribute & attribute = model.schema.attributes[std::size_t(a)];
        const int               k = (i * 7 + a * 3) % 11;
        batch.values.push_back(k == 10             ? std::nanf("")
                               : attribute.nominal ? float(k % int(attribute.values.size()))
                                                   : float(k) * 0.37f - 1.0f);
      }
      batch.labels.push_back(i % classes);
    }
    std::vector<std::int32_t> predictions;
    forest.TestThenTrain(batch, model.instances, predictions);
  }
  catch (const itk::ExceptionObject &) // canopy::Error derives from it
  {
  }
  return 0;
}
