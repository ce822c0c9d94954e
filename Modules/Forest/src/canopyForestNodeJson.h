// One node of a forest's JSON form, shared by the document reader (ForestModelFromJson) and the streaming
// parser (ParseForestJsonDocument), which converts each tree's nodes while it parses and leaves them in the
// document packed, as one binary value in place of the "nodes" array (and a forest's "distributions" as
// floats, when every entry is a number).
#pragma once

#include "canopy/ForestFlat.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>

namespace canopy
{
/** One scalar of a forest document, as the node conversion sees it: which kind of JSON value it is, and its
 * number. The streaming parser makes these from its events without building a JSON value (building one per
 * field was a third of reading a large CBOR forest); the document reader makes them from values (Of). Both
 * are then converted by the same code, so they give the same node or the same message. */
class ForestScalar
{
public:
  enum class Kind : std::uint8_t
  {
    Null,
    Integer,  // a signed integer (nlohmann-json's number_integer)
    Unsigned, // an unsigned one (number_unsigned)
    Float,
    Other // a string, a boolean, a byte string or a container
  };

  static ForestScalar Null() { return ForestScalar(Kind::Null); }
  static ForestScalar Other() { return ForestScalar(Kind::Other); }
  static ForestScalar Integer(std::int64_t value)
  {
    ForestScalar s(Kind::Integer);
    s.m_Integer = value;
    return s;
  }
  static ForestScalar Unsigned(std::uint64_t value)
  {
    ForestScalar s(Kind::Unsigned);
    s.m_Unsigned = value;
    return s;
  }
  static ForestScalar Float(double value)
  {
    ForestScalar s(Kind::Float);
    s.m_Float = value;
    return s;
  }
  static ForestScalar Of(const nlohmann::json & value)
  {
    switch (value.type())
    {
      case nlohmann::json::value_t::null:
        return Null();
      case nlohmann::json::value_t::number_integer:
        return Integer(value.get<std::int64_t>());
      case nlohmann::json::value_t::number_unsigned:
        return Unsigned(value.get<std::uint64_t>());
      case nlohmann::json::value_t::number_float:
        return Float(value.get<double>());
      default:
        return Other();
    }
  }

  ForestScalar() = default;
  Kind          GetKind() const { return m_Kind; }
  std::int64_t  GetInteger() const { return m_Integer; }
  std::uint64_t GetUnsigned() const { return m_Unsigned; }
  /** The number as a double, as nlohmann-json's get<double>() gives it for each kind of number. */
  double AsDouble() const
  {
    return m_Kind == Kind::Integer    ? static_cast<double>(m_Integer)
           : m_Kind == Kind::Unsigned ? static_cast<double>(m_Unsigned)
                                      : m_Float;
  }
  /** The value again (an Other has none here: `other` is it). */
  nlohmann::json ToJson(nlohmann::json && other) const
  {
    switch (m_Kind)
    {
      case Kind::Null:
        return nlohmann::json(nullptr);
      case Kind::Integer:
        return nlohmann::json(m_Integer);
      case Kind::Unsigned:
        return nlohmann::json(m_Unsigned);
      case Kind::Float:
        return nlohmann::json(m_Float);
      default:
        return std::move(other);
    }
  }

private:
  explicit ForestScalar(Kind kind)
    : m_Kind(kind)
  {
  }
  Kind m_Kind = Kind::Null;
  union
  {
    std::int64_t  m_Integer = 0;
    std::uint64_t m_Unsigned;
    double        m_Float;
  };
};

/** The number of fields of an inner node's entry: left, theta0, theta1, then per box: channel, offset xyz,
 * size xyz. */
constexpr std::size_t kForestInnerNodeFields = 17;

/** Entry `index` of a tree's "nodes" array: {"leaf": d} or an array of 17 numbers, every field range-checked.
 * An inner node's left child is `root` plus the stored offset. Errors: canopy::Error
 * "<tree> node <index> <field> must ...". */
ForestNode
ForestNodeFromJson(const nlohmann::json & entry, std::int32_t root, const std::string & tree, std::size_t index);

/** The same for an entry read as scalars: an array of `count` scalars (an inner node when count is 17), ... */
ForestNode
ForestNodeFromRow(const ForestScalar * fields,
                  std::size_t          count,
                  std::int32_t         root,
                  const std::string &  tree,
                  std::size_t          index);

/** ... or an object whose only key is "leaf" (`leaf` its value; nullptr: an empty object). */
ForestNode
ForestNodeFromLeaf(const ForestScalar * leaf, const std::string & tree, std::size_t index);

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
