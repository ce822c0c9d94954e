// CanopyScribbleSegment: the 3D Slicer CLI module of `canopy scribble-segment` (issue 11's imaging part):
// a volume segmented from scribbles (a label volume: 0 unlabelled, other values labels) by a voxel
// classifier learnt online, a random forest of Hoeffding trees. Interactive rounds: save the classifier
// (outputModel), paint more strokes, run again with it as inputModel and the new strokes only; each round
// learns its strokes without retraining from scratch.
#include "canopyScribbleRun.h"
#include "canopySlicerModuleInfo.h"

#include <sstream>

int
main(int argc, char ** argv)
{
  using namespace canopy::slicer;
  canopy::app::ScribbleArguments a;
  a.quiet = true;
  // Returned values
  std::string labels;
  int         voxelsLearnt = 0, instancesLearnt = 0;
  int         seed = static_cast<int>(a.options.seed); // the table binds ints

  Module m = CanopyModule(
    "CanopyScribbleSegment",
    "Canopy Scribble Segment",
    "Segments a volume from a few strokes: paint labels into a label volume (0 is unlabelled; at least two "
    "labels, e.g. 1 background and 2 the structure), and a voxel classifier learnt online (a random forest of "
    "Hoeffding trees over filter-bank channels) gives every voxel the probability of the foreground label and "
    "the most probable label. To refine, save the classifier, paint new strokes into an empty label volume and "
    "run again with the saved classifier as the input classifier: the new strokes are learnt on top, not from "
    "scratch. The same code as 'canopy scribble-segment' (CPU).");
  m.AddGroup("Input and output", "Volume, scribbles and results")
    .Add(Image("inputVolume", &a.image, "Input volume", "Scalar volume to segment")
           .Input()
           .Attributes("type=\"scalar\"")
           .Required())
    .Add(Image("scribbles",
               &a.scribbles,
               "Scribbles",
               "Label volume on the input's grid: 0 unlabelled, 1-255 a label (with an input classifier: the new "
               "strokes only)")
           .Input()
           .Attributes("type=\"label\"")
           .Required())
    .Add(
      Image("outputProbability", &a.output, "Output probability", "Probability of the foreground label at every voxel")
        .Output()
        .Required())
    .Add(Image("outputLabel", &a.labelsOut, "Output label volume", "Optional: the most probable label at every voxel")
           .Output()
           .Attributes("type=\"label\""))
    .Add(Integer("foregroundLabel",
                 &a.foregroundLabel,
                 "Foreground label",
                 "The label whose probability is written (0: the largest label value)")
           .Range(0, 255, 1));
  m.AddGroup("Rounds", "Carry the classifier from one round of strokes to the next")
    .Add(File("inputModel",
              &a.modelIn,
              "Input classifier",
              "Optional: a classifier saved by an earlier round (its filter bank and labels are kept)")
           .Input()
           .Attributes("fileExtensions=\".json\""))
    .Add(File("outputModel", &a.modelOut, "Output classifier", "Optional: save the classifier for the next round")
           .Output()
           .Attributes("fileExtensions=\".json\""));
  m.AddGroup("Classifier", "A new classifier's settings", true)
    .Add(Integer("trees", &a.options.trees, "Trees", "Trees of a new classifier").Range(1, 200, 1))
    .Add(Integer("passes", &a.options.passes, "Passes", "Times each new labelled voxel is streamed").Range(1, 20, 1))
    .Add(Integer("seed", &seed, "Seed", "Seed of a new classifier").Range(0, 1000000, 1));
  m.AddGroup("Results", "What the run learnt")
    .Add(Returned("string", "labels", &labels, "Labels", "The classifier's label values"))
    .Add(Returned("integer", "voxelsLearnt", &voxelsLearnt, "Voxels learnt", "Labelled voxels learnt by this run"))
    .Add(Returned("integer",
                  "instancesLearnt",
                  &instancesLearnt,
                  "Instances learnt in all",
                  "Instances the classifier has learnt over all rounds (passes included)"));

  return m.Main(argc,
                argv,
                [&]
                {
                  a.options.seed = static_cast<std::uint64_t>(seed);
                  const auto         outcome = canopy::app::RunScribbleSegment(a);
                  std::ostringstream values;
                  for (int v : outcome.labels)
                    values << (values.tellp() > 0 ? "," : "") << v;
                  labels = values.str();
                  voxelsLearnt = static_cast<int>(outcome.voxelsLearnt);
                  instancesLearnt = static_cast<int>(outcome.instancesLearnt);
                });
}
