// Per-tree checkpoints (train-forest --checkpoint): an exact round trip of the trees and fingerprint,
// corrupt files rejected naming the file, and fingerprint differences described by field.
#include "canopy/Errors.h"
#include "canopyForestCheckpoint.h"
#include "canopyForestRandom.h"
#include "canopyTesting.h"

#include <fstream>

namespace
{
using namespace canopy;
using nlohmann::json;

ForestCheckpoint
Sample()
{
  RandomForestOptions o;
  o.numTrees = 2;
  o.depth = 4;
  o.numClasses = 3;
  o.numChannels = 2;
  o.seed = 3;
  return { json{ { "trees", 4 }, { "files", json::array({ { { "image", "a.nii" }, { "bytes", 10 } } }) } },
           MakeRandomForest(o) };
}

std::string
Message(const std::function<void()> & f)
{
  try
  {
    f();
  }
  catch (const Error & e)
  {
    return e.GetDescription();
  }
  return "(no error)";
}

TEST(ForestCheckpoint, RoundTripIsExact)
{
  const ForestCheckpoint saved = Sample();
  const std::string      path = canopy::testing::OutputPath("checkpoint.json");
  WriteForestCheckpoint(saved, path);
  const ForestCheckpoint back = ReadForestCheckpoint(path);
  EXPECT_EQ(back.fingerprint, saved.fingerprint);
  EXPECT_EQ(ForestModelToJsonString(back.trees), ForestModelToJsonString(saved.trees));
  // The forest is streamed into the file; the text must be what nlohmann-json writes for the document.
  std::string text;
  std::getline(std::ifstream(path), text);
  EXPECT_EQ(json::parse(text).dump(), text);

  // A ".cbor" name writes CBOR, as the model writers do; the fingerprint compares equal after the round trip
  // (CBOR gives positive integers back unsigned and exact floats as 4-byte floats).
  ForestCheckpoint withNumbers = saved;
  withNumbers.fingerprint["testFraction"] = 0.1;
  withNumbers.fingerprint["share"] = 0.5;
  withNumbers.fingerprint["offset"] = -3;
  const std::string cbor = canopy::testing::OutputPath("checkpoint.cbor");
  WriteForestCheckpoint(withNumbers, cbor);
  std::ifstream in(cbor, std::ios::binary);
  EXPECT_EQ(in.get(), 0xD9) << "not CBOR's self-describe tag";
  const ForestCheckpoint fromCbor = ReadForestCheckpoint(cbor);
  EXPECT_EQ(fromCbor.fingerprint, withNumbers.fingerprint);
  EXPECT_EQ(DescribeFingerprintDifference(fromCbor.fingerprint, withNumbers.fingerprint), "");
  EXPECT_EQ(ForestModelToJsonString(fromCbor.trees), ForestModelToJsonString(saved.trees));
}

TEST(ForestCheckpoint, CorruptFilesNameTheFileAndTheProblem)
{
  const std::string path = canopy::testing::OutputPath("corrupt-checkpoint.json");
  WriteForestCheckpoint(Sample(), path);
  std::string text;
  {
    std::ifstream in(path);
    std::getline(in, text);
  }
  const auto write = [&path](const std::string & t) { std::ofstream(path) << t; };
  write(text.substr(0, text.size() / 2));
  EXPECT_NE(Message([&] { ReadForestCheckpoint(path); }).find(path + ": not valid JSON"), std::string::npos);
  write(ForestModelToJsonString(Sample().trees));
  EXPECT_NE(Message([&] { ReadForestCheckpoint(path); }).find("not a forest checkpoint"), std::string::npos);
  json j = json::parse(text);
  j["version"] = 2;
  write(j.dump());
  EXPECT_NE(Message([&] { ReadForestCheckpoint(path); }).find("checkpoint version 2"), std::string::npos);
  j = json::parse(text);
  j["forest"]["distributions"] = "none"; // a corrupt forest
  write(j.dump());
  EXPECT_NE(Message([&] { ReadForestCheckpoint(path); }).find(path + ": forest"), std::string::npos);
}

TEST(ForestCheckpoint, DifferencesNameTheField)
{
  const json saved = Sample().fingerprint;
  EXPECT_EQ(DescribeFingerprintDifference(saved, saved), "");
  json now = saved;
  now["trees"] = 8;
  EXPECT_EQ(DescribeFingerprintDifference(saved, now), "trees: 4 in the checkpoint, 8 now");
  now = saved;
  now["files"][0]["bytes"] = 11;
  EXPECT_EQ(DescribeFingerprintDifference(saved, now), "files[0] (a.nii).bytes: 10 in the checkpoint, 11 now");
  now = saved;
  now["files"].push_back(json{ { "image", "b.nii" } });
  EXPECT_EQ(DescribeFingerprintDifference(saved, now), "files: 1 entries in the checkpoint, 2 now");
  now = saved;
  now["seed"] = 2;
  EXPECT_EQ(DescribeFingerprintDifference(saved, now), "seed: absent in the checkpoint, 2 now");
  now.erase("seed");
  now.erase("trees");
  EXPECT_EQ(DescribeFingerprintDifference(saved, now), "trees: 4 in the checkpoint, absent now");
}
} // namespace
