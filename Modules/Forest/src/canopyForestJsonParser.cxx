// Parsing a forest document (a forest, a cascade of forests, a training checkpoint) from nlohmann-json's
// SAX events, converting every tree's nodes as they arrive. As a document, a node costs one JSON value per
// field (16 bytes each, plus the array holding them): a 57 MB cascade took 670 MB before its first node was
// converted. Here a node's fields are kept as scalars (ForestScalar) and converted by the code behind the
// reader's ForestNodeFromJson, so the checks and messages are the same (an entry of an unusual shape is
// built as a value and given to ForestNodeFromJson itself). The tree's nodes are kept as 32-byte ForestNodes
// in one binary value where the "nodes" array was; ForestModelFromJson reads either form. The same events come
// from JSON text or from CBOR (the ".cbor" model files), so both are read and checked by one handler.
#include "canopy/Errors.h"
#include "canopy/JsonDocumentWriter.h"
#include "canopy/JsonField.h"
#include "canopyForestModelJson.h"
#include "canopyForestNodeJson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace canopy
{
namespace
{
using nlohmann::json;

/** Builds one JSON value from SAX events, placing values as nlohmann-json's own document parser does
 * (a repeated key keeps the last value). */
class ValueBuilder
{
public:
  explicit ValueBuilder(json & root)
    : m_Root(root)
  {
  }

  /** Places a scalar or a new container; returns where it went. An array put at the root reuses the
   * root's array storage, so building node after node in one root allocates once. */
  json * Put(json && value)
  {
    if (m_Stack.empty())
    {
      if (value.is_array() && m_Root.is_array())
        m_Root.clear(); // keeps the capacity
      else
        m_Root = std::move(value);
      return &m_Root;
    }
    json & top = *m_Stack.back();
    if (top.is_array())
    {
      top.push_back(std::move(value));
      return &top.back();
    }
    *m_Member = std::move(value);
    return m_Member;
  }
  void Open(json && container) { m_Stack.push_back(Put(std::move(container))); }
  void Key(const std::string & key) { m_Member = &(*m_Stack.back())[key]; }
  void Close() { m_Stack.pop_back(); }
  /** Open containers: 0 once the value is complete. */
  std::size_t  Depth() const { return m_Stack.size(); }
  const json & Top() const { return *m_Stack.back(); }

private:
  json &              m_Root;
  std::vector<json *> m_Stack;
  json *              m_Member = nullptr;
};

/** One entry of a "nodes" array read without building a JSON value for it, in the two shapes a forest's
 * entries have: an inner node, an array of scalars (kept as ForestScalars, the first 17), and a leaf,
 * {"leaf": scalar}. Building each entry as a value, and then each field, cost most of reading a large
 * CBOR forest (an allocation per entry, a value per field, a lookup per field). An entry of another shape
 * (a nested container, another key) is handed, as far as it was read, to a ValueBuilder, which builds the
 * rest. */
class NodeEntry
{
public:
  enum class Shape
  {
    None,  // between entries
    Row,   // an array, its scalars so far in m_Row
    Leaf,  // an object whose only key so far is "leaf"
    Handed // being built by the ValueBuilder
  };

  Shape GetShape() const { return m_Shape; }
  bool  Fast() const { return m_Shape == Shape::Row || m_Shape == Shape::Leaf; }

  void StartRow()
  {
    m_Shape = Shape::Row;
    m_Count = 0;
  }
  void StartLeaf()
  {
    m_Shape = Shape::Leaf;
    m_HasKey = m_HasValue = false;
  }
  /** False when the key ends the fast path (hand the entry to a builder, then give it the key). */
  bool LeafKey(const std::string & name)
  {
    if (m_HasKey || name != "leaf")
      return false;
    m_HasKey = true;
    return true;
  }
  /** A scalar of the entry; `makeValue` gives it as a JSON value, which is kept only for the kind Other (a
   * string, a boolean, a byte string), in case the entry is handed to a builder later. */
  template<typename MakeValue>
  void Value(const ForestScalar & scalar, MakeValue && makeValue)
  {
    if (m_Shape == Shape::Leaf) // JSON and CBOR give a value only after a key
    {
      m_Leaf = scalar;
      if (scalar.GetKind() == ForestScalar::Kind::Other)
        m_LeafOther = makeValue();
      m_HasValue = true;
    }
    else if (m_Count++ < kForestInnerNodeFields)
    {
      m_Row[m_Count - 1] = scalar;
      if (scalar.GetKind() == ForestScalar::Kind::Other)
        m_RowOther[m_Count - 1] = makeValue();
    }
  }
  /** Gives `builder` the entry as read so far; the builder takes every later event of the entry. */
  void HandTo(ValueBuilder & builder)
  {
    if (m_Shape == Shape::Leaf)
    {
      builder.Open(json::object());
      if (m_HasKey)
        builder.Key("leaf");
      if (m_HasValue)
        builder.Put(m_Leaf.ToJson(std::move(m_LeafOther)));
    }
    else
    {
      builder.Open(json::array());
      for (std::size_t k = 0; k < m_Count; ++k) // fields past the 17th: any value gives the same message
        builder.Put(k < kForestInnerNodeFields ? m_Row[k].ToJson(std::move(m_RowOther[k])) : json());
    }
    m_Shape = Shape::Handed;
  }
  /** Converts the finished fast entry (ForestNodeFromRow's and ForestNodeFromLeaf's errors); Done() ends it. */
  ForestNode Convert(std::size_t index) const
  {
    if (m_Shape == Shape::Leaf)
      return ForestNodeFromLeaf(m_HasValue ? &m_Leaf : nullptr, std::string(), index);
    return ForestNodeFromRow(m_Row, m_Count, 0, std::string(), index);
  }
  void Done() { m_Shape = Shape::None; }

private:
  Shape        m_Shape = Shape::None;
  std::size_t  m_Count = 0;
  bool         m_HasKey = false, m_HasValue = false;
  ForestScalar m_Row[kForestInnerNodeFields];
  ForestScalar m_Leaf;
  json         m_RowOther[kForestInnerNodeFields]; // the values of the fields of kind Other
  json         m_LeafOther;
};

/** The SAX handler: the document as nlohmann-json would build it, except that an array under "nodes" in an
 * element of an array under "trees" (a tree, in the forest format) is converted node by node. */
class ForestDocumentHandler : public nlohmann::json_sax<json>
{
public:
  /** `cbor`: the events come from CBOR, whose reader recurses and so needs the nesting limit here (JSON text
   * is checked by RequireJsonNestingLimit before it is parsed). */
  ForestDocumentHandler(const std::string & context, bool cbor, std::size_t inputBytes)
    : m_Context(context)
    , m_Cbor(cbor)
    , m_InputBytes(inputBytes)
  {
  }

  json & Document() { return m_Document; }

  // Each scalar comes as a ForestScalar (what a node entry keeps) and a maker of its JSON value (what the
  // document and the handed entries get), so a node's fields never become values.
  bool null() override
  {
    return Scalar(ForestScalar::Null(), [] { return json(nullptr); });
  }
  bool boolean(bool value) override
  {
    return Scalar(ForestScalar::Other(), [value] { return json(value); });
  }
  // A number in a forest's "distributions" is kept as the float the reader would take (get<float>).
  bool number_integer(number_integer_t value) override
  {
    return m_InDistributions ? Distribution(static_cast<float>(value))
                             : Scalar(ForestScalar::Integer(value), [value] { return json(value); });
  }
  bool number_unsigned(number_unsigned_t value) override
  {
    return m_InDistributions ? Distribution(static_cast<float>(value))
                             : Scalar(ForestScalar::Unsigned(value), [value] { return json(value); });
  }
  bool number_float(number_float_t value, const string_t &) override
  {
    return m_InDistributions ? Distribution(static_cast<float>(value))
                             : Scalar(ForestScalar::Float(value), [value] { return json(value); });
  }
  bool string(string_t & value) override
  {
    RequireUtf8(value);
    return Scalar(ForestScalar::Other(), [&value] { return json(std::move(value)); });
  }
  bool binary(binary_t & value) override // a CBOR byte string; without a subtype, never a packed tree
  {
    value.clear_subtype();
    return Scalar(ForestScalar::Other(), [&value] { return json::binary(std::move(value)); });
  }
  bool start_object(std::size_t) override
  {
    RequireDepthBelowLimit();
    if (m_InNodes)
    {
      if (m_Entry.GetShape() == NodeEntry::Shape::None)
        m_Entry.StartLeaf();
      else
        OpenInHandedEntry(json::object());
      return true;
    }
    LeaveDistributions();
    const Frame parent = m_Frames.empty() ? Frame::Other : m_Frames.back();
    // Where a forest object can stand: the document (a forest file), a cascade's stage, a checkpoint's "forest".
    const bool forest = m_Frames.empty() || parent == Frame::Stages ||
                        (m_Frames.size() == 1 && m_Key == "forest" && m_Builder.Top().is_object());
    m_Builder.Open(json::object());
    m_Frames.push_back(parent == Frame::Trees ? Frame::Tree : forest ? Frame::Forest : Frame::Other);
    return true;
  }
  bool key(string_t & name) override
  {
    RequireUtf8(name);
    if (m_InNodes)
    {
      if (m_Entry.GetShape() == NodeEntry::Shape::Leaf && m_Entry.LeafKey(name))
        return true;
      if (m_Entry.Fast())
        m_Entry.HandTo(m_Node);
      m_Node.Key(name);
    }
    else
    {
      m_Builder.Key(name);
      m_Key = name;
    }
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t size) override
  {
    RequireDepthBelowLimit();
    if (m_InNodes)
    {
      if (m_Entry.GetShape() == NodeEntry::Shape::None)
        m_Entry.StartRow();
      else
        OpenInHandedEntry(json::array());
      return true;
    }
    LeaveDistributions();
    const bool member = !m_Frames.empty() && m_Builder.Top().is_object();
    if (member && m_Frames.back() == Frame::Forest && m_Key == "distributions")
    {
      m_InDistributions = true; // the document gets the packed floats at the array's end
      m_Floats.clear();
      if (size != std::size_t(-1)) // CBOR states the count; a number takes a byte at least
        m_Floats.reserve(std::min(size, m_InputBytes) * sizeof(float));
      return true;
    }
    if (member && m_Frames.back() == Frame::Tree && m_Key == "nodes")
    {
      m_InNodes = true; // the document gets the packed value at the array's end
      m_Packed.clear();
      // CBOR states the count. A good entry takes 7 bytes at least ({"leaf": 0}), so a false count reserves at
      // most 32 / 7 of the file's size.
      if (size != std::size_t(-1))
        m_Packed.reserve(std::min(size, m_InputBytes / 7) * sizeof(ForestNode));
      m_Error.clear();
      m_Index = 0;
      return true;
    }
    m_Builder.Open(json::array());
    m_Frames.push_back(member && m_Key == "trees"    ? Frame::Trees
                       : member && m_Key == "stages" ? Frame::Stages
                                                     : Frame::Other);
    return true;
  }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string &, const json::exception & e) override
  {
    if (m_Cbor)
      CANOPY_THROW(m_Context << ": not valid CBOR (" << e.what() << ")");
    ThrowNotValidJson(m_Context, e); // as ParseJsonDocument reports it
  }

private:
  enum class Frame
  {
    Other,
    Forest, // an object where a forest can stand
    Stages, // the array under "stages" (a cascade's forests)
    Trees,  // the array under "trees"
    Tree    // an object in it
  };

  /** JSON text is checked by the lexer; CBOR's text strings are not. */
  void RequireUtf8(const string_t & text) const
  {
    if (m_Cbor && !IsValidUtf8(text))
      CANOPY_THROW(m_Context << ": not valid CBOR (a text string is not valid UTF-8)");
  }

  /** Before a container opens: with it, no more than kMaxJsonDepth may be open. */
  void RequireDepthBelowLimit() const
  {
    const std::size_t open =
      m_Frames.size() + (m_InDistributions ? 1 : 0) + (m_InNodes ? 1 + m_Node.Depth() + (m_Entry.Fast() ? 1 : 0) : 0);
    if (m_Cbor && open >= std::size_t(kMaxJsonDepth))
      CANOPY_THROW(m_Context << ": CBOR nested deeper than " << kMaxJsonDepth << " levels");
  }

  bool Distribution(float value)
  {
    const std::size_t at = m_Floats.size();
    m_Floats.resize(at + sizeof(float));
    std::memcpy(m_Floats.data() + at, &value, sizeof(float));
    return true;
  }

  /** Something other than a number in "distributions": the array is built as a value from here on, with
   * the floats so far (the reader takes the same floats from them), so the reader words the error. */
  void LeaveDistributions()
  {
    if (!m_InDistributions)
      return;
    m_InDistributions = false;
    m_Builder.Open(json::array());
    m_Frames.push_back(Frame::Other);
    for (std::size_t at = 0; at < m_Floats.size(); at += sizeof(float))
    {
      float value;
      std::memcpy(&value, m_Floats.data() + at, sizeof(float));
      m_Builder.Put(json(value));
    }
    m_Floats = {};
  }

  template<typename MakeValue>
  bool Scalar(const ForestScalar & scalar, MakeValue && makeValue)
  {
    LeaveDistributions();
    if (!m_InNodes)
      m_Builder.Put(makeValue());
    else if (m_Entry.Fast())
      m_Entry.Value(scalar, makeValue);
    else
    {
      const bool entry = m_Node.Depth() == 0;
      m_Node.Put(makeValue());
      if (entry) // a scalar entry, which the conversion rejects with its message
        ConvertNode([this](std::size_t index) { return ForestNodeFromJson(m_NodeValue, 0, std::string(), index); });
    }
    return true;
  }

  /** A container inside a node entry: the entry is built as a value from here on. */
  void OpenInHandedEntry(json && container)
  {
    if (m_Entry.Fast())
      m_Entry.HandTo(m_Node);
    m_Node.Open(std::move(container));
  }

  bool Close()
  {
    if (m_InDistributions) // every entry a number
    {
      m_InDistributions = false;
      m_Builder.Put(json::binary(std::move(m_Floats), kPackedForestDistributions));
      m_Floats = {};
      return true;
    }
    if (!m_InNodes)
    {
      m_Builder.Close();
      m_Frames.pop_back();
      return true;
    }
    if (m_Entry.Fast())
    {
      ConvertNode([this](std::size_t index) { return m_Entry.Convert(index); }); // not called after an error
      m_Entry.Done();
      return true;
    }
    if (m_Node.Depth() == 0) // the end of the "nodes" array itself
    {
      m_InNodes = false;
      if (m_Error.empty())
        m_Builder.Put(json::binary(std::move(m_Packed), kPackedForestNodes));
      else
        m_Builder.Put(json::binary(std::vector<std::uint8_t>(m_Error.begin(), m_Error.end()), kPackedForestNodesError));
      m_Packed = {};
      return true;
    }
    m_Node.Close();
    if (m_Node.Depth() == 0)
    {
      m_Entry.Done();
      ConvertNode([this](std::size_t index) { return ForestNodeFromJson(m_NodeValue, 0, std::string(), index); });
    }
    return true;
  }

  /** Converts the node just read (`convert(index)`), unless an earlier node of this tree failed (the reader
   * reports the first). */
  template<typename Convert>
  void ConvertNode(Convert && convert)
  {
    const std::size_t index = m_Index++;
    if (!m_Error.empty())
      return;
    try
    {
      const ForestNode  node = convert(index);
      const std::size_t at = m_Packed.size();
      m_Packed.resize(at + sizeof(ForestNode));
      std::memcpy(m_Packed.data() + at, &node, sizeof(ForestNode));
    }
    catch (const Error & e)
    {
      m_Error = e.GetDescription(); // " node I <field> must ...": the reader puts the tree's name in front
    }
  }

  const std::string &       m_Context;
  bool                      m_Cbor;
  std::size_t               m_InputBytes; // bounds what a stated count may reserve
  json                      m_Document;
  ValueBuilder              m_Builder{ m_Document };
  std::vector<Frame>        m_Frames; // one per open container of the document
  std::string               m_Key;    // the last key read in the document
  bool                      m_InNodes = false;
  NodeEntry                 m_Entry;     // the node entry being read, while it is in a fast shape
  json                      m_NodeValue; // ... or built as a value
  ValueBuilder              m_Node{ m_NodeValue };
  std::vector<std::uint8_t> m_Packed;
  bool                      m_InDistributions = false;
  std::vector<std::uint8_t> m_Floats; // a forest's "distributions" so far, as floats
  std::string               m_Error;
  std::size_t               m_Index = 0;
};

} // namespace

json
ParseForestJsonDocument(const std::string & text, const std::string & context)
{
  if (IsCborModel(text))
  {
    ForestDocumentHandler handler(context, true, text.size());
    json::sax_parse(text.begin() + sizeof(kCborSelfDescribeTag), text.end(), &handler, json::input_format_t::cbor);
    return std::move(handler.Document());
  }
  RequireJsonNestingLimit(text, context);
  ForestDocumentHandler handler(context, false, text.size());
  json::sax_parse(text, &handler);
  return std::move(handler.Document());
}

} // namespace canopy
