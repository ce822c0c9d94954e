// canopy augment and canopy evaluate (overlap, surface distances, per-label, mesh-to-mesh).
#include "canopy/Errors.h"
#include "canopyAugmentation.h"
#include "canopyCheckedImageReader.h"
#include "canopyCommands.h"
#include "canopyForestLabels.h"
#include "canopyImageIO.h"
#include "canopyLabelCleanup.h"
#include "canopyLabelMesh.h"
#include "canopyMeshDistance.h"
#include "canopyMeshIO.h"
#include "canopyOptionChecks.h"
#include "canopyOutputPaths.h"
#include "canopyOverlapMetrics.h"
#include "canopyProgress.h"
#include "canopySurfaceMetrics.h"

#include <vtkObject.h>

#include "itkVectorImage.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace canopy::app
{
namespace
{
struct AugmentArguments
{
  std::string         image, label, outImage, outLabel;
  std::vector<int>    positiveLabels;
  bool                keepLabelValues = false;
  AugmentationOptions options;
};

/** The label map with its values (0..255) instead of a 0/1 mask: for atlases such as AAL, whose
 * structures a pose detector is trained on (`train-detector --structure NAME=VALUE`). */
MaskVolume::Pointer
ReadLabelValues(const std::string & path)
{
  const auto labels = RoundToLabels(ReadVolume(path, "--label"), "--label " + path);
  auto       out = MaskVolume::New();
  out->CopyInformation(labels);
  out->SetRegions(labels->GetLargestPossibleRegion());
  out->Allocate();
  const auto n = labels->GetLargestPossibleRegion().GetNumberOfPixels();
  for (itk::SizeValueType i = 0; i < n; ++i)
  {
    const int v = labels->GetBufferPointer()[i];
    if (v < 0 || v > 255)
      CANOPY_THROW("--label " << path << ": --keep-label-values needs values 0..255, found " << v);
    out->GetBufferPointer()[i] = static_cast<unsigned char>(v);
  }
  return out;
}

void
RunAugment(const AugmentArguments & a)
{
  CheckOutputPaths({ { "--out-image", a.outImage }, { "--out-label", a.outLabel } },
                   { { "--image", a.image }, { "--label", a.label } });
  RequireVolumeFormat(a.outImage, "--out-image");
  RequireVolumeFormat(a.outLabel, "--out-label");
  if (!a.label.empty() && a.outLabel.empty())
  {
    CANOPY_THROW("augment: --label given without --out-label");
  }
  const auto          image = ReadVolume(a.image, "--image");
  MaskVolume::Pointer mask;
  if (!a.label.empty())
  {
    if (a.keepLabelValues && !a.positiveLabels.empty())
      CANOPY_THROW("augment: --keep-label-values excludes --positive-label");
    mask = a.keepLabelValues ? ReadLabelValues(a.label) : ReadMask(a.label, "--label", a.positiveLabels);
    if (!SameGrid(image, mask))
    {
      CANOPY_THROW("--label " << a.label << ": its grid differs from --image " << a.image);
    }
  }
  const auto pair = AugmentVolume(image, mask.GetPointer(), a.options);
  WriteVolume(pair.image.GetPointer(), a.outImage, "--out-image");
  if (pair.label)
  {
    WriteVolume(pair.label.GetPointer(), a.outLabel, "--out-label");
  }
  std::cout << "augmented " << a.image << " -> " << a.outImage << (pair.label ? " and " + a.outLabel : "")
            << "\n  rotation (deg) "
            << pair.parameters.at("transform").value("rotationDegreesXYZ", nlohmann::json()).dump()
            << ", translation (mm) " << pair.parameters.at("transform").value("translationMm", nlohmann::json()).dump()
            << ", scale " << pair.parameters.at("transform").value("scale", nlohmann::json()).dump() << '\n';
}

struct EvaluateArguments
{
  std::string         test, reference, testMesh, referenceMesh, labels, json, meshSpace = "lps";
  std::vector<int>    referenceLabels;
  double              threshold = 0.5;
  std::vector<double> thresholds;           // a sweep of operating points instead of `threshold`
  std::string         postprocess = "none"; // LabelCleanupOptions of each thresholded mask
  bool                resampleTest = false;
};

/** --postprocess on a thresholded mask (1 inside): the clean-up that predict-forest --postprocess applies
 * to its labels, so that a two-class distribution scored here at T equals predict-forest --threshold T
 * --postprocess with the same list. */
void
CleanUpMask(itk::Image<unsigned char, 3> * mask, const LabelCleanupOptions & options)
{
  if (!options.Any())
    return;
  const auto                size = mask->GetLargestPossibleRegion().GetSize();
  const std::size_t         n = mask->GetLargestPossibleRegion().GetNumberOfPixels();
  std::vector<std::int32_t> labels(mask->GetBufferPointer(), mask->GetBufferPointer() + n);
  CleanUpLabels(labels.data(), int(size[0]), int(size[1]), int(size[2]), 3, options);
  std::copy(labels.begin(), labels.end(), mask->GetBufferPointer());
}

/** --test of the binary comparison as a score to threshold: a scalar volume as it is, or a class
 * distribution (predict-forest --mode distribution, one component per class) as the probability of
 * not being background (ForegroundProbability), which is what predict-forest --threshold compares. */
FloatVolume::Pointer
ReadTestScore(const std::string & path)
{
  if (std::filesystem::is_regular_file(path))
  {
    const auto file = OpenImageChecked(path, "--test");
    if (file.io->GetNumberOfComponents() > 1)
    {
      if (file.io->GetNumberOfDimensions() != 3)
        CANOPY_THROW("--test " << path << ": a class distribution must be 3D; the file has "
                               << file.io->GetNumberOfDimensions() << " dimension(s)");
      const auto distribution = ReadImageChecked<itk::VectorImage<float, 3>>(file, path, "--test");
      const auto classes = distribution->GetNumberOfComponentsPerPixel();
      auto       score = FloatVolume::New();
      score->CopyInformation(distribution);
      score->SetRegions(distribution->GetLargestPossibleRegion());
      score->Allocate();
      const auto    n = distribution->GetLargestPossibleRegion().GetNumberOfPixels();
      const float * p = distribution->GetBufferPointer();
      for (itk::SizeValueType i = 0; i < n; ++i)
        score->GetBufferPointer()[i] = ForegroundProbability(p + i * classes);
      return score;
    }
  }
  return ReadVolume(path, "--test");
}

// "--labels all" -> {} (every label found), "--labels 1,2" -> {1, 2}.
std::vector<int>
ParseLabelList(const std::string & text)
{
  if (text == "all")
    return {};
  std::vector<int>  labels;
  std::stringstream stream(text);
  std::string       item;
  while (std::getline(stream, item, ','))
  {
    std::size_t used = 0;
    int         value = 0;
    try
    {
      value = std::stoi(item, &used);
    }
    catch (const std::exception &)
    {
      used = 0;
    }
    if (used == 0 || used != item.size() || value == 0)
      CANOPY_THROW("--labels: '" << text << "' is not 'all' or a comma-separated list of non-zero labels");
    labels.push_back(value);
  }
  if (labels.empty())
    CANOPY_THROW("--labels: '" << text << "' is not 'all' or a comma-separated list of non-zero labels");
  return labels;
}

void
PrintSurface(const char * what, const SurfaceDistances & d)
{
  std::cout << std::fixed << std::setprecision(2) << what << " mean " << d.mean << " mm  95% " << d.percentile95
            << " mm  max " << d.maximum << " mm\n";
}

// Label maps on the same grid, one line and one JSON entry per label.
void
EvaluateLabels(const EvaluateArguments & a, const std::vector<int> & wanted, RunReport & report)
{
  const auto test = RoundToLabels(ReadVolume(a.test, "--test"), "--test " + a.test);
  const auto reference = RoundToLabels(ReadVolume(a.reference, "--reference"), "--reference " + a.reference);
  if (!SameGrid(test, reference))
    CANOPY_THROW("--reference " << a.reference << ": its grid (size, spacing, origin, direction) differs from --test "
                                << a.test);
  const auto results = ComputeLabelMetrics(test, reference, wanted);
  if (results.empty())
    CANOPY_THROW("--labels all: neither " << a.test << " nor " << a.reference << " has a non-zero label");
  report["labels"] = nlohmann::json::array();
  for (const auto & r : results)
  {
    std::cout << "label " << r.label << ": Dice " << std::fixed << std::setprecision(4) << r.overlap.dice << "  ";
    PrintSurface("surface distance", r.surface);
    report["labels"].push_back(ToJson(r));
  }
}

// A mesh file, or the surface of a volume (its mask as in the binary comparison, or one label).
vtkSmartPointer<vtkPolyData>
SideMesh(const std::string &       meshPath,
         const std::string &       volumePath,
         bool                      isTest,
         const EvaluateArguments & a,
         const std::vector<int> &  labels)
{
  const std::string side = isTest ? "--test" : "--reference";
  if (!meshPath.empty())
    return ReadMesh(meshPath, a.meshSpace == "ras" ? MeshSpace::RAS : MeshSpace::LPS, side + "-mesh").mesh;
  LabelMeshOptions options;
  options.label = labels.empty() ? 1 : labels.front();
  if (labels.empty())
  {
    const MaskVolume::Pointer mask = isTest ? ThresholdToMask(ReadVolume(volumePath, side), float(a.threshold))
                                            : ReadMask(volumePath, side, a.referenceLabels);
    const auto                n = mask->GetLargestPossibleRegion().GetNumberOfPixels();
    if (std::none_of(mask->GetBufferPointer(), mask->GetBufferPointer() + n, [](unsigned char v) { return v != 0; }))
      return vtkSmartPointer<vtkPolyData>::New(); // empty surface: infinite distances in the report
    return LabelToMesh(mask, options);
  }
  const auto map = RoundToLabels(ReadVolume(volumePath, side), side + " " + volumePath);
  const auto found = FindLabels(map);
  if (std::find(found.begin(), found.end(), options.label) == found.end())
    return vtkSmartPointer<vtkPolyData>::New(); // empty surface: infinite distances in the report
  return LabelToMesh(map, options);
}

void
EvaluateMeshes(const EvaluateArguments & a, const std::vector<int> & labels, RunReport & report)
{
  const auto test = SideMesh(a.testMesh, a.test, true, a, labels);
  const auto reference = SideMesh(a.referenceMesh, a.reference, false, a, labels);
  const auto d = ComputeMeshDistances(test, reference);
  PrintSurface("mesh distance", d);
  auto measures = [](vtkPolyData * mesh)
  {
    const auto m = ComputeMeshMeasures(mesh);
    return nlohmann::json{
      { "points", m.points }, { "triangles", m.triangles }, { "areaMm2", m.areaMm2 }, { "volumeMm3", m.volumeMm3 }
    };
  };
  report["meshDistance"] = ToJson(d);
  report["testMesh"] = measures(test);
  report["referenceMesh"] = measures(reference);
}

// A score or label map against a reference mask, at --threshold or at each of --thresholds, each mask
// cleaned by --postprocess first.
void
EvaluateThresholds(const EvaluateArguments & a, const LabelCleanupOptions & cleanup, RunReport & report)
{
  const auto score = ReadTestScore(a.test);
  const auto reference = ReadMask(a.reference, "--reference", a.referenceLabels);
  const bool sweep = !a.thresholds.empty();
  if (sweep)
    report["sweep"] = nlohmann::json::array();
  for (const double threshold : sweep ? a.thresholds : std::vector<double>{ a.threshold })
  {
    auto test = ThresholdToMask(score, static_cast<float>(threshold));
    CleanUpMask(test, cleanup);
    if (a.resampleTest && !SameGrid(test, reference))
      test = ResampleMaskLike(test, reference); // e.g. a DICOM series read with rows in the other order
    if (!SameGrid(test, reference))
    {
      CANOPY_THROW("--reference " << a.reference << ": its grid (size, spacing, origin, direction) differs from --test "
                                  << a.test);
    }
    const OverlapMetrics   m = ComputeOverlap(test, reference);
    const SurfaceDistances d = ComputeSurfaceDistances(test, reference);
    if (sweep)
      std::cout << "threshold " << threshold << ": ";
    std::cout << std::fixed << std::setprecision(4) << "Dice " << m.dice << "  Jaccard " << m.jaccard << "  volume "
              << std::setprecision(1) << m.volumeTestMm3 / 1000.0 << " ml vs " << m.volumeReferenceMm3 / 1000.0
              << " ml (" << std::showpos << m.volumeDifferencePercent << std::noshowpos << "%)\n";
    PrintSurface(sweep ? "  surface distance" : "surface distance", d);
    std::cout << std::defaultfloat; // the next threshold prints as given (0.6, not 0.60)
    auto metrics = ToJson(m);
    metrics["surface"] = ToJson(d);
    if (sweep)
      report["sweep"].push_back({ { "threshold", threshold }, { "metrics", metrics } });
    else
      report["metrics"] = metrics;
  }
}

void
RunEvaluate(const EvaluateArguments & a)
{
  vtkObject::GlobalWarningDisplayOff(); // VTK's own messages would repeat our errors
  RunReport report("evaluate");
  CheckOutputPaths({ { "--json", a.json } },
                   { { "--test", a.test },
                     { "--reference", a.reference },
                     { "--test-mesh", a.testMesh },
                     { "--reference-mesh", a.referenceMesh } });
  const bool       meshes = !a.testMesh.empty() || !a.referenceMesh.empty();
  const bool       perLabel = !a.labels.empty();
  std::vector<int> labels = perLabel ? ParseLabelList(a.labels) : std::vector<int>{};
  const auto       cleanup = LabelCleanupOptions::Parse(a.postprocess, "--postprocess");
  if (a.test.empty() == a.testMesh.empty())
    CANOPY_THROW("evaluate: give exactly one of --test and --test-mesh");
  if (a.reference.empty() == a.referenceMesh.empty())
    CANOPY_THROW("evaluate: give exactly one of --reference and --reference-mesh");
  if (meshes && !a.thresholds.empty())
    CANOPY_THROW("--thresholds: sweeps a score volume (--test) against --reference, not meshes");
  if ((meshes || perLabel) && cleanup.Any())
    CANOPY_THROW("--postprocess " << a.postprocess << ": cleans the thresholded --test mask; not with "
                                  << (meshes ? "meshes" : "--labels"));
  if (meshes && perLabel && labels.size() != 1)
    CANOPY_THROW("--labels " << a.labels << ": a mesh comparison takes one label");
  report["parameters"] = { { "test", a.test.empty() ? a.testMesh : a.test },
                           { "reference", a.reference.empty() ? a.referenceMesh : a.reference },
                           { "threshold", a.threshold },
                           { "labels", a.labels } };
  if (!a.thresholds.empty())
    report["parameters"]["thresholds"] = a.thresholds;
  report["parameters"]["postprocess"] = cleanup.Describe();
  if (meshes)
    EvaluateMeshes(a, labels, report);
  else if (perLabel)
    EvaluateLabels(a, labels, report);
  else
  {
    EvaluateThresholds(a, cleanup, report);
  }
  if (!a.json.empty())
    report.Write(a.json);
}
} // namespace

void
RegisterAugmentCommand(CLI::App & app)
{
  auto   args = std::make_shared<AugmentArguments>();
  auto * c =
    app.add_subcommand("augment", "Write a randomly transformed, intensity-augmented copy of a volume (and label)");
  auto & o = args->options;
  c->add_option("--image", args->image, "Input volume")->required();
  c->add_option("--label", args->label, "Label map on the same grid (optional)");
  c->add_option("--positive-label", args->positiveLabels, "Label value(s) kept as foreground (default: non-zero)");
  c->add_option("--out-image", args->outImage, "Augmented volume to write")->required();
  c->add_option("--out-label", args->outLabel, "Augmented label map (0/1) to write");
  c->add_flag("--keep-label-values",
              args->keepLabelValues,
              "Write the label map's values (0..255, e.g. an atlas) instead of a 0/1 mask");
  c->add_option("--seed", o.seed, "Random seed")->capture_default_str();
  c->add_option("--max-rotation", o.maxRotationDegrees, "Degrees per axis")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 180.0));
  c->add_option("--max-translation", o.maxTranslationMm, "mm per axis")
    ->capture_default_str()
    ->check(FiniteNonNegative());
  c->add_option("--max-scale", o.maxScale, "Isotropic scale range 1 +- this, below 1")
    ->capture_default_str()
    ->check(FiniteIn(0.0, 0.99));
  c->callback([args] { RunAugment(*args); });
}

