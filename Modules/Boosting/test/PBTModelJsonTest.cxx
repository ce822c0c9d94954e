// The PBT model's JSON form: bit-identical round trip, rejection of truncated, corrupted and
// wrong-type documents with a canopy::Error naming the source, and a brief mutation fuzz.
#include "PBTTrainingTestSupport.h"
#include "canopy/Errors.h"
#include "canopyHaarFeatureBank.h"
#include "canopyPBTModel.h"
#include "canopyPBTTraining.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <functional>

using namespace canopy;
using namespace canopy::testing;
using nlohmann::json;

namespace
{

struct TrainedFixture
{
  SyntheticProblem problem;
  PBTModel         model;
};

/** A small trained model with a real Haar bank (one feature per matrix column). */
const TrainedFixture &
Trained()
{
  static const TrainedFixture fixture = []
  {
    TrainedFixture f;
    f.problem = MakeGaussianProblem(16, 1500, 4, 0.8, 0.05, 7);
    PBTTrainingOptions o;
    o.maxDepth = 3;
    o.weakLearnersPerNode = 6;
    o.featureCandidatesPerRound = 6;
    o.minSamplesToSplit = 40;
    f.model = TrainPBT(f.problem.responses, f.problem.labels, {}, o);
    RandomHaarBankOptions bank;
    bank.count = 16;
    f.model.features = GenerateRandomHaarBank(bank);
    f.model.sampleBox = { { 9, 11, 13 } };
    return f;
  }();
  return fixture;
}

json
TrainedJson()
{
  json j;
  PBTModelToJson(Trained().model, j);
  return j;
}

void
ExpectRejected(const json & document, const std::string & why)
{
  SCOPED_TRACE(why);
  try
  {
    PBTModelFromJson(document, "bad-model.json");
    ADD_FAILURE() << "accepted: " << why;
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find("bad-model.json"), std::string::npos) << e.GetDescription();
  }
}

} // namespace

TEST(PBTModelJson, RoundTripIsBitIdentical)
{
  const PBTModel & model = Trained().model;
  ASSERT_GT(model.nodes.size(), 1u);
  // Through text, as a file would be.
  const std::string text = TrainedJson().dump();
  const PBTModel    back = PBTModelFromJson(json::parse(text), "roundtrip.json");
  ASSERT_EQ(back.nodes.size(), model.nodes.size());
  ASSERT_EQ(back.learners.size(), model.learners.size());
  ASSERT_EQ(back.tables.size(), model.tables.size());
  ASSERT_EQ(back.features.size(), model.features.size());
  EXPECT_EQ(0, std::memcmp(back.nodes.data(), model.nodes.data(), model.nodes.size() * sizeof(PBTNodeFlat)));
  EXPECT_EQ(
    0, std::memcmp(back.learners.data(), model.learners.data(), model.learners.size() * sizeof(PBTWeakLearnerFlat)));
  EXPECT_EQ(0, std::memcmp(back.tables.data(), model.tables.data(), model.tables.size() * sizeof(float)));
  for (std::size_t i = 0; i < model.features.size(); ++i)
  {
    EXPECT_EQ(0, std::memcmp(&back.features[i], &model.features[i], sizeof(HaarFeature))) << i;
  }
  EXPECT_EQ(back.sampleBox, model.sampleBox);
  EXPECT_EQ(back.epsilon1, model.epsilon1);
  EXPECT_EQ(back.epsilon2, model.epsilon2);
  const auto &             responses = Trained().problem.responses;
  const std::vector<float> a = EvaluatePBTOnMatrix(model, responses);
  const std::vector<float> b = EvaluatePBTOnMatrix(back, responses);
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
  // And the document is stable under a second round trip.
  json again;
  PBTModelToJson(back, again);
  EXPECT_EQ(again.dump(), text);
}

TEST(PBTModelJson, TruncatedDocumentsAreRejected)
{
  for (const char * key : { "nodes", "learners", "tables", "features" })
  {
    json j = TrainedJson();
    j[key].erase(j[key].size() - 1); // drop the last entry
    ExpectRejected(j, std::string("truncated ") + key);
    j[key] = json::array();
    ExpectRejected(j, std::string("empty ") + key);
    j = TrainedJson();
    j.erase(key);
    ExpectRejected(j, std::string("missing ") + key);
  }
  // Text cut anywhere does not parse; the parser's error is the caller's to report.
  const std::string text = TrainedJson().dump();
  for (std::size_t cut : { std::size_t{ 1 }, text.size() / 3, text.size() - 1 })
  {
    EXPECT_TRUE(json::parse(text.substr(0, cut), nullptr, false).is_discarded());
  }
}

