// Parsing a forest document (a forest, a cascade of forests, a training checkpoint) from nlohmann-json's
// SAX events, converting every tree's nodes as they arrive. As a document, a node costs one JSON value per
// field (16 bytes each, plus the array holding them): a 57 MB cascade took 670 MB before its first node was
// converted. Here one node's value is built at a time, converted by the reader's own ForestNodeFromJson (so
// the checks and messages are the same), and the tree's nodes are kept as 32-byte ForestNodes in one
// binary value where the "nodes" array was; ForestModelFromJson reads either form.
#include "canopy/Errors.h"
#include "canopy/JsonField.h"
#include "canopyForestModelJson.h"
#include "canopyForestNodeJson.h"

#include <nlohmann/json.hpp>

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

/** The SAX handler: the document as nlohmann-json would build it, except that an array under "nodes" in an
 * element of an array under "trees" (a tree, in the forest format) is converted node by node. */
class ForestDocumentHandler : public nlohmann::json_sax<json>
{
public:
  explicit ForestDocumentHandler(const std::string & context)
    : m_Context(context)
  {
  }

  json & Document() { return m_Document; }

  bool null() override { return Scalar(json(nullptr)); }
  bool boolean(bool value) override { return Scalar(json(value)); }
  bool number_integer(number_integer_t value) override { return Scalar(json(value)); }
  bool number_unsigned(number_unsigned_t value) override { return Scalar(json(value)); }
  bool number_float(number_float_t value, const string_t &) override { return Scalar(json(value)); }
  bool string(string_t & value) override { return Scalar(json(std::move(value))); }
  bool binary(binary_t & value) override // not produced by JSON text; kept for completeness
  {
    return Scalar(json::binary(std::move(value)));
  }
  bool start_object(std::size_t) override
  {
    if (m_InNodes)
    {
      m_Node.Open(json::object());
      return true;
    }
    const bool tree = !m_Frames.empty() && m_Frames.back() == Frame::Trees;
    m_Builder.Open(json::object());
    m_Frames.push_back(tree ? Frame::Tree : Frame::Other);
    return true;
  }
  bool key(string_t & name) override
  {
    if (m_InNodes)
      m_Node.Key(name);
    else
    {
      m_Builder.Key(name);
      m_Key = name;
    }
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t) override
  {
    if (m_InNodes)
    {
      m_Node.Open(json::array());
      return true;
    }
    const bool member = !m_Frames.empty() && m_Builder.Top().is_object();
    if (member && m_Frames.back() == Frame::Tree && m_Key == "nodes")
    {
      m_InNodes = true; // the document gets the packed value at the array's end
      m_Packed.clear();
      m_Error.clear();
      m_Index = 0;
      return true;
    }
    m_Builder.Open(json::array());
    m_Frames.push_back(member && m_Key == "trees" ? Frame::Trees : Frame::Other);
    return true;
  }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t, const std::string &, const json::exception & e) override
  {
    ThrowNotValidJson(m_Context, e); // as ParseJsonDocument reports it
  }

private:
  enum class Frame
  {
    Other,
    Trees, // the array under "trees"
    Tree   // an object in it
  };

  bool Scalar(json && value)
  {
    if (!m_InNodes)
      m_Builder.Put(std::move(value));
    else
    {
      const bool entry = m_Node.Depth() == 0;
      m_Node.Put(std::move(value));
      if (entry)
        ConvertNode(); // a scalar entry, which the conversion rejects with its message
    }
    return true;
  }

  bool Close()
  {
    if (!m_InNodes)
    {
      m_Builder.Close();
      m_Frames.pop_back();
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
      ConvertNode();
    return true;
  }

  /** Converts the node just built, unless an earlier node of this tree failed (the reader reports the first). */
  void ConvertNode()
  {
    const std::size_t index = m_Index++;
    if (!m_Error.empty())
      return;
    try
    {
      const ForestNode  node = ForestNodeFromJson(m_NodeValue, 0, std::string(), index);
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
  json                      m_Document;
  ValueBuilder              m_Builder{ m_Document };
  std::vector<Frame>        m_Frames; // one per open container of the document
  std::string               m_Key;    // the last key read in the document
  bool                      m_InNodes = false;
  json                      m_NodeValue;
  ValueBuilder              m_Node{ m_NodeValue };
  std::vector<std::uint8_t> m_Packed;
  std::string               m_Error;
  std::size_t               m_Index = 0;
};

} // namespace

json
ParseForestJsonDocument(const std::string & text, const std::string & context)
{
  RequireJsonNestingLimit(text, context);
  ForestDocumentHandler handler(context);
  json::sax_parse(text, &handler);
  return std::move(handler.Document());
}

} // namespace canopy
