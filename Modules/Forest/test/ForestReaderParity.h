// What the tests that hold the streaming forest reader to the document reader share (ForestModelJsonTest on
// JSON text, ForestModelCborTest on CBOR): a reader's outcome as its user sees it, the comparison of two
// models, and random corruptions of a forest's JSON document: a value of the wrong
// type, range or shape put into one field of an inner node, in place of a node or of a tree's nodes, or into
// "distributions". Each value was chosen to reach a branch of the readers: leaf objects whose "leaf" comes
// first and is followed by another key (keys are written sorted), nested containers, numbers beyond every
// field's range, NaN and a byte string (CBOR keeps both; JSON text writes null and an object).
#pragma once

#include "canopy/Errors.h"
#include "canopyForestModel.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace canopy::testing
{
/** "accepted", with `model` = read(), or the description of the canopy::Error it threw. */
template<typename TRead>
std::string
ReaderOutcome(ForestModel & model, TRead && read)
{
  try
  {
    model = read();
    return "accepted";
  }
  catch (const canopy::Error & e)
  {
    return e.GetDescription();
  }
}

/** The same trees (node bytes and roots) and distributions. */
inline void
ExpectSameForest(const ForestModel & a, const ForestModel & b)
{
  EXPECT_EQ(a.treeRoots, b.treeRoots);
  EXPECT_EQ(a.distributions, b.distributions);
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  EXPECT_EQ(0, std::memcmp(a.nodes.data(), b.nodes.data(), a.nodes.size() * sizeof(ForestNode)));
}

class ForestDocumentCorruptor
{
public:
  explicit ForestDocumentCorruptor(unsigned seed)
    : m_Random(seed)
  {
  }

  /** `good` with one field of an inner node (6 in 10), one node (3 in 10) or one tree's nodes replaced. */
  nlohmann::json Nodes(const nlohmann::json & good)
  {
    nlohmann::json   j = good;
    nlohmann::json & nodes = j["trees"][Pick(j["trees"].size())]["nodes"];
    const auto       i = Pick(nodes.size());
    const auto &     value = Value();
    const auto       kind = Pick(10);
    if (kind < 6 && nodes[i].is_array())
      nodes[i][Pick(nodes[i].size())] = value;
    else if (kind < 9)
      nodes[i] = value;
    else
      nodes = value;
    return j;
  }

  /** `good` with "distributions" replaced (1 in 4), a value put in front of its entries (1 in 4), or one of
   * its entries replaced. */
  nlohmann::json Distributions(const nlohmann::json & good)
  {
    nlohmann::json   j = good;
    nlohmann::json & distributions = j["distributions"];
    const auto &     value = Value();
    const auto       kind = Pick(4);
    if (kind == 0)
      distributions = value;
    else if (kind == 1)
      distributions.insert(distributions.begin(), value);
    else
      distributions[Pick(distributions.size())] = value;
    return j;
  }

private:
  std::size_t Pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(m_Random); }

  const nlohmann::json & Value() { return m_Values[Pick(m_Values.size())]; }

  std::mt19937                      m_Random;
  const std::vector<nlohmann::json> m_Values = {
    nullptr,
    true,
    "x",
    nlohmann::json::array({ 1 }),
    nlohmann::json::array({ 0.5 }),
    nlohmann::json::object(),
    0,
    1,
    -1,
    2,
    7,
    24,
    40000,
    -40000,
    0.25,
    1.5,
    -2.25e38,
    1e300,
    std::numeric_limits<double>::quiet_NaN(),
    std::uint64_t(1) << 63,
    std::int64_t(-1) << 40,
    nlohmann::json::binary({ 1, 2, 3 }),
    nlohmann::json{ { "leaf", 0 } },
    nlohmann::json{ { "leaf", -1 } },
    nlohmann::json{ { "leaf", 1 }, { "extra", nlohmann::json::array({ 1, 2 }) } },
    nlohmann::json{ { "laef", 0 } },
    nlohmann::json{ { "leaf", -3 }, { "x", 0 } },
    nlohmann::json{ { "leaf", 2 }, { "x", nlohmann::json::array({ 1 }) } },
    nlohmann::json::array({ 1, 2 }),
    nlohmann::json::array(),
  };
};
} // namespace canopy::testing
