// Forest models as CBOR (".cbor" files): the writer's bytes are nlohmann-json's to_cbor() of the document,
// the round trip is exact, and the streaming reader accepts and rejects CBOR exactly as the document reader
// does, including damaged bytes.
#include "ForestReaderParity.h"
#include "canopy/Errors.h"
#include "canopy/JsonDocumentWriter.h"
#include "canopy/JsonField.h"
#include "canopyForestModelJson.h"
#include "canopyForestRandom.h"
#include "canopyTesting.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <sstream>

namespace
{
using namespace canopy;
using nlohmann::json;

/** Three trees with infinite thresholds, a filter bank and a reference (keys that sort between the
 * streamed ones) and more distribution values than one text piece (4,096). */
ForestModel
Sample(int dimension, int depth = 11)
{
  RandomForestOptions o;
  o.numTrees = 3;
  o.depth = depth;
  o.numClasses = 5;
  o.numChannels = 3;
  o.dimension = dimension;
  o.seed = 9 + dimension;
  ForestModel model = MakeRandomForest(o);
  model.filterBank = { "intensity", "pose:0", "pose:1" };
  model.reference.structure = "anterior";
  model.reference.training = "label 1";
  return model;
}

/** What the ".cbor" writers write: the self-describe tag, then to_cbor of the document. */
std::string
CborOfDocument(const json & document)
{
  const std::vector<std::uint8_t> bytes = json::to_cbor(document);
  return std::string(reinterpret_cast<const char *>(kCborSelfDescribeTag), sizeof(kCborSelfDescribeTag)) +
         std::string(bytes.begin(), bytes.end());
}

std::string
FileBytes(const std::string & path)
{
  std::ifstream in(path, std::ios::binary);
  return std::string{ std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>() };
}

/** The same trees and distributions, and the same JSON text (the header fields too). */
void
ExpectSameModel(const ForestModel & a, const ForestModel & b)
{
  canopy::testing::ExpectSameForest(a, b);
  EXPECT_EQ(ForestModelToJsonString(a), ForestModelToJsonString(b));
}

/** The document reader's outcome on `document`, or the streaming reader's on `bytes`. */
std::string
Outcome(const json & document, ForestModel & model)
{
  return canopy::testing::ReaderOutcome(model, [&] { return ForestModelFromJson(document, "forest.cbor"); });
}
std::string
StreamedOutcome(const std::string & bytes, ForestModel & model)
{
  return canopy::testing::ReaderOutcome(model, [&] { return ForestModelFromJsonString(bytes, "forest.cbor"); });
}

/** Whether dump() can write `document`: not when one of its strings is not valid UTF-8. */
bool
WritableAsJson(const json & document)
{
  try
  {
    document.dump();
    return true;
  }
  catch (const json::type_error &)
  {
    return false;
  }
}

TEST(ForestModelCbor, WriterWritesTheDocumentsCborAndReadsBackExactly)
{
  for (int dimension : { 2, 3 })
  {
    const ForestModel model = Sample(dimension);
    ASSERT_GT(model.distributions.size(), 4096U);
    ASSERT_NE(ForestModelToJsonString(model).find("null"), std::string::npos) << "no infinite threshold to write";
    const std::string expected = CborOfDocument(ForestModelToJson(model));

    std::ostringstream streamed;
    JsonDocumentWriter writer(streamed, ModelEncoding::Cbor);
    WriteForestModelDocument(writer, model);
    EXPECT_EQ(streamed.str(), expected);

    for (const std::string name : { "forest.cbor", "forest.CBOR" }) // the extension chooses the encoding
    {
      const std::string path = canopy::testing::OutputPath(std::to_string(dimension) + name);
      WriteForestModelJson(model, path);
      EXPECT_EQ(FileBytes(path), expected) << path;
      ExpectSameModel(ReadForestModelJson(path), model);
    }
    // Floats are 4-byte floats, not decimal text: the file is less than half the JSON's size.
    EXPECT_LT(expected.size(), ForestModelToJsonString(model).size() / 2);
  }
}

// The streaming reader converts nodes while the CBOR is parsed; the document reader converts them from
// nlohmann-json's own document of the same bytes. Same corruptions as the JSON parity test
// (ForestModelJsonTest), encoded as CBOR: same model or the same message.
TEST(ForestModelCbor, StreamedReaderMatchesTheDocumentReader)
{
  const json                               good = ForestModelToJson(Sample(3, 5));
  canopy::testing::ForestDocumentCorruptor corrupt(11);
  int                                      rejected = 0;
  for (int round = 0; round < 600; ++round)
  {
    const json        j = corrupt.Nodes(good);
    ForestModel       fromDocument, fromStream;
    const std::string expected = Outcome(j, fromDocument);
    ASSERT_EQ(StreamedOutcome(CborOfDocument(j), fromStream), expected) << "round " << round;
    if (expected == "accepted")
      ExpectSameModel(fromStream, fromDocument);
    else
      ++rejected;
  }
  EXPECT_GT(rejected, 300) << "the corruptions should mostly be rejected";
  EXPECT_LT(rejected, 600) << "some corruptions (a valid value in a valid place) should be accepted";

  // "distributions": packed while every entry is a number, built as a value from the first that is not.
  int distributionsRejected = 0;
  for (int round = 0; round < 300; ++round)
  {
    const json        j = corrupt.Distributions(good);
    ForestModel       fromDocument, fromStream;
    const std::string expected = Outcome(j, fromDocument);
    ASSERT_EQ(StreamedOutcome(CborOfDocument(j), fromStream), expected) << "distributions round " << round;
    if (expected == "accepted")
      ExpectSameModel(fromStream, fromDocument);
    else
      ++distributionsRejected;
  }
  EXPECT_GT(distributionsRejected, 100);
  EXPECT_LT(distributionsRejected, 300);
}

// Damaged bytes (one byte changed, or the file cut short): never a crash, and the same outcome as the
// document reader; bytes that are not CBOR read as "not valid CBOR", naming the file.
TEST(ForestModelCbor, DamagedBytesAreRejectedAsTheDocumentReaderRejectsThem)
{
  const std::string good = CborOfDocument(ForestModelToJson(Sample(3, 4)));
  std::mt19937      random(3);
  const auto        pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(random); };
  int               notCbor = 0, accepted = 0;
  for (int round = 0; round < 1500; ++round)
  {
    std::string bytes = good;
    if (round % 5 == 0)
      bytes.resize(sizeof(kCborSelfDescribeTag) + pick(good.size() - sizeof(kCborSelfDescribeTag)));
    else
      bytes[sizeof(kCborSelfDescribeTag) + pick(good.size() - sizeof(kCborSelfDescribeTag))] = char(pick(256));
    ForestModel       fromDocument, fromStream;
    const std::string streamed = StreamedOutcome(bytes, fromStream);
    json              document;
    try
    {
      document = json::from_cbor(bytes.begin() + sizeof(kCborSelfDescribeTag), bytes.end());
    }
    catch (const json::exception &) // a syntax error, or a stated size beyond what a document can hold
    {
      EXPECT_EQ(streamed.rfind("forest.cbor: not valid CBOR (", 0), 0U) << "round " << round << ": " << streamed;
      ++notCbor;
      continue;
    }
    if (!WritableAsJson(document)) // CBOR's readers leave UTF-8 unchecked; the forest reader checks it
    {
      EXPECT_EQ(streamed, "forest.cbor: not valid CBOR (a text string is not valid UTF-8)") << "round " << round;
      ++notCbor;
      continue;
    }
    ASSERT_EQ(streamed, Outcome(document, fromDocument)) << "round " << round;
    if (streamed == "accepted")
    {
      ExpectSameModel(fromStream, fromDocument);
      ++accepted;
    }
  }
  EXPECT_GT(notCbor, 300);
  EXPECT_GT(accepted, 10) << "a changed threshold or offset is still a valid model";
}

