// The forest's JSON form: exact round trips, and corrupt files rejected with canopy::Error naming the
// file and the problem.
#include "ForestReaderParity.h"
#include "canopy/Errors.h"
#include "canopy/JsonField.h"
#include "canopyForestModelJson.h"
#include "canopyForestRandom.h"
#include "canopyTesting.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>

namespace
{
using namespace canopy;
using nlohmann::json;

ForestModel
Sample(int dimension)
{
  RandomForestOptions o;
  o.numTrees = 3;
  o.depth = 5;
  o.leafProbability = 0.2;
  o.numClasses = 4;
  o.numChannels = 3;
  o.dimension = dimension;
  o.seed = 5;
  return MakeRandomForest(o);
}

TEST(ForestModelJson, RoundTripIsExact)
{
  for (int dimension : { 2, 3 })
  {
    const ForestModel model = Sample(dimension);
    const std::string path = canopy::testing::OutputPath("forest" + std::to_string(dimension) + ".json");
    WriteForestModelJson(model, path);
    const ForestModel back = ReadForestModelJson(path);
    EXPECT_EQ(back.dimension, model.dimension);
    EXPECT_EQ(back.numChannels, model.numChannels);
    EXPECT_EQ(back.numClasses, model.numClasses);
    EXPECT_EQ(back.usesScale, model.usesScale);
    EXPECT_EQ(back.treeRoots, model.treeRoots);
    EXPECT_EQ(back.distributions, model.distributions);
    ASSERT_EQ(back.nodes.size(), model.nodes.size());
    EXPECT_EQ(0, std::memcmp(back.nodes.data(), model.nodes.data(), model.nodes.size() * sizeof(ForestNode)));
    EXPECT_EQ(ForestModelToJsonString(back), ForestModelToJsonString(model));
  }
}

// The writer streams node by node (WriteForestModelDocument); its text must be the document's dump() to the
// byte: with a filter bank and a reference (keys that sort between the streamed ones), infinite thresholds,
// and more distribution values than one written piece (4,096).
TEST(ForestModelJson, StreamedWriterWritesTheDocumentsText)
{
  RandomForestOptions o;
  o.numTrees = 3;
  o.depth = 11;
  o.numClasses = 5;
  o.numChannels = 3;
  o.seed = 9;
  ForestModel withBank = MakeRandomForest(o);
  withBank.filterBank = { "intensity", "pose:0", "pose:1" };
  withBank.reference.structure = "anterior";
  withBank.reference.training = "label 1";
  ASSERT_GT(withBank.distributions.size(), 4096U);
  for (const ForestModel & model : { Sample(2), Sample(3), withBank })
  {
    std::ostringstream streamed;
    JsonDocumentWriter writer(streamed, ModelEncoding::JsonText);
    WriteForestModelDocument(writer, model);
    EXPECT_EQ(streamed.str(), ForestModelToJson(model).dump());
    EXPECT_EQ(ForestModelToJsonString(model), streamed.str());
  }
  const std::string path = canopy::testing::OutputPath("streamed-forest.json");
  WriteForestModelJson(withBank, path);
  std::ifstream     in(path);
  const std::string text{ std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>() };
  EXPECT_EQ(text, ForestModelToJson(withBank).dump() + "\n");
}

/** Writes `text` to a file and expects reading it to throw a message containing the file name and `what`. */
void
ExpectRejected(const std::string & text, const std::string & what, const std::string & name)
{
  const std::string path = canopy::testing::OutputPath(name);
  std::ofstream(path) << text;
  try
  {
    ReadForestModelJson(path);
    ADD_FAILURE() << name << ": accepted";
  }
  catch (const canopy::Error & e)
  {
    const std::string message = e.GetDescription();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(what), std::string::npos) << name << ": " << message;
  }
}