TEST(PBTModelJson, WrongTypesAreRejected)
{
  ExpectRejected(json::array(), "root is an array");
  ExpectRejected(json(), "root is null");
  ExpectRejected(json("model"), "root is a string");
  const std::vector<std::pair<std::string, std::function<void(json &)>>> edits{
    { "epsilon1 string", [](json & j) { j["epsilon1"] = "0.1"; } },
    { "epsilon2 out of range", [](json & j) { j["epsilon2"] = 0.7; } },
    { "sampleBox of floats",
      [](json & j) {
        j["sampleBox"] = { 1.5, 2.0, 3.0 };
      } },
    { "sampleBox of 2",
      [](json & j) {
        j["sampleBox"] = { 3, 3 };
      } },
    { "nodes object", [](json & j) { j["nodes"] = json::object(); } },
    { "node is a number", [](json & j) { j["nodes"][0] = 3; } },
    { "node child float", [](json & j) { j["nodes"][0]["left"] = 1.5; } },
    { "node child huge", [](json & j) { j["nodes"][0]["left"] = 1e12; } },
    { "node child huge integer", [](json & j) { j["nodes"][0]["right"] = 9223372036854775807LL; } },
    { "node child unsigned huge", [](json & j) { j["nodes"][0]["right"] = 18446744073709551615ULL; } },
    { "node cycle", [](json & j) { j["nodes"][1]["left"] = 1; } },
    { "node points to root", [](json & j) { j["nodes"][1]["left"] = 0; } },
    { "two parents", [](json & j) { j["nodes"][0]["left"] = j["nodes"][0]["right"]; } },
    { "empirical > 1", [](json & j) { j["nodes"][0]["empiricalPositive"] = 1.5; } },
    { "calibration beyond float", [](json & j) { j["nodes"][0]["calibrationScale"] = 1e300; } },
    { "calibration null", [](json & j) { j["nodes"][0]["calibrationOffset"] = nullptr; } },
    { "learners past the end", [](json & j) { j["nodes"][0]["numLearners"] = 100000; } },
    { "negative first learner", [](json & j) { j["nodes"][0]["firstLearner"] = -5; } },
    { "feature out of range", [](json & j) { j["learners"][0]["feature"] = 16; } },
    { "negative feature", [](json & j) { j["learners"][0]["feature"] = -1; } },
    { "table past the end", [](json & j) { j["learners"][0]["tableOffset"] = 1 << 30; } },
    { "numBins zero", [](json & j) { j["learners"][0]["numBins"] = 0; } },
    { "lo bool", [](json & j) { j["learners"][0]["lo"] = true; } },
    { "table entry string", [](json & j) { j["tables"][0] = "x"; } },
    { "table nested", [](json & j) { j["tables"][0] = json::array({ 1.0 }); } },
    { "feature no cuboids", [](json & j) { j["features"][0] = json::object(); } },
    { "feature cuboid short",
      [](json & j) {
        j["features"][0]["cuboids"][0]["lo"] = { 0.0, 0.1 };
      } },
    { "feature is string", [](json & j) { j["features"][0] = "haar"; } },
  };
  for (const auto & [why, edit] : edits)
  {
    json j = TrainedJson();
    edit(j);
    ExpectRejected(j, why);
  }
}

TEST(PBTModelJson, FuzzedDocumentsOnlyThrowItkExceptions)
{
  // Random edits anywhere in a valid document (replace a value by one of another type or range,
  // delete it, duplicate an array entry); the reader must accept or throw itk::ExceptionObject.
  const json              original = TrainedJson();
  std::mt19937_64         rng(2026);
  const std::vector<json> replacements{ json(),
                                        json(true),
                                        json("text"),
                                        json(-1),
                                        json(0),
                                        json(1),
                                        json(2147483648LL),
                                        json(-2147483649LL),
                                        json(1e300),
                                        json(-0.5),
                                        json(0.5),
                                        json(3.5e38),
                                        json::array(),
                                        json::object(),
                                        json::array({ 1, 2, 3 }),
                                        json(7),
                                        json(65) };
  int                     accepted = 0;
  int                     rejected = 0;
  for (int iteration = 0; iteration < 2000; ++iteration)
  {
    json      doc = original;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e)
    {
      // Walk down from the root to a random value.
      json *      parent = nullptr;
      json *      value = &doc;
      std::string key;
      std::size_t index = 0;
      while ((value->is_object() || value->is_array()) && !value->empty() && (parent == nullptr || rng() % 4 != 0))
      {
        parent = value;
        if (value->is_object())
        {
          auto it = value->begin();
          std::advance(it, static_cast<long>(rng() % value->size()));
          key = it.key();
          value = &(*value)[key];
        }
        else
        {
          index = rng() % value->size();
          value = &(*value)[index];
        }
      }
      const int action = static_cast<int>(rng() % 10);
      if (action == 0 && parent != nullptr)
      {
        if (parent->is_object())
        {
          parent->erase(key);
        }
        else
        {
          parent->erase(index);
        }
      }
      else if (action == 1 && parent != nullptr && parent->is_array())
      {
        parent->push_back((*parent)[index]);
      }
      else
      {
        *value = replacements[rng() % replacements.size()];
      }
    }
    try
    {
      const PBTModel model = PBTModelFromJson(doc, "fuzz.json");
      ++accepted;
    }
    catch (const itk::ExceptionObject &)
    {
      ++rejected;
    }
    // Any other exception type escapes and fails the test.
  }
  EXPECT_EQ(accepted + rejected, 2000);
  EXPECT_GT(rejected, 1000); // the edits do break most documents
}
