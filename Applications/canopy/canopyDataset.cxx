#include "canopyDataset.h"

#include "canopy/Errors.h"
#include "canopy/JsonField.h"
#include "canopy/PortableRandom.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

namespace canopy::app
{

void
ReadDataset(const std::string & path, int maxVolumes, std::vector<std::string> & images,
            std::vector<std::string> & labels)
{
  std::ifstream in(path);
  if (!in)
  {
    CANOPY_THROW("--dataset " << path << ": cannot open");
  }
  nlohmann::json doc;
  try
  {
    doc = ParseJsonWithDepthLimit(in, "--dataset " + path);
  }
  catch (const nlohmann::json::exception & e)
  {
    ThrowNotValidJson("--dataset " + path, e);
  }
  if (!doc.is_object() || !doc.contains("training") || !doc["training"].is_array())
  {
    CANOPY_THROW("--dataset " << path << ": no \"training\" array (expected the Medical Segmentation Decathlon layout)");
  }
  const auto root = std::filesystem::path(path).parent_path();
  for (const auto & entry : doc["training"])
  {
    if (!entry.is_object() || !entry.contains("image") || !entry.contains("label") || !entry["image"].is_string() ||
        !entry["label"].is_string())
    {
      CANOPY_THROW("--dataset " << path << ": every \"training\" entry needs string \"image\" and \"label\"");
    }
    images.push_back((root / entry["image"].get<std::string>()).lexically_normal().string());
    labels.push_back((root / entry["label"].get<std::string>()).lexically_normal().string());
    if (maxVolumes > 0 && static_cast<int>(images.size()) >= maxVolumes)
    {
      break;
    }
  }
}

std::vector<std::size_t>
SeededPermutation(std::size_t n, std::uint64_t seed)
{
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  for (std::size_t i = n; i > 1; --i)
  {
    const auto j = static_cast<std::size_t>(UniformIndex(rng, i));
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

} // namespace canopy::app
