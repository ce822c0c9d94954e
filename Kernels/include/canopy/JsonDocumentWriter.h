// Writing a large model document piece by piece, as JSON text or as its CBOR encoding (RFC 8949), so that
// a forest's nodes reach a file without first becoming a document of one JSON value per number. The bytes
// are exactly those of nlohmann-json's dump() (compact text) or to_cbor() of the whole document, which
// the tests check. Host only; used by the forest, cascade and checkpoint writers.
//
// Why CBOR: a 429 MB JSON forest (the colin27 brain model of docs/ACCURACY.md) took 12 of a prediction's
// 16 s to read, most of it lexing decimal text; CBOR holds the same document (floats as 4-byte floats) in
// about 40 % of the bytes and reads several times faster (docs/BENCHMARKS.md, "CBOR model files").
#pragma once

#include "canopy/AtomicFile.h"
#include "canopy/Errors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace canopy
{
/** How a model file is written. Readers tell the two apart by content (IsCborModel), not by name. */
enum class ModelEncoding
{
  JsonText,
  Cbor
};

/** CBOR's self-describe tag (RFC 8949, 3.4.6), written at the start of every CBOR model file: it makes the
 * file recognisable (by `file`, and by the readers) and cannot begin JSON text. */
constexpr unsigned char kCborSelfDescribeTag[3] = { 0xD9, 0xD9, 0xF7 };

/** Whether `bytes` start with the CBOR self-describe tag. */
inline bool
IsCborModel(std::string_view bytes)
{
  return bytes.size() >= sizeof(kCborSelfDescribeTag) &&
         std::memcmp(bytes.data(), kCborSelfDescribeTag, sizeof(kCborSelfDescribeTag)) == 0;
}

/** Cbor for a file name ending in ".cbor" (any case), JsonText for any other. */
inline ModelEncoding
ModelEncodingForFileName(const std::string & fileName)
{
  constexpr std::string_view extension = ".cbor";
  if (fileName.size() < extension.size())
    return ModelEncoding::JsonText;
  const std::size_t start = fileName.size() - extension.size();
  for (std::size_t i = 0; i < extension.size(); ++i)
  {
    const char c = fileName[start + i];
    if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c) != extension[i])
      return ModelEncoding::JsonText;
  }
  return ModelEncoding::Cbor;
}

/** Writes one document as a sequence of containers, keys and values. Containers state their size up front
 * (CBOR needs it); a container closed with another number of entries is a programming error (std::logic_error).
 * Objects must be given their keys in sorted order for the bytes to equal dump()'s, which sorts them. */
class JsonDocumentWriter
{
public:
  /** A CBOR document starts with kCborSelfDescribeTag. */
  JsonDocumentWriter(std::ostream & out, ModelEncoding encoding)
    : m_Out(out)
    , m_Encoding(encoding)
  {
    if (encoding == ModelEncoding::Cbor)
      m_Out.write(reinterpret_cast<const char *>(kCborSelfDescribeTag), sizeof(kCborSelfDescribeTag));
  }

  ModelEncoding Encoding() const { return m_Encoding; }

  void BeginArray(std::size_t size) { Begin(size, false); }
  void BeginObject(std::size_t size) { Begin(size, true); }
  void EndArray() { End(']'); }
  void EndObject() { End('}'); }

  /** The next member's key, in an object. */
  void Key(const std::string & key)
  {
    Entry();
    if (m_Encoding == ModelEncoding::JsonText)
      m_Out << nlohmann::json(key).dump() << ':';
    else
      nlohmann::json::to_cbor(nlohmann::json(key), m_Out);
    m_AfterKey = true;
  }

  /** A whole value: an array element, an object member's value after Key, or the document. */
  void Value(const nlohmann::json & value)
  {
    Element();
    if (m_Encoding == ModelEncoding::JsonText)
      m_Out << value.dump();
    else
      nlohmann::json::to_cbor(value, m_Out);
  }

  /** `count` floats as array elements, each as nlohmann-json writes a float (a double that a float holds
   * exactly: text with a double's shortest digits, CBOR as a 4-byte float): faster than Value for each. */
  void Floats(const float * values, std::size_t count)
  {
    if (m_Open.empty() || m_Open.back().object || m_Open.back().left < count)
      throw std::logic_error("JsonDocumentWriter: more floats than the array stated");
    if (m_Encoding == ModelEncoding::Cbor)
    {
      for (std::size_t i = 0; i < count; ++i)
      {
        if (!std::isfinite(values[i]))
        {
          Value(nlohmann::json(values[i])); // nlohmann-json writes these as 8-byte doubles
          continue;
        }
        unsigned char bytes[5] = { 0xFA }; // a 4-byte float, big-endian
        std::uint32_t bits;
        std::memcpy(&bits, &values[i], sizeof(bits));
        for (int b = 0; b < 4; ++b)
          bytes[1 + b] = static_cast<unsigned char>(bits >> (24 - 8 * b));
        m_Out.write(reinterpret_cast<const char *>(bytes), sizeof(bytes));
        m_Open.back().first = false;
        --m_Open.back().left;
      }
      return;
    }
    constexpr std::size_t piece = 4096;
    for (std::size_t begin = 0; begin < count; begin += piece)
    {
      const std::size_t end = std::min(count, begin + piece);
      const std::string text = nlohmann::json(std::vector<float>(values + begin, values + end)).dump();
      Element();                                                      // counts the piece's first float
      m_Out.write(text.data() + 1, std::streamsize(text.size() - 2)); // without the piece's brackets
      m_Open.back().left -= end - begin - 1;
    }
  }