TEST(ForestModelJson, RejectsCorruptFiles)
{
  const json good = json::parse(ForestModelToJsonString(Sample(3)));
  ExpectRejected(good.dump().substr(0, 200), "not valid JSON", "truncated.json");
  auto edit = [&](auto && change)
  {
    json j = good;
    change(j);
    return j.dump();
  };
  ExpectRejected(edit([](json & j) { j["version"] = 99; }), "newer", "version.json");
  ExpectRejected(R"({"format": "canopy-forest", "extra": )" + std::string(100000, '[') + std::string(100000, ']') + "}",
                 "JSON nested deeper than",
                 "deeply-nested.json");
  ExpectRejected(edit([](json & j) { j["format"] = "pbt"; }), "format", "format.json");
  ExpectRejected(edit([](json & j) { j.erase("classes"); }), "\"classes\"", "classes.json");
  ExpectRejected(edit([](json & j) { j["dimension"] = 4; }), "dimension", "dimension.json");
  ExpectRejected(edit([](json & j) { j["trees"][0]["nodes"][0][0] = 0; }), "left child", "selfloop.json");
  ExpectRejected(edit([](json & j) { j["trees"][0]["nodes"][0][0] = 100000; }), "children", "outside.json");
  ExpectRejected(edit([](json & j) { j["trees"][1]["nodes"][0][3] = 7; }), "channel", "channel.json");
  ExpectRejected(edit([](json & j) { j["trees"][1]["nodes"][0][7] = 0; }), "box size", "emptybox.json");
  ExpectRejected(edit([](json & j) { j["trees"][1]["nodes"][0][1] = "x"; }), "theta0", "theta.json");
  ExpectRejected(edit(
                   [](json & j) {
                     j["trees"][2]["nodes"][0] = json{ { "leaf", 100000 } };
                   }),
                 "distribution",
                 "leaf.json");
  ExpectRejected(edit([](json & j) { j["distributions"].erase(0); }), "multiple", "distributions.json");
  ExpectRejected(edit([](json & j) { j["trees"][0]["nodes"][0] = json::array({ 1, 2 }); }), "17 numbers", "short.json");
  ExpectRejected(edit(
                   [](json & j) {
                     j["trees"][1]["nodes"][2] = json{ { "laef", 0 } };
                   }),
                 "leafless.json: tree 1 node 2 has no field \"leaf\"",
                 "leafless.json");
  ExpectRejected(edit([](json & j) { j["trees"][1]["nodes"][0][5] = 40000; }),
                 "offset.json: tree 1 node 0 offset must be in",
                 "offset.json");
  ExpectRejected(edit([](json & j) { j["trees"] = json::array(); }), "trees", "notrees.json");
  try
  {
    ReadForestModelJson(canopy::testing::OutputPath("missing-forest.json"));
    ADD_FAILURE() << "a missing file was accepted";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("cannot be opened"), std::string::npos);
  }
}

// Deep nesting (the parser is iterative, but copies and destructors of the document recurse), a PBT
// model given where a forest is expected, and a folder: each a clear error naming the file.
TEST(ForestModelJson, RejectsDeepNestingOtherModelsAndFolders)
{
  const int depth = 100000;
  ExpectRejected(std::string(depth, '[') + std::string(depth, ']'), "nested deeper", "deep.json");
  json good = json::parse(ForestModelToJsonString(Sample(3)));
  good["notes"] = "@deep@";
  std::string text = good.dump();
  text.replace(text.find("\"@deep@\""), 8, std::string(depth, '[') + std::string(depth, ']'));
  ExpectRejected(text, "nested deeper", "deep-field.json");
  ExpectRejected(R"({"format": "canopy-model", "version": 1, "kind": "pbt"})", "is a PBT model", "pbt.json");
  const std::string folder = canopy::testing::OutputPath("forest-folder.json");
  std::filesystem::create_directories(folder);
  EXPECT_THROW(ReadForestModelJson(folder), canopy::Error);
}

/** The model read from `document`, or the error's description: what a reader tells its user. */
std::string
Outcome(const json & document, ForestModel & model)
{
  return canopy::testing::ReaderOutcome(model, [&] { return ForestModelFromJson(document, "forest.json"); });
}