void
RegisterEvaluateCommand(CLI::App & app)
{
  auto   args = std::make_shared<EvaluateArguments>();
  auto * c = app.add_subcommand("evaluate",
                                "Overlap and surface distances (mm) of a segmentation, probability map "
                                "or mesh against a reference label map or mesh");
  auto * test = c->add_option("--test", args->test, "Label map or probability map to evaluate");
  auto * reference = c->add_option("--reference", args->reference, "Reference label map");
  c->add_option("--test-mesh", args->testMesh, "Mesh (.vtk, .vtp, .stl) to evaluate instead of --test")->excludes(test);
  c->add_option("--reference-mesh", args->referenceMesh, "Reference mesh instead of --reference")->excludes(reference);
  auto * referenceLabel =
    c->add_option("--reference-label", args->referenceLabels, "Reference label value(s) (default: non-zero)");
  auto * threshold = c->add_option("--threshold", args->threshold, "Test voxels >= this are foreground")
                       ->capture_default_str()
                       ->check(FiniteIn(-1e30, 1e30));
  auto * thresholds =
    c->add_option("--thresholds",
                  args->thresholds,
                  "Operating points: the results at each of these thresholds (e.g. 0.5,0.6,0.7; a class distribution "
                  "of predict-forest --mode distribution is thresholded as 1 - p(class 0))")
      ->delimiter(',')
      ->excludes(threshold)
      ->check(FiniteIn(-1e30, 1e30));
  c->add_option(
     "--labels", args->labels, "Per-label results of two label maps: 'all' (every label found) or a list such as 1,2")
    ->excludes(referenceLabel)
    ->excludes(threshold)
    ->excludes(thresholds);
  c->add_option(
     "--postprocess",
     args->postprocess,
     "Clean each thresholded --test mask first: none, or a list of largest (its largest connected component), "
     "fill (its holes filled), full (26-connectivity); what predict-forest --postprocess does to its labels")
    ->capture_default_str();
  c->add_option("--mesh-space", args->meshSpace, "Frame of mesh files without a SPACE tag (ITK-SNAP writes ras)")
    ->check(CLI::IsMember({ "lps", "ras" }))
    ->capture_default_str();
  c->add_option("--json", args->json, "Write the metrics as JSON here");
  c->add_flag("--resample-test",
              args->resampleTest,
              "Resample the thresholded test (nearest neighbour) onto the reference grid when the grids differ");
  c->callback([args] { RunEvaluate(*args); });
}

} // namespace canopy::app
