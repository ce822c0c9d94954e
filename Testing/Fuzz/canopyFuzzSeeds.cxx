// Writes the seed corpora of the fuzz targets with the project's own writers: small valid PBT and
// forest models (random but valid, as in the parity tests) and tiny volumes in NIfTI, NRRD and
// MetaImage, raw and compressed. Run once (scripts/fuzz seeds) and commit corpus/.
//   canopyFuzzSeeds CORPUS_DIR
#include "canopyDetectorModelFile.h"
#include "canopyForestCascade.h"
#include "canopyForestModel.h"
#include "canopyForestRandom.h"
#include "canopyPBTEvaluator.h"
#include "canopyPBTModelFile.h"
#include "canopySteerableFeatureBank.h"
#include "canopyStreamGenerators.h"
#include "canopyStreamingModelFile.h"

#include "itkImage.h"
#include "itkImageFileWriter.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <string>

namespace
{
namespace fs = std::filesystem;

void
WriteText(const fs::path & path, const std::string & text)
{
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text << '\n';
}

void
WriteBytes(const fs::path & path, const std::string & bytes) // as they are: CBOR ends where its value ends
{
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

/** The bytes `write` puts in a ".cbor" file (the model writers choose CBOR by that extension). */
std::string
CborFileOf(const std::function<void(const std::string &)> & write)
{
  const fs::path path = fs::temp_directory_path() / "canopy-fuzz-seed.cbor";
  write(path.string());
  std::ifstream     in(path, std::ios::binary);
  const std::string bytes{ std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>() };
  in.close();
  fs::remove(path);
  return bytes;
}

template<typename TPixel, unsigned VDimension>
void
WriteImage(const fs::path & path, unsigned nx, bool compress, double spacing)
{
  using Image = itk::Image<TPixel, VDimension>;
  typename Image::SizeType size;
  size.Fill(2);
  size[0] = nx;
  auto image = Image::New();
  image->SetRegions(size);
  image->Allocate();
  typename Image::SpacingType s;
  s.Fill(spacing);
  image->SetSpacing(s);
  TPixel value{};
  for (itk::SizeValueType i = 0; i < image->GetLargestPossibleRegion().GetNumberOfPixels(); ++i)
  {
    image->GetBufferPointer()[i] = value;
    value = static_cast<TPixel>(value + 3);
  }
  fs::create_directories(path.parent_path());
  auto writer = itk::ImageFileWriter<Image>::New();
  writer->SetInput(image);
  writer->SetFileName(path.string());
  writer->SetUseCompression(compress);
  writer->Update();
}
} // namespace

int
main(int argc, char * argv[])
{
  if (argc != 2)
  {
    std::cerr << "usage: canopyFuzzSeeds CORPUS_DIR\n";
    return 2;
  }
  const fs::path corpus = argv[1];
  int            n = 0;
  for (int depth : { 0, 1, 2 })
  {
    canopy::RandomPBTModelOptions o;
    o.depth = depth;
    o.fullTree = depth != 2;
    o.learnersPerNode = 2;
    o.numFeatures = 4;
    o.numBins = 4;
    o.mixStumps = depth == 1;
    o.sampleBox = { { 5, 4, 3 } };
    o.seed = 7 + depth;
    canopy::PBTModelFile model;
    model.tree = canopy::MakeRandomPBTModel(o);
    model.tree.CompactFeatures();
    if (depth == 1)
    {
      model.normalization.method = "window";
    }
    WriteText(corpus / "canopyFuzzPBTModel" / ("random-depth" + std::to_string(depth) + ".json"),
              canopy::PBTModelFileToJson(model).dump());
    ++n;
  }
  for (int depth : { 1, 2 }) // steerable-feature PBTs (pose hypotheses), format version 2
  {
    canopy::RandomPBTModelOptions o;
    o.depth = depth;
    o.learnersPerNode = 2;
    o.numFeatures = 4;
    o.numBins = 4;
    o.sampleBox = { { 3, 3, 3 } };
    o.seed = 17 + depth;
    canopy::PBTModelFile model;
    model.tree = canopy::MakeRandomPBTModel(o);
    model.tree.featureFamily = canopy::PBTFeatureFamily::Steerable;
    model.tree.features.clear();
    model.tree.steerable.grid = canopy::SteerableGrid{ 3, 1.0f };
    model.tree.steerable.pyramid = canopy::SteerablePyramidOptions{ { 1.0, 2.0 }, {} };
    model.tree.steerable.features = canopy::RandomSteerableFeatures(model.tree.steerable.grid, 2, 4, o.seed);
    model.tree.CompactFeatures();
    model.tree.Validate("steerable seed");
    WriteText(corpus / "canopyFuzzPBTModel" / ("steerable-depth" + std::to_string(depth) + ".json"),
              canopy::PBTModelFileToJson(model).dump());
    ++n;
  }
  { // a detector of one structure with tiny random stages (canopyFuzzDetectorModel)
    auto steerable = [](std::uint64_t seed)
    {
      canopy::RandomPBTModelOptions o;
      o.depth = 1;
      o.learnersPerNode = 2;
      o.numFeatures = 4;
      o.numBins = 4;
      o.sampleBox = { { 3, 3, 3 } };
      o.seed = seed;
      canopy::PBTModel tree = canopy::MakeRandomPBTModel(o);
      tree.featureFamily = canopy::PBTFeatureFamily::Steerable;
      tree.features.clear();
      tree.steerable.grid = canopy::SteerableGrid{ 3, 1.0f };
      tree.steerable.pyramid = canopy::SteerablePyramidOptions{ { 2.0 }, {} };
      tree.steerable.features = canopy::RandomSteerableFeatures(tree.steerable.grid, 1, 4, seed);
      tree.CompactFeatures();
      return tree;
    };
    canopy::RandomPBTModelOptions o;
    o.depth = 1;
    o.learnersPerNode = 2;
    o.numFeatures = 4;
    o.numBins = 4;
    o.sampleBox = { { 3, 3, 3 } };
    o.seed = 31;
    canopy::StructureDetector d;
    d.name = "blob";
    d.label = 1;
    d.position.tree = canopy::MakeRandomPBTModel(o);
    d.position.tree.CompactFeatures();
    d.candidates = 3;
    d.orientation = steerable(32);
    d.scale = steerable(33);
    d.orientations = { { { { { 1, 0, 0 } }, { { 0, 1, 0 } }, { { 0, 0, 1 } } } },
                       { { { { 0, 1, 0 } }, { { -1, 0, 0 } }, { { 0, 0, 1 } } } } };
    d.meanSizeMm = { { 6, 4, 3 } };
    d.orientationKeep = 2;
    d.sizesMm = { { { 6, 4, 3 } }, { { 7, 5, 3 } } };
    d.aggregateCount = 2;
    canopy::DetectorModel detector;
    detector.structures = { d };
    canopy::ValidateDetectorModel(detector, "detector seed");
    WriteText(corpus / "canopyFuzzDetectorModel" / "tiny-detector.json", canopy::DetectorModelToJson(detector).dump());
    ++n;
    // Two structures and a network prior (format version 2): "child" searched where "blob" predicts it.
    d.name = "child";
    d.label = 2;
    detector.structures.push_back(d);
    canopy::SpatialPrior prior;
    prior.child = "child";
    prior.parent = "blob";
    prior.subjects = 4;
    prior.offsetMm = { { { 3, -2, 1 } }, { { { { 2, 0.5, 0 } }, { { 0.5, 1, 0 } }, { { 0, 0, 1 } } } } };
    prior.relativeAxes = { { { { 0, 1, 0 } }, { { -1, 0, 0 } }, { { 0, 0, 1 } } } };
    prior.rotationCovariance = { { { { 0.01, 0, 0 } }, { { 0, 0.01, 0 } }, { { 0, 0, 0.01 } } } };
    prior.sizeRatio = { { { 0.5, 0.6, 0.7 } }, { { { { 0.01, 0, 0 } }, { { 0, 0.01, 0 } }, { { 0, 0, 0.01 } } } } };
    prior.sigmas = 2.0;
    prior.marginMm = 1.0;
    detector.network = { prior };
    canopy::ValidateDetectorModel(detector, "network detector seed");
    WriteText(corpus / "canopyFuzzDetectorModel" / "tiny-network-detector.json",
              canopy::DetectorModelToJson(detector).dump());
    ++n;
  }
  for (int dimension : { 2, 3 })
  {
    canopy::RandomForestOptions o;
    o.numTrees = 2;
    o.depth = 3;
    o.leafProbability = 0.2;
    o.numClasses = 3;
    o.numChannels = dimension == 2 ? 1 : 2;
    o.dimension = dimension;
    o.usesScale = dimension == 3;
    o.maxOffset = 3;
    o.maxBoxSize = 2;
    o.seed = 11 + dimension;
    const canopy::ForestModel model = canopy::MakeRandomForest(o);
    WriteText(corpus / "canopyFuzzForestModel" / ("random-" + std::to_string(dimension) + "d.json"),
              canopy::ForestModelToJsonString(model));
    WriteBytes(corpus / "canopyFuzzForestModel" / ("random-" + std::to_string(dimension) + "d.cbor"), // the CBOR path
               CborFileOf([&](const std::string & path) { canopy::WriteForestModelJson(model, path); }));
    n += 2;
  }
  { // a 2-stage auto-context cascade with a context channel: the cascade reader's nesting and stage checks
    canopy::RandomForestOptions o;
    o.numTrees = 2;
    o.depth = 3;
    o.leafProbability = 0.2;
    o.numClasses = 2;
    o.numChannels = 1;
    o.dimension = 3;
    o.maxOffset = 2;
    o.maxBoxSize = 2;
    o.seed = 21;
    canopy::ForestCascade cascade;
    cascade.filterBank = { "intensity" };
    cascade.contextChannels = { "tophat:1" };
    cascade.stages.push_back(canopy::MakeRandomForest(o));
    o.numChannels = 1 + o.numClasses * 2; // the image, the class maps, their top-hats
    o.seed = 22;
    cascade.stages.push_back(canopy::MakeRandomForest(o));
    WriteText(corpus / "canopyFuzzForestModel" / "cascade-3d.json", canopy::ForestCascadeToJsonString(cascade));
    WriteBytes(corpus / "canopyFuzzForestModel" / "cascade-3d.cbor",
               CborFileOf([&](const std::string & path) { canopy::WriteForestCascadeJson(cascade, path); }));
    n += 2;
  }
  for (const char * generator : { "sea:drift_every=300", "randomtree" }) // small streaming forests
  {
    namespace st = canopy::streaming;
    st::StreamingForestOptions o;
    o.trees = 2;
    o.tree.gracePeriod = 20;
    o.threads = 1;
    auto                      stream = st::MakeGenerator(generator, 1);
    st::StreamingForest       forest(stream->Schema(), o);
    st::InstanceBatch         batch;
    std::vector<std::int32_t> predictions;
    std::uint64_t             index = 0;
    for (; index < 600; index += 100)
    {
      stream->NextBatch(batch, 100);
      forest.TestThenTrain(batch, index, predictions);
    }
    const st::StreamingModel model{ stream->Schema(), o, index, std::string("generator ") + generator, forest.State() };
    WriteText(corpus / "canopyFuzzStreamingModel" / (std::string(generator).substr(0, 3) + "-2trees.json"),
              st::StreamingModelToJson(model).dump());
    ++n;
  }
  const struct
  {
    const char * target;
    const char * extension;
  } formats[] = { { "canopyFuzzNiftiHeader", ".nii" },
                  { "canopyFuzzNrrdHeader", ".nrrd" },
                  { "canopyFuzzMetaHeader", ".mha" } };
  for (const auto & f : formats)
  {
    const fs::path dir = corpus / f.target;
    WriteImage<float, 3>(dir / (std::string("float-3x2x2") + f.extension), 3, false, 1.5);
    WriteImage<short, 3>(dir / (std::string("short-4x2x2-gz") + f.extension), 4, true, 0.5);
    WriteImage<unsigned char, 2>(dir / (std::string("uchar-2d") + f.extension), 3, false, 1.0);
    WriteImage<double, 4>(dir / (std::string("double-4d") + f.extension), 2, false, 2.0);
    n += 4;
  }
  std::cout << "wrote " << n << " seeds under " << corpus << '\n';
  return 0;
}
