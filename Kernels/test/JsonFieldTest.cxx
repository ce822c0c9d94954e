// The model readers' nesting limit: JsonNestsDeeperThan (a scan before the plain parser) against the
// nesting that nlohmann-json itself builds, and ParseJsonWithDepthLimit on texts and streams.
#include "canopy/JsonField.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <sstream>
#include <string>

namespace
{
int
DeepestNesting(const nlohmann::json & value) // containers around the deepest value, the value's own included
{
  int deepest = 0;
  if (value.is_structured())
  {
    for (const auto & item : value)
      deepest = std::max(deepest, DeepestNesting(item));
    ++deepest;
  }
  return deepest;
}

std::string
Nested(int levels, const std::string & inner = "")
{
  std::string text;
  for (int i = 0; i < levels; ++i)
    text += i % 2 ? "{\"k\":" : "[";
  text += inner.empty() ? "1" : inner;
  for (int i = levels - 1; i >= 0; --i)
    text += i % 2 ? "}" : "]";
  return text;
}
} // namespace

TEST(JsonField, NestingIsCountedAsTheParserBuildsIt)
{
  for (const int levels : { 0, 1, 2, 63, 64, 65, 200 })
  {
    const std::string text = Nested(levels);
    ASSERT_EQ(DeepestNesting(nlohmann::json::parse(text)), levels) << text;
    EXPECT_EQ(canopy::JsonNestsDeeperThan(text, canopy::kMaxJsonDepth), levels > canopy::kMaxJsonDepth) << levels;
  }
}

TEST(JsonField, BracketsInsideStringsAndEscapesDoNotCount)
{
  // 64 levels plus strings full of brackets, escaped quotes and escaped backslashes before a quote.
  const std::string noise = R"(["[[[{{{", "\"[[[", "a\\", "{\\\"[", "\u005b"])";
  const std::string text = Nested(canopy::kMaxJsonDepth - 1, noise);
  ASSERT_EQ(DeepestNesting(nlohmann::json::parse(text)), canopy::kMaxJsonDepth);
  EXPECT_FALSE(canopy::JsonNestsDeeperThan(text, canopy::kMaxJsonDepth));
  EXPECT_TRUE(canopy::JsonNestsDeeperThan(Nested(canopy::kMaxJsonDepth, noise), canopy::kMaxJsonDepth));
}

TEST(JsonField, RandomDocumentsAgreeWithTheParser)
{
  std::mt19937 random(7);
  for (int trial = 0; trial < 300; ++trial)
  {
    // A random tree of arrays, objects and strings with brackets in them.
    std::function<nlohmann::json(int)> make = [&](int depth) -> nlohmann::json
    {
      const int kind = depth > 70 ? 2 : int(random() % 3);
      if (kind == 2)
        return std::string(random() % 3, "[{\"\\]}"[random() % 6]);
      nlohmann::json value = kind == 0 ? nlohmann::json::array() : nlohmann::json::object();
      const int      items = int(random() % 3) + (depth < 2);
      for (int i = 0; i < items; ++i)
      {
        if (kind == 0)
          value.push_back(make(depth + 1));
        else
          value[std::to_string(i)] = make(depth + 1);
      }
      return value;
    };
    const nlohmann::json document = make(0);
    const std::string    text = document.dump();
    for (const int limit : { 1, 3, 10, canopy::kMaxJsonDepth })
      EXPECT_EQ(canopy::JsonNestsDeeperThan(text, limit), DeepestNesting(document) > limit) << text;
  }
}

TEST(JsonField, ParseRejectsDeepDocumentsFromTextsAndStreams)
{
  const std::string ok = Nested(canopy::kMaxJsonDepth), deep = Nested(canopy::kMaxJsonDepth + 1);
  EXPECT_EQ(canopy::ParseJsonWithDepthLimit(ok, "ok.json"), nlohmann::json::parse(ok));
  std::istringstream stream(ok);
  EXPECT_EQ(canopy::ParseJsonWithDepthLimit(stream, "ok.json"), nlohmann::json::parse(ok));
  for (const bool fromStream : { false, true })
  {
    try
    {
      std::istringstream in(deep);
      fromStream ? canopy::ParseJsonWithDepthLimit(in, "deep.json")
                 : canopy::ParseJsonWithDepthLimit(deep, "deep.json");
      ADD_FAILURE() << "accepted " << deep.size() << " bytes nested " << canopy::kMaxJsonDepth + 1 << " deep";
    }
    catch (const canopy::Error & e)
    {
      EXPECT_NE(std::string(e.GetDescription()).find("deep.json: JSON nested deeper than 64 levels"), std::string::npos)
        << e.GetDescription();
    }
  }
  EXPECT_THROW(canopy::ParseJsonWithDepthLimit(std::string("[1, 2"), "cut.json"), nlohmann::json::parse_error);
}
