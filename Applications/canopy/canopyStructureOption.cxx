#include "canopyStructureOption.h"

#include "canopy/Errors.h"

#include <exception>
#include <set>

namespace canopy::app
{
std::vector<StructureOption>
ParseStructureOptions(const std::vector<std::string> & specs)
{
  std::vector<StructureOption> structures;
  std::set<std::string>        names;
  std::set<int>                labels;
  for (const auto & spec : specs)
  {
    const auto equals = spec.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == spec.size())
      CANOPY_THROW("--structure '" << spec << "': give NAME=LABEL (e.g. hippocampus=17)");
    StructureOption s{ spec.substr(0, equals), 0 };
    std::size_t     used = 0;
    try
    {
      s.label = std::stoi(spec.substr(equals + 1), &used);
    }
    catch (const std::exception &)
    {
      used = 0;
    }
    if (used != spec.size() - equals - 1 || s.label == 0)
      CANOPY_THROW("--structure '" << spec << "': the label must be a non-zero integer");
    if (!names.insert(s.name).second || !labels.insert(s.label).second)
      CANOPY_THROW("--structure '" << spec << "': each structure name and label may appear once");
    structures.push_back(s);
  }
  return structures;
}
} // namespace canopy::app
