// CanopySegment: the 3D Slicer CLI module of `canopy segment` (PBT probabilities, graph-cut
// regularisation, label volume, optional segmentation, surface model and probability map).
#include "canopyRuns.h"
#include "canopySlicerModuleInfo.h"

#include <cmath>

int
main(int argc, char ** argv)
{
  using namespace canopy::slicer;
  canopy::app::SegmentArguments a;
  a.quiet = true;
  bool        overrideLambda = false;
  double      lambda = a.lambda;
  std::string neighborhood = "model";
  int         smoothing = 0;
  // Returned values
  std::string device, lambdaSource;
  double      lambdaUsed = 0.0, labelledVolumeMm3 = 0.0;
  int         labelledVoxels = 0;

  Module m = CanopyModule(
    "CanopySegment",
    "Canopy Segment",
    "Segments one structure with a probabilistic boosting tree trained by 'canopy train-pbt': voxel probabilities "
    "from 3D Haar features, a graph cut that trades the probabilities against surface smoothness (lambda), and the "
    "label volume, optionally as a segmentation with a named segment, a surface model and the probability map. "
    "The same code as 'canopy segment'; runs on the GPU when one is usable.");
  m.AddGroup("Input and output", "Volume, model and results")
    .Add(
      Image("inputVolume", &a.input, "Input volume", "Scalar volume to segment (any modality the model was trained on)")
        .Input()
        .Attributes("type=\"scalar\"")
        .Required())
    .Add(File("model", &a.model, "PBT model", "Model file written by 'canopy train-pbt' (.json)")
           .Input()
           .Attributes("fileExtensions=\".json\"")
           .Required())
    .Add(
      Image(
        "outputLabel", &a.output, "Output label volume", "Label 1 where the structure is, 0 elsewhere (input's grid)")
        .Output()
        .Attributes("type=\"label\"")
        .Required())
    .Add(File("outputSegmentation",
              &a.segmentation,
              "Output segmentation file",
              "Optional: the labels as a Slicer segmentation file (.seg.nrrd) with a named, coloured segment; load it "
              "with File > Add Data")
           .Output()
           .Attributes("fileExtensions=\".seg.nrrd\""))
    .Add(Geometry("outputModel", &a.mesh, "Output surface model", "Optional: surface of the label (LPS coordinates)")
           .Output()
           .Attributes("type=\"model\" fileExtensions=\".vtp,.vtk,.stl\""))
    .Add(Image("outputProbability", &a.probability, "Output probability map", "Optional: p(structure) at every voxel")
           .Output()
           .Attributes("type=\"scalar\""));
  m.AddGroup("Graph cut", "Regularisation of the probability map")
    .Add(Boolean(
      "overrideLambda",
      &overrideLambda,
      "Use this lambda",
      "Use the lambda below instead of the one the model recommends (chosen by train-pbt; 1 mm for older models)"))
    .Add(Double("lambda",
                &lambda,
                "Lambda (mm)",
                "Surface weight of the graph cut in mm; 0 thresholds the probabilities at 0.5")
           .Range(0.0, 20.0, 0.1))
    .Add(Enumeration(
           "neighborhood", &neighborhood, "Neighbourhood", "Graph-cut neighbourhood: the model's, 6 or 26 voxels")
           .Elements({ "model", "6", "26" }));
  m.AddGroup("Segment", "Name and colour of the segment in segmentation files")
    .Add(String("segmentName", &a.segmentName, "Segment name", "Default: the model file's name"))
    .Add(String("segmentColor", &a.segmentColor, "Segment colour", "R,G,B in [0, 1]"));
  m.AddGroup("Advanced", "Surface model and computation", true)
    .Add(Integer("smoothing", &smoothing, "Surface smoothing", "Smoothing iterations of the surface model")
           .Range(0, 200, 1))
    .Add(Double("decimation", &a.decimation, "Surface decimation", "Fraction of the surface's triangles to remove")
           .Range(0.0, 0.99, 0.01))
    .Add(Boolean("nonProbabilistic", &a.nonProbabilistic, "Non-probabilistic tree", "Descend one branch per tree node"))
    .Add(String("device", &a.device, "Device", "auto (the GPU when usable), cpu, cuda or cuda:N"));
  m.AddGroup("Results", "What the run found")
    .Add(Returned("integer", "labelledVoxels", &labelledVoxels, "Labelled voxels", "Voxels labelled 1"))
    .Add(Returned("double", "labelledVolumeMm3", &labelledVolumeMm3, "Volume (mm^3)", "Volume of the labelled voxels"))
    .Add(Returned("double", "lambdaUsed", &lambdaUsed, "Lambda used (mm)", "Graph-cut lambda of this run"))
    .Add(Returned("string", "lambdaSource", &lambdaSource, "Lambda from", "Where the lambda came from"))
    .Add(Returned("string", "deviceUsed", &device, "Device used", "The backend that ran"));

  return m.Main(argc,
                argv,
                [&]
                {
                  a.lambdaGiven = overrideLambda;
                  a.lambda = lambda;
                  a.neighborhoodGiven = neighborhood != "model";
                  a.neighborhood = neighborhood == "26" ? 26u : 6u;
                  a.smoothing = static_cast<unsigned>(smoothing);
                  const auto outcome = canopy::app::RunSegment(a);
                  labelledVoxels = static_cast<int>(outcome.labelledVoxels);
                  labelledVolumeMm3 = outcome.labelledVolumeMm3;
                  lambdaUsed = outcome.lambda;
                  lambdaSource = outcome.lambdaSource;
                  device = outcome.device;
                });
}
