// What every Canopy CLI module shows in Slicer's module panel besides its own help.
#pragma once

#include "canopyCliModule.h"
#include "canopyConfigure.h"

namespace canopy::slicer
{
inline Module
CanopyModule(std::string name, std::string title, std::string description)
{
  Module m;
  m.name = std::move(name);
  m.title = std::move(title);
  m.description = std::move(description);
  m.category = "Segmentation.Canopy";
  m.version = CANOPY_VERSION_STRING;
  m.license = "Apache License 2.0";
  m.contributor = "The Canopy developers";
  m.acknowledgements =
    "Probabilistic boosting trees with 3D Haar features after Birkbeck, Sofka and Zhou; decision forests after "
    "Sharp and CURFIL. The module runs the same code as the canopy command line.";
  return m;
}
} // namespace canopy::slicer