TEST(ForestModelCbor, DeepNestingAndByteStringsAreRejected)
{
  const auto rejection = [](const json & document)
  {
    ForestModel model;
    return StreamedOutcome(CborOfDocument(document), model);
  };
  json deep = 1;
  for (int i = 0; i < 200; ++i)
    deep = json::array({ deep });
  json withDeepField = ForestModelToJson(Sample(3, 3));
  withDeepField["notes"] = deep;
  EXPECT_EQ(rejection(withDeepField), "forest.cbor: CBOR nested deeper than 64 levels");
  EXPECT_EQ(rejection(deep), "forest.cbor: CBOR nested deeper than 64 levels");
  json shallow = 1;
  for (int i = 0; i < 60; ++i)
    shallow = json::array({ shallow });
  EXPECT_EQ(rejection(shallow).find("nested deeper"), std::string::npos) << rejection(shallow);

  // A byte string where a tree's nodes belong is never taken for nodes the reader packed itself.
  json bytes = ForestModelToJson(Sample(3, 3));
  bytes["trees"][0]["nodes"] = json::binary(std::vector<std::uint8_t>(32 * 3, 0));
  const std::string message = rejection(bytes);
  EXPECT_EQ(message.rfind("forest.cbor: ", 0), 0U) << message;
  EXPECT_NE(message.find("nodes"), std::string::npos) << message;
}

