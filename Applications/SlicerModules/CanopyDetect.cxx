// CanopyDetect: the 3D Slicer CLI module of `canopy detect` (marginal-space pose detection, issue 9):
// the centre of every structure a detector finds as a markups point list, their oriented boxes as a
// surface model, and optionally the full markups (centres and box ROIs) and the poses file that
// CanopySegmentShape and the command line read.
#include "canopyPoseRuns.h"
#include "canopySlicerModuleInfo.h"

#include <sstream>

int
main(int argc, char ** argv)
{
  using namespace canopy::slicer;
  canopy::app::DetectArguments a;
  a.quiet = true;
  // Returned values
  std::string device, foundNames, missingNames;
  int         structuresFound = 0, structuresMissing = 0;

  Module m = CanopyModule("CanopyDetect",
                          "Canopy Detect",
                          "Finds anatomical structures with a pose detector trained by 'canopy train-detector': "
                          "position, then orientation, then size (marginal-space learning with probabilistic "
                          "boosting trees), each structure searched near its parent in the detector's network. "
                          "The same code as 'canopy detect'; runs on the GPU when one is usable. A structure whose "
                          "best score is below its threshold is reported as not found, never guessed.");
  m.AddGroup("Input and output", "Volume, detector and results")
    .Add(Image("inputVolume", &a.input, "Input volume", "Scalar volume to search")
           .Input()
           .Attributes("type=\"scalar\"")
           .Required())
    .Add(File("detector", &a.model, "Pose detector", "Model file written by 'canopy train-detector' (.json)")
           .Input()
           .Attributes("fileExtensions=\".json\"")
           .Required())
    .Add(PointFile("outputCentres",
                   &a.centres,
                   "Output centres",
                   "The centre of every structure found, one control point each, labelled with its name")
           .Output()
           .Attributes("type=\"point\" coordinateSystem=\"lps\" fileExtensions=\".mrk.json\""))
    .Add(Geometry("outputBoxes",
                  &a.boxes,
                  "Output boxes",
                  "Optional: the oriented box of every structure found as a surface model (LPS coordinates)")
           .Output()
           .Attributes("type=\"model\" fileExtensions=\".vtp,.vtk,.stl\""))
    .Add(File("outputMarkups",
              &a.markups,
              "Output markups file",
              "Optional: the centres and a box ROI per structure in one Slicer markups file (load it with Add "
              "Data)")
           .Output()
           .Attributes("fileExtensions=\".mrk.json\""))
    .Add(File("outputPoses",
              &a.output,
              "Output poses file",
              "Optional: every structure's pose and score as 'canopy detect' writes them (poses.json), for "
              "CanopySegmentShape's or the command line's --pose")
           .Output()
           .Attributes("fileExtensions=\".json\""));
  m.AddGroup("Detection", "Thresholds and search")
    .Add(Double("threshold",
                &a.threshold,
                "Threshold",
                "Evidence a structure needs to count as found; -1: each structure's threshold from training")
           .Range(-1.0, 1.0, 0.01))
    .Add(Boolean("ignoreNetwork",
                 &a.ignoreNetwork,
                 "Search every structure in the whole volume",
                 "Ignore the detector's network (each structure searched near its parent) and search each one "
                 "everywhere"));
  m.AddGroup("Advanced", "Computation", true)
    .Add(String("device", &a.device, "Device", "auto (the GPU when usable), cpu, cuda or cuda:N"));
  m.AddGroup("Results", "What the run found")
    .Add(Returned("integer", "structuresFound", &structuresFound, "Structures found", "Structures found"))
    .Add(Returned("string", "found", &foundNames, "Found", "Names of the structures found, comma-separated"))
    .Add(Returned("integer",
                  "structuresMissing",
                  &structuresMissing,
                  "Structures not found",
                  "Structures of the detector whose best score stayed below the threshold"))
    .Add(Returned("string", "missing", &missingNames, "Not found", "Names of the structures not found"))
    .Add(Returned("string", "deviceUsed", &device, "Device used", "The backend that ran"));

  return m.Main(argc,
                argv,
                [&]
                {
                  const auto outcome = canopy::app::RunDetect(a);
                  device = outcome.device;
                  std::ostringstream found, missing;
                  for (const auto & s : outcome.structures)
                  {
                    auto & list = s.found ? found : missing;
                    list << (list.tellp() > 0 ? "," : "") << s.name;
                    (s.found ? structuresFound : structuresMissing) += 1;
                  }
                  foundNames = found.str();
                  missingNames = missing.str();
                });
}
