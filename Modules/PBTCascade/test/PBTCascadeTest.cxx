// Multi-class and auto-context PBT models: multi-channel Haar features on stacked channels, the joint
// decision, the model file (new and old forms), and a cascade that must beat its first stage on
// held-out phantoms (which it cannot unless it reads the maps).
#include "PBTCascadeTestSupport.h"
#include "canopy/HaarEvaluation.h"
#include "canopy/IntegralVolume.h"
#include "canopyHaarChannels.h"
#include "canopyHaarFeatureBank.h"
#include "canopyTesting.h"

#include <gtest/gtest.h>

namespace
{
std::vector<float>
IntegerVolume(int n, std::uint64_t seed)
{
  std::mt19937_64    rng(seed);
  std::vector<float> v(n);
  for (auto & x : v)
    x = float(rng() % 7); // integers: every box sum is exact, whatever the table holds before it
  return v;
}

std::vector<double>
Table(const float * voxels, int nx, int ny, int nz)
{
  std::vector<double> table(std::size_t(PaddedTableSize(nx, ny, nz)));
  ComputeIntegralVolumeCPU(voxels, nx, ny, nz, table.data(), 1);
  return table;
}

TEST(HaarChannels, FeatureOnStackEqualsFeatureOnItsChannelAlone)
{
  const int             nx = 9, ny = 8, nz = 7, n = nx * ny * nz;
  const auto            a = IntegerVolume(n, 1), b = IntegerVolume(n, 2), c = IntegerVolume(n, 3);
  RandomHaarBankOptions bankOptions;
  bankOptions.count = 40;
  std::vector<HaarFeature> bank = GenerateRandomHaarBank(bankOptions);
  for (std::size_t i = 0; i < bank.size(); ++i)
    bank[i].channel = int(i % 3);
  const std::array<int, 3> box{ { 6, 6, 6 } };
  int                      stride = 0;
  const auto               stacked = ResolveHaarBankOnChannels(bank, box, 3, nz, &stride);
  EXPECT_GE(stride, nz + 3);
  const auto               stack = StackHaarChannels({ a.data(), b.data(), c.data() }, nx, ny, nz, stride);
  const auto               stackTable = Table(stack.data(), nx, ny, HaarStackPlanes(3, nz, stride));
  const IntegralVolumeView stackView{ stackTable.data(), nx, ny, HaarStackPlanes(3, nz, stride) };
  const auto               plain = ResolveHaarBank(bank, box);
  const std::vector<std::vector<double>> tables{ Table(a.data(), nx, ny, nz),
                                                 Table(b.data(), nx, ny, nz),
                                                 Table(c.data(), nx, ny, nz) };
  for (std::size_t f = 0; f < bank.size(); ++f)
  {
    const IntegralVolumeView alone{ tables[bank[f].channel].data(), nx, ny, nz };
    for (int z = 0; z < nz; ++z)
      for (int y = 0; y < ny; ++y)
        for (int x = 0; x < nx; ++x)
          ASSERT_EQ(HaarResponse(stackView, stacked[f], x, y, z), HaarResponse(alone, plain[f], x, y, z))
            << "feature " << f << " (channel " << bank[f].channel << ") at " << x << "," << y << "," << z;
  }
  bank[0].channel = 3;
  EXPECT_NE(canopy::testing::ErrorOf([&] { ResolveHaarBankOnChannels(bank, box, 3, nz, &stride); }).find("channel 3"),
            std::string::npos);
}

FloatVolume::Pointer
Constant(float value)
{
  auto v = FloatVolume::New();
  v->SetRegions(FloatVolume::RegionType({ { 0, 0, 0 } }, { { 1, 1, 1 } }));
  v->Allocate();
  v->FillBuffer(value);
  return v;
}

int
Decide(std::vector<float> p, const std::vector<int> & labels)
{
  std::vector<FloatVolume::Pointer> maps;
  for (float x : p)
    maps.push_back(Constant(x));
  NormalizePosteriors(maps);
  return JointLabels(maps, labels)->GetBufferPointer()[0];
}

TEST(PBTJointDecision, BackgroundWinsOnlyWhenItsPosteriorIsLargest)
{
  EXPECT_EQ(Decide({ 0.5f }, { 1 }), 1); // one class: the binary p >= 0.5
  EXPECT_EQ(Decide({ 0.49f }, { 1 }), 0);
  EXPECT_EQ(Decide({ 0.6f, 0.5f }, { 1, 2 }), 1); // both confident: the larger wins
  EXPECT_EQ(Decide({ 0.3f, 0.7f }, { 1, 2 }), 2);
  EXPECT_EQ(Decide({ 0.4f, 0.05f }, { 1, 2 }), 0);   // background 0.55
  EXPECT_EQ(Decide({ 0.375f, 0.25f }, { 1, 2 }), 1); // background 0.375: ties go to the class
  EXPECT_EQ(Decide({ 0.45f, 0.45f }, { 7, 3 }), 7);  // lowest class index on ties, its label written
}

/** The class map of one voxel (ClassProbabilityMap) and its argmax, classes over the background on ties. */
std::pair<std::vector<float>, int>
ClassMap(std::vector<float> p, const std::vector<int> & labels)
{
  std::vector<FloatVolume::Pointer> maps;
  for (float x : p)
    maps.push_back(Constant(x));
  NormalizePosteriors(maps);
  const auto         map = ClassProbabilityMap(maps, labels);
  const unsigned     k = map->GetNumberOfComponentsPerPixel();
  std::vector<float> v(map->GetBufferPointer(), map->GetBufferPointer() + k);
  int                best = 0;
  for (unsigned c = 1; c < k; ++c)
    best = v[c] > v[best] || (best == 0 && v[c] == v[0]) ? int(c) : best;
  return { v, best };
}

TEST(PBTJointDecision, ClassProbabilityMapSumsToOneAndItsArgmaxIsTheDecision)
{
  for (const auto & [p, labels] :
       std::vector<std::pair<std::vector<float>, std::vector<int>>>{ { { 0.5f }, { 1 } },
                                                                     { { 0.49f }, { 1 } },
                                                                     { { 0.6f, 0.5f }, { 1, 2 } },
                                                                     { { 0.3f, 0.7f }, { 1, 2 } },
                                                                     { { 0.4f, 0.05f }, { 1, 2 } },
                                                                     { { 0.375f, 0.25f }, { 1, 2 } },
                                                                     { { 0.2f, 0.3f }, { 1, 3 } } })
  {
    const auto [v, argmax] = ClassMap(p, labels);
    EXPECT_EQ(v.size(), std::size_t(*std::max_element(labels.begin(), labels.end()) + 1));
    float sum = 0.0f;
    for (float x : v)
      sum += x;
    EXPECT_NEAR(sum, 1.0f, 1e-6f) << p[0];
    EXPECT_EQ(argmax, Decide(p, labels)) << p[0];
  }
  EXPECT_EQ(ClassMap({ 0.2f, 0.3f }, { 1, 3 }).first, (std::vector<float>{ 0.5f, 0.2f, 0.0f, 0.3f })); // gap: 0
  EXPECT_EQ(ClassMap({ 0.9f, 0.9f }, { 1, 2 }).first[0], 0.0f); // normalised: nothing left for the background
  std::vector<FloatVolume::Pointer> one{ Constant(0.5f) };
  EXPECT_NE(canopy::testing::ErrorOf([&] { ClassProbabilityMap(one, { 0 }); }).find("1..255"), std::string::npos);
  EXPECT_NE(canopy::testing::ErrorOf(
              [&] {
                ClassProbabilityMap(one, { 1, 2 });
              })
              .find("1 posterior maps for 2"),
            std::string::npos);
}

PBTModel
TinyTree(int channel)
{
  PBTModel tree;
  tree.nodes.resize(1);
  tree.nodes[0] = PBTNodeFlat{};
  tree.nodes[0].left = tree.nodes[0].right = -1;
  tree.nodes[0].empiricalPositive = 0.25f;
  HaarFeature f = MakeHaarFeature(HaarPattern::Mean, 0, { { -0.5f, -0.5f, -0.5f } }, { { 0.5f, 0.5f, 0.5f } });
  f.channel = channel;
  tree.features = { f };
  tree.sampleBox = { { 3, 3, 3 } };
  return tree;
}

TEST(PBTClassModelFile, RoundTripAndOldBinaryFiles)
{
  PBTClassModel model;
  model.workingSpacing = { { 1.0, 1.5, 2.0 } };
  model.labels = { 1, 2 };
  model.stages = { { TinyTree(0), TinyTree(0) }, { TinyTree(2), TinyTree(1) } };
  const std::string path = canopy::testing::OutputPath("pbt-classes.json");
  SavePBTClassModel(model, path);
  const PBTClassModel back = LoadPBTClassModel(path);
  EXPECT_EQ(back.labels, model.labels);
  ASSERT_EQ(back.NumberOfStages(), 2);
  EXPECT_EQ(back.stages[1][0].features[0].channel, 2);
  EXPECT_EQ(back.stages[1][1].features[0].channel, 1);
  EXPECT_EQ(back.workingSpacing, model.workingSpacing);
  EXPECT_EQ(PBTClassModelToJson(back).dump(), PBTClassModelToJson(model).dump());
  // The binary reader names the problem instead of misreading it.
  EXPECT_NE(canopy::testing::ErrorOf([&] { LoadPBTModelFile(path); }).find("multi-class"), std::string::npos);

  // A stage-0 PBT reading a map, and a stage of the wrong size, are rejected.
  auto bad = model;
  bad.stages[0][0] = TinyTree(1);
  EXPECT_NE(canopy::testing::ErrorOf([&] { PBTClassModelFromJson(PBTClassModelToJson(bad), "bad.json"); })
              .find("stage 0, class 1: a feature reads channel 1"),
            std::string::npos);
  bad = model;
  bad.stages[1].pop_back();
  EXPECT_NE(canopy::testing::ErrorOf([&] { PBTClassModelFromJson(PBTClassModelToJson(bad), "bad.json"); })
              .find("stage 1 holds 1 PBTs for 2 classes"),
            std::string::npos);

  // Binary files of format versions 1, 2 and 3 read as one class and one stage.
  PBTModelFile binary;
  binary.tree = TinyTree(0);
  for (int version : { 1, 2, 3 })
  {
    nlohmann::json doc = PBTModelFileToJson(binary);
    doc["version"] = version;
    if (version == 1)
      doc["pbt"].erase("featureFamily");
    const PBTClassModel one = PBTClassModelFromJson(doc, "binary.json");
    EXPECT_EQ(one.labels, std::vector<int>{ 1 }) << version;
    ASSERT_EQ(one.NumberOfStages(), 1) << version;
    EXPECT_EQ(one.stages[0][0].nodes.size(), 1u) << version;
  }
}

TEST(PBTCascade, CascadeBeatsStageOneOnHeldOutPhantoms)
{
  const auto &                       p = SharedPBTPhantoms();
  const auto                         cpu = ResolveBackend(BackendRequest::Parse("cpu"));
  std::vector<PBTCascadeStageReport> report;
  const PBTClassModel                model = TrainPBTCascade(p.train, SmallCascadeOptions(3), &report);
  ASSERT_EQ(model.NumberOfStages(), 3);
  ASSERT_EQ(report.size(), 3u);
  EXPECT_GT(report[0].outOfFoldSeconds, 0.0);
  bool readsMaps = false;
  for (const auto & tree : model.stages[2])
    for (const auto & f : tree.features)
      readsMaps |= f.channel > 0;
  EXPECT_TRUE(readsMaps);
  const auto first = HeldOutDice(model, 1, cpu);
  const auto all = HeldOutDice(model, 3, cpu);
  std::cout << "held-out Dice, stage 1: " << first[0] << " / " << first[1] << "; 3 stages: " << all[0] << " / "
            << all[1] << '\n';
  EXPECT_GT(all[0] + all[1], first[0] + first[1] + 0.1) << "the cascade does not use the maps";
  EXPECT_GT(all[0], first[0]);
  EXPECT_GT(all[1], first[1]);

  // The same model through the file: the same held-out Dice.
  const std::string path = canopy::testing::OutputPath("pbt-cascade-phantom.json");
  SavePBTClassModel(model, path);
  EXPECT_EQ(HeldOutDice(LoadPBTClassModel(path), 3, cpu), all);
}

TEST(PBTCascade, BadOptionsAreNamed)
{
  const auto & p = SharedPBTPhantoms();
  auto         o = SmallCascadeOptions(2);
  o.folds = 7;
  EXPECT_NE(canopy::testing::ErrorOf([&] { TrainPBTCascade(p.train, o); }).find("--context-folds"), std::string::npos);
  o = SmallCascadeOptions(9);
  EXPECT_NE(canopy::testing::ErrorOf([&] { TrainPBTCascade(p.train, o); }).find("--auto-context"), std::string::npos);
}
} // namespace
