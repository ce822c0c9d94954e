#include "canopyReferencePose.h"

#include "canopy/Errors.h"
#include "canopyDetectorModelFile.h"
#include "canopyInitialPose.h"
#include "canopyPoseDetector.h"

#include <cmath>
#include <filesystem>
#include <sstream>

namespace canopy::app
{
namespace fs = std::filesystem;

ReferenceFrame
ReferenceFrameOf(const StructurePose & pose)
{
  ReferenceFrame f;
  for (int a = 0; a < 3; ++a)
  {
    f.center[a] = pose.centerMm[a];
    f.halfSize[a] = 0.5 * pose.sizeMm[a];
    for (int k = 0; k < 3; ++k)
      f.axes[a][k] = pose.axes[a][k];
  }
  return f;
}

std::string
ReferencePosesFile(const std::string & poses, const std::string & volume)
{
  if (!fs::is_directory(poses))
    return poses;
  std::string name = fs::path(volume).filename().string();
  for (const char * e : { ".nii.gz", ".nii", ".nrrd", ".nhdr", ".mha", ".mhd" })
  {
    const std::string ext(e);
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
    {
      name.resize(name.size() - ext.size());
      break;
    }
  }
  return (fs::path(poses) / (name + ".poses.json")).string();
}

StructurePose
ReferencePoseFromLabels(const itk::Image<float, 3> * labels, int label, const std::string & where)
{
  auto map = PoseLabelMap::New();
  map->CopyInformation(labels);
  map->SetRegions(labels->GetLargestPossibleRegion());
  map->Allocate();
  const float *     in = labels->GetBufferPointer();
  int *             out = map->GetBufferPointer();
  const std::size_t n = labels->GetLargestPossibleRegion().GetNumberOfPixels();
  for (std::size_t i = 0; i < n; ++i)
  {
    const int value = int(std::lround(in[i]));
    out[i] = label == 0 ? int(value > 0) : value;
  }
  return PoseFromLabel(map, label == 0 ? 1 : label, where + (label == 0 ? " (the union of labels > 0)" : ""));
}

StructurePose
DetectedReferencePose(const ReferencePoseOptions & options,
                      const std::string &          path,
                      const itk::Image<float, 3> * image,
                      const ResolvedBackend &      backend)
{
  if (!options.poses.empty())
  {
    const std::string file = ReferencePosesFile(options.poses, path);
    if (!fs::exists(file))
      CANOPY_THROW("--reference-poses " << options.poses << ": no poses file " << file << " for " << path);
    return FoundPose(ReadPosesFile(file), options.structure, "--reference-poses " + file);
  }
  const DetectorModel model = LoadDetectorModel(options.detector);
  std::ostringstream  names;
  int                 index = -1;
  for (std::size_t s = 0; s < model.structures.size(); ++s)
  {
    names << (s ? ", " : "") << model.structures[s].name;
    if (model.structures[s].name == options.structure)
      index = int(s);
  }
  if (index < 0)
    CANOPY_THROW("--reference-detector " << options.detector << ": no structure named \"" << options.structure
                                         << "\" (the detector has: " << names.str() << ")");
  DetectionOptions detection;
  detection.backend = backend;
  PoseDetector detector(model, detection);
  detector.SetImage(image, path);
  return FoundPose(
    { detector.Detect(index) }, options.structure, "--reference-detector " + options.detector + " on " + path);
}

} // namespace canopy::app
