// CanopyForestPredict: the 3D Slicer CLI module of `canopy predict-forest --mode argmax` (a label
// volume from a decision forest, optionally as a segmentation with one named segment per class).
#include "canopyRuns.h"
#include "canopySlicerModuleInfo.h"

int
main(int argc, char ** argv)
{
  using namespace canopy::slicer;
  canopy::app::PredictForestArguments a;
  a.quiet = true;
  a.mode = "argmax";
  std::string backend;
  int         classes = 0;
  double      foregroundThreshold = 0.0; // 0: the most probable class (the flag's "unset")

  Module m = CanopyModule("CanopyForestPredict",
                          "Canopy Forest Predict",
                          "Labels every voxel with the most probable class of a decision forest or auto-context "
                          "cascade trained by 'canopy train-forest' (3D models). The same code as 'canopy "
                          "predict-forest --mode argmax'; runs on "
                          "the GPU when one is usable. The other modes (class distributions, leaf indices) are on the "
                          "command line.");
  m.AddGroup("Input and output", "Volume, model and results")
    .Add(Image("inputVolume", &a.input, "Input volume", "Scalar volume to label")
           .Input()
           .Attributes("type=\"scalar\"")
           .Required())
    .Add(File("model",
              &a.model,
              "Forest model",
              "Model file written by 'canopy train-forest' (.json, or .cbor for CBOR; a 3D model)")
           .Input()
           .Attributes("fileExtensions=\".json,.cbor\"")
           .Required())
    .Add(Image("outputLabel", &a.output, "Output label volume", "Class index 0..C-1 of every voxel")
           .Output()
           .Attributes("type=\"label\"")
           .Required())
    .Add(File("outputSegmentation",
              &a.segmentation,
              "Output segmentation file",
              "Optional: the labels as a Slicer segmentation file (.seg.nrrd), one named segment per class > 0")
           .Output()
           .Attributes("fileExtensions=\".seg.nrrd\""))
    .Add(String("segmentNames",
                &a.segmentNames,
                "Segment names",
                "Names of classes 1, 2, ... separated by commas (default: class N)"));
  m.AddGroup("Post-processing", "Operating point and clean-up of the label volume, per class")
    .Add(Double("foregroundThreshold",
                &foregroundThreshold,
                "Foreground threshold",
                "0: every voxel takes its most probable class. Otherwise a voxel is background unless the "
                "probability of not being background reaches this; choose it on held-out data (canopy evaluate "
                "--thresholds), as 'canopy predict-forest --threshold'")
           .Range(0.0, 0.99, 0.01))
    .Add(Enumeration("postprocess",
                     &a.postprocess,
                     "Post-processing",
                     "none; largest: keep the largest connected component of each class; fill: fill the holes "
                     "of each class; largest,fill: both")
           .Elements({ "none", "largest", "fill", "largest,fill" }));
  m.AddGroup("Advanced", "Computation", true)
    .Add(String("device", &a.device, "Device", "auto (the GPU when usable), cpu, cuda or cuda:N"));
  m.AddGroup("Results", "What the run found")
    .Add(Returned("integer", "classes", &classes, "Classes", "Classes of the model, background included"))
    .Add(Returned("string", "deviceUsed", &backend, "Device used", "The backend that ran"));

  return m.Main(argc,
                argv,
                [&]
                {
                  if (foregroundThreshold != 0.0)
                    a.foregroundThreshold = foregroundThreshold; // RunPredictForest checks 0 < T < 1
                  const auto outcome = canopy::app::RunPredictForest(a);
                  classes = outcome.classes;
                  backend = outcome.backend;
                });
}
