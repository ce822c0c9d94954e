// CanopySegmentShape: the 3D Slicer CLI module of `canopy segment-shape` (issue 10): a statistical shape
// model placed at the pose a detector finds (or a poses file gives) and refined along its normals by
// the model's boundary classifiers; a label volume and a surface model, and the fit check's verdict.
#include "canopyPoseRuns.h"
#include "canopySlicerModuleInfo.h"

#include <sstream>

int
main(int argc, char ** argv)
{
  using namespace canopy::slicer;
  canopy::app::SegmentShapeArguments a;
  a.quiet = true;
  // Returned values
  std::string device, structure, initialisation, reasons;
  bool        suspect = false;
  double      volume = 0.0, surfaceScore = 0.0, shapeDistance = 0.0, shapeLimit = 0.0, detectionScore = -1.0;
  int         labelledVoxels = 0;

  Module m = CanopyModule(
    "CanopySegmentShape",
    "Canopy Segment Shape",
    "Segments a structure with a shape model trained by 'canopy train-shape --boundary': the mean shape is placed "
    "at the structure's pose, found by a pose detector ('canopy train-detector') or read from CanopyDetect's poses "
    "file, then refined coarse to fine along its normals by the model's boundary classifiers within the shapes "
    "the model allows. Every fit is checked: a fit far from the structure's boundary or of an implausible shape "
    "is flagged as suspect (the outputs are still written). The same code as 'canopy segment-shape'; runs on the "
    "GPU when one is usable.");
  m.AddGroup("Input and output", "Volume, models and results")
    .Add(Image("inputVolume", &a.input, "Input volume", "Scalar volume to segment")
           .Input()
           .Attributes("type=\"scalar\"")
           .Required())
    .Add(File("shapeModel", &a.shape, "Shape model", "Model file written by 'canopy train-shape --boundary' (.json)")
           .Input()
           .Attributes("fileExtensions=\".json\"")
           .Required())
    .Add(Image("outputLabel", &a.output, "Output label volume", "The structure's label value inside the fitted surface")
           .Output()
           .Attributes("type=\"label\"")
           .Required())
    .Add(Geometry("outputModel",
                  &a.mesh,
                  "Output surface model",
                  "Optional: the fitted surface (LPS coordinates) with point data CorrespondenceId")
           .Output()
           .Attributes("type=\"model\" fileExtensions=\".vtp,.vtk,.stl\""));
  m.AddGroup("Initial pose", "Where the refinement starts: give a detector or a poses file (or the volume's centre)")
    .Add(File("detector",
              &a.detector,
              "Pose detector",
              "A detector from 'canopy train-detector' holding the shape model's structure (by name): fully automatic")
           .Input()
           .Attributes("fileExtensions=\".json\""))
    .Add(File("poses",
              &a.pose,
              "Poses file",
              "Instead of a detector: a poses file of CanopyDetect or 'canopy detect' (the entry named like the "
              "structure)")
           .Input()
           .Attributes("fileExtensions=\".json\""))
    .Add(Boolean("imageCenter",
                 &a.imageCenter,
                 "Start at the volume's centre",
                 "Instead of a detector: the mean shape where the training structures lay relative to their volumes' "
                 "centres (for volumes cropped like the training ones)"))
    .Add(String("structure", &a.structure, "Structure", "The structure to segment when the shape model holds several"));
  m.AddGroup("Refinement", "Search around the initial pose", true)
    .Add(Double("startSpread",
                &a.refinement.startSpreadMm,
                "Start spread (mm)",
                "0: refine from the initial pose only; > 0: also from six starts shifted by this along the pose's "
                "axes, keeping the best")
           .Range(0.0, 20.0, 0.5))
    .Add(Integer("freeIterations",
                 &a.refinement.freeIterations,
                 "Free iterations",
                 "Final iterations on the finest level outside the shape space (smoothing only)")
           .Range(0, 50, 1))
    .Add(Double("bound", &a.refinement.bound, "Shape bound (sigma)", "Shape coefficients bounded to +/- this")
           .Range(0.5, 10.0, 0.5));
  m.AddGroup("Advanced", "Computation", true)
    .Add(String("device", &a.device, "Device", "auto (the GPU when usable), cpu, cuda or cuda:N"));
  m.AddGroup("Results", "What the run found and how the fit looks")
    .Add(Returned("string", "structureSegmented", &structure, "Structure", "The shape model's structure fitted"))
    .Add(Returned("integer", "labelledVoxels", &labelledVoxels, "Labelled voxels", "Voxels inside the surface"))
    .Add(Returned("double", "labelledVolumeMm3", &volume, "Volume (mm^3)", "Volume of the labelled voxels"))
    .Add(Returned("boolean",
                  "fitSuspect",
                  &suspect,
                  "Fit suspect",
                  "The fit check's verdict: the fit may have left the structure or taken an implausible shape"))
    .Add(Returned("string", "suspectReasons", &reasons, "Why suspect", "The rules the fit broke (empty when none)"))
    .Add(Returned("double",
                  "surfaceScore",
                  &surfaceScore,
                  "Boundary score on the surface",
                  "Mean boundary classifier score on the fitted surface (0..1)"))
    .Add(Returned("double",
                  "shapeDistance",
                  &shapeDistance,
                  "Shape distance (sigma)",
                  "The fitted shape's Mahalanobis distance from the mean shape"))
    .Add(Returned("double",
                  "shapeDistanceLimit",
                  &shapeLimit,
                  "Shape distance limit (sigma)",
                  "Above this the shape is implausible"))
    .Add(Returned("string", "initialPose", &initialisation, "Initial pose", "Where the refinement started"))
    .Add(Returned("double",
                  "detectionScore",
                  &detectionScore,
                  "Detection score",
                  "The detector's (or poses file's) evidence for the structure; -1 when the start came from neither"))
    .Add(Returned("string", "deviceUsed", &device, "Device used", "The backend that ran"));

  return m.Main(argc,
                argv,
                [&]
                {
                  const auto outcome = canopy::app::RunSegmentShape(a);
                  device = outcome.device;
                  structure = outcome.structure;
                  initialisation = outcome.initialisation;
                  labelledVoxels = static_cast<int>(outcome.labelledVoxels);
                  volume = outcome.labelledVolumeMm3;
                  suspect = outcome.quality.suspect;
                  surfaceScore = outcome.quality.surfaceScoreMean;
                  shapeDistance = outcome.quality.mahalanobis;
                  shapeLimit = outcome.quality.mahalanobisLimit;
                  detectionScore = outcome.detectionScore;
                  std::ostringstream why;
                  for (const auto & r : outcome.quality.reasons)
                    why << (why.tellp() > 0 ? "; " : "") << r;
                  reasons = why.str();
                });
}
