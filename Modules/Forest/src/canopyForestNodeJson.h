// One node of a forest's JSON form, shared by the document reader (ForestModelFromJson) and the streaming
// parser (ParseForestJsonDocument), which converts each tree's nodes while it parses and leaves them in the
// document packed, as one binary value in place of the "nodes" array (and a forest's "distributions" as
// floats, when every entry is a number).
#pragma once

#include "canopy/ForestFlat.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace canopy
{
/** Entry `index` of a tree's "nodes" array: {"leaf": d} or an array of 17 numbers, every field range-checked.
 * An inner node's left child is `root` plus the stored offset. Errors: canopy::Error
 * "<tree> node <index> <field> must ...". */
ForestNode
ForestNodeFromJson(const nlohmann::json & entry, std::int32_t root, const std::string & tree, std::size_t index);

/** Binary subtypes of a packed "nodes" value. A binary value cannot come from JSON text, so a packed tree
 * is never confused with anything a file holds. */
constexpr std::uint64_t kPackedForestNodes = 0x4e4f;      // ForestNode bytes, inner left children relative to the tree
constexpr std::uint64_t kPackedForestNodesError = 0x4e45; // the first bad node's message, " node I <field> must ..."
constexpr std::uint64_t kPackedForestDistributions = 0x4453; // "distributions" as floats, when every entry is a number

inline bool
IsPackedForestNodes(const nlohmann::json & nodes)
{
  return nodes.is_binary() && nodes.get_binary().has_subtype() && nodes.get_binary().subtype() == kPackedForestNodes &&
         nodes.get_binary().size() % sizeof(ForestNode) == 0;
}

inline bool
IsPackedForestDistributions(const nlohmann::json & values)
{
  return values.is_binary() && values.get_binary().has_subtype() &&
         values.get_binary().subtype() == kPackedForestDistributions && values.get_binary().size() % sizeof(float) == 0;
}

/** The message a packed tree carries for its first bad node, or "" (not packed, or every node good). */
inline std::string
PackedForestNodesError(const nlohmann::json & nodes)
{
  if (!nodes.is_binary() || !nodes.get_binary().has_subtype() ||
      nodes.get_binary().subtype() != kPackedForestNodesError)
    return std::string();
  return std::string(nodes.get_binary().begin(), nodes.get_binary().end());
}

} // namespace canopy
