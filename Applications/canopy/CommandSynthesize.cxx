// canopy synthesize: T1-like images (and their transformed label maps) from a label map with
// SynthSeg's generative model (Modules/Synthesis).
#include "canopy/Errors.h"
#include "canopyCommands.h"
#include "canopyImageIO.h"
#include "canopyProgress.h"
#include "canopySnapshot.h"
#include "canopySynthesis.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace canopy::app
{
namespace
{
using LabelMap = itk::Image<unsigned short, 3>;

struct SynthesizeArguments
{
  std::string      label, outImage, outLabel, priors, report, snapshot;
  int              count = 1;
  bool             quiet = false;
  SynthesisOptions options;
};

// The label map as unsigned short; non-integer or out-of-range values are an error naming the file.
LabelMap::Pointer
ReadLabelMap(const std::string & path)
{
  const auto volume = ReadVolume(path, "--label");
  auto       labels = LabelMap::New();
  labels->CopyInformation(volume);
  labels->SetRegions(volume->GetLargestPossibleRegion());
  labels->Allocate();
  const float *     in = volume->GetBufferPointer();
  unsigned short *  out = labels->GetBufferPointer();
  const std::size_t n = volume->GetLargestPossibleRegion().GetNumberOfPixels();
  for (std::size_t i = 0; i < n; ++i)
  {
    if (!(in[i] >= 0 && in[i] <= 65535 && std::floor(in[i]) == in[i]))
      CANOPY_THROW("--label " << path << ": voxel " << i << " holds " << in[i]
                              << ", not a label (an integer in [0, 65535])");
    out[i] = static_cast<unsigned short>(in[i]);
  }
  return labels;
}

// --priors, else t1_generation_priors.json beside the label map, else under $CANOPY_DATA_DIR.
std::string
FindPriors(const SynthesizeArguments & a)
{
  namespace fs = std::filesystem;
  if (!a.priors.empty())
  {
    if (!fs::exists(a.priors))
      CANOPY_THROW("--priors " << a.priors << ": no such file");
    return a.priors;
  }
  const fs::path beside = fs::path(a.label).parent_path() / "t1_generation_priors.json";
  if (fs::exists(beside))
    return beside.string();
  if (const char * data = std::getenv("CANOPY_DATA_DIR"))
  {
    const fs::path shared = fs::path(data) / "synthseg-label-maps" / "t1_generation_priors.json";
    if (fs::exists(shared))
      return shared.string();
  }
  CANOPY_THROW("--priors: not given, and no t1_generation_priors.json beside "
               << a.label << " or under $CANOPY_DATA_DIR/synthseg-label-maps");
}

// "out.nii.gz" -> "out_3.nii.gz" when several images are made (the extension is the part from the
// first dot of the file name, so .nii.gz stays whole).
std::string
NumberedPath(const std::string & path, int index, int count)
{
  if (count == 1)
    return path;
  namespace fs = std::filesystem;
  const fs::path    p(path);
  const std::string name = p.filename().string();
  const auto        dot = name.find('.', 1);
  const std::string stem = dot == std::string::npos ? name : name.substr(0, dot);
  const std::string extension = dot == std::string::npos ? "" : name.substr(dot);
  return (p.parent_path() / (stem + "_" + std::to_string(index) + extension)).string();
}

void
RunSynthesize(const SynthesizeArguments & a)
{
  if (a.count < 1 || a.count > 10000)
    CANOPY_THROW("--count " << a.count << ": give 1 to 10000 images");
  RunReport  report("synthesize");
  const auto priorsPath = FindPriors(a);
  const auto priors = ReadSynthesisPriors(priorsPath);
  const auto labels = ReadLabelMap(a.label);
  report["label"] = a.label;
  report["priors"] = priorsPath;
  report["outputs"] = nlohmann::json::array();
  ProgressBar progress("synthesize", a.quiet || a.count == 1);
  for (int k = 0; k < a.count; ++k)
  {
    SynthesisOptions options = a.options;
    options.seed = a.options.seed + static_cast<std::uint64_t>(k);
    const auto pair = SynthesizeImage(labels, priors, options);
    const auto imagePath = NumberedPath(a.outImage, k, a.count);
    const auto labelPath = NumberedPath(a.outLabel, k, a.count);
    WriteVolume(pair.image.GetPointer(), imagePath, "--out-image");
    WriteVolume(pair.label.GetPointer(), labelPath, "--out-label");
    if (!a.snapshot.empty())
      WriteOrthogonalSnapshot(pair.image, nullptr, NumberedPath(a.snapshot, k, a.count));
    report["outputs"].push_back({ { "image", imagePath }, { "label", labelPath }, { "parameters", pair.parameters } });
    if (!a.quiet)
      std::cout << "synthesized " << imagePath << " and " << labelPath << " (seed " << options.seed << ")\n";
    progress.Update(static_cast<double>(k + 1) / a.count);
  }
  progress.Finish();
  if (!a.report.empty())
    report.Write(a.report);
}
} // namespace

void
RegisterSynthesizeCommand(CLI::App & app)
{
  auto   args = std::make_shared<SynthesizeArguments>();
  auto * c = app.add_subcommand(
    "synthesize", "T1-like images from a label map with SynthSeg's generative model (and the transformed labels)");
  auto & o = args->options;
  c->add_option("--label", args->label, "Label map (integer labels, e.g. FreeSurfer's)")->required();
  c->add_option("--out-image", args->outImage, "Synthesized image to write (numbered with --count > 1)")->required();
  c->add_option("--out-label", args->outLabel, "Transformed label map to write, on the same grid")->required();
  c->add_option("--priors",
                args->priors,
                "SynthSeg priors JSON (default: t1_generation_priors.json beside --label, or under "
                "$CANOPY_DATA_DIR/synthseg-label-maps)");
  c->add_option("--seed", o.seed, "Random seed (image k of --count uses seed + k)")->capture_default_str();
  c->add_option("--count", args->count, "Number of images")->capture_default_str();
  c->add_option("--max-rotation", o.maxRotationDegrees, "Degrees per axis")->capture_default_str();
  c->add_option("--max-translation", o.maxTranslationMm, "mm per axis")->capture_default_str();
  c->add_option("--max-scale", o.maxScale, "Isotropic scale range 1 +- this")->capture_default_str();
  c->add_option("--blur", o.maxBlurSigmaMm, "Largest Gaussian blur sigma (mm)")->capture_default_str();
  c->add_option("--bias", o.maxBiasFieldStd, "Largest std of the log bias field")->capture_default_str();
  c->add_option("--noise", o.maxNoiseSigma, "Largest noise sigma (0..255 scale)")->capture_default_str();
  c->add_option("--contrast-spread",
                o.contrastSpread,
                "Scales the std of every class's mean-intensity prior (1: the priors; 2: twice as varied contrasts)")
    ->capture_default_str();
  c->add_option("--snapshot", args->snapshot, "Write a PNG of three orthogonal slices of each image");
  c->add_option("--report", args->report, "Write a JSON run report (every draw) here");
  c->add_flag("--quiet", args->quiet, "Print nothing but errors");
  c->callback([args] { RunSynthesize(*args); });
}

} // namespace canopy::app
