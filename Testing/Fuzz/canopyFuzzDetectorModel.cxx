// libFuzzer target: bytes -> JSON -> detector model (the path of `canopy detect --model`), and, for any
// model the reader accepts with a small hypothesis count, one detection of every structure on a tiny
// volume on the CPU. A model that passes validation must never make a stage read outside its arrays.
// Rejections (canopy::Error) are expected.
#include "canopy/JsonField.h"
#include "canopyDetectorModelFile.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int
LLVMFuzzerTestOneInput(const std::uint8_t * data, std::size_t size)
{
  nlohmann::json document;
  try
  {
    document =
      canopy::ParseJsonWithDepthLimit(std::string_view(reinterpret_cast<const char *>(data), size), "fuzz.json");
  }
  catch (const nlohmann::json::exception &)
  {
    return 0;
  }
  catch (const itk::ExceptionObject &)
  {
    return 0;
  }
  try
  {
    const canopy::DetectorModel model = canopy::DetectorModelFromJson(document, "fuzz.json");
    for (const auto & d : model.structures) // the fuzzer explores the reader, not the run time of big models
      if (std::int64_t(d.candidates) * std::int64_t(d.orientations.size()) > 20000 ||
          std::int64_t(d.orientationKeep) * std::int64_t(d.sizesMm.size()) > 20000 ||
          d.position.workingSpacing[0] < 1.0 || d.position.workingSpacing[1] < 1.0 ||
          d.position.workingSpacing[2] < 1.0)
        return 0;
    auto                image = canopy::FloatVolume::New();
    itk::ImageRegion<3> region;
    region.SetSize({ { 8, 7, 6 } });
    image->SetRegions(region);
    image->Allocate();
    for (std::size_t i = 0; i < region.GetNumberOfPixels(); ++i)
      image->GetBufferPointer()[i] = static_cast<float>((i * 37) % 11);
    canopy::DetectionOptions options;
    options.cpuThreads = 1;
    canopy::PoseDetector detector(model, options);
    detector.SetImage(image, "fuzz image");
    for (std::size_t s = 0; s < model.structures.size(); ++s)
      detector.Detect(static_cast<int>(s));
  }
  catch (const itk::ExceptionObject &)
  {
  }
  return 0;
}
