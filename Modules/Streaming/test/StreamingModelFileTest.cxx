// A saved streaming forest resumes its stream exactly: learning A+B equals learning A, saving, loading
// and learning B (CPU forest and the device forest's host emulation, in every pairing); damaged model
// files are rejected with a message naming the field.
#include "canopy/Errors.h"
#include "canopyForestParity.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace canopy::streaming;
using namespace canopy::streaming::testing;

namespace
{
std::string
TempFile(const std::string & name)
{
  return ::testing::TempDir() + "/canopy-streaming-model-" + name + ".json";
}

constexpr DeviceStreamingForest::Executor kEmulation = DeviceStreamingForest::Executor::HostEmulation;

/** A small trained model (SEA with drifts: numeric attributes, background trees). */
StreamingModel
TrainedModel(std::uint64_t instances = 0)
{
  const auto [c, split] = ResumeCases()[1];
  const std::uint64_t splitAt = instances > 0 ? instances : split;
  auto                      stream = MakeGenerator(c.generator, c.options.seed);
  AnyForest                 forest(stream->Schema(), c.options, nullptr);
  std::vector<std::int32_t> predictions;
  LearnRange(forest, *stream, 0, splitAt, c.batch, predictions);
  return { stream->Schema(), c.options, splitAt, c.generator, forest.State() };
}

/** The error message of loading `document`, or "" when it loads. */
std::string
LoadError(const nlohmann::json & document)
{
  try
  {
    StreamingModelFromJson(document, "m.json");
  }
  catch (const canopy::Error & e)
  {
    return e.GetDescription();
  }
  return "";
}
} // namespace

TEST(StreamingModelFile, ResumedCpuForestEqualsTheWholeRun)
{
  for (const auto & [c, splitAt] : ResumeCases())
  {
    SCOPED_TRACE(Describe(c));
    ExpectResumeEqualsWholeRun(c, splitAt, nullptr, nullptr, TempFile("cpu"));
  }
}

TEST(StreamingModelFile, ResumedDeviceForestEqualsTheWholeRunInEveryPairing)
{
  for (const auto & [c, splitAt] : ResumeCases())
  {
    SCOPED_TRACE(Describe(c));
    ExpectResumeEqualsWholeRun(c, splitAt, &kEmulation, &kEmulation, TempFile("emulation"));
    ExpectResumeEqualsWholeRun(c, splitAt, nullptr, &kEmulation, TempFile("cpu-emulation"));
    ExpectResumeEqualsWholeRun(c, splitAt, &kEmulation, nullptr, TempFile("emulation-cpu"));
  }
}

TEST(StreamingModelFile, TheDriftCaseSavesBackgroundTreesAndDrifts)
{
  // Without these the resume test would not cover ADWIN's windows, saved background trees, and
  // drifts after resuming (a background tree promoted).
  const StreamingModel model = TrainedModel();
  int                  backgrounds = 0;
  std::int64_t         drifts = 0;
  for (const auto & m : model.state.members)
  {
    backgrounds += m.hasBackground ? 1 : 0;
    drifts += m.monitor.drifts;
    EXPECT_GT(m.monitor.drift.width, 0);
  }
  EXPECT_GT(backgrounds, 0);
  std::int64_t driftsAtEnd = 0;
  for (const auto & m : TrainedModel(std::uint64_t(ResumeCases()[1].first.instances)).state.members)
    driftsAtEnd += m.monitor.drifts;
  EXPECT_GT(driftsAtEnd, drifts);
}