// The streaming parser converts nodes while parsing (ParseForestJsonDocument); the document reader converts
// them from nlohmann-json's own document. Both must accept the same files as the same model and reject the
// same files with the same message: checked on good files and on 600 random corruptions of nodes and trees.
TEST(ForestModelJson, StreamedParserMatchesTheDocumentReader)
{
  for (int dimension : { 2, 3 })
  {
    const std::string text = ForestModelToJsonString(Sample(dimension));
    const json        streamed = ParseForestJsonDocument(text, "forest.json");
    ASSERT_TRUE(streamed["trees"][0]["nodes"].is_binary()) << "the nodes were not packed while parsing";
    ForestModel fromDocument, fromStream;
    ASSERT_EQ(Outcome(json::parse(text), fromDocument), "accepted");
    ASSERT_EQ(Outcome(streamed, fromStream), "accepted");
    canopy::testing::ExpectSameForest(fromStream, fromDocument);
    EXPECT_EQ(ForestModelToJsonString(fromStream), text);
  }

  const json                               good = json::parse(ForestModelToJsonString(Sample(3)));
  canopy::testing::ForestDocumentCorruptor corrupt(7);
  int                                      rejected = 0;
  for (int round = 0; round < 600; ++round)
  {
    const std::string text = corrupt.Nodes(good).dump();
    ForestModel       fromDocument, fromStream;
    const std::string expected = Outcome(json::parse(text), fromDocument);
    const std::string streamed = Outcome(ParseForestJsonDocument(text, "forest.json"), fromStream);
    ASSERT_EQ(streamed, expected) << "round " << round << ": " << text.substr(0, 200);
    if (expected == "accepted")
      canopy::testing::ExpectSameForest(fromStream, fromDocument);
    else
      ++rejected;
  }
  EXPECT_GT(rejected, 300) << "the corruptions should mostly be rejected";
  EXPECT_LT(rejected, 600) << "some corruptions (a valid value in a valid place) should be accepted";

  // "distributions" is kept as floats while every entry is a number, and built as a value from the first
  // entry that is not: the same floats or the same message either way.
  ASSERT_TRUE(ParseForestJsonDocument(good.dump(), "forest.json")["distributions"].is_binary());
  int distributionsRejected = 0;
  for (int round = 0; round < 300; ++round)
  {
    const std::string text = corrupt.Distributions(good).dump();
    ForestModel       fromDocument, fromStream;
    const std::string expected = Outcome(json::parse(text), fromDocument);
    ASSERT_EQ(Outcome(ParseForestJsonDocument(text, "forest.json"), fromStream), expected) << text.substr(0, 300);
    if (expected == "accepted")
      canopy::testing::ExpectSameForest(fromStream, fromDocument);
    else
      ++distributionsRejected;
  }
  EXPECT_GT(distributionsRejected, 100);
  EXPECT_LT(distributionsRejected, 300);

  // Syntax and nesting errors read as ParseJsonDocument words them.
  for (const std::string bad : { std::string("{\"trees\": [{\"nodes\": [[1, 2,"),
                                 std::string("[1] 2"),
                                 std::string(),
                                 std::string(100, '[') + std::string(100, ']') })
  {
    std::string expected, streamed;
    try
    {
      ParseJsonDocument(bad, "forest.json");
    }
    catch (const canopy::Error & e)
    {
      expected = e.GetDescription();
    }
    try
    {
      ParseForestJsonDocument(bad, "forest.json");
    }
    catch (const canopy::Error & e)
    {
      streamed = e.GetDescription();
    }
    EXPECT_FALSE(expected.empty()) << bad.substr(0, 40);
    EXPECT_EQ(streamed, expected) << bad.substr(0, 40);
  }
}

// Only where a forest can stand (the document, a cascade's stage, a checkpoint's "forest") is "distributions"
// packed; anywhere else the document keeps what the file holds.
TEST(ForestModelJson, DistributionsArePackedOnlyInForests)
{
  const json forest = ForestModelToJson(Sample(3));
  json       other = forest;
  other["notes"] = { { "distributions", { 0.5, 0.5 } } };
  const json cascade = { { "format", "canopy-forest-cascade" }, { "stages", json::array({ forest, forest }) } };
  const json checkpoint = { { "format", "canopy-forest-checkpoint" }, { "forest", forest } };
  EXPECT_TRUE(ParseForestJsonDocument(other.dump(), "f")["distributions"].is_binary());
  EXPECT_EQ(ParseForestJsonDocument(other.dump(), "f")["notes"], other["notes"]);
  const json stages = ParseForestJsonDocument(cascade.dump(), "c")["stages"];
  EXPECT_TRUE(stages[0]["distributions"].is_binary() && stages[1]["distributions"].is_binary());
  EXPECT_TRUE(ParseForestJsonDocument(checkpoint.dump(), "k")["forest"]["distributions"].is_binary());
  const json list = json::array({ forest });
  EXPECT_TRUE(ParseForestJsonDocument(list.dump(), "l")[0]["distributions"].is_array());
}

TEST(ForestModelJson, WritingIsAllOrNothing)
{
  const std::string path = canopy::testing::OutputPath("no-such-folder/forest.json");
  EXPECT_THROW(WriteForestModelJson(Sample(3), path), canopy::Error);
  EXPECT_FALSE(std::filesystem::exists(path));
  const std::string good = canopy::testing::OutputPath("written-forest.json");
  WriteForestModelJson(Sample(3), good);
  EXPECT_EQ(ForestModelToJsonString(ReadForestModelJson(good)), ForestModelToJsonString(Sample(3)));
  for (const auto & entry : std::filesystem::directory_iterator(std::filesystem::path(good).parent_path()))
    EXPECT_EQ(entry.path().filename().string().find(".written-forest.tmp-"), std::string::npos) << entry.path();
}

TEST(ForestModelJson, TwoDimensionalModelsRejectDepthBoxes)
{
  ForestModel model = Sample(2);
  for (auto & n : model.nodes)
    if (!ForestIsLeaf(n))
    {
      n.feature.size[0][2] = 2;
      break;
    }
  EXPECT_THROW(model.Validate("test"), canopy::Error);
}

} // namespace
