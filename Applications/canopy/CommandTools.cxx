// canopy augment and canopy evaluate.
#include "canopy/Errors.h"
#include "canopyAugmentation.h"
#include "canopyCommands.h"
#include "canopyImageIO.h"
#include "canopyOverlapMetrics.h"
#include "canopyProgress.h"

#include <iomanip>
#include <iostream>

namespace canopy::app
{
namespace
{
struct AugmentArguments
{
  std::string         image, label, outImage, outLabel;
  std::vector<int>    positiveLabels;
  AugmentationOptions options;
};

void
RunAugment(const AugmentArguments & a)
{
  const auto image = ReadVolume(a.image, "--image");
  MaskVolume::Pointer mask;
  if (!a.label.empty())
  {
    mask = ReadMask(a.label, "--label", a.positiveLabels);
    if (!SameGrid(image, mask))
    {
      CANOPY_THROW("--label " << a.label << ": its grid differs from --image " << a.image);
    }
  }
  if (!a.label.empty() && a.outLabel.empty())
  {
    CANOPY_THROW("augment: --label given without --out-label");
  }
  const auto pair = AugmentVolume(image, mask.GetPointer(), a.options);
  WriteVolume(pair.image.GetPointer(), a.outImage, "--out-image");
  if (pair.label)
  {
    WriteVolume(pair.label.GetPointer(), a.outLabel, "--out-label");
  }
  std::cout << "augmented " << a.image << " -> " << a.outImage << (pair.label ? " and " + a.outLabel : "")
            << "\n  rotation (deg) " << pair.parameters.at("transform").value("rotationDegreesXYZ", nlohmann::json()).dump()
            << ", translation (mm) " << pair.parameters.at("transform").value("translationMm", nlohmann::json()).dump()
            << ", scale " << pair.parameters.at("transform").value("scale", nlohmann::json()).dump() << '\n';
}

struct EvaluateArguments
{
  std::string      test, reference, json;
  std::vector<int> referenceLabels;
  double           threshold = 0.5;
};

void
RunEvaluate(const EvaluateArguments & a)
{
  RunReport  report("evaluate");
  const auto test = ThresholdToMask(ReadVolume(a.test, "--test"), static_cast<float>(a.threshold));
  const auto reference = ReadMask(a.reference, "--reference", a.referenceLabels);
  if (!SameGrid(test, reference))
  {
    CANOPY_THROW("--reference " << a.reference << ": its grid (size, spacing, origin, direction) differs from --test "
                                << a.test);
  }
  const OverlapMetrics m = ComputeOverlap(test, reference);
  std::cout << std::fixed << std::setprecision(4) << "Dice " << m.dice << "  Jaccard " << m.jaccard << "  volume "
            << std::setprecision(1) << m.volumeTestMm3 / 1000.0 << " ml vs " << m.volumeReferenceMm3 / 1000.0
            << " ml (" << std::showpos << m.volumeDifferencePercent << std::noshowpos << "%)\n";
  if (!a.json.empty())
  {
    report["parameters"] = { { "test", a.test }, { "reference", a.reference }, { "threshold", a.threshold } };
    report["metrics"] = ToJson(m);
    report.Write(a.json);
  }
}
} // namespace

void
RegisterAugmentCommand(CLI::App & app)
{
  auto   args = std::make_shared<AugmentArguments>();
  auto * c = app.add_subcommand("augment", "Write a randomly transformed, intensity-augmented copy of a volume (and label)");
  auto & o = args->options;
  c->add_option("--image", args->image, "Input volume")->required();
  c->add_option("--label", args->label, "Label map on the same grid (optional)");
  c->add_option("--positive-label", args->positiveLabels, "Label value(s) kept as foreground (default: non-zero)");
  c->add_option("--out-image", args->outImage, "Augmented volume to write")->required();
  c->add_option("--out-label", args->outLabel, "Augmented label map (0/1) to write");
  c->add_option("--seed", o.seed, "Random seed")->capture_default_str();
  c->add_option("--max-rotation", o.maxRotationDegrees, "Degrees per axis")->capture_default_str();
  c->add_option("--max-translation", o.maxTranslationMm, "mm per axis")->capture_default_str();
  c->add_option("--max-scale", o.maxScale, "Isotropic scale range 1 +- this")->capture_default_str();
  c->callback([args] { RunAugment(*args); });
}

void
RegisterEvaluateCommand(CLI::App & app)
{
  auto   args = std::make_shared<EvaluateArguments>();
  auto * c = app.add_subcommand("evaluate", "Overlap of a segmentation (or probability map) with a reference label map");
  c->add_option("--test", args->test, "Label map or probability map to evaluate")->required();
  c->add_option("--reference", args->reference, "Reference label map")->required();
  c->add_option("--reference-label", args->referenceLabels, "Reference label value(s) (default: non-zero)");
  c->add_option("--threshold", args->threshold, "Test voxels >= this are foreground")->capture_default_str();
  c->add_option("--json", args->json, "Write the metrics as JSON here");
  c->callback([args] { RunEvaluate(*args); });
}

} // namespace canopy::app