TEST(StreamingModelFile, DamagedFilesAreRejectedNamingTheField)
{
  const nlohmann::json good = StreamingModelToJson(TrainedModel());
  ASSERT_EQ(LoadError(good), "");
  struct Damage
  {
    const char *                          expected; // in the message
    std::function<void(nlohmann::json &)> apply;
  };
  const std::vector<Damage> damages = {
    { "\"format\"", [](auto & j) { j["format"] = "canopy-model"; } },
    { "\"version\" is 2", [](auto & j) { j["version"] = 2; } },
    { "\"instances\" is missing", [](auto & j) { j.erase("instances"); } },
    { "\"schema.classes\"", [](auto & j) { j["schema"]["classes"] = { "only" }; } },
    { "\"options.lambda\"", [](auto & j) { j["options"]["lambda"] = -1; } },
    { "\"options.tree.criterion\"", [](auto & j) { j["options"]["tree"]["criterion"] = "entropy"; } },
    { "\"members\" holds 5 members", [](auto & j) { j["members"].erase(0); } },
    { "\"members[0].tree.weight\" is missing", [](auto & j) { j["members"][0]["tree"].erase("weight"); } },
    { "\"members[0].tree.child[0]\" must be an integer", [](auto & j) { j["members"][0]["tree"]["child"][0] = "x"; } },
    { "members[1].tree: \"child\"", [](auto & j) { j["members"][1]["tree"]["child"][0] = 1000000; } },
    { "members[1].tree: \"child\"", [](auto & j) { j["members"][1]["tree"]["child"][0] = 0; } },
    { "members[2].tree: \"attribute\"", [](auto & j) { j["members"][2]["tree"]["attribute"][0] = 99; } },
    { "members[0].tree: \"classCounts\"", [](auto & j) { j["members"][0]["tree"]["classCounts"].push_back(1); } },
    { "members[0].tree: \"subspace\"", [](auto & j) { j["members"][0]["tree"]["subspace"][0] = -3; } },
    { "\"members[0].tree.gaussians\"", [](auto & j) { j["members"][0]["tree"]["gaussians"][2] = 0.5; } },
    { "\"members[0].tree.threshold\"", [](auto & j) { j["members"][0]["tree"]["threshold"][0] = 0.1; } },
    { "members[0].monitor: ADWIN state: width", [](auto & j) { j["members"][0]["monitor"]["drift"]["width"] = 7; } },
    { "members[0].monitor: forest member state", [](auto & j) { j["members"][0]["monitor"]["correct"] = 1u << 31; } },
    { "\"members[0].background\"",
      [](auto & j)
      {
        for (auto & m : j["members"])
          if (!m["background"].is_null())
          {
            m["monitor"]["background"] = false;
            std::swap(j["members"][0], m);
            return;
          }
      } },
  };
  for (const Damage & d : damages)
  {
    nlohmann::json damaged = good;
    d.apply(damaged);
    const std::string message = LoadError(damaged);
    EXPECT_NE(message.find(d.expected), std::string::npos) << "expected \"" << d.expected << "\" in: " << message;
    EXPECT_EQ(message.rfind("m.json: ", 0), 0u) << message;
  }
}

TEST(StreamingModelFile, UnreadableAndTruncatedFilesNameTheFile)
{
  const std::string name = TempFile("truncated");
  std::string       text = StreamingModelToJson(TrainedModel()).dump();
  std::ofstream(name) << text.substr(0, text.size() / 2);
  try
  {
    LoadStreamingModel(name);
    FAIL() << "a truncated model loaded";
  }
  catch (const canopy::Error & e)
  {
    EXPECT_NE(std::string(e.GetDescription()).find(name + ": truncated or not valid JSON"), std::string::npos);
  }
  EXPECT_THROW(LoadStreamingModel(TempFile("absent")), canopy::Error);
}

TEST(StreamingModelFile, StreamsOfAnotherSchemaAreRefused)
{
  const StreamingModel model = TrainedModel();
  StreamSchema         other = model.schema;
  EXPECT_NO_THROW(RequireSameSchema(model.schema, other, "s.csv"));
  other.attributes[1].name = "renamed";
  EXPECT_THROW(RequireSameSchema(model.schema, other, "s.csv"), canopy::Error);
  other = model.schema;
  std::swap(other.classes[0], other.classes[1]);
  EXPECT_THROW(RequireSameSchema(model.schema, other, "s.csv"), canopy::Error);
}
