// CanopyClassify: the 3D Slicer CLI module of `canopy classify` (probability map of a PBT model).
#include "canopyRuns.h"
#include "canopySlicerModuleInfo.h"

int
main(int argc, char ** argv)
{
  using namespace canopy::slicer;
  canopy::app::ClassifyArguments a;
  a.quiet = true;
  std::string device;
  double      maximumProbability = 0.0;
  int         voxelsAtLeastHalf = 0;

  Module m = CanopyModule("CanopyClassify",
                          "Canopy Classify",
                          "Probability of the structure at every voxel, from a probabilistic boosting tree trained by "
                          "'canopy train-pbt' (3D Haar features). The same code as 'canopy classify'; runs on the GPU "
                          "when one is usable.");
  m.AddGroup("Input and output", "Volume, model and result")
    .Add(Image("inputVolume", &a.input, "Input volume", "Scalar volume to classify")
           .Input()
           .Attributes("type=\"scalar\"")
           .Required())
    .Add(File("model", &a.model, "PBT model", "Model file written by 'canopy train-pbt' (.json)")
           .Input()
           .Attributes("fileExtensions=\".json\"")
           .Required())
    .Add(Image("outputProbability", &a.output, "Output probability map", "p(structure) in [0, 1] on the input's grid")
           .Output()
           .Attributes("type=\"scalar\"")
           .Required());
  m.AddGroup("Advanced", "Computation", true)
    .Add(Boolean("nonProbabilistic", &a.nonProbabilistic, "Non-probabilistic tree", "Descend one branch per tree node"))
    .Add(String("device", &a.device, "Device", "auto (the GPU when usable), cpu, cuda or cuda:N"));
  m.AddGroup("Results", "What the run found")
    .Add(Returned("double", "maximumProbability", &maximumProbability, "Largest probability", "Largest p in the map"))
    .Add(Returned("integer", "voxelsAtLeastHalf", &voxelsAtLeastHalf, "Voxels with p >= 0.5", "Voxels with p >= 0.5"))
    .Add(Returned("string", "deviceUsed", &device, "Device used", "The backend that ran"));

  return m.Main(argc,
                argv,
                [&]
                {
                  const auto outcome = canopy::app::RunClassify(a);
                  maximumProbability = outcome.maximumProbability;
                  voxelsAtLeastHalf = static_cast<int>(outcome.voxelsAtLeastHalf);
                  device = outcome.device;
                });
}
