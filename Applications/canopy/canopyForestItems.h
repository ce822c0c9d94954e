// The image files of train-forest and predict-forest: their dimension and components as the forest
// sees them, axial slice lists, and labelled images loaded as forest items (filter bank applied).
#pragma once

#include "canopy/Device.h"
#include "canopy/IntensityNormalization.h"
#include "canopyForestVolumeTraining.h"
#include "canopyReferencePose.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace canopy::app
{

/** Axial slices "A:B:S" (z = A, A+S, ... < B). */
struct SliceSpec
{
  int  begin = 0, end = 0, step = 1;
  bool given = false;
};

/** Parses "A:B:S" (empty: not given); a clear error naming `parameter` otherwise. */
SliceSpec
ParseSlices(const std::string & text, const std::string & parameter);

/** 2 or 3: a file's dimension as a forest reads it (a 3D file of one plane is 2D; a folder is a DICOM
 * series, 3D). */
unsigned
ImageFileDimension(const std::string & path, const std::string & parameter);

/** Components per pixel of an image file (1 for a DICOM folder). */
int
ImageFileComponents(const std::string & path);

/** How LoadForestItems reads a list of image/label pairs. */
struct ForestItemLoading
{
  SliceSpec                slices;          // given: the volumes' axial slices as 2D items
  std::vector<std::string> bank;            // filter-bank channels
  std::optional<IntensityNormalization> normalization;   // each image's (each slice's) intensities, before the bank
  ResolvedBackend          filterBackend;   // where the filter bank runs
  ReferencePoseOptions     reference;       // pose channels' reference poses
  bool                     training = true; // --reference-label applies (held-out volumes: detected poses)
  std::string              stage;           // the progress bar's title
  bool                     quiet = false;
};

/** What LoadForestItems appends to. `dimension`: 0 before the first item, then every item's (2D images
 * and 3D volumes do not mix); `poses`: the reference pose of each volume when the bank has pose
 * channels. */
struct ForestItems
{
  std::vector<ForestLabelledImage> items;
  std::vector<std::string>         names;
  int                              dimension = 0;
  nlohmann::json                   poses = nlohmann::json::array();
  /** With a normalisation: per image (or slice) {"image", "mappedToZeroAndOne": [low, high]}. */
  nlohmann::json normalized = nlohmann::json::array();
};

/** Loads image/label pairs as forest items: whole volumes (3D files), 2D images, or axial slices. */
void
LoadForestItems(const std::vector<std::string> & images,
                const std::vector<std::string> & labels,
                const ForestItemLoading &        how,
                ForestItems &                    out);

} // namespace canopy::app