  /** Writes the object `head` plus the `streamed` members (keys not in `head`), all in sorted key order,
   * as one object: each streamed member's writeValue writes exactly one value with this writer. */
  struct StreamedMember
  {
    std::string                                   key;
    std::function<void(JsonDocumentWriter & out)> writeValue;
  };
  void ObjectWithStreamedMembers(const nlohmann::json & head, std::vector<StreamedMember> streamed)
  {
    std::sort(streamed.begin(), streamed.end(), [](const auto & a, const auto & b) { return a.key < b.key; });
    BeginObject(head.size() + streamed.size());
    auto next = streamed.begin();
    for (const auto & item : head.items())
    {
      for (; next != streamed.end() && next->key < item.key(); ++next)
      {
        Key(next->key);
        next->writeValue(*this);
      }
      Key(item.key());
      Value(item.value());
    }
    for (; next != streamed.end(); ++next)
    {
      Key(next->key);
      next->writeValue(*this);
    }
    EndObject();
  }

private:
  struct Open
  {
    std::size_t left; // entries still to come (members for an object)
    bool        first;
    bool        object;
  };

  /** Before a key, or before an array element or the document. */
  void Entry()
  {
    if (m_Open.empty())
      throw std::logic_error("JsonDocumentWriter: a key outside an object");
    Open & open = m_Open.back();
    if (!open.object || m_AfterKey || open.left == 0)
      throw std::logic_error("JsonDocumentWriter: a key where a value belongs, or one too many");
    if (m_Encoding == ModelEncoding::JsonText && !open.first)
      m_Out << ',';
    open.first = false;
    --open.left;
  }

  /** Before a value or a container: a value after its key, or the next array element. */
  void Element()
  {
    if (m_AfterKey)
    {
      m_AfterKey = false;
      return;
    }
    if (m_Open.empty())
      return; // the document itself
    Open & open = m_Open.back();
    if (open.object || open.left == 0)
      throw std::logic_error("JsonDocumentWriter: a value without its key, or one element too many");
    if (m_Encoding == ModelEncoding::JsonText && !open.first)
      m_Out << ',';
    open.first = false;
    --open.left;
  }

  void Begin(std::size_t size, bool object)
  {
    Element();
    if (m_Encoding == ModelEncoding::JsonText)
      m_Out << (object ? '{' : '[');
    else
      WriteCborHead(object ? 5 : 4, size);
    m_Open.push_back(Open{ size, true, object });
  }

  void End(char close)
  {
    if (m_Open.empty() || m_Open.back().object != (close == '}') || m_Open.back().left != 0 || m_AfterKey)
      throw std::logic_error("JsonDocumentWriter: a container closed before all its stated entries");
    m_Open.pop_back();
    if (m_Encoding == ModelEncoding::JsonText)
      m_Out << close;
  }

  /** A CBOR major type with its argument, in the shortest form (as nlohmann-json writes containers). */
  void WriteCborHead(unsigned major, std::uint64_t argument)
  {
    unsigned char bytes[9];
    int           length = 0;
    const auto    head = static_cast<unsigned char>(major << 5);
    if (argument < 24)
      bytes[length++] = static_cast<unsigned char>(head | argument);
    else
    {
      const int width = argument <= 0xFF ? 1 : argument <= 0xFFFF ? 2 : argument <= 0xFFFFFFFFull ? 4 : 8;
      bytes[length++] = static_cast<unsigned char>(head | (width == 1 ? 24 : width == 2 ? 25 : width == 4 ? 26 : 27));
      for (int b = width - 1; b >= 0; --b)
        bytes[length++] = static_cast<unsigned char>(argument >> (8 * b));
    }
    m_Out.write(reinterpret_cast<const char *>(bytes), length);
  }

  std::ostream &    m_Out;
  ModelEncoding     m_Encoding;
  std::vector<Open> m_Open;
  bool              m_AfterKey = false;
};
/** Writes a model document to `fileName` all or nothing (WriteFileAtomically): CBOR for a name ending in
 * ".cbor", JSON text ending in a newline for any other. `write` writes the one document with the writer. */
inline void
WriteModelDocumentFile(const std::string & fileName, const std::function<void(JsonDocumentWriter &)> & write)
{
  WriteFileAtomically(fileName,
                      [&](std::ostream & out)
                      {
                        JsonDocumentWriter writer(out, ModelEncodingForFileName(fileName));
                        write(writer);
                        if (writer.Encoding() == ModelEncoding::JsonText)
                          out << '\n';
                      });
}
} // namespace canopy