TEST(ForestModelCbor, Utf8IsCheckedAsJsonTextIs)
{
  for (const char * good : { "", "intensity", "caf\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF" })
  {
    EXPECT_TRUE(IsValidUtf8(good)) << good;
    EXPECT_NO_THROW(json(std::string(good)).dump());
  }
  for (const char * bad : { "\x80",
                            "\xC0\x80",
                            "\xC3",
                            "\xE0\x80\x80",
                            "\xED\xA0\x80",
                            "\xF4\x90\x80\x80",
                            "\xF5\x80\x80\x80",
                            "a\xE2\x82",
                            "\xFF" })
  {
    EXPECT_FALSE(IsValidUtf8(bad)) << bad;
    EXPECT_THROW(json(std::string(bad)).dump(), json::type_error) << "nlohmann-json disagrees";
  }
  json model = ForestModelToJson(Sample(3, 3));
  model["reference"]["structure"] = "ant\xF9rior";
  ForestModel read;
  EXPECT_EQ(StreamedOutcome(CborOfDocument(model), read),
            "forest.cbor: not valid CBOR (a text string is not valid UTF-8)");
}

TEST(ForestModelCbor, EncodingFollowsTheFileName)
{
  EXPECT_EQ(ModelEncodingForFileName("model.cbor"), ModelEncoding::Cbor);
  EXPECT_EQ(ModelEncodingForFileName("/a/b/Model.Cbor"), ModelEncoding::Cbor);
  EXPECT_EQ(ModelEncodingForFileName("model.json"), ModelEncoding::JsonText);
  EXPECT_EQ(ModelEncodingForFileName("cbor"), ModelEncoding::JsonText);
  EXPECT_EQ(ModelEncodingForFileName("model.cbor.json"), ModelEncoding::JsonText);
  EXPECT_FALSE(IsCborModel("{\"format\""));
  EXPECT_FALSE(IsCborModel("\xD9\xD9"));
}

// Floats: as nlohmann-json writes each float, including the ones CBOR holds only as doubles (infinities,
// NaN) and after other elements of the same array; JSON text in pieces of 4,096.
TEST(ForestModelCbor, WriterWritesFloatsAsTheLibraryDoes)
{
  std::vector<float> values = { 0.25f,  std::numeric_limits<float>::infinity(),
                                1e-30f, std::numeric_limits<float>::quiet_NaN(),
                                -0.0f,  3.4e38f };
  for (int i = 0; i < 5000; ++i)
    values.push_back(float(i) / 7.0f);
  json expected = json::array({ "first" });
  for (float v : values)
    expected.push_back(v);
  for (ModelEncoding encoding : { ModelEncoding::Cbor, ModelEncoding::JsonText })
  {
    std::ostringstream out;
    JsonDocumentWriter writer(out, encoding);
    writer.BeginArray(values.size() + 2);
    writer.Value("first");
    writer.Floats(values.data(), 3);
    writer.Floats(values.data() + 3, values.size() - 3);
    EXPECT_THROW(writer.Floats(values.data(), 2), std::logic_error) << "one more stated, two given";
    writer.Floats(values.data(), 0);
    writer.Value(nullptr);
    writer.EndArray();
    json full = expected;
    full.push_back(nullptr);
    EXPECT_EQ(out.str(), encoding == ModelEncoding::Cbor ? CborOfDocument(full) : full.dump());
  }
}

TEST(ForestModelCbor, WriterRejectsMiscountedContainers)
{
  std::ostringstream out;
  JsonDocumentWriter writer(out, ModelEncoding::Cbor);
  writer.BeginArray(2);
  writer.Value(1);
  EXPECT_THROW(writer.EndArray(), std::logic_error);
  writer.Value(2);
  EXPECT_THROW(writer.Value(3), std::logic_error);
  writer.EndArray();
  std::ostringstream text;
  JsonDocumentWriter object(text, ModelEncoding::JsonText);
  object.BeginObject(1);
  EXPECT_THROW(object.Value(1), std::logic_error); // a value without its key
  object.Key("a");
  object.Value(json::array({ 1, 2 }));
  object.EndObject();
  EXPECT_EQ(text.str(), "{\"a\":[1,2]}");
}
} // namespace
